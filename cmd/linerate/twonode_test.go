package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/testenv"
)

// TestTwoNodeRunnerAndEngine runs the two pods of a two-node testbed as the operator starts them, with
// the real binaries: `linerate engine --ports east --listen ...` (the receiver pod) and `linerate runner
// --ports west --remote-engine east=tcp:...` (the generator pod), each a separate process with its own
// engine in its own pod network namespace, both wired to a forwarding router namespace. The runner reports
// to a real kube-apiserver, reached from the namespace through a relay this test holds, and the results
// ConfigMap is read back as the controller reads it.
func TestTwoNodeRunnerAndEngine(t *testing.T) {
	eng := os.Getenv("LINERATE_ENGINE")
	if eng == "" {
		eng, _ = filepath.Abs("../../dataplane/build/linerate-engine")
	}
	if _, err := os.Stat(eng); err != nil {
		t.Skipf("no engine at %s (run 'make engine'; make test builds it first)", eng)
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root for network namespaces")
	}
	if why := testenv.Missing(); why != "" {
		t.Skip(why)
	}
	dir := t.TempDir()
	gns, xns := twoPods(t, fmt.Sprintf("lr2n%d", os.Getpid()%100000))

	bin := filepath.Join(dir, "linerate")
	sh(t, "go", "build", "-o", bin, ".")

	const maxRate, resolution = 1.0, 0.25
	ms := func(n int) metav1.Duration { return metav1.Duration{Duration: time.Duration(n) * time.Millisecond} }
	// Two polling engines, the runner and the router's forwarding share two cores here, so the kernel
	// takes a worker's CPU for milliseconds at a time: the 1 ms defaults, which a tester on dedicated
	// cores meets, would spoil every trial. This test is about the split across two nodes; the rule
	// itself is proven by internal/runner's starved-tester test.
	tt := v1alpha1.TrafficTest{ObjectMeta: metav1.ObjectMeta{Name: "split", Namespace: "default"}, Spec: v1alpha1.TrafficTestSpec{
		Tests:      []v1alpha1.TestKind{v1alpha1.TestThroughput, v1alpha1.TestLatency},
		Latency:    v1alpha1.LatencyParams{Repetitions: 2},
		FrameSizes: []int32{128},
		Durations: v1alpha1.Durations{SearchTrial: ms(500), ValidationTrial: ms(1000), LatencyTrial: ms(1000), WarmUp: ms(200),
			Drain: ms(300), DUTRest: ms(100)},
		Throughput: v1alpha1.ThroughputParams{LossTolerance: "0", Resolution: "0.25", MaxRate: "1", Method: v1alpha1.SearchMultistage},
		Traffic:    v1alpha1.TrafficParams{Direction: v1alpha1.Unidirectional, LineRate: "1G"},
		Tester:     v1alpha1.TesterSpec{Validity: v1alpha1.TrialValidity{MaxTxLag: ms(20), MaxWorkerGap: ms(20)}, MaxClockOffset: ptr(metav1.Duration{Duration: 500 * time.Microsecond})},
		Ports: []v1alpha1.PortSpec{
			{Name: "west", Driver: v1alpha1.DriverAFPacket, Interface: "t0", Address: "198.18.1.2/24", Gateway: "198.18.1.1"},
			{Name: "east", Driver: v1alpha1.DriverAFPacket, Interface: "t1", Address: "198.19.1.2/24", Gateway: "198.19.1.1"},
		}}}
	p, err := plan.Resolve(&tt, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	planFile := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(planFile, []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}

	cfg, c := testenv.ForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cm := &corev1.ConfigMap{}
	cm.Namespace, cm.Name = "default", results.ConfigMapName(tt.Name)
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	api, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	relay := relayInto(t, gns, api.Host)
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: "https://" + relay, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	kc.CurrentContext = "envtest"
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
		t.Fatal(err)
	}

	// Each pod has its own hostname (the engine's file prefix) and run directory.
	// Like two pods, each gets its own CPU: two busy-polling engines sharing both cores of a small
	// machine starve each other and the router and lose frames that no DUT lost.
	inPod := func(ns, host, cpu string, args ...string) *exec.Cmd {
		a := append([]string{"netns", "exec", ns, "unshare", "--uts", "taskset", "-c", cpu, "sh", "-c", `hostname "$0"; exec "$@"`, host}, args...)
		cmd := exec.CommandContext(ctx, "ip", a...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
		return cmd
	}
	rx := inPod(xns, "receiver", "0", bin, "engine", "--plan", planFile, "--ports", "east", "--listen", "10.250.0.2:7777",
		"--huge-dir", "", "--run-dir", filepath.Join(dir, "rx"), "--engine", eng)
	rxOut, err := rx.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := rx.Start(); err != nil {
		t.Fatal(err)
	}
	rxDone := make(chan error, 1)
	defer func() {
		_ = rx.Process.Signal(unix.SIGTERM)
		select {
		case err := <-rxDone:
			_ = err // killed by our SIGTERM: its exit status says nothing about the test
		case <-time.After(20 * time.Second):
			_ = rx.Process.Kill()
		}
	}()
	ready := make(chan struct{})
	var rxLog strings.Builder
	go func() {
		sc := bufio.NewScanner(rxOut)
		for sc.Scan() {
			rxLog.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "under control on") {
				close(ready)
			}
		}
		rxDone <- rx.Wait()
	}()
	select {
	case <-ready:
	case <-time.After(2 * time.Minute):
		t.Fatal("the receiver's engine did not come up")
	}

	gen := inPod(gns, "generator", "1", bin, "runner", "--plan", planFile, "--namespace", "default", "--results-configmap", cm.Name,
		"--ports", "west", "--remote-engine", "east=tcp:10.250.0.2:7777", "--huge-dir", "", "--run-dir", filepath.Join(dir, "gen"),
		"--engine", eng, "--metrics-addr", "")
	out, err := gen.CombinedOutput()
	if err != nil {
		t.Fatalf("linerate runner: %v\n%s", err, out)
	}

	got := &corev1.ConfigMap{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: "default", Name: cm.Name}, got); err != nil {
		t.Fatal(err)
	}
	var st results.State
	if err := json.Unmarshal([]byte(got.Data[results.KeyState]), &st); err != nil || st.State != results.StateSucceeded {
		t.Errorf("state.json %q (%v)", got.Data[results.KeyState], err)
	}
	var res v1alpha1.Results
	if err := json.Unmarshal([]byte(got.Data[results.KeyResults]), &res); err != nil || len(res.Throughput) != 1 {
		t.Fatalf("results.json %q (%v)\n%s", got.Data[results.KeyResults], err, out)
	}
	row := res.Throughput[0]
	// The router forwards 1 % of 1 Gbit/s of 128 B frames (8.4 kframes/s) without loss, and alone on
	// this machine the run finds exactly that. But two busy-polling engines, each pinned to one of two
	// cores, next to the router and other tests, lose frames now and then in the receiver (real loss,
	// not the DUT's), so what this test holds to is the plumbing: the split streams (sent by one
	// engine, counted by the other) yield an NDR, backed by a loss-free validation trial at that rate.
	// On a loaded host the tester may also spoil every trial near the rate (a stream 20 ms behind its
	// schedule, a shortfall, its own rings dropping): the row is then a lower bound, checked from above
	// only, and only where the records show trials the tester spoiled; the test skips at its end.
	bound := row.TesterLimited || row.Undetermined != ""
	ndr, _ := strconv.ParseFloat(row.NDR.PercentOfLineRate, 64)
	if ndr > maxRate+1e-9 || (!bound && (ndr < resolution-1e-9 || row.NDR.FramesPerSecond <= 0)) {
		t.Errorf("NDR %s%% of line rate (tester limited %v), want a rate in [%.2f, %.1f]%%\n%s", row.NDR.PercentOfLineRate, row.TesterLimited, resolution, maxRate, out)
	}
	if ndr < maxRate-resolution-1e-9 {
		t.Logf("NDR %s%% below the router's %.1f%%: loss in the receiver on this loaded machine", row.NDR.PercentOfLineRate, maxRate)
	}
	trials, err := results.ReadTrials(ctx, c, "default", tt.Name)
	if err != nil || len(trials) < int(row.Trials) || len(trials) == 0 {
		t.Fatalf("%d trial records for a search of %d trials (%v)", len(trials), row.Trials, err)
	}
	validated, spoiled := false, 0
	for _, tr := range trials {
		// the status prints the NDR to three decimals (0.656), the record keeps the rate tried (0.65625)
		if tr.Purpose == "validation" && math.Abs(tr.OfferedPercent-ndr) <= 5e-4+1e-9 && tr.TxFrames > 0 && tr.RxFrames == tr.TxFrames {
			validated = true
		}
		if tr.Test == v1alpha1.TestThroughput && tr.TesterLimited && len(tr.TesterFaults) > 0 {
			spoiled++
		}
		for _, f := range tr.TesterFaults {
			// a load fault, judged by the test's own limits (not the 1 ms defaults the split path might fall back to)
			timed := strings.Contains(f, "behind its schedule") || strings.Contains(f, "paused for")
			if !engine.ExplainedByLoad(f) || (timed && !strings.Contains(f, "(limit 20ms)")) {
				t.Errorf("trial %d: a fault no load explains, or judged by another limit than the plan's 20 ms: %s", tr.Seq, f)
			}
		}
		t.Logf("trial %d %s at %.3f%%: tx %d rx %d lost %d achieved %.0f/%.0f fps, tester faults %q", tr.Seq, tr.Purpose, tr.OfferedPercent, tr.TxFrames, tr.RxFrames, tr.Lost, tr.AchievedFPS, tr.TargetFPS, tr.TesterFaults)
		if tr.TxFrames == 0 || tr.Direction != "west->east" {
			t.Errorf("trial %+v", tr)
		}
	}
	if bound && spoiled == 0 {
		t.Errorf("the NDR is a lower bound (tester limited %v, undetermined %q), but no throughput trial was spoiled by the tester", row.TesterLimited, row.Undetermined)
	}
	if bound && row.NDR.FramesPerSecond <= 0 {
		if !t.Failed() {
			testenv.SkipForLoad(t, "the tester spoiled every throughput trial near the rate on this loaded host (%d spoiled): no NDR, and no latency at it", spoiled)
		}
		return
	}
	if !validated {
		t.Errorf("no loss-free validation trial at the NDR %s%%", row.NDR.PercentOfLineRate)
	}
	// One-way latency across the two engines' clocks is a number only with the bound the tester checked
	// stated, within tester.maxClockOffset; otherwise it is not measurable, with the reason. (The engines
	// stamp with CLOCK_REALTIME extrapolated by the TSC from their start: two engines started seconds
	// apart differ by the TSC rate's error times that gap, a few hundred µs here, and the tester finds it.
	// The old code reported such latencies wrapped around 2^32 ns, valid and without a bound.)
	if len(res.Latency) == 0 && bound && row.Undetermined != "" {
		if !t.Failed() {
			testenv.SkipForLoad(t, "the NDR is undetermined on this loaded host (%s): no latency is measured at a lower bound", row.Undetermined)
		}
		return
	}
	if len(res.Latency) != 1 {
		t.Fatalf("latency results: %+v", res.Latency)
	}
	lat := res.Latency[0].Aggregate
	switch {
	case lat.Valid && (lat.ClockOffsetBoundNs <= 0 || lat.ClockOffsetBoundNs > 500_000 || lat.MinNs <= 0 || lat.MaxNs > 1e9):
		t.Errorf("latency across the nodes: %+v, want a stated clock bound within tester.maxClockOffset", lat)
	case !lat.Valid && !strings.Contains(lat.Reason, "clock") && !spoiledEach(res.Latency[0].Repetitions):
		t.Errorf("latency not measurable for a reason that does not name the clocks (nor the tester's spoiling of each repetition): %q %+v", lat.Reason, res.Latency[0].Repetitions)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "the clocks of the two nodes: offset") {
		t.Errorf("notes do not state the clock bound: %q", res.Notes)
	}
	t.Logf("latency west->east: %+v", lat)
	if !t.Failed() {
		switch {
		case bound:
			testenv.SkipForLoad(t, "checked from above only: the tester was the limit (or the NDR undetermined) on this loaded host, %d throughput trials spoiled", spoiled)
		case !lat.Valid && spoiledEach(res.Latency[0].Repetitions):
			testenv.SkipForLoad(t, "the tester spoiled every latency repetition on this loaded host: %+v", res.Latency[0].Repetitions)
		}
	}
}

// spoiledEach says whether the tester spoiled every one of the repetitions (none of them counted).
func spoiledEach(reps []v1alpha1.LatencySummary) bool {
	for _, r := range reps {
		if r.Valid || !strings.HasPrefix(r.Reason, "the tester spoiled it") {
			return false
		}
	}
	return len(reps) > 0
}

func ptr[T any](v T) *T { return &v }

func sh(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// twoPods builds two pod namespaces, gen (t0) and rx (t1), both wired to a router namespace (r0
// 198.18.1.1, r1 198.19.1.1), and a pod network between gen (10.250.0.1) and rx (10.250.0.2). Each pod
// has its own namespace as on two nodes; it also keeps the engines' AF_PACKET fanout groups apart (the
// PMD derives their ids from PID and ifindex, and two engines in one namespace can collide).
func twoPods(t *testing.T, name string) (gen, rx string) {
	t.Helper()
	gen, rx, rns := name+"g", name+"x", name+"r"
	t.Cleanup(func() {
		for _, ns := range []string{gen, rx, rns} {
			_ = exec.Command("ip", "netns", "del", ns).Run()
		}
	})
	for _, ns := range []string{gen, rx, rns} {
		sh(t, "ip", "netns", "add", ns)
		sh(t, "ip", "-n", ns, "link", "set", "lo", "up")
	}
	for _, l := range []struct{ ns, a, b string }{{gen, "t0", "r0"}, {rx, "t1", "r1"}} {
		a, b := name+l.a, name+l.b
		sh(t, "ip", "link", "add", a, "type", "veth", "peer", "name", b)
		sh(t, "ip", "link", "set", a, "netns", l.ns)
		sh(t, "ip", "link", "set", b, "netns", rns)
		sh(t, "ip", "-n", l.ns, "link", "set", a, "name", l.a, "up")
		sh(t, "ip", "-n", rns, "link", "set", b, "name", l.b, "up")
		sh(t, "ip", "netns", "exec", l.ns, "sysctl", "-qw", "net.ipv6.conf."+l.a+".disable_ipv6=1")
	}
	sh(t, "ip", "-n", rns, "addr", "add", "198.18.1.1/24", "dev", "r0")
	sh(t, "ip", "-n", rns, "addr", "add", "198.19.1.1/24", "dev", "r1")
	sh(t, "ip", "netns", "exec", rns, "sysctl", "-qw", "net.ipv4.ip_forward=1")
	// The router knows the testers' MACs: this test is about the runner and the split streams, and a
	// neighbour re-probe answered late by an engine starved of CPU on this small machine would drop a
	// whole trial at the router (the engine's ARP is tested in dataplane/).
	for _, l := range []struct{ ns, dev, rdev, ip string }{{gen, "t0", "r0", "198.18.1.2"}, {rx, "t1", "r1", "198.19.1.2"}} {
		mac, err := exec.Command("ip", "netns", "exec", l.ns, "cat", "/sys/class/net/"+l.dev+"/address").Output()
		if err != nil {
			t.Fatal(err)
		}
		sh(t, "ip", "-n", rns, "neigh", "replace", l.ip, "lladdr", strings.TrimSpace(string(mac)), "dev", l.rdev, "nud", "permanent")
	}
	sh(t, "ip", "link", "add", name+"p0", "type", "veth", "peer", "name", name+"p1")
	sh(t, "ip", "link", "set", name+"p0", "netns", gen)
	sh(t, "ip", "link", "set", name+"p1", "netns", rx)
	sh(t, "ip", "-n", gen, "addr", "add", "10.250.0.1/30", "dev", name+"p0")
	sh(t, "ip", "-n", rx, "addr", "add", "10.250.0.2/30", "dev", name+"p1")
	sh(t, "ip", "-n", gen, "link", "set", name+"p0", "up")
	sh(t, "ip", "-n", rx, "link", "set", name+"p1", "up")
	return gen, rx
}

// relayInto listens on loopback inside the network namespace ns and forwards every connection to addr in
// this process's namespace, the way a pod reaches the API server through its Service. It returns the
// address to dial from inside ns.
func relayInto(t *testing.T, ns, addr string) string {
	t.Helper()
	type res struct {
		ln  net.Listener
		err error
	}
	ch := make(chan res, 1)
	go func() {
		// The thread stays locked and dies with this goroutine: it must never run other goroutines
		// inside ns. The listening socket keeps the namespace it was created in.
		runtime.LockOSThread()
		f, err := os.Open("/run/netns/" + ns)
		if err != nil {
			ch <- res{nil, err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- res{nil, err}
			return
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		ch <- res{ln, err}
	}()
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { _ = r.ln.Close() })
	go func() {
		for {
			in, err := r.ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer in.Close()
				out, err := net.Dial("tcp", addr)
				if err != nil {
					return
				}
				defer out.Close()
				go func() { _, _ = io.Copy(out, in) }()
				_, _ = io.Copy(in, out)
			}()
		}
	}()
	return r.ln.Addr().String()
}
