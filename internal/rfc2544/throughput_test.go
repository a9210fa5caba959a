package rfc2544_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine/sim"
	"linerate.dev/linerate/internal/expectations"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/rfc2544"
	"linerate.dev/linerate/internal/search"
)

// Repeated throughput searches with a PDR: the row reports the lowest NDR of the repetitions (each
// validated), the spread of the NDRs in frames/s, and the PDR found in the same searches.
func TestRepeatedThroughputWithPDR(t *testing.T) {
	p := planFor(t, v1alpha1.TestThroughput)
	p.FrameSizes = []int{64}
	pdrTol := 1.0
	p.Throughput.PDRLossTolerancePercent = &pdrTol
	p.Throughput.Repetitions = 4
	res, rec, e, err := run(t, p, sim.DUT{CapacityFPS: 3e6, Noise: 0.01, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Throughput) != 1 {
		t.Fatalf("rows %+v", res.Throughput)
	}
	row := res.Throughput[0]
	sp := row.Spread
	if sp == nil || sp.Repetitions != 4 || sp.Min > sp.Mean || sp.Mean > sp.Max || sp.StdDev < 0 {
		t.Fatalf("spread %+v", sp)
	}
	// the reported NDR is the lowest repetition's
	if d := row.NDR.FramesPerSecond - sp.Min; d > 1 || d < -1 {
		t.Errorf("NDR %d frames/s, lowest repetition %d", row.NDR.FramesPerSecond, sp.Min)
	}
	// 1 % noise on the capacity: every repetition lands within a few percent of the nominal capacity
	nominal := e.DUT.Capacity(64)
	if float64(sp.Max) > nominal*1.04 || float64(sp.Min) < nominal*0.94 {
		t.Errorf("spread %+v, nominal capacity %.0f frames/s", sp, nominal)
	}
	// above capacity the DUT loses (r-c)/r, so the 1 % PDR lies at about c/0.99: above the NDR
	if row.PDR == nil || row.PDR.FramesPerSecond < row.NDR.FramesPerSecond || float64(row.PDR.FramesPerSecond) > nominal/0.99*1.04 {
		t.Errorf("PDR %+v, NDR %d, nominal %.0f", row.PDR, row.NDR.FramesPerSecond, nominal)
	}
	t.Logf("NDR %d PDR %+v spread %+v nominal %.0f", row.NDR.FramesPerSecond, row.PDR, *sp, nominal)
	reps := map[int]bool{}
	for _, tr := range rec.trials {
		reps[tr.Repetition] = true
	}
	if len(reps) != 4 {
		t.Errorf("trial records of repetitions %v, want 1..4", reps)
	}
}

// A search that runs out of trials leaves its row undetermined: the row says why, the notes do not claim
// that no rate met the tolerance, and no verdict rests on it.
func TestCappedSearchIsUndetermined(t *testing.T) {
	p := planFor(t, v1alpha1.TestThroughput)
	p.FrameSizes = []int{64}
	// short trials pass far above what the 60 s trial holds; two trials cannot bracket the answer
	dut := sim.DUT{CapacityFPS: 5e6, BufferFrames: 3_000_000}
	e := sim.New(dut)
	r := rfc2544.New(p, e, nil, rfc2544.Options{Sleep: e.Sleep, MaxTrialsPerSearch: 2})
	res, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Throughput) != 1 {
		t.Fatalf("rows: %+v", res.Throughput)
	}
	row := res.Throughput[0]
	if !strings.Contains(row.Undetermined, "cap of 2 trials") {
		t.Errorf("undetermined %q, NDR %s%%", row.Undetermined, row.NDR.PercentOfLineRate)
	}
	for _, n := range res.Notes {
		if strings.Contains(n, "met the loss tolerance") {
			t.Errorf("a capped search says no rate passed: %q", n)
		}
	}
	low := resource.MustParse("10M")
	atLeast := []v1alpha1.ThroughputExpectation{{FrameSize: 64, FramesPerSecond: &low}}
	verdict, why := expectations.Evaluate(&v1alpha1.Expectations{MinThroughput: atLeast}, res, p.Rows())
	// the row's figure (a lower bound) is below the minimum: still no verdict rests on it
	if verdict != v1alpha1.VerdictInconclusive {
		t.Errorf("verdict %s on an undetermined NDR (%q), want Inconclusive", verdict, why)
	}
}

// With FD.io CSIT's goal the NDR is a rate whose 1 s trials kept within the tolerance for more than half
// of 21 s: the search repeats a rate until its trials decide it, and the row stands on those trials.
func TestCSITGoalRepeatsARateUntilItIsDecided(t *testing.T) {
	p := planFor(t, v1alpha1.TestThroughput)
	p.FrameSizes = []int{64}
	p.Throughput.Goal = &plan.Goal{Preset: v1alpha1.GoalCSIT, FinalTrialDuration: time.Second, DurationSum: 21 * time.Second, ExceedRatioPercent: 50}
	res, rec, e, err := run(t, p, sim.DUT{CapacityFPS: 3e6})
	if err != nil {
		t.Fatal(err)
	}
	truth := e.DUT.CapacityPercent(64)
	ndr := pct(res.Throughput[0].NDR.PercentOfLineRate)
	if ndr > truth+1e-9 || ndr < truth-p.Throughput.ResolutionPercent-1e-9 || res.Throughput[0].Undetermined != "" {
		t.Errorf("NDR %.3f%% (undetermined %q), truth %.3f%%", ndr, res.Throughput[0].Undetermined, truth)
	}
	var at []search.Measurement
	for _, tr := range rec.trials {
		if math.Abs(tr.OfferedPercent-ndr) < 1e-3 {
			if tr.DurationS != 1 {
				t.Errorf("trial %d at the NDR lasted %.1f s, the goal's final trials 1 s", tr.Seq, tr.DurationS)
			}
			at = append(at, search.Measurement{Duration: time.Duration(tr.DurationS * float64(time.Second)), LossPercent: tr.LossPercent})
		}
	}
	goal := search.Goal{FinalTrialDuration: time.Second, DurationSum: 21 * time.Second, ExceedRatio: 0.5}
	if c, st := goal.Classify(at); c != search.LowerBound || len(at) < 11 {
		t.Errorf("the NDR's %d trials make it %s (%+v); CSIT's goal needs 11 clean seconds", len(at), c, st)
	}
}

// The spread of repeated throughput searches summarises what they measured: a repetition in which no rate
// passed (shown by full-length trials under the strict goal) measured an NDR below the resolution and
// counts as 0, said in a note; one that ended undetermined (a lower bound) is no measurement and is left
// out, said too, and with no measurement at all no spread is given.
func TestNDRSpreadLeavesOutRepetitionsWithoutAnAnswer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		dut      sim.DUT
		maxTrial int
		// measured: repetitions in the spread (0: no spread is given); zero: one of them found no rate
		measured int32
		zero     bool
		note     string
	}{
		// the DUT degrades to nothing within the run: the last repetition finds no rate, the second a lower one
		{name: "later repetitions find no NDR", dut: sim.DUT{CapacityFPS: 3e6, DriftPerHour: -3},
			measured: 3, zero: true, note: "in 1 of 3 repetitions no rate passed (counted as 0 in the spread)"},
		// two trials cannot bracket the answer: every repetition's rate is a lower bound
		{name: "every repetition undetermined", dut: sim.DUT{CapacityFPS: 5e6, BufferFrames: 3_000_000}, maxTrial: 2,
			note: "no repetition measured the NDR (undetermined, or the tester was the limit): no spread is given"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := planFor(t, v1alpha1.TestThroughput)
			p.FrameSizes = []int{64}
			p.Throughput.Repetitions = 3
			e := sim.New(tc.dut)
			r := rfc2544.New(p, e, nil, rfc2544.Options{Sleep: e.Sleep, MaxTrialsPerSearch: tc.maxTrial})
			res, err := r.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			row := res.Throughput[0]
			switch sp := row.Spread; {
			case tc.measured == 0 && sp != nil:
				t.Errorf("spread %+v of no measurement", *sp)
			case tc.measured > 0 && (sp == nil || sp.Repetitions != tc.measured || (sp.Min == 0) != tc.zero):
				t.Errorf("spread %+v, want %d repetitions (one of them 0: %v)", sp, tc.measured, tc.zero)
			}
			if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, tc.note) }) {
				t.Errorf("no note %q in %q", tc.note, res.Notes)
			}
		})
	}
}

// RFC 9971's conditional throughput is the rate the DUT forwards at a load it is allowed to lose at: past a
// DUT's capacity C a load λ loses 1 − C/λ, so at the PDR (1 % of loss allowed) it is C itself, for the RFC
// 2544 goal and for CSIT's alike, bidirectional too; at an NDR of 0 % loss there is none to give.
func TestConditionalThroughputIsWhatTheDUTForwardsAtThePDR(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(*plan.Plan)
	}{
		{"RFC 2544 goal", func(*plan.Plan) {}},
		{"CSIT goal", func(p *plan.Plan) {
			p.Throughput.Goal = &plan.Goal{Preset: v1alpha1.GoalCSIT, FinalTrialDuration: time.Second, DurationSum: 21 * time.Second, ExceedRatioPercent: 50}
		}},
		{"bidirectional", func(p *plan.Plan) { p.Traffic.Direction = v1alpha1.Bidirectional }},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := planFor(t, v1alpha1.TestThroughput)
			p.FrameSizes = []int{512}
			pdrTol := 1.0
			p.Throughput.PDRLossTolerancePercent = &pdrTol
			c.change(p)
			const capacity = 1e6
			e := sim.New(sim.DUT{CapacityFPS: capacity})
			res, err := rfc2544.New(p, e, nil, rfc2544.Options{Sleep: e.Sleep}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Throughput) == 0 {
				t.Fatal("no throughput row")
			}
			for _, row := range res.Throughput {
				if row.NDRConditional != nil {
					t.Errorf("%s: a conditional throughput %+v at an NDR of 0 %% loss", row.Direction, row.NDRConditional)
				}
				if row.PDR == nil || row.PDRConditional == nil {
					t.Fatalf("%s: PDR %+v, conditional %+v", row.Direction, row.PDR, row.PDRConditional)
				}
				got := float64(row.PDRConditional.FramesPerSecond)
				t.Logf("%s: NDR %d, PDR %d, conditional %d frames/s; capacity %.0f", row.Direction, row.NDR.FramesPerSecond, row.PDR.FramesPerSecond, row.PDRConditional.FramesPerSecond, capacity)
				if float64(row.PDR.FramesPerSecond) > capacity && math.Abs(got-capacity) > 2 {
					t.Errorf("%s: conditional throughput %.0f frames/s at a PDR of %d, want the capacity %.0f", row.Direction, got, row.PDR.FramesPerSecond, capacity)
				}
				if got > float64(row.PDR.FramesPerSecond) || got < float64(row.PDR.FramesPerSecond)*0.99-1 {
					t.Errorf("%s: conditional throughput %.0f outside [PDR × 0.99, PDR] of %d", row.Direction, got, row.PDR.FramesPerSecond)
				}
			}
		})
	}
}
