package rfc2544_test

import (
	"context"
	"strings"
	"testing"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine/sim"
	"linerate.dev/linerate/internal/rfc2544"
)

// Before the first trial the runner records each port and where the engine runs, and refuses a run it
// could only measure itself with: a link that stays down, a link slower than traffic.lineRate, a port
// that cannot carry the largest planned frame. A port across a NUMA node from the cores or the hugepages
// that drive it is a warning, not a refusal.
func TestPreflightRecordsAndRefuses(t *testing.T) {
	aligned := sim.Hardware{PortNUMA: [2]int{1, 1}, LcoreCPUs: []int{8, 9}, LcoreNUMA: []int{1, 1}, MemoryNUMA: []int{1}}
	cases := []struct {
		name    string
		hw      func(*sim.Hardware)
		reason  string // the refusal's, "" for a run that goes on
		message string // in the refusal, or in a warning
	}{
		{"aligned and up", func(*sim.Hardware) {}, "", ""},
		{"link comes up after a second", func(h *sim.Hardware) { h.LinkDownPolls = 4 }, "", ""},
		{"link stays down", func(h *sim.Hardware) { h.LinkDownPolls = -1 }, v1alpha1.ReasonPortLinkDown, "port west (sim0): link down after 10s"},
		{"a 1G link for a 10G test", func(h *sim.Hardware) { h.SpeedMbps = 1000 }, v1alpha1.ReasonPortSlowerThanLineRate, "link at 1000 Mbit/s, slower than traffic.lineRate 10.000 Gbit/s"},
		{"MTU 1400 for 1518 B frames", func(h *sim.Hardware) { h.MaxFrame = 1418 }, v1alpha1.ReasonFrameTooLargeForPort, "carries frames up to 1418 B, the plan's largest is 1518 B"},
		{"af_xdp on one of four queues", func(h *sim.Hardware) { h.Driver, h.KernelRxQueues = "net_af_xdp", 4 }, v1alpha1.ReasonPortQueuesUnbound, "af_xdp receives on 1 of interface"},
		{"af_xdp on the one queue there is", func(h *sim.Hardware) { h.Driver, h.KernelRxQueues = "net_af_xdp", 1 }, "", ""},
		{"af_xdp on an interface whose queues could not be read", func(h *sim.Hardware) { h.Driver, h.KernelRxQueues = "net_af_xdp", 0 }, v1alpha1.ReasonPortQueuesUnbound, "could not read how many receive queues"},
		// RSS over queue 0 alone (ethtool -X equal 1) and the socket on queue 1: one queue each, but not the same
		{"af_xdp on queue 1 while RSS fills queue 0", func(h *sim.Hardware) {
			h.Driver, h.KernelRxQueues, h.KernelFirstRxQueue = "net_af_xdp", 1, 1
		}, v1alpha1.ReasonPortQueuesUnbound, "af_xdp binds interface net1's receive queues from 1 on (start_queue=1): frames the NIC puts on queue 0 (what RSS does not hash, ARP among it"},
		{"af_packet on four queues reads them all", func(h *sim.Hardware) { h.Driver, h.KernelRxQueues = "net_af_packet", 4 }, "", ""},
		{"cores on the other node", func(h *sim.Hardware) { h.LcoreNUMA = []int{0, 0} }, "", "port west (sim0) is on NUMA node 1, but the engine runs on CPU 8 (node 0), 9 (node 0)"},
		{"hugepages on the other node", func(h *sim.Hardware) { h.MemoryNUMA = []int{0} }, "", "the engine's hugepages are on node 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := planFor(t, v1alpha1.TestThroughput)
			p.FrameSizes = []int{1518}
			e := sim.New(sim.DUT{CapacityFPS: 2.5e6, Seed: 3})
			hw := aligned
			c.hw(&hw)
			e.Hardware = &hw
			rec := &recorder{}
			res, err := rfc2544.New(p, e, rec, rfc2544.Options{Sleep: e.Sleep}).Run(context.Background())
			pf := res.Preflight
			if pf == nil || len(pf.Ports) != 2 || pf.Ports[0].Device != "sim0" || pf.Ports[1].NUMANode != 1 || len(pf.CPUs) != 2 || pf.CPUs[0] != 8 {
				t.Fatalf("preflight record: %+v", pf)
			}
			if rec.results == 0 {
				t.Error("the preflight record must reach the sink before any trial (and when the run is refused)")
			}
			if c.reason != "" {
				pe, ok := rfc2544.IsPreflight(err)
				if !ok || pe.Reason != c.reason || !strings.Contains(pe.Message, c.message) {
					t.Fatalf("refusal %v (%v), want %s with %q", pe, err, c.reason, c.message)
				}
				if len(rec.trials) != 0 {
					t.Errorf("a refused run measured %d trials", len(rec.trials))
				}
				return
			}
			if err != nil || len(res.Throughput) != 1 {
				t.Fatalf("run: %v, throughput %+v", err, res.Throughput)
			}
			warned := strings.Join(pf.Warnings, "\n")
			if c.message == "" && warned != "" || !strings.Contains(warned, c.message) || !strings.Contains(strings.Join(res.Notes, "\n"), c.message) {
				t.Errorf("warnings %q (notes %q), want %q", pf.Warnings, res.Notes, c.message)
			}
		})
	}
}

// A port that reports no link speed (a virtual device, a PMD without it) is not refused, and not passed
// in silence: the run says what it could not check.
func TestPreflightSaysWhatItCouldNotCheck(t *testing.T) {
	p := planFor(t, v1alpha1.TestThroughput)
	p.FrameSizes = []int{1518}
	e := sim.New(sim.DUT{CapacityFPS: 2.5e6})
	e.Hardware = &sim.Hardware{PortNUMA: [2]int{-1, -1}, SpeedMbps: -1}
	res, err := rfc2544.New(p, e, &recorder{}, rfc2544.Options{Sleep: e.Sleep}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "port west (simulated) reports no link speed: whether it carries spec.traffic.lineRate was not checked") {
		t.Errorf("notes %q", res.Notes)
	}
}

// A receiving engine told fewer lanes than its sender sends on counts the other lanes' frames apart
// (UnknownLane): the trial is the tester's, invalid, and since the set-up repeats in every trial the run
// ends at the first with an error that says why, instead of searching down to a ceiling that is the
// set-up's; the trial stays on record, and nothing is reported as the DUT's.
func TestFramesOfUnknownLanesEndTheRun(t *testing.T) {
	p := planFor(t, v1alpha1.TestThroughput)
	p.FrameSizes = []int{1518}
	e := sim.New(sim.DUT{CapacityFPS: 2.5e6})
	e.Hardware = &sim.Hardware{PortNUMA: [2]int{-1, -1}, UnknownLaneFrames: 1234}
	rec := &recorder{}
	res, err := rfc2544.New(p, e, rec, rfc2544.Options{Sleep: e.Sleep}).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "1234 frames of the west->east direction came from sender lanes") {
		t.Fatalf("run error %v, want one naming the frames of unknown lanes", err)
	}
	if len(rec.trials) != 1 || !rec.trials[0].TesterLimited || rec.trials[0].Pass || !strings.Contains(strings.Join(rec.trials[0].TesterFaults, "\n"), "keeps no state for") {
		t.Fatalf("trials %+v: want the one trial, kept, invalid for the unknown lanes", rec.trials)
	}
	for _, row := range res.Throughput {
		if row.NDR.FramesPerSecond > 0 {
			t.Errorf("a throughput reported from a run the tester's set-up spoiled: %+v", row)
		}
	}
}
