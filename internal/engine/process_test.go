package engine_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"linerate.dev/linerate/internal/engine"
)

func TestParseDevargs(t *testing.T) {
	for _, c := range []struct {
		in      string
		pci     string
		wantErr bool
	}{
		{"net_af_packet0,iface=eth1", "", false},
		{"0000:3b:02.1", "0000:3b:02.1", false},
		{"0000:3b:02.1,rxq_pkt_fill=1", "0000:3b:02.1", false},
		{"eth1", "", true},
		{"", "", true},
	} {
		d, err := engine.ParseDevargs(c.in)
		if (err != nil) != c.wantErr || d.PCI != c.pci {
			t.Errorf("ParseDevargs(%q) = %+v, %v", c.in, d, err)
		}
	}
}

func TestEALArgs(t *testing.T) {
	c := engine.ProcessConfig{Control: "/run/x.sock", FilePrefix: "p", NoHuge: true, EAL: []string{"-l", "0,1"},
		Devices: []engine.Device{{Devargs: "net_af_packet0,iface=t0"}}}
	got := strings.Join(c.EALArgs(), " ")
	want := "-l 0,1 --file-prefix p --no-huge -m 512 --no-pci --vdev net_af_packet0,iface=t0 -- --control /run/x.sock"
	if got != want {
		t.Errorf("EAL args\n got %s\nwant %s", got, want)
	}
	// a PCI device: no --no-pci, hugepages from the mount
	c = engine.ProcessConfig{Control: "tcp:0.0.0.0:7777", HugeDir: "/dev/hugepages", Devices: []engine.Device{{PCI: "0000:3b:02.1", Devargs: "0000:3b:02.1"}}}
	args := c.EALArgs()
	if slices.Contains(args, "--no-pci") || !slices.Contains(args, "--huge-dir") || !slices.Contains(args, "tcp:0.0.0.0:7777") {
		t.Errorf("PCI args %v", args)
	}
}

func TestTrialArgsRejectsWhatTheEngineWould(t *testing.T) {
	for _, tc := range []engine.TrialConfig{
		{Streams: []int{0, 1}, RatesFPS: []float64{1000}, Duration: time.Second},
		{Streams: []int{0}, RatesFPS: []float64{0}, Duration: time.Second},
		{Streams: []int{0}, RatesFPS: []float64{1000}},
		{},
	} {
		if _, err := engine.TrialArgs(tc); err == nil {
			t.Errorf("TrialArgs(%+v) accepted", tc)
		}
	}
	kv, err := engine.TrialArgs(engine.TrialConfig{Streams: []int{0, 1}, RatesFPS: []float64{1000, 2000.5}, Duration: 1500 * time.Millisecond,
		WarmUp: 200 * time.Millisecond, Drain: 300 * time.Millisecond, Stall: 2 * time.Second, ID: 7})
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(kv)
	want := "[{streams 0,1} {rates 1000.000,2000.500} {unit fps} {duration_ms 1500} {warmup_ms 200} {drain_ms 300} {stall_ms 2000} {id 7}]"
	if got != want {
		t.Errorf("TRIAL args\n got %s\nwant %s", got, want)
	}
}

// needEngine returns the engine binary, or skips: these tests run the real engine on a veth pair.
func needEngine(t *testing.T) string {
	t.Helper()
	eng := os.Getenv("LINERATE_ENGINE")
	if eng == "" {
		eng, _ = filepath.Abs("../../dataplane/build/linerate-engine")
	}
	if _, err := os.Stat(eng); err != nil {
		t.Skipf("no engine at %s: set LINERATE_ENGINE or run 'make engine'", eng)
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root for network namespaces")
	}
	return eng
}

func run(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// start runs the engine inside a namespace holding a veth pair t0 <-> t1 (a wire), on both ends.
func start(t *testing.T, eng string) *engine.Process {
	t.Helper()
	ns := fmt.Sprintf("lre%d", os.Getpid()%100000)
	wire(t, ns, "02:4c:52:00:01")
	return startIn(t, eng, ns, "lre", engine.Device{Devargs: "net_af_packet0,iface=t0"}, engine.Device{Devargs: "net_af_packet1,iface=t1"})
}

// wire makes namespace ns with a veth pair t0 <-> t1 whose MACs are macPrefix:01 and macPrefix:02; the
// namespace is deleted when the test ends.
func wire(t *testing.T, ns, macPrefix string) {
	t.Helper()
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	run(t, "ip", "netns", "add", ns)
	run(t, "ip", "-n", ns, "link", "add", "t0", "address", macPrefix+":01", "type", "veth", "peer", "name", "t1", "address", macPrefix+":02")
	for _, i := range []string{"t0", "t1"} {
		run(t, "ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf."+i+".disable_ipv6=1")
		run(t, "ip", "-n", ns, "link", "set", i, "up")
	}
}

// startIn runs an engine on devices inside namespace ns, through a wrapper script, since StartProcess execs
// its binary directly (`ip netns exec` execs the engine in turn, so the process is the engine itself: a
// test may signal it). prefix names its DPDK files.
func startIn(t *testing.T, eng, ns, prefix string, devices ...engine.Device) *engine.Process {
	t.Helper()
	return startInWith(t, eng, ns, prefix, []string{"-l", "0,1"}, devices...)
}

// startInNS starts an engine in namespace ns through a wrapper script, its output in log.
func startInNS(t *testing.T, eng, ns, prefix string, lcores []string, log io.Writer, devices ...engine.Device) (*engine.Process, error) {
	t.Helper()
	return startInNSArgs(t, eng, ns, prefix, lcores, nil, log, devices...)
}

// startInNSArgs is startInNS with engine arguments (after --).
func startInNSArgs(t *testing.T, eng, ns, prefix string, lcores, args []string, log io.Writer, devices ...engine.Device) (*engine.Process, error) {
	t.Helper()
	dir := t.TempDir()
	wrapper := filepath.Join(dir, "engine.sh")
	if err := os.WriteFile(wrapper, []byte(fmt.Sprintf("#!/bin/sh\nexec ip netns exec %s %s \"$@\"\n", ns, eng)), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return engine.StartProcess(ctx, engine.ProcessConfig{Binary: wrapper, Control: filepath.Join(dir, "ctl.sock"),
		FilePrefix: fmt.Sprintf("%s%d", prefix, os.Getpid()), NoHuge: true, EAL: append([]string{"--no-shconf"}, lcores...),
		Devices: devices, Args: args, Stdout: log, Stderr: log})
}

// startInWith is startIn with the engine's lcores given (EAL's -l or --lcores and their value).
func startInWith(t *testing.T, eng, ns, prefix string, lcores []string, devices ...engine.Device) *engine.Process {
	t.Helper()
	return startInWithArgs(t, eng, ns, prefix, lcores, nil, devices...)
}

// startInWithArgs is startInWith with engine arguments (after --).
func startInWithArgs(t *testing.T, eng, ns, prefix string, lcores, args []string, devices ...engine.Device) *engine.Process {
	t.Helper()
	var log strings.Builder
	p, err := startInNSArgs(t, eng, ns, prefix, lcores, args, &log, devices...)
	if err != nil {
		t.Fatalf("start in %s: %v\n%s", ns, err, log.String())
	}
	t.Cleanup(func() {
		_ = p.Cmd.Process.Signal(syscall.SIGCONT) // a test that stopped it
		_ = p.Close()
		if t.Failed() {
			t.Logf("engine %s log:\n%s", prefix, log.String())
		}
	})
	return p
}

func TestEngineOnAWire(t *testing.T) {
	eng := needEngine(t)
	p := start(t, eng)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if p.Hello.Proto != engine.ProtocolVersion || p.Hello.Ports != 2 {
		t.Fatalf("HELLO %+v", p.Hello)
	}
	for i, peer := range []string{"02:4c:52:00:01:02", "02:4c:52:00:01:01"} {
		info, err := p.Port(ctx, engine.PortConfig{ID: i, IP4: fmt.Sprintf("198.18.0.%d/24", i+1), PeerMAC: peer})
		if err != nil {
			t.Fatal(err)
		}
		if info.ID != i || info.MAC == "" {
			t.Errorf("PORT %d: %+v", i, info)
		}
	}
	if _, err := p.Stream(ctx, engine.StreamConfig{ID: 0, TX: 0, RX: 1, L3: "ipv4", Src: "198.18.0.1", Dst: "198.18.0.2", Sizes: []int{64, 512}}); err != nil {
		t.Fatal(err)
	}
	var progress int
	res, err := p.RunTrial(ctx, engine.TrialConfig{Streams: []int{0}, RatesFPS: []float64{5000}, Duration: 500 * time.Millisecond,
		WarmUp: 100 * time.Millisecond, Drain: 200 * time.Millisecond}, func(engine.Progress) { progress++ })
	if err != nil {
		t.Fatal(err)
	}
	s := res.Stream(0)
	if res.Aborted() || s == nil {
		t.Fatalf("trial %+v", res)
	}
	// a wire loses nothing; the trial offers ceil(0.5 s × 5000/s) frames, or says it was saturated
	// (a preempted tester on a shared host) when it fell more than 0.5 % short
	if s.TxFrames > 2500 || (s.TxFrames < 2488) != s.Saturated || s.RxFrames != s.TxFrames || s.Lost() != 0 || s.Duplicates != 0 {
		t.Errorf("tx %d (saturated %v) rx %d lost %d dup %d", s.TxFrames, s.Saturated, s.RxFrames, s.Lost(), s.Duplicates)
	}
	if s.Latency == nil || !s.Latency.Valid {
		t.Errorf("latency %+v", s.Latency)
	}
	if len(s.Classes) != 2 || s.Classes[0].TxFrames+s.Classes[1].TxFrames != s.TxFrames {
		t.Errorf("classes %+v", s.Classes)
	}
	if progress == 0 {
		t.Error("no progress reported while the trial ran")
	}
	// an error response is an *engine.Error with the protocol's code, and the connection stays usable
	_, err = p.Stream(ctx, engine.StreamConfig{ID: 1, TX: 0, RX: 1, L3: "ipv4", Src: "198.18.0.1", Dst: "198.18.0.2", Sizes: []int{20}})
	var ee *engine.Error
	if !errors.As(err, &ee) || ee.Code == "" {
		t.Errorf("a 20 B frame: %v, want an engine error", err)
	}
	if _, err := p.Client.Hello(ctx); err != nil {
		t.Errorf("HELLO after an error: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the engine did not exit on Close")
	}
}

// A progress hook that takes longer than the engine is given (a results ConfigMap write while the API
// server is slow) does not make a trial the engine finished look hung.
func TestASlowProgressHookDoesNotFailAFinishedTrial(t *testing.T) {
	eng := needEngine(t)
	p := start(t, eng)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i, peer := range []string{"02:4c:52:00:01:02", "02:4c:52:00:01:01"} {
		if _, err := p.Port(ctx, engine.PortConfig{ID: i, IP4: fmt.Sprintf("198.18.0.%d/24", i+1), PeerMAC: peer}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Stream(ctx, engine.StreamConfig{ID: 0, TX: 0, RX: 1, L3: "ipv4", Src: "198.18.0.1", Dst: "198.18.0.2", Sizes: []int{64}}); err != nil {
		t.Fatal(err)
	}
	p.HungAfter = 500 * time.Millisecond
	p.PollInterval = 100 * time.Millisecond
	slow := true
	res, err := p.RunTrial(ctx, engine.TrialConfig{Streams: []int{0}, RatesFPS: []float64{1000}, Duration: 200 * time.Millisecond,
		Drain: 100 * time.Millisecond}, func(engine.Progress) {
		if slow {
			slow = false
			time.Sleep(2 * time.Second) // longer than the trial and its slack together
		}
	})
	if err != nil || res.Stream(0) == nil || res.Stream(0).TxFrames == 0 {
		t.Fatalf("a finished trial behind a slow progress hook: %+v, %v", res, err)
	}
}

func TestEngineThatCannotStartFailsFast(t *testing.T) {
	eng := needEngine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	t0 := time.Now()
	_, err := engine.StartProcess(ctx, engine.ProcessConfig{Binary: eng, Control: filepath.Join(dir, "ctl.sock"),
		FilePrefix: fmt.Sprintf("lrf%d", os.Getpid()), NoHuge: true, EAL: []string{"--no-shconf", "-l", "0"},
		Devices: []engine.Device{{Devargs: "net_af_packet0,iface=lr-no-such-if"}}, Stdout: &strings.Builder{}, Stderr: &strings.Builder{}})
	if err == nil {
		t.Fatal("an engine on a missing interface started")
	}
	if !strings.Contains(err.Error(), "exited") {
		t.Errorf("error %v: want the exit, not a timeout", err)
	}
	// what the engine said last is in the error a user reads (the condition, the CLI), not only in a log
	if !strings.Contains(err.Error(), "exit status 1: linerate-engine: DPDK opened 0 ports") {
		t.Errorf("error %v: want the engine's own reason", err)
	}
	t.Logf("failed in %s: %v", time.Since(t0).Round(time.Millisecond), err)
}

// DPDK starts with the devices it could open and leaves out the others (here an af_xdp interface that
// is not there, after a net_ring that is): the engine would run with its ports misnumbered, so StartProcess
// refuses it at once and names the devices (it used to start, and the run failed later on "no such port").
func TestAnEngineMissingOneOfItsDevicesIsRefused(t *testing.T) {
	eng := needEngine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	var log strings.Builder
	p, err := engine.StartProcess(ctx, engine.ProcessConfig{Binary: eng, Control: filepath.Join(dir, "ctl.sock"),
		FilePrefix: fmt.Sprintf("lrm%d", os.Getpid()), NoHuge: true, EAL: []string{"--no-shconf", "-l", "0,1"},
		Devices: []engine.Device{{Devargs: "net_ring0"}, {Devargs: "net_af_xdp1,iface=lr-no-such-if"}},
		Stdout:  &log, Stderr: &log})
	if err == nil {
		_ = p.Close()
		t.Fatalf("an engine that opened %d of 2 devices was started", p.Hello.Ports)
	}
	// the devices named, and DPDK's reason for the one it refused (its driver's line, then the bus's)
	if !strings.Contains(err.Error(), "opened 1 of the 2 devices") || !strings.Contains(err.Error(), "net_af_xdp1,iface=lr-no-such-if") ||
		!strings.Contains(err.Error(), "failed to initialize net_af_xdp1 device") {
		t.Errorf("error %q: want the count and the devices named\n%s", err, log.String())
	}
	t.Log(err)
}

// The runner gives the engine one log for stdout and stderr: the refusal the engine writes to stderr is
// the last of its lines there, not the informational lines it wrote to stdout before it (stdout is a pipe,
// which C buffers whole unless told otherwise: they came out at exit, after the refusal). Here the engine
// refuses two af_packet ports on one interface (they would split its frames).
func TestAnEngineRefusingAPortSaysWhyInTheError(t *testing.T) {
	eng := needEngine(t)
	ns := fmt.Sprintf("lrw%d", os.Getpid()%100000)
	wire(t, ns, "02:4c:52:00:07")
	var log strings.Builder
	p, err := startInNS(t, eng, ns, "lrw", []string{"-l", "0,1"}, &log,
		engine.Device{Devargs: "net_af_packet0,iface=t0"}, engine.Device{Devargs: "net_af_packet1,iface=t0"})
	if err == nil {
		_ = p.Close()
		t.Fatal("an engine with two af_packet ports on one interface started")
	}
	if !strings.Contains(err.Error(), "exit status 1: linerate-engine: port 0 (net_af_packet): 2 packet sockets on interface t0, 1 of them polled") {
		t.Errorf("error %q: want the engine's refusal\n%s", err, log.String())
	}
}

// An engine of another protocol version is an answer, not a start-up still under way: StartProcess says so
// at once (it used to retry HELLO until its context ended and report only the deadline). The "engine" here
// is a script that answers HELLO as an engine of protocol 3 would.
func TestAnEngineOfAnotherProtocolIsRefusedAtOnce(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 for the stand-in engine")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "old-engine")
	body := `#!/usr/bin/env python3
import socket, sys
path = sys.argv[sys.argv.index("--control") + 1]
s = socket.socket(socket.AF_UNIX)
s.bind(path)
s.listen(4)
while True:
    c, _ = s.accept()
    f = c.makefile("r")
    for line in f:
        c.sendall(b'{"ok":true,"proto":3,"engine":"linerate-engine old","ports":1}\n')
    c.close()
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	p, err := engine.StartProcess(ctx, engine.ProcessConfig{Binary: script, Control: filepath.Join(dir, "ctl.sock"), NoHuge: true})
	if err == nil {
		_ = p.Close()
		t.Fatal("an engine speaking protocol 3 was accepted")
	}
	if !errors.Is(err, engine.ErrProtocolVersion) || !strings.Contains(err.Error(), "protocol version 3") {
		t.Errorf("error %q: want one naming the engine's protocol version", err)
	}
	if waited := time.Since(start); waited > 20*time.Second {
		t.Errorf("refused after %s: a version answer needs no retry", waited)
	}
}
