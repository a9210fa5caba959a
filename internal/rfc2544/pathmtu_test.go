package rfc2544_test

import (
	"context"
	"testing"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine/sim"
	"linerate.dev/linerate/internal/rfc2544"
)

// The path MTU finder answers to the byte, in each direction on its own: from the DUT's ICMP in a few
// probes (confirmed by a frame of that size crossing and one a byte larger not, each twice), by halving the
// sizes where the DUT drops oversize frames silently, and "at least" where the largest frame tried crossed.
func TestThePathMTUFinderAnswersToTheByte(t *testing.T) {
	for _, c := range []struct {
		name     string
		dut      sim.DUT
		bidir    bool
		clearDF  bool // frames leave with DF clear: the DUT fragments what it would refuse
		maxFrame int
		want     []v1alpha1.PathMTUResult // largestFrame, mtu, atLeast, icmpMTU, silent by direction
		probes   []int32
	}{
		{name: "icmp", dut: sim.DUT{PathMTU: 1400}, want: []v1alpha1.PathMTUResult{{LargestFrame: 1418, MTU: 1400, ICMPMTU: 1400}}, probes: []int32{6}},
		{name: "silent", dut: sim.DUT{PathMTU: 1400, PathMTUSilent: true}, want: []v1alpha1.PathMTUResult{{LargestFrame: 1418, MTU: 1400, Silent: true}}, probes: []int32{14}},
		{name: "silent odd", dut: sim.DUT{PathMTU: 1437, PathMTUSilent: true}, want: []v1alpha1.PathMTUResult{{LargestFrame: 1455, MTU: 1437, Silent: true}}, probes: []int32{15}},
		{name: "no limit", dut: sim.DUT{}, want: []v1alpha1.PathMTUResult{{LargestFrame: 1518, MTU: 1500, AtLeast: true}}, probes: []int32{1}},
		{name: "jumbo", dut: sim.DUT{PathMTU: 9000}, maxFrame: 9216, want: []v1alpha1.PathMTUResult{{LargestFrame: 9018, MTU: 9000, ICMPMTU: 9000}}, probes: []int32{6}},
		{name: "one direction", dut: sim.DUT{PathMTU: 1280, PathMTUPorts: []int{1}}, bidir: true, want: []v1alpha1.PathMTUResult{
			{LargestFrame: 1518, MTU: 1500, AtLeast: true}, {LargestFrame: 1298, MTU: 1280, ICMPMTU: 1280}}, probes: []int32{1, 6}},
		{name: "fragments", dut: sim.DUT{PathMTU: 1400}, clearDF: true, want: []v1alpha1.PathMTUResult{{LargestFrame: 1418, MTU: 1400, Fragmented: true}}, probes: []int32{14}},
		{name: "nothing crosses", dut: sim.DUT{PathMTU: 10, PathMTUSilent: true}, want: []v1alpha1.PathMTUResult{{}}, probes: []int32{2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := planFor(t, v1alpha1.TestPathMTU)
			if c.bidir {
				p.Traffic.Direction = v1alpha1.Bidirectional
			}
			if c.maxFrame > 0 {
				p.PathMTU.MaxFrame = c.maxFrame
			}
			p.Traffic.Fragmentable = c.clearDF
			c.dut.CapacityFPS = 1e6
			res, rec, _, err := run(t, p, c.dut)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.PathMTU) != len(c.want) {
				t.Fatalf("want a row per direction, got %+v", res.PathMTU)
			}
			t.Logf("%+v", res.PathMTU)
			for i, got := range res.PathMTU {
				w := c.want[i]
				w.Direction, w.Probes, w.Undetermined = got.Direction, got.Probes, got.Undetermined
				if got != w {
					t.Errorf("got %+v, want %+v", got, w)
				}
				// the largest, the smallest, the sizes between, and the answer's two again
				if got.Probes != c.probes[i] {
					t.Errorf("%d probes, want %d", got.Probes, c.probes[i])
				}
				if (c.name == "nothing crosses") != (got.Undetermined != "") {
					t.Errorf("undetermined only where no frame crossed: %q", got.Undetermined)
				}
			}
			for _, tr := range rec.trials {
				if tr.Test != v1alpha1.TestPathMTU || tr.Purpose != "probe" || tr.TargetFPS < 999 || tr.TargetFPS > 1001 {
					t.Errorf("a probe is a pathMTU record at 1000 frames/s: %+v", tr)
				}
			}
		})
	}
}

// The finder runs first, whatever the order given, and a plan of it alone runs nothing else.
func TestThePathMTUFinderRunsFirst(t *testing.T) {
	p := planFor(t, v1alpha1.TestThroughput, v1alpha1.TestPathMTU)
	if p.Tests[0] != v1alpha1.TestPathMTU {
		t.Fatalf("tests in order %v", p.Tests)
	}
	e := sim.New(sim.DUT{CapacityFPS: 1e6, PathMTU: 1400})
	rec := &recorder{}
	res, err := rfc2544.New(p, e, rec, rfc2544.Options{Sleep: e.Sleep}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rec.trials[0].Test != v1alpha1.TestPathMTU || len(res.PathMTU) != 1 || res.PathMTU[0].LargestFrame != 1418 {
		t.Errorf("the finder's probes come first: %+v, %+v", rec.trials[0], res.PathMTU)
	}
}
