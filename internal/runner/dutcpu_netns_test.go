package runner_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
)

// The DUT's CPU cost (spec.dut.cpu) is read from the DUT's cgroup at every trial's start and end. Truth: a
// userspace forwarder given 10 % of one CPU by its cgroup's quota, doing per-frame work (SHA-256), forwards
// at most what that quota pays for: at the NDR it uses the whole quota, so the row says about 0.1 cores busy
// and saturated, and its cost per thousand frames is what the forwarder's own CPU clock says one frame costs.
func TestTheDUTsCoresBusyAtTheNDRAreItsCPUQuota(t *testing.T) {
	eng := need(t)
	const quota = 0.10
	cg := dutCgroup(t, "cpu", quota)
	tns := bumpInTheWire(t, "dc")
	fwd := startInCgroup(t, cg, "ip", "netns", "exec", tns+"d", "python3", "testdata/cpu_forwarder.py", "d0", "d1", "20")
	frames0, cpu0 := fwd.stats(t) // its start-up is not per-frame work

	o, stderr, err := execCLI(t, eng, tns, loopTest(func(tt *v1alpha1.TrafficTest) {
		tt.Spec.Tests = throughput
		tt.Spec.FrameSizes = []int32{128}
		tt.Spec.Traffic.Direction = v1alpha1.Unidirectional
		tt.Spec.Traffic.LineRate = "1G"
		tt.Spec.Throughput.MaxRate = "5"
		tt.Spec.Throughput.Resolution = "0.01"
		tt.Spec.Durations.ValidationTrial = dur(2 * time.Second)
		tt.Spec.DUT.CPU = &v1alpha1.DUTCPUSource{Cgroup: cg.rel}
	}), "", "--cgroup-root", cgroupFS(t))
	if err != nil {
		t.Fatalf("linerate run: %v\n%s", err, stderr)
	}
	frames, cpu := fwd.stats(t)
	frames, cpu = frames-frames0, cpu-cpu0
	if o.Error != "" || len(o.Results.Throughput) != 1 {
		t.Fatalf("run: %q %+v", o.Error, o.Results)
	}
	defer logTrialsIfFailed(t, o)
	row := o.Results.Throughput[0]
	perKframe := float64(cpu.Microseconds()) / (float64(frames) / 1000)
	t.Logf("NDR %d frames/s; DUT cost %+v; the forwarder's own clock: %d frames in %v (%.1f µs per thousand frames)",
		row.NDR.FramesPerSecond, row.DUTCPU, frames, cpu, perKframe)
	if row.DUTCPU == nil {
		t.Fatalf("no DUT cost in the row (spec.dut.cpu.cgroup %s)", cg.rel)
	}
	bounds := lowerBounds(t, o)
	busy := parse(t, row.DUTCPU.CoresBusy)
	if allowed := parse(t, row.DUTCPU.CoresAllowed); allowed != quota {
		t.Errorf("cores allowed %v, the cgroup's quota is %v", allowed, quota)
	}
	// at its highest loss-free rate a DUT bound by its quota uses all of it (the NDR is within the
	// resolution of its ceiling); a lower bound (the tester the limit) uses less, never more
	if busy > quota*1.05 || (busy < quota*0.95 && !bounds[rowName(row)]) {
		t.Errorf("cores busy at the NDR %v, the DUT's quota %v", busy, quota)
	}
	if !row.DUTCPU.Saturated && !bounds[rowName(row)] {
		t.Errorf("a DUT using %v of its %v cores is not called saturated", busy, quota)
	}
	// the cost per frame the row says is the one the forwarder's own clock measured over the run (frames at
	// other rates near its ceiling cost it about the same: a wake-up more or less per frame; its clock ticks
	// in 10 ms). A lower bound's trial ran far below the ceiling, on a loaded host, where each frame
	// costs a wake-up of its own: not compared.
	got := parse(t, row.DUTCPU.MicrosecondsPerThousandFrames)
	if !bounds[rowName(row)] && (got < perKframe*0.75 || got > perKframe*1.25) {
		t.Errorf("%.1f µs per thousand frames, the forwarder's own clock %.1f", got, perKframe)
	}
	kbyte := parse(t, row.DUTCPU.MicrosecondsPerKilobyte)
	if want := got * 1000 / 1000 / 128; kbyte < want*0.99 || kbyte > want*1.01 {
		t.Errorf("%v µs per kilobyte, %v per thousand 128 B frames", kbyte, got)
	}
	// a lower bound is no NDR of the DUT's: the diagnosis leaves it out
	if !slices.Contains(o.Results.Notes, "the DUT's CPU time is read from cgroup /"+cg.rel+" on this machine (spec.dut.cpu)") {
		t.Errorf("no note says where the DUT's CPU is read: %q", o.Results.Notes)
	}
	if d := o.Results.Diagnosis; !bounds[rowName(row)] && (d == nil || d.Bound != "DUTCPU" || !strings.Contains(d.DUTCPU, "its CPU was at its limit")) {
		t.Errorf("the diagnosis does not say the DUT's CPU was at its limit: %+v", d)
	}
	skipForLowerBounds(t, bounds, o)
}

func parse(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

// cgroupFS is the machine's cgroup file system mounted where `ip netns exec` (which mounts a /sys of its
// own) still sees it, for the CLI's --cgroup-root; unmounted when the test ends.
func cgroupFS(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	sh(t, "mount", "--rbind", "/sys/fs/cgroup", dir)
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-R", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// cgroup is a test's cgroup: the directories of its hierarchies and its path within them.
type cgroup struct {
	dirs []string
	rel  string
}

// dutCgroup makes a cgroup whose processes get at most share of one CPU, in a period of 10 ms (a throttled
// forwarder waits at most that long for its next turn), with CPU accounting (cgroup v2: one directory; v1:
// the cpu and cpuacct hierarchies). It is removed when the test ends, its processes ended first.
func dutCgroup(t *testing.T, tag string, share float64) cgroup {
	t.Helper()
	const period = 10000
	quota := strconv.Itoa(int(share * period))
	cg := cgroup{rel: fmt.Sprintf("linerate-dut-%s-%d", tag, os.Getpid())}
	var files [][2]string
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		cg.dirs = []string{filepath.Join("/sys/fs/cgroup", cg.rel)}
		files = [][2]string{{"cpu.max", quota + " " + strconv.Itoa(period)}}
	} else {
		cg.dirs = []string{filepath.Join("/sys/fs/cgroup/cpu", cg.rel), filepath.Join("/sys/fs/cgroup/cpuacct", cg.rel)}
		files = [][2]string{{"cpu.cfs_period_us", strconv.Itoa(period)}, {"cpu.cfs_quota_us", quota}}
	}
	for _, d := range cg.dirs {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Skipf("no CPU cgroup here: %v", err)
		}
	}
	t.Cleanup(func() {
		for _, d := range cg.dirs {
			removeCgroup(t, d)
		}
	})
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(cg.dirs[0], f[0]), []byte(f[1]), 0o644); err != nil {
			t.Fatalf("%s: %v", f[0], err)
		}
	}
	return cg
}

func removeCgroup(t *testing.T, dir string) {
	for i := 0; i < 50; i++ {
		if os.Remove(dir) == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("cgroup %s left behind", dir)
}

// bumpInTheWire makes the tester's namespace tns (t0, t1 with loopTest's MACs) and a DUT namespace tns+"d"
// whose d0 faces t0 and d1 faces t1: a process there that copies frames from d0 to d1 carries west's frames
// to east unchanged.
func bumpInTheWire(t *testing.T, tag string) string {
	t.Helper()
	tns := fmt.Sprintf("lrg%d%s", os.Getpid()%100000, tag)
	dns := tns + "d"
	t.Cleanup(func() {
		_ = exec.Command("ip", "netns", "del", tns).Run()
		_ = exec.Command("ip", "netns", "del", dns).Run()
	})
	sh(t, "ip", "netns", "add", tns)
	sh(t, "ip", "netns", "add", dns)
	for i, mac := range []string{"02:4c:52:00:00:01", "02:4c:52:00:00:02"} {
		tp, dp := fmt.Sprintf("t%d", i), fmt.Sprintf("d%d", i)
		sh(t, "ip", "link", "add", tag+tp, "address", mac, "type", "veth", "peer", "name", tag+dp)
		sh(t, "ip", "link", "set", tag+tp, "netns", tns)
		sh(t, "ip", "link", "set", tag+dp, "netns", dns)
		sh(t, "ip", "-n", tns, "link", "set", tag+tp, "name", tp)
		sh(t, "ip", "-n", dns, "link", "set", tag+dp, "name", dp)
		for _, n := range [][2]string{{tns, tp}, {dns, dp}} {
			sh(t, "ip", "netns", "exec", n[0], "sysctl", "-qw", "net.ipv6.conf."+n[1]+".disable_ipv6=1")
			sh(t, "ip", "-n", n[0], "link", "set", n[1], "up")
		}
	}
	return tns
}

// forwarder is a DUT process the test started, asked for its own counts on stdin.
type forwarder struct {
	in  io.WriteCloser
	out *bufio.Reader
}

// startInCgroup starts a command in the cgroup (every hierarchy of it), waits for its "ready" line, and ends
// it (by its PID) when the test ends.
func startInCgroup(t *testing.T, cg cgroup, args ...string) *forwarder {
	t.Helper()
	procs := ""
	for _, d := range cg.dirs {
		procs += fmt.Sprintf(`echo $$ > %q && `, filepath.Join(d, "cgroup.procs"))
	}
	// the shell moves itself into the cgroup and then becomes the command: nothing runs outside it
	cmd := exec.Command("sh", append([]string{"-c", procs + `exec "$@"`, "sh"}, args...)...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	f := &forwarder{in: in, out: bufio.NewReader(stdout)}
	if line, err := f.out.ReadString('\n'); err != nil || strings.TrimSpace(line) != "ready" {
		t.Fatalf("%v: %q %v", args, line, err)
	}
	return f
}

// stats are the frames the forwarder forwarded and the CPU time it used, by its own count.
func (f *forwarder) stats(t *testing.T) (int64, time.Duration) {
	t.Helper()
	if _, err := io.WriteString(f.in, "stats\n"); err != nil {
		t.Fatal(err)
	}
	line, err := f.out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	var frames, ns int64
	if _, err := fmt.Sscanf(strings.TrimSpace(line), "frames=%d cpu_ns=%d", &frames, &ns); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	return frames, time.Duration(ns)
}
