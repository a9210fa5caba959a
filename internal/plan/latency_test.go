package plan

import (
	"math"
	"slices"
	"strings"
	"testing"

	"linerate.dev/linerate/api/v1alpha1"
)

func TestLatencyLoads(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []v1alpha1.Percent
		csit bool
		want []float64
		err  string
	}{
		{"unset is RFC 2544's single point", nil, false, []float64{100}, ""},
		{"unset under the CSIT preset is CSIT's curve", nil, true, []float64{0, 10, 50, 90, 100}, ""},
		{"given under the CSIT preset", []v1alpha1.Percent{"100"}, true, []float64{100}, ""},
		{"CSIT's curve in the order given", []v1alpha1.Percent{"0", "10", "50", "90", "100"}, false, []float64{0, 10, 50, 90, 100}, ""},
		{"fractions", []v1alpha1.Percent{"99.5", "0.5"}, false, []float64{99.5, 0.5}, ""},
		{"a load twice", []v1alpha1.Percent{"50", "50.0"}, false, nil, "spec.latency.percentOfNDR[1]: 50.0% is given twice"},
		{"above the NDR", []v1alpha1.Percent{"120"}, false, nil, "spec.latency.percentOfNDR[0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := v1alpha1.TrafficTestSpec{Tests: []v1alpha1.TestKind{"throughput", "latency"}, Latency: v1alpha1.LatencyParams{PercentOfNDR: c.in}}
			if c.csit {
				spec.Throughput.Goal = &v1alpha1.SearchGoal{Preset: v1alpha1.GoalCSIT}
			}
			p, err := Resolve(testWith(spec), nil)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.Latency.PercentOfNDR, c.want) {
				t.Errorf("loads %v, want %v", p.Latency.PercentOfNDR, c.want)
			}
			// a planned latency row per load and direction
			var loads []string
			for _, r := range p.Rows() {
				if r.Test == v1alpha1.TestLatency && r.FrameSize == p.FrameSizes[0] && r.Direction == p.Directions()[0].Name {
					loads = append(loads, r.Load)
				}
			}
			if len(loads) != len(c.want) {
				t.Errorf("planned latency rows at %v for loads %v", loads, c.want)
			}
		})
	}
}

func TestLatencyLoadPercent(t *testing.T) {
	const line64 = 14_880_952.38 // frames/s of 10G at 64 B
	pct := func(fps float64) float64 { return fps / line64 * 100 }
	for _, c := range []struct {
		name                   string
		ndr, load, trial, want float64
	}{
		{"the NDR", 40, 100, 120, 40},
		{"half", 40, 50, 120, 20},
		// 1 % of 40 % of 14.88 Mframes/s is 59,524 frames/s: the probe is 1,000
		{"probe capped at 1,000 frames/s", 40, 0, 120, pct(1000)},
		// 1 % of 0.05 % is 74 frames/s: over 120 s, more than RFC 8219's 500 frames
		{"probe at 1 % of a slow NDR", 0.05, 0, 120, 0.0005},
		// over 2 s, 74 frames/s is 149 frames: raised to 250 frames/s, under a tenth of the NDR (744)
		{"probe raised to 500 frames in a short trial", 0.05, 0, 2, pct(250)},
		// a tenth of an NDR of 1,000 frames/s is 100: 500 frames would take 250 frames/s over 2 s
		{"probe raised at most to a tenth of the NDR", pct(1000), 0, 2, pct(100)},
	} {
		if got := LatencyLoadPercent(c.ndr, c.load, line64, c.trial); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: %v%% of line rate, want %v", c.name, got, c.want)
		}
	}
	if RowLoad(v1alpha1.LatencyResult{}) != "100" || RowLoad(v1alpha1.LatencyResult{PercentOfNDR: "50.0"}) != "50" {
		t.Errorf("row loads %q %q", RowLoad(v1alpha1.LatencyResult{}), RowLoad(v1alpha1.LatencyResult{PercentOfNDR: "50.0"}))
	}
}
