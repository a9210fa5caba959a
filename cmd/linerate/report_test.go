package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/report/reporttest"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/runner"
	"linerate.dev/linerate/internal/testenv"
)

// Run as a kubectl plugin, the binary speaks as one: its help, usage and errors name "kubectl linerate",
// and run as kubectl's completion helper it completes; under its own name it is linerate.
func TestKubectlPluginName(t *testing.T) {
	for _, tc := range []struct {
		argv0 string
		args  []string
		out   []string // substrings of what it prints
		not   string
	}{
		{"/usr/local/bin/linerate", []string{"report", "--help"}, []string{"Usage:\n  linerate report TRAFFICTEST"}, "Usage:\n  kubectl"},
		{"/home/u/.local/bin/kubectl-linerate", []string{"report", "--help"}, []string{"Usage:\n  kubectl linerate report TRAFFICTEST", "-n, --namespace", "--kubeconfig", "-o, --output"}, ""},
		{"kubectl-linerate", []string{"--help"}, []string{"kubectl linerate [command]", "report "}, ""},
		{"kubectl-linerate", []string{"report"}, []string{"kubectl linerate report: give one TrafficTest by name", "See 'kubectl linerate report --help'."}, ""},
		{"kubectl_complete-linerate", []string{"rep"}, []string{"report\tWrite the HTML report"}, ""},
	} {
		t.Run(filepath.Base(tc.argv0)+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			root := newRootCommand()
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetErr(&out)
			root.SetArgs(invokedAs(root, tc.argv0, tc.args))
			if cmd, err := root.ExecuteContextC(context.Background()); err != nil {
				out.WriteString(explain(cmd, err))
			}
			for _, s := range tc.out {
				if !strings.Contains(out.String(), s) {
					t.Errorf("lacks %q:\n%s", s, out.String())
				}
			}
			if tc.not != "" && strings.Contains(out.String(), tc.not) {
				t.Errorf("says %q:\n%s", tc.not, out.String())
			}
		})
	}
}

// clusterTestbed is a real kube-apiserver with linerate's CRDs, a kubeconfig for it, and a client.
type clusterTestbed struct {
	c          client.Client
	kubeconfig string
}

func newClusterTestbed(t *testing.T) clusterTestbed {
	t.Helper()
	cfg, _ := testenv.ForTest(t)
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{"../../config/crd/bases"}, ErrorIfPathMissing: true}); err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return clusterTestbed{c: c, kubeconfig: writeKubeconfig(t, cfg)}
}

func writeKubeconfig(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin", Namespace: "lab"}
	kc.CurrentContext = "envtest"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// trafficTest creates a TrafficTest with the given status, and its results ConfigMap as the operator
// makes it (empty, owned by the test), unless resultsConfigMap is false.
func (b clusterTestbed) trafficTest(t *testing.T, ns, name string, resultsConfigMap bool) *v1alpha1.TrafficTest {
	t.Helper()
	ctx := context.Background()
	if err := b.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
	tt := &v1alpha1.TrafficTest{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1alpha1.TrafficTestSpec{
		DUT:        v1alpha1.DUTSpec{Name: "ipsec-gw-1", Model: "GW-9000"},
		Tests:      []v1alpha1.TestKind{v1alpha1.TestThroughput},
		FrameSizes: []int32{64},
		Traffic:    v1alpha1.TrafficParams{LineRate: "10G"},
		Ports: []v1alpha1.PortSpec{{Name: "west", Driver: v1alpha1.DriverAFPacket, Interface: "t0", Address: "198.18.1.2/24", Gateway: "198.18.1.1"},
			{Name: "east", Driver: v1alpha1.DriverAFPacket, Interface: "t1", Address: "198.19.1.2/24", Gateway: "198.19.1.1"}}}}
	if err := b.c.Create(ctx, tt); err != nil {
		t.Fatal(err)
	}
	if !resultsConfigMap {
		return tt
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: results.ConfigMapName(name), Namespace: ns}}
	if err := controllerutil.SetControllerReference(tt, cm, b.c.Scheme()); err != nil {
		t.Fatal(err)
	}
	if err := b.c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	b.setStatus(t, tt, v1alpha1.PhaseRunning, nil)
	return tt
}

func (b clusterTestbed) setStatus(t *testing.T, tt *v1alpha1.TrafficTest, phase v1alpha1.Phase, failed *metav1.Condition) {
	t.Helper()
	tt.Status.Phase, tt.Status.ResultsConfigMap = phase, results.ConfigMapName(tt.Name)
	if failed != nil {
		failed.LastTransitionTime = metav1.Now()
		tt.Status.Conditions = []metav1.Condition{*failed}
	}
	if err := b.c.Status().Update(context.Background(), tt); err != nil {
		t.Fatal(err)
	}
}

// makeSpareSegments does the operator's part of the trial segments until the test ends: it makes the
// next segment's ConfigMap, empty and owned by the TrafficTest, once the open segment is half full.
func (b clusterTestbed) makeSpareSegments(t *testing.T, tt *v1alpha1.TrafficTest) {
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	key := types.NamespacedName{Namespace: tt.Namespace, Name: results.ConfigMapName(tt.Name)}
	go func() {
		for ; ctx.Err() == nil; time.Sleep(10 * time.Millisecond) {
			cm := &corev1.ConfigMap{}
			if b.c.Get(ctx, key, cm) != nil {
				continue
			}
			segs, _ := results.Segments(cm)
			open, _ := results.DecodeTrialLines(cm.BinaryData[results.KeyTrials])
			if name := results.SpareSegment(tt.Name, len(segs), results.OpenBytes(open)); name != "" {
				spare := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tt.Namespace}}
				_ = controllerutil.SetControllerReference(tt, spare, b.c.Scheme())
				_ = b.c.Create(ctx, spare)
			}
		}
	}()
}

var reportSizes = []int32{64, 128, 256, 512, 1024, 1280, 1518}

// measuredRun is what the runner of a full suite hands its sink, step by step: the trial records of each
// frame size (varied as measured ones are, so that they compress as real ones do), and the result tables
// of every test after each step.
func measuredRun(trialsPerStep int) (steps [][]results.Trial, tables []*v1alpha1.Results) {
	rng := rand.New(rand.NewPCG(28, 5))
	start := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	res := &v1alpha1.Results{LineRateBitsPerSecond: 10e9}
	seq := 0
	for i, size := range reportSizes {
		line := 10e9 / float64((size+20)*8)
		var step []results.Trial
		for range trialsPerStep {
			seq++
			pct := 100 * rng.Float64()
			tx := int64(line * pct / 100 * 2)
			lost := rng.Int64N(tx/1000+1) * int64(rng.IntN(2))
			tr := results.Trial{Seq: seq, Time: start.Add(time.Duration(seq) * 3 * time.Second), Test: v1alpha1.TestThroughput,
				FrameSize: int(size), Direction: []string{"west->east", "east->west"}[seq%2], Purpose: "search", DurationS: 2 + rng.Float64()/1000,
				OfferedPercent: pct, TargetFPS: line * pct / 100, AchievedFPS: line * pct / 100 * (1 - rng.Float64()/1e4),
				TxFrames: tx, RxFrames: tx - lost, Lost: lost, LossPercent: 100 * float64(lost) / float64(tx+1), Pass: lost == 0}
			if rng.IntN(4) == 0 {
				base := 4000 + rng.Int64N(40000)
				tr.Purpose, tr.Latency = "latency", &v1alpha1.LatencySummary{Valid: true, Frames: tx, MinNs: base, MeanNs: base * 2,
					P50Ns: base * 2, P90Ns: base * 3, P99Ns: base * 5, P999Ns: base * 9, P9999Ns: base * 12, MaxNs: base * 40}
			}
			step = append(step, tr)
		}
		steps = append(steps, step)
		for d, dir := range []string{"west->east", "east->west"} {
			fps := int64(line) * int64(60+5*i-3*d) / 100
			ndr := v1alpha1.Rate{FramesPerSecond: fps, L2BitsPerSecond: fps * int64(size) * 8, L1BitsPerSecond: fps * int64(size+20) * 8,
				PercentOfLineRate: fmt.Sprint(60 + 5*i - 3*d)}
			res.Throughput = append(res.Throughput, v1alpha1.ThroughputResult{FrameSize: size, Direction: dir, NDR: ndr, LossPercent: "0", Trials: int32(trialsPerStep / 2)})
			base := int64(5000 + 300*i + 100*d)
			res.Latency = append(res.Latency, v1alpha1.LatencyResult{FrameSize: size, Direction: dir, Rate: ndr, Aggregate: v1alpha1.LatencySummary{
				Valid: true, Frames: 1e6, MinNs: base, MeanNs: 2 * base, P50Ns: 2 * base, P90Ns: 3 * base, P99Ns: 5 * base, P999Ns: 9 * base, P9999Ns: 12 * base, MaxNs: 40 * base}})
			curve := v1alpha1.FrameLossResult{FrameSize: size, Direction: dir}
			for load := 100; load >= 60; load -= 10 {
				curve.Points = append(curve.Points, v1alpha1.FrameLossPoint{PercentOfLineRate: fmt.Sprint(load), LossPercent: fmt.Sprintf("%.2f", max(0, float64(load-60-5*i)/2))})
			}
			res.FrameLoss = append(res.FrameLoss, curve)
		}
		tables = append(tables, res.DeepCopy())
	}
	return steps, tables
}

// writeAsTheRunner hands the steps to the runner's ConfigMapSink as a run does: each trial as measured,
// progress, and a checkpoint with the tables after each complete step; it stops after `upto` steps.
func writeAsTheRunner(t *testing.T, sink *runner.ConfigMapSink, steps [][]results.Trial, tables []*v1alpha1.Results, upto int) {
	t.Helper()
	if err := sink.State(context.Background(), results.State{State: results.StateRunning, Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	for i, step := range steps[:upto] {
		for _, tr := range step {
			sink.OnTrial(tr)
		}
		sink.OnProgress(v1alpha1.Progress{Test: v1alpha1.TestThroughput, FrameSize: reportSizes[min(i+1, len(reportSizes)-1)], Direction: "west->east",
			Trial: int32(step[len(step)-1].Seq), StepsDone: int32(i + 1), StepsTotal: int32(len(steps)),
			Summary:    fmt.Sprintf("throughput %dB west->east: trial %d (step %d/%d)", reportSizes[min(i+1, len(reportSizes)-1)], step[len(step)-1].Seq, i+2, len(steps)),
			UpdateTime: &metav1.Time{Time: step[len(step)-1].Time}})
		sink.OnCheckpoint(results.Checkpoint{PlanHash: "h", StepsDone: i + 1, LastSeq: step[len(step)-1].Seq, Results: tables[i]})
	}
}

// runReport runs `linerate report` as a user types it, and returns what it printed or its failure.
func runReport(kubeconfig string, args ...string) (string, error) {
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"report", "--kubeconfig", kubeconfig}, args...))
	cmd, err := root.ExecuteContextC(context.Background())
	if err != nil {
		return explain(cmd, err), err
	}
	return out.String(), nil
}

// The report of a TrafficTest in a cluster, from what the runner's own sink wrote into the results
// ConfigMap and its sealed trial segments: while it runs, once it succeeded and once it failed; through
// `linerate report` and `kubectl linerate report`; every trial record and every plot in it, read well
// in a browser.
func TestReportFromTheCluster(t *testing.T) {
	b := newClusterTestbed(t)
	ctx := context.Background()
	tt := b.trafficTest(t, "lab", "nightly", true)
	b.makeSpareSegments(t, tt)
	steps, tables := measuredRun(900) // some 6,300 records: two sealed segments and the open one
	sink := &runner.ConfigMapSink{Client: b.c, Key: types.NamespacedName{Namespace: "lab", Name: results.ConfigMapName("nightly")},
		ProgressEvery: time.Millisecond, FlushWithin: time.Minute}
	writeAsTheRunner(t, sink, steps, tables, 6)
	var all []results.Trial
	for _, s := range steps[:6] {
		all = append(all, s...)
	}
	// the sink writes progress off the run's goroutine: wait for the last step's
	var cm corev1.ConfigMap
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		var p v1alpha1.Progress
		err := b.c.Get(ctx, sink.Key, &cm)
		if err == nil && json.Unmarshal([]byte(cm.Data[results.KeyProgress]), &p) == nil && p.StepsDone == 6 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sink did not write the progress of step 6 within a minute (%v)", err)
		}
	}
	segs, _ := results.Segments(&cm)
	if len(segs) < 2 {
		t.Fatalf("%d sealed trial segments: the test needs the records spread over several ConfigMaps", len(segs))
	}

	chromium := ""
	checkReport := func(t *testing.T, dir string, res *v1alpha1.Results, trials []results.Trial, says []string) {
		t.Helper()
		page, err := os.ReadFile(filepath.Join(dir, "index.html"))
		if err != nil {
			t.Fatal(err)
		}
		for _, chart := range []string{"throughput-fps.svg", "throughput-bps.svg", "frame-loss.svg", "latency.svg"} {
			if _, err := os.Stat(filepath.Join(dir, chart)); err != nil || !strings.Contains(string(page), `<img src="`+chart+`"`) {
				t.Errorf("the report lacks the plot %s (%v)", chart, err)
			}
		}
		if want := fmt.Sprintf("(%d trials)", len(trials)); !strings.Contains(string(page), want) {
			t.Errorf("index.html does not say %q", want)
		}
		var want bytes.Buffer
		for _, tr := range trials {
			line, _ := json.Marshal(tr)
			want.Write(append(line, '\n'))
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "trials.jsonl")); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("trials.jsonl holds %d lines, not the %d records the runner wrote, in order", bytes.Count(got, []byte("\n")), len(trials))
		}
		var gotRes v1alpha1.Results
		if raw, err := os.ReadFile(filepath.Join(dir, "results.json")); err != nil || json.Unmarshal(raw, &gotRes) != nil ||
			len(gotRes.Throughput) != len(res.Throughput) || len(gotRes.FrameLoss) != len(res.FrameLoss) {
			t.Errorf("results.json holds %d throughput rows, want %d (%v)", len(gotRes.Throughput), len(res.Throughput), err)
		}
		if chromium == "" {
			chromium = reporttest.Browser(t)
		}
		problems, text := reporttest.InBrowser(t, chromium, dir)
		for _, p := range problems {
			t.Error(p)
		}
		says = append(says, "RFC 2544 results: nightly", "DUT: ipsec-gw-1 GW-9000")
		for _, r := range res.Throughput {
			says = append(says, fmt.Sprintf("%d B %s", r.FrameSize, r.Direction))
		}
		for _, s := range says {
			if !strings.Contains(text, s) {
				t.Errorf("the page does not say %q; it says: %s", s, text)
			}
		}
	}

	t.Run("running", func(t *testing.T) {
		dir := t.TempDir()
		out, err := runReport(b.kubeconfig, "nightly", "-o", dir) // the namespace is the context's
		if err != nil {
			t.Fatal(out)
		}
		if want := fmt.Sprintf("report of TrafficTest lab/nightly (%d trials) in %s/index.html", len(all), dir); !strings.Contains(out, want) {
			t.Errorf("printed %q, want %q", out, want)
		}
		checkReport(t, dir, tables[5], all, []string{"has not finished yet: the TrafficTest is Running, 6 of 7 steps done",
			"the tester last reported: throughput 1518B west->east: trial 5400 (step 7/7) (at 2026-11-25 10:30:00 UTC)"})
	})

	t.Run("completes the names of the TrafficTests", func(t *testing.T) {
		root := newRootCommand()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&bytes.Buffer{})
		root.SetArgs([]string{cobra.ShellCompRequestCmd, "report", "--kubeconfig", b.kubeconfig, "-n", "lab", ""})
		if err := root.Execute(); err != nil || !strings.Contains(out.String(), "nightly\tRunning\n") {
			t.Errorf("completion printed %q (%v), want nightly with its phase", out.String(), err)
		}
	})

	// the last step, and the run's end as the runner writes it
	for _, tr := range steps[6] {
		sink.OnTrial(tr)
	}
	all = append(all, steps[6]...)
	if err := sink.Finish(ctx, tables[6], results.State{State: results.StateSucceeded, Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	t.Run("finished, not yet judged", func(t *testing.T) {
		dir := t.TempDir()
		if out, err := runReport(b.kubeconfig, "nightly", "-n", "lab", "-o", dir); err != nil {
			t.Fatal(out)
		}
		checkReport(t, dir, tables[6], all, []string{"has not finished yet", "the tester ended it (Succeeded) and the operator has not judged it yet"})
	})

	b.setStatus(t, tt, v1alpha1.PhaseSucceeded, nil)
	finished := t.TempDir()
	t.Run("succeeded", func(t *testing.T) {
		if out, err := runReport(b.kubeconfig, "nightly", "-n", "lab", "-o", finished); err != nil {
			t.Fatal(out)
		}
		checkReport(t, finished, tables[6], all, nil)
		page, _ := os.ReadFile(filepath.Join(finished, "index.html"))
		if strings.Contains(string(page), "finish") {
			t.Error("the report of a run that succeeded says it did not finish")
		}
	})

	t.Run("kubectl linerate report", func(t *testing.T) {
		kubectl, err := exec.LookPath("kubectl")
		if err != nil {
			t.Skip("no kubectl on the PATH")
		}
		bin := t.TempDir()
		sh(t, "go", "build", "-o", filepath.Join(bin, "linerate"), ".")
		if err := os.Symlink("linerate", filepath.Join(bin, kubectlPlugin)); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		cmd := exec.Command(kubectl, "linerate", "report", "nightly", "-n", "lab", "--kubeconfig", b.kubeconfig, "-o", dir)
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl linerate report: %v\n%s", err, out)
		}
		for _, f := range []string{"index.html", "trials.jsonl", "results.json", "throughput-fps.svg"} {
			a, _ := os.ReadFile(filepath.Join(finished, f))
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil || !bytes.Equal(a, b) {
				t.Errorf("kubectl linerate report wrote another %s than linerate report (%v)", f, err)
			}
		}
	})

	b.setStatus(t, tt, v1alpha1.PhaseFailed, &metav1.Condition{Type: v1alpha1.ConditionFailed, Status: metav1.ConditionTrue,
		Reason: v1alpha1.ReasonDUTStalled, Message: "nothing came back from the DUT for 2s during throughput at 1518 B"})
	t.Run("failed", func(t *testing.T) {
		dir := t.TempDir()
		if out, err := runReport(b.kubeconfig, "nightly", "-n", "lab", "-o", dir); err != nil {
			t.Fatal(out)
		}
		checkReport(t, dir, tables[6], all, []string{"This run did not finish: DUTStalled: nothing came back from the DUT for 2s during throughput at 1518 B."})
	})
}

// What cannot be reported is refused with what is missing named: no report is written with records left
// out.
func TestReportRefusesWhatItCannotRead(t *testing.T) {
	b := newClusterTestbed(t)
	ctx := context.Background()
	b.trafficTest(t, "lab", "unplanned", false)
	b.trafficTest(t, "lab", "idle", true)
	holed := b.trafficTest(t, "lab", "holed", true)
	b.makeSpareSegments(t, holed)
	steps, tables := measuredRun(900)
	sink := &runner.ConfigMapSink{Client: b.c, Key: types.NamespacedName{Namespace: "lab", Name: results.ConfigMapName("holed")}, FlushWithin: time.Minute}
	writeAsTheRunner(t, sink, steps, tables, 7)
	if err := b.c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "lab", Name: results.SegmentConfigMapName("holed", 2)}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		says []string
	}{
		{"no such test", []string{"nosuch", "-n", "lab"}, []string{`TrafficTest "nosuch" not found in namespace "lab"`}},
		{"another namespace", []string{"idle", "-n", "default"}, []string{`TrafficTest "idle" not found in namespace "default"`}},
		{"not planned yet", []string{"unplanned"}, []string{"TrafficTest lab/unplanned has no results ConfigMap yet", "phase not yet planned"}},
		{"nothing measured", []string{"idle"}, []string{"TrafficTest lab/idle has measured nothing yet (phase Running)", "idle-results holds no results"}},
		{"a segment missing", []string{"holed"}, []string{"trial segment holed-trials-2", "segment 2 of the", "is missing"}},
		{"two tests", []string{"idle", "holed"}, []string{"give one TrafficTest by name (got 2 arguments)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "report")
			out, err := runReport(b.kubeconfig, append(tc.args, "-o", dir)...)
			if err == nil {
				t.Fatalf("a report was written: %s", out)
			}
			for _, s := range tc.says {
				if !strings.Contains(out, s) {
					t.Errorf("the error %q does not say %q", out, s)
				}
			}
			if _, err := os.Stat(dir); err == nil {
				t.Error("a refused report left its directory behind")
			}
		})
	}
}
