package plan

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"linerate.dev/linerate/api/v1alpha1"
)

func mix(order v1alpha1.ImixOrder, e ...int32) v1alpha1.ImixSpec {
	s := v1alpha1.ImixSpec{Order: order, Seed: 7}
	for i := 0; i < len(e); i += 2 {
		s.Entries = append(s.Entries, v1alpha1.ImixEntry{FrameSize: e[i], Weight: e[i+1]})
	}
	return s
}

func longestRun(c []int) int {
	best, run := 1, 1
	for i := 1; i < len(c); i++ {
		if c[i] == c[i-1] {
			run++
		} else {
			run = 1
		}
		best = max(best, run)
	}
	return best
}

func TestInterleavedScheduleSpreadsSizes(t *testing.T) {
	s, err := NewSchedule(mix("", 64, 7, 570, 4, 1518, 1))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Cycle) != 12 {
		t.Fatalf("cycle %v", s.Cycle)
	}
	count := map[int]int{}
	for _, f := range s.Cycle {
		count[f]++
	}
	if count[64] != 7 || count[570] != 4 || count[1518] != 1 {
		t.Errorf("counts %v", count)
	}
	// nettest's "one of each until a size runs out" ends in a run of small frames; smooth WRR never
	// puts more than ceil(7/5)=2 of the dominant size together.
	if r := longestRun(s.Cycle); r > 2 {
		t.Errorf("longest run of one size %d in %v", r, s.Cycle)
	}
	if got := s.AverageFrameSize; got < 353.83 || got > 353.84 {
		t.Errorf("mean frame %.3f, want 353.833 = (7*64+4*570+1518)/12", got)
	}
}

func TestScheduleReducesWeightsAndIsDeterministic(t *testing.T) {
	a, _ := NewSchedule(mix(v1alpha1.ImixOrderRandom, 64, 70, 1518, 10))
	b, _ := NewSchedule(mix(v1alpha1.ImixOrderRandom, 64, 70, 1518, 10))
	if len(a.Cycle) != 8 || !slices.Equal(a.Cycle, b.Cycle) {
		t.Errorf("random schedules differ or were not reduced: %v %v", a.Cycle, b.Cycle)
	}
	spirent, _ := NewSchedule(mix("", 90, 5867, 92, 200, 594, 2366, 1418, 1567))
	if len(spirent.Cycle) != 10000 || spirent.Shares[0].FramesPercent != "58.67" {
		t.Errorf("spirent mix: %d %+v", len(spirent.Cycle), spirent.Shares)
	}
	if _, err := NewSchedule(mix("", 64, 0)); err == nil || !strings.Contains(err.Error(), "entries[0].weight") {
		t.Errorf("zero weight: %v", err)
	}
	if _, err := NewSchedule(mix("", 64, 40000, 65, 40001)); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("huge cycle: %v", err)
	}
}

func testWith(spec v1alpha1.TrafficTestSpec) *v1alpha1.TrafficTest {
	if spec.Ports == nil {
		spec.Ports = []v1alpha1.PortSpec{{Name: "west"}, {Name: "east"}}
	}
	return &v1alpha1.TrafficTest{Spec: spec}
}

func TestResolveAppliesRFC2544Defaults(t *testing.T) {
	p, err := Resolve(testWith(v1alpha1.TrafficTestSpec{Tests: []v1alpha1.TestKind{"latency", "throughput"}}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.FrameSizes, RFC2544FrameSizes) || p.Tests[0] != "throughput" || p.Durations.ValidationTrial.Seconds() != 60 {
		t.Errorf("defaults: %+v", p)
	}
	if p.Ports[0].Address != "198.18.1.2/24" || p.Ports[1].Gateway != "198.19.1.1" || p.Traffic.LineRateBps != 10e9 {
		t.Errorf("addresses: %+v", p.Ports)
	}
	if d := p.Directions(); len(d) != 2 || d[1].Name != "east->west" {
		t.Errorf("directions %+v", d)
	}
}

func TestResolveIPPacketSizesAndErrors(t *testing.T) {
	vlan := int32(100)
	p, err := Resolve(testWith(v1alpha1.TrafficTestSpec{Tests: []v1alpha1.TestKind{"throughput"}, IPPacketSizes: []int32{1500, 576},
		Traffic: v1alpha1.TrafficParams{VLAN: &vlan}}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.FrameSizes, []int{598, 1522}) || p.SizeBasis != "ipPacket" {
		t.Errorf("ip sizes with VLAN -> frames %v", p.FrameSizes)
	}
	_, err = Resolve(testWith(v1alpha1.TrafficTestSpec{Tests: []v1alpha1.TestKind{"throughput"},
		Ports: []v1alpha1.PortSpec{{Name: "a", Address: "10.0.0.2/24", Gateway: "10.0.1.1"}, {Name: "b"}}}), nil)
	if err == nil || !strings.Contains(err.Error(), "spec.ports[0].gateway") {
		t.Errorf("gateway outside subnet: %v", err)
	}
	_, err = Resolve(testWith(v1alpha1.TrafficTestSpec{Tests: []v1alpha1.TestKind{"imixThroughput"},
		Imix: &v1alpha1.ImixSource{ProfileRef: &v1alpha1.LocalObjectReference{Name: "x"}}}), nil)
	if err == nil || !strings.Contains(err.Error(), "spec.imix.profileRef") {
		t.Errorf("missing profile: %v", err)
	}
	if MinFrameSize(6, true) != 88 || MinFrameSize(4, false) != 64 {
		t.Errorf("min frame sizes %d %d", MinFrameSize(6, true), MinFrameSize(4, false))
	}
}

func TestSeqWindowHoldsTheLongestTrialAtLineRate(t *testing.T) {
	p, err := Resolve(testWith(v1alpha1.TrafficTestSpec{Tests: []v1alpha1.TestKind{"latency", "throughput"}}), nil)
	if err != nil {
		t.Fatal(err)
	}
	bits, frames := p.SeqWindow()
	d := p.Durations
	secs := (d.LatencyTrial + d.WarmUp + d.Drain + time.Second).Seconds() // the longest of these tests
	if want := int64(math.Ceil(10e9 / 672 * secs)); frames != want {
		t.Errorf("frames %d, want %d (%.0f s at 14.88 Mpps)", frames, want, secs)
	}
	if int64(1)<<bits < frames || int64(1)<<(bits-1) >= frames {
		t.Errorf("%d bits for %d frames", bits, frames)
	}
	// a test that does not run does not count; 600 s at 10 GbE is the engine's own default
	p.Tests = []v1alpha1.TestKind{v1alpha1.TestThroughput}
	if _, f := p.SeqWindow(); f >= frames {
		t.Errorf("without the latency test: %d frames", f)
	}
	p.Durations = Durations{ValidationTrial: 600 * time.Second}
	if bits, _ := p.SeqWindow(); bits != 34 {
		t.Errorf("600 s at 10 GbE: %d bits, want 34", bits)
	}
	p.Traffic.LineRateBps = 0
	if bits, frames := p.SeqWindow(); bits != 0 || frames != 0 {
		t.Errorf("unknown line rate: %d bits", bits)
	}
}

// A search goal resolves from its preset, the fields given override it, RFC 2544 strict is no goal at all
// (the search's own default), and Binary refuses one.
func TestResolveSearchGoal(t *testing.T) {
	d := func(s string) *metav1.Duration { v, _ := time.ParseDuration(s); return &metav1.Duration{Duration: v} }
	for _, tc := range []struct {
		name   string
		goal   *v1alpha1.SearchGoal
		method v1alpha1.SearchMethod
		// resolution of the search ("": its default)
		resolution v1alpha1.Percent
		want       *Goal
		err        string
	}{
		{name: "none"},
		{name: "RFC 2544 is the search's default", goal: &v1alpha1.SearchGoal{Preset: v1alpha1.GoalRFC2544}},
		{name: "CSIT", goal: &v1alpha1.SearchGoal{Preset: v1alpha1.GoalCSIT},
			want: &Goal{Preset: v1alpha1.GoalCSIT, FinalTrialDuration: time.Second, DurationSum: 21 * time.Second, ExceedRatioPercent: 50, WidthPercent: 0.5}},
		{name: "CSIT with a longer sum", goal: &v1alpha1.SearchGoal{Preset: v1alpha1.GoalCSIT, DurationSum: d("60s")},
			want: &Goal{Preset: v1alpha1.GoalCSIT, FinalTrialDuration: time.Second, DurationSum: 60 * time.Second, ExceedRatioPercent: 50, WidthPercent: 0.5}},
		{name: "CSIT with a wider goal width", goal: &v1alpha1.SearchGoal{Preset: v1alpha1.GoalCSIT, Width: "2"},
			want: &Goal{Preset: v1alpha1.GoalCSIT, FinalTrialDuration: time.Second, DurationSum: 21 * time.Second, ExceedRatioPercent: 50, WidthPercent: 2}},
		{name: "RFC 2544 with a relative goal width is a goal of its own", goal: &v1alpha1.SearchGoal{Width: "0.5"},
			want: &Goal{Preset: v1alpha1.GoalRFC2544, FinalTrialDuration: 60 * time.Second, DurationSum: 60 * time.Second, WidthPercent: 0.5}},
		{name: "a goal width of 0", goal: &v1alpha1.SearchGoal{Width: "0"}, err: `spec.throughput.goal.width: "0" must be at least 0.01 and less than 100`},
		{name: "a goal width finer than rates are told apart", goal: &v1alpha1.SearchGoal{Width: "0.001"}, err: `spec.throughput.goal.width: "0.001" must be at least 0.01`},
		{name: "a goal width of 100", goal: &v1alpha1.SearchGoal{Preset: v1alpha1.GoalCSIT, Width: "100"}, err: `spec.throughput.goal.width: "100" must be at least 0.01 and less than 100`},
		{name: "a goal width whose bracket at the resolution is finer than rates are told apart", goal: &v1alpha1.SearchGoal{Width: "0.01"}, resolution: "0.05",
			err: "finer than the 0.00001% rates are told apart by"},
		{name: "a goal width that is no number", goal: &v1alpha1.SearchGoal{Width: "half"}, err: `spec.throughput.goal.width: "half" is not a percentage`},
		{name: "TST009: two full-length trials, half may exceed", goal: &v1alpha1.SearchGoal{DurationSum: d("120s"), ExceedRatio: "50"},
			want: &Goal{Preset: v1alpha1.GoalRFC2544, FinalTrialDuration: 60 * time.Second, DurationSum: 120 * time.Second, ExceedRatioPercent: 50}},
		{name: "a shorter final trial is its own sum", goal: &v1alpha1.SearchGoal{FinalTrialDuration: d("10s")},
			want: &Goal{Preset: v1alpha1.GoalRFC2544, FinalTrialDuration: 10 * time.Second, DurationSum: 10 * time.Second}},
		{name: "Binary refuses a goal", goal: &v1alpha1.SearchGoal{Preset: v1alpha1.GoalCSIT}, method: v1alpha1.SearchBinary, err: "applies to the Multistage search"},
		{name: "exceed ratio of 100", goal: &v1alpha1.SearchGoal{ExceedRatio: "100"}, err: "exceedRatio must be less than 100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Resolve(testWith(v1alpha1.TrafficTestSpec{Tests: []v1alpha1.TestKind{"throughput"},
				Throughput: v1alpha1.ThroughputParams{Goal: tc.goal, Method: tc.method, Resolution: tc.resolution}}), nil)
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("error %v, want %q", err, tc.err)
				}
			case err != nil:
				t.Fatal(err)
			case (p.Throughput.Goal == nil) != (tc.want == nil) || (tc.want != nil && *p.Throughput.Goal != *tc.want):
				t.Errorf("goal %+v, want %+v", p.Throughput.Goal, tc.want)
			}
			// CSIT's settings search a PDR at 0.5 % loss; no other goal adds one
			pdr := p != nil && p.Throughput.PDRLossTolerancePercent != nil
			if csit := tc.goal != nil && tc.goal.Preset == v1alpha1.GoalCSIT && err == nil; pdr != csit || (pdr && *p.Throughput.PDRLossTolerancePercent != 0.5) {
				t.Errorf("PDR tolerance %v under %+v", p.Throughput.PDRLossTolerancePercent, tc.goal)
			}
		})
	}
	// one the user sets stands
	p, err := Resolve(testWith(v1alpha1.TrafficTestSpec{Tests: []v1alpha1.TestKind{"throughput"},
		Throughput: v1alpha1.ThroughputParams{Goal: &v1alpha1.SearchGoal{Preset: v1alpha1.GoalCSIT}, PDRLossTolerance: "0.1"}}), nil)
	if err != nil || p.Throughput.PDRLossTolerancePercent == nil || *p.Throughput.PDRLossTolerancePercent != 0.1 {
		t.Errorf("CSIT with pdrLossTolerance 0.1: %v %v", p.Throughput.PDRLossTolerancePercent, err)
	}
}

// Two ports on one interface of one tester pod are refused, with the interface each would use: as named,
// or Multus's net1 and net2 when not. A VF port without a network has no interface; ports pinned to two
// nodes are two pods.
func TestTwoPortsOnOneInterfaceOfOnePodAreRefused(t *testing.T) {
	af := func(name, iface, node string) v1alpha1.PortSpec {
		return v1alpha1.PortSpec{Name: name, Driver: v1alpha1.DriverAFPacket, Interface: iface, Node: node}
	}
	for _, c := range []struct {
		name  string
		ports []v1alpha1.PortSpec
		err   string // "" when accepted
	}{
		{"both named net1", []v1alpha1.PortSpec{af("west", "net1", ""), af("east", "net1", "")}, "ports west and east would both use interface net1"},
		{"net1 named on the second, the first's default", []v1alpha1.PortSpec{af("west", "", ""), af("east", "net1", "")}, "would both use interface net1"},
		{"net2 named on the first, the second's default", []v1alpha1.PortSpec{af("west", "net2", ""), af("east", "", "")}, "would both use interface net2"},
		{"one pinned, one not: one pod", []v1alpha1.PortSpec{af("west", "net1", "a"), af("east", "net1", "")}, "would both use interface net1"},
		{"both pinned to one node", []v1alpha1.PortSpec{af("west", "net1", "a"), af("east", "net1", "a")}, "would both use interface net1"},
		{"defaults", []v1alpha1.PortSpec{af("west", "", ""), af("east", "", "")}, ""},
		{"two nodes", []v1alpha1.PortSpec{af("west", "net1", "a"), af("east", "net1", "b")}, ""},
		{"VFs without a network", []v1alpha1.PortSpec{{Name: "west", Resource: "r/a", Interface: "net1"}, {Name: "east", Resource: "r/a", Interface: "net1"}}, ""},
		{"VFs of one network name", []v1alpha1.PortSpec{{Name: "west", Resource: "r/a", Network: "w", Interface: "net1"}, {Name: "east", Resource: "r/a", Network: "e", Interface: "net1"}}, "would both use interface net1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Resolve(testWith(v1alpha1.TrafficTestSpec{Tests: []v1alpha1.TestKind{"throughput"}, Ports: c.ports}), nil)
			if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), "spec.ports[1].interface")) {
				t.Errorf("error %v, want %q", err, c.err)
			}
		})
	}
}

// Frames with DF clear: only IPv4 has the bit, and what needs the DUT's fragments counted needs ports that
// see them (an af_packet socket's fanout reassembles them in the kernel); plain measurement with DF clear is
// accepted on any port.
func TestFragmentsAreAskedForOnlyWhereTheyCanBeSeen(t *testing.T) {
	dfClear := false
	port := func(name string, d v1alpha1.PortDriver) v1alpha1.PortSpec {
		return v1alpha1.PortSpec{Name: name, Driver: d, Interface: name}
	}
	xdp := []v1alpha1.PortSpec{port("west", v1alpha1.DriverAFXDP), port("east", v1alpha1.DriverAFXDP)}
	mixed := []v1alpha1.PortSpec{port("west", v1alpha1.DriverAFXDP), port("east", v1alpha1.DriverAFPacket)}
	sendsOnAFPacket := []v1alpha1.PortSpec{port("west", v1alpha1.DriverAFPacket), port("east", v1alpha1.DriverAFXDP)}
	for _, c := range []struct {
		name  string
		tests []v1alpha1.TestKind
		ip    int32
		lost  bool
		ports []v1alpha1.PortSpec
		err   string // "" when accepted
		uni   bool   // west to east only: west receives nothing
	}{
		{"IPv6", []v1alpha1.TestKind{"throughput"}, 6, false, xdp, "spec.traffic.dontFragment: only IPv4 has a DF bit", false},
		{"finder on af_xdp", []v1alpha1.TestKind{"pathMTU"}, 4, false, xdp, "", false},
		{"finder on af_packet", []v1alpha1.TestKind{"pathMTU"}, 4, false, mixed, "port east is af_packet", false},
		{"lost on af_packet", []v1alpha1.TestKind{"throughput"}, 4, true, mixed, "port east is af_packet", false},
		{"finder, af_packet receiving (both ways)", []v1alpha1.TestKind{"pathMTU"}, 4, false, sendsOnAFPacket, "port west is af_packet", false},
		{"finder, af_packet sending only", []v1alpha1.TestKind{"pathMTU"}, 4, false, sendsOnAFPacket, "", true},
		{"measured on af_packet", []v1alpha1.TestKind{"throughput"}, 4, false, mixed, "", false},
		{"timeline", []v1alpha1.TestKind{"timeline"}, 4, false, xdp, "not for the timeline test", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := v1alpha1.TrafficParams{IPVersion: c.ip, DontFragment: &dfClear}
			if c.uni {
				tr.Direction = v1alpha1.Unidirectional
			}
			if c.lost {
				tr.FragmentedFrames = v1alpha1.FragmentedLost
			}
			ports := c.ports
			if c.ip == 6 {
				ports = nil // (testWith's addresses are IPv4: no port addresses here)
			}
			p, err := Resolve(testWith(v1alpha1.TrafficTestSpec{Tests: c.tests, Traffic: tr, Ports: ports, FrameSizes: []int32{128}}), nil)
			if c.err == "" && (err != nil || !p.Traffic.Fragmentable || p.Traffic.FragmentedLost != c.lost) ||
				c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Errorf("error %v, want %q", err, c.err)
			}
		})
	}
}
