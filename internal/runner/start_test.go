package runner

import (
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"linerate.dev/linerate/internal/devices"
	"linerate.dev/linerate/internal/engine"
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

// The CPUs this process may use, control's included, within the quota and the limit, laid out by
// engine.WorkerLayout (its table test has the cases): here, whatever this machine has.
func TestLcoresTakeTheCPUsTheyMay(t *testing.T) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Skip(err)
	}
	usable := set.Count()
	if q := cgroupCPUQuota(); q > 0 {
		usable = min(usable, max(1, int(q)))
	}
	for _, c := range []struct {
		ports, limit int
	}{{2, 0}, {2, 2}, {1, 0}, {2, 1}} {
		got, _ := lcoreLayout(c.ports, c.limit)
		lim := usable
		if c.limit > 0 {
			lim = min(lim, c.limit)
		}
		workers, _ := engine.WorkerLayout(lim, c.ports)
		if lim == 1 || usable == 1 {
			if got[0] != "--lcores" {
				t.Errorf("%+v: lcores %v with one CPU, want control and one worker sharing it", c, got)
			}
			continue
		}
		if got[0] != "-l" || len(strings.Split(got[1], ",")) != 1+workers {
			t.Errorf("%+v: lcores %v with %d usable CPUs, want control and %d workers", c, got, lim, workers)
		}
	}
}

func TestAFPacketPortsGetTheQueuePairsTheWorkersWant(t *testing.T) {
	devs := []devices.Device{{Devargs: "net_af_packet0,iface=net1"}, {Devargs: "net_af_packet1,iface=net2,qpairs=4"},
		{Devargs: "net_af_xdp2,iface=net3"}, {PCI: "0000:3b:02.1", Devargs: "0000:3b:02.1"}}
	got := withQueuePairs(devs, 2)
	want := []string{"net_af_packet0,iface=net1,qpairs=2", "net_af_packet1,iface=net2,qpairs=4", "net_af_xdp2,iface=net3", "0000:3b:02.1"}
	for i := range want {
		if got[i].Devargs != want[i] {
			t.Errorf("device %d: %q, want %q", i, got[i].Devargs, want[i])
		}
	}
	if devs[0].Devargs != "net_af_packet0,iface=net1" {
		t.Errorf("the caller's devices were changed: %q", devs[0].Devargs)
	}
	if one := withQueuePairs(devs, 1); one[0].Devargs != devs[0].Devargs {
		t.Errorf("one queue pair: %q", one[0].Devargs)
	}
}

func TestAFPacketPortsGetDeepRings(t *testing.T) {
	devs := []devices.Device{{Devargs: "net_af_packet0,iface=net1"}, {Devargs: "net_af_packet1,iface=net2,framecnt=512"},
		{Devargs: "net_af_xdp2,iface=net3"}, {PCI: "0000:3b:02.1", Devargs: "0000:3b:02.1"}}
	got := withRings(devs)
	want := []string{"net_af_packet0,iface=net1,framecnt=4096", "net_af_packet1,iface=net2,framecnt=512", "net_af_xdp2,iface=net3", "0000:3b:02.1"}
	for i := range want {
		if got[i].Devargs != want[i] {
			t.Errorf("device %d: %q, want %q", i, got[i].Devargs, want[i])
		}
	}
}
