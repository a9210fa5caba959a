package runner

import (
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"linerate.dev/linerate/internal/plan"
)

func TestEngineGetsTheWindowOfItsPlan(t *testing.T) {
	extra := []string{"--mbufs", "4095"}
	// 120 s trials + 1 s slack at 10 GbE: 1.83 G frames, a window of 2^31
	p := &plan.Plan{Traffic: plan.Traffic{LineRateBps: 10e9}, Durations: plan.Durations{ValidationTrial: 120 * time.Second}}
	cfg := processConfig(StartOptions{Binary: "/x", Control: "/run/e.sock", Extra: extra, Plan: p})
	args := cfg.EALArgs()
	tail := strings.Join(args[slices.Index(args, "--"):], " ")
	if tail != "-- --control /run/e.sock --mbufs 4095 --window-bits 31" {
		t.Errorf("engine args after --: %q", tail)
	}
	if len(extra) != 2 {
		t.Errorf("the caller's Extra was changed: %q", extra)
	}
	cfg = processConfig(StartOptions{Binary: "/x", Control: "/run/e.sock"})
	args = cfg.EALArgs()
	if slices.Contains(args, "--window-bits") {
		t.Errorf("no plan window: the engine's default, got %q", args)
	}
}

func TestEngineBuffersTheLargestPlannedFrame(t *testing.T) {
	for _, c := range []struct {
		sizes []int
		want  string // the --max-frame argument, "" for the engine's default
	}{
		{[]int{64, 1518}, ""},
		{[]int{64, 2048}, ""},
		{[]int{64, 9000}, "9000"},
	} {
		p := &plan.Plan{FrameSizes: c.sizes}
		cfg := processConfig(StartOptions{Binary: "/x", Control: "/run/e.sock", Plan: p})
		args := cfg.EALArgs()
		got := ""
		if i := slices.Index(args, "--max-frame"); i >= 0 {
			got = args[i+1]
		}
		if got != c.want {
			t.Errorf("sizes %v: --max-frame %q, want %q", c.sizes, got, c.want)
		}
	}
}

// A worker per port, no more than the CPUs this process may use (one stays for control).
func TestLcoresAWorkerPerPort(t *testing.T) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Skip(err)
	}
	if q := cgroupCPUQuota(); q > 0 && q < 3 {
		t.Skipf("a CPU quota of %.2f CPUs", q)
	}
	n, got := set.Count(), Lcores(2)
	if n == 1 {
		if got[0] != "--lcores" {
			t.Errorf("lcores %v with one CPU, want control and one worker sharing it", got)
		}
		return
	}
	if got[0] != "-l" || len(strings.Split(got[1], ",")) != min(n, 3) {
		t.Errorf("lcores %v with %d CPUs, want control and min(2 ports, %d) workers", got, n, n-1)
	}
}
