package rfc2544_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine"
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

// describedPorts is the simulated engine with both ports as one driver's PORT answer describes them: the
// runner is told what an 82599 VF or an af_packet port can see, as the engine says it
// (dataplane/PROTOCOL.md), with no such port here to ask.
type describedPorts struct {
	*sim.Engine
	port engine.PortInfo
}

func (e describedPorts) Port(_ context.Context, cfg engine.PortConfig) (*engine.PortInfo, error) {
	info := e.port
	info.ID, info.Device, info.MAC = cfg.ID, fmt.Sprintf("0000:3b:02.%d", cfg.ID), fmt.Sprintf("02:00:00:00:00:%02x", cfg.ID+1)
	return &info, nil
}

// What a receiving port cannot see is a note before the first trial, naming the port, its driver and
// what to do: its drops on receipt counted nowhere (an 82599 VF's ixgbevf has no miss counter), frames for
// other MACs (a VF whose PF may answer yes to promiscuous mode and grant less, or a port that refused it),
// and an RSS spread its PF does not hash (an 82599 PF hashes IPv4 UDP on the addresses only). A port that
// sees all of it (af_packet) has none of these notes, nor has a port that only sends.
func TestPreflightNotesWhatAPortCannotSee(t *testing.T) {
	ixgbevf := engine.PortInfo{Driver: "net_ixgbe_vf", NUMA: -1, RxQueues: 2, TxQueues: 2, LinkUp: true, SpeedMbps: 10000,
		MaxFrame: 9018, RxChecksums: "ipv4,udp", Promiscuous: false, RxMissesCounted: false, RxRing: 1024, VLANFilter: true,
		RxTimestamps: "poll", RxWake: "poll"}
	afPacket := engine.PortInfo{Driver: "net_af_packet", NUMA: -1, RxQueues: 2, TxQueues: 2, LinkUp: true, SpeedMbps: 10000,
		MaxFrame: 1518, KernelRxQueues: 4, Promiscuous: true, RxMissesCounted: true, RxRing: 512, RxTimestamps: "kernel", RxWake: "kernel"}
	with := func(info engine.PortInfo, change func(*engine.PortInfo)) engine.PortInfo { change(&info); return info }
	const (
		ixgbevfMisses  = "port east (net_ixgbe_vf) counts none of the frames its receive ring of 1024 drops: a trial is the tester's (invalid), never the DUT's, when its ring was left unread long enough to overflow"
		ixgbevfPromisc = "port east (net_ixgbe_vf): the VF's promiscuous mode is not confirmed: with trust off its PF (Linux ixgbe) grants only multicast and still answers yes, an 82599's VF is refused it even with trust on, and an X540's or X550's is granted it only with trust on and the PF promiscuous; it may receive only frames for its own MAC, broadcast and multicast, so frames the DUT sends to another MAC may not be counted as foreign"
		ixgbevfRSS     = "port east (net_ixgbe_vf) receives on 2 queues, but its PF hashes IPv4 UDP on the addresses only and the streams vary only UDP ports: every frame lands on one queue; vary src or dst (traffic.vary), or on the PF's host: ethtool -N <pf> rx-flow-hash udp4 sdfn"
	)
	cases := []struct {
		name  string
		port  engine.PortInfo
		vary  []string
		bidir bool
		want  []string // in the notes, and no other note of what a port cannot see
	}{
		{"an 82599 VF on two queues, flows varying ports", ixgbevf, nil, false, []string{ixgbevfMisses, ixgbevfPromisc, ixgbevfRSS}},
		{"an 82599 VF on two queues, flows varying addresses", ixgbevf, []string{"srcIP", "dstIP", "srcPort"}, false,
			[]string{ixgbevfMisses, ixgbevfPromisc}},
		{"an 82599 VF on one queue", with(ixgbevf, func(p *engine.PortInfo) { p.RxQueues, p.TxQueues = 1, 1 }), nil, false,
			[]string{ixgbevfMisses, ixgbevfPromisc}},
		{"82599 VFs both ways", ixgbevf, nil, true, []string{ixgbevfMisses, ixgbevfPromisc, ixgbevfRSS,
			"port west (net_ixgbe_vf) counts none of the frames", "port west (net_ixgbe_vf): the VF's promiscuous mode is not confirmed",
			"port west (net_ixgbe_vf) receives on 2 queues, but its PF hashes IPv4 UDP on the addresses only"}},
		{"an X710 VF (iavf)", with(ixgbevf, func(p *engine.PortInfo) { p.Driver, p.RxMissesCounted = "net_iavf", true }), nil, false,
			[]string{`port east (net_iavf): the VF's promiscuous mode is not confirmed: with trust off its PF (Linux i40e or ice) answers yes and grants nothing; set trust on in the SriovNetwork (trust: "on")`}},
		{"a port that refused promiscuous mode", with(afPacket, func(p *engine.PortInfo) { p.Driver, p.Promiscuous = "net_memif", false }), nil, false,
			[]string{"port east (net_memif) is not promiscuous (it refused): it receives only frames for its own MAC, broadcast and multicast, so frames the DUT sends to another MAC are not counted as foreign"}},
		{"af_packet", afPacket, nil, false, nil},
		{"af_packet both ways", afPacket, nil, true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := planFor(t, v1alpha1.TestThroughput)
			p.Tests = nil // the run is its preflight
			if c.vary != nil {
				p.Traffic.Vary = c.vary
			}
			if c.bidir {
				p.Traffic.Direction = v1alpha1.Bidirectional
			}
			e := describedPorts{Engine: sim.New(sim.DUT{CapacityFPS: 2.5e6}), port: c.port}
			res, err := rfc2544.New(p, e, &recorder{}, rfc2544.Options{Sleep: e.Sleep}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var limits []string
			for _, n := range res.Notes {
				if strings.Contains(n, "promiscuous") || strings.Contains(n, "counts none of the frames") || strings.Contains(n, "rx-flow-hash") {
					limits = append(limits, n)
				}
			}
			for _, w := range c.want {
				if !slices.ContainsFunc(limits, func(n string) bool { return strings.Contains(n, w) }) {
					t.Errorf("no note says %q; notes of what the ports cannot see:\n%s", w, strings.Join(limits, "\n"))
				}
			}
			for _, n := range limits {
				if !slices.ContainsFunc(c.want, func(w string) bool { return strings.Contains(n, w) }) {
					t.Errorf("a note not asked for: %q", n)
				}
			}
		})
	}
}
