package rfc2544_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/engine/sim"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/rfc2544"
)

// Both ways at once: Bidirectional searches each direction on its own (one row each, each within a
// resolution step of its truth); BidirectionalBound offers one rate both ways and one verdict, so on a
// DUT whose directions share one capacity each direction gets half of it.

func TestBidirectionalSearchesEachDirection(t *testing.T) {
	p := planFor(t, v1alpha1.TestThroughput)
	p.FrameSizes = []int{64}
	p.Traffic.Direction = v1alpha1.Bidirectional
	res, _, e, err := run(t, p, sim.DUT{CapacityFPS: 2.5e6})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Throughput) != 2 {
		t.Fatalf("want a row per direction, got %+v", res.Throughput)
	}
	truth := e.DUT.CapacityPercent(64)
	seen := map[string]bool{}
	for _, row := range res.Throughput {
		seen[row.Direction] = true
		got := pct(row.NDR.PercentOfLineRate)
		if got > truth+1e-9 || got < truth-p.Throughput.ResolutionPercent-1e-9 {
			t.Errorf("%s: NDR %.3f%%, truth %.3f%%", row.Direction, got, truth)
		}
	}
	if !seen["west->east"] || !seen["east->west"] {
		t.Errorf("directions %v", seen)
	}
	// every trial sends both ways: a direction searched alone would not load the DUT like the test asks
	for _, c := range e.Log {
		if len(c.Streams) != 2 {
			t.Fatalf("a bidirectional trial ran %d streams", len(c.Streams))
		}
	}
}

func TestBidirectionalBoundSharesTheCapacity(t *testing.T) {
	p := planFor(t, v1alpha1.TestThroughput)
	p.FrameSizes = []int{512}
	p.Traffic.Direction = v1alpha1.BidirectionalBound
	res, _, e, err := run(t, p, sim.DUT{CapacityFPS: 2e6, Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Throughput) != 2 {
		t.Fatalf("want a row per direction, got %+v", res.Throughput)
	}
	// shared: each direction forwards half the capacity when both are offered the same rate
	truth := e.DUT.CapacityPercent(512) / 2
	var rates []string
	for _, row := range res.Throughput {
		got := pct(row.NDR.PercentOfLineRate)
		rates = append(rates, row.NDR.PercentOfLineRate)
		if got > truth+1e-9 || got < truth-p.Throughput.ResolutionPercent-1e-9 {
			t.Errorf("%s: NDR %.3f%%, truth %.3f%% per direction", row.Direction, got, truth)
		}
	}
	if rates[0] != rates[1] {
		t.Errorf("a bound search has one rate for both directions: %v", rates)
	}
}

// coupled is a DUT whose east->west direction shares a frame budget with west->east: alone each forwards
// what the simulated DUT forwards, together east->west loses what their sum offers beyond the budget.
type coupled struct {
	*sim.Engine
	budgetFPS float64
}

func (c coupled) RunTrial(ctx context.Context, cfg engine.TrialConfig, progress func(engine.Progress)) (*engine.TrialResult, error) {
	res, err := c.Engine.RunTrial(ctx, cfg, progress)
	if err != nil || len(cfg.Streams) != 2 || cfg.Burst > 0 {
		return res, err
	}
	if over := cfg.RatesFPS[0] + cfg.RatesFPS[1] - c.budgetFPS; over > 0 {
		s := res.Stream(cfg.Streams[1])
		s.RxFrames -= int64(math.Ceil(float64(s.RxFrames) * math.Min(1, over/cfg.RatesFPS[1])))
	}
	return res, nil
}

// Each direction searched on its own can end on a pair that is never loss-free together: the two binary
// searches bisect in lock step, and east->west's last pass was judged while west->east ran below the rate
// it then reported. The pair reported is confirmed by a trial with both at once, and the direction that
// lost in it is lowered until one does.
func TestBidirectionalPairIsLoweredUntilItHoldsTogether(t *testing.T) {
	line := 10e9 / (84 * 8)
	for _, tc := range []struct{ capacity, budget float64 }{{0.2, 0.3}, {0.2, 0.25}, {0.12, 0.15}, {0.3, 0.33}} {
		t.Run(fmt.Sprintf("west->east %.0f%%, shared %.0f%%", 100*tc.capacity, 100*tc.budget), func(t *testing.T) {
			p := planFor(t, v1alpha1.TestThroughput)
			p.FrameSizes = []int{64}
			p.Traffic.Direction = v1alpha1.Bidirectional
			p.Throughput.Method = v1alpha1.SearchBinary
			budget := tc.budget * line
			e := coupled{sim.New(sim.DUT{CapacityFPS: tc.capacity * line}), budget}
			rec := &recorder{}
			res, err := rfc2544.New(p, e, rec, rfc2544.Options{Sleep: e.Sleep}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			fps := map[string]float64{}
			for _, row := range res.Throughput {
				fps[row.Direction] = float64(row.NDR.FramesPerSecond)
				if row.Undetermined != "" {
					t.Errorf("%s undetermined: %s", row.Direction, row.Undetermined)
				}
			}
			sum := fps["west->east"] + fps["east->west"]
			if sum > budget*(1+1e-6) {
				t.Errorf("west->east %.0f + east->west %.0f frames/s exceed the budget of %.0f they share", fps["west->east"], fps["east->west"], budget)
			}
			// lowered, then bisected back up: each direction within a resolution of where the pair starts to lose
			if res := p.Throughput.ResolutionPercent / 100 * line; sum < budget-2*res {
				t.Errorf("west->east %.0f + east->west %.0f frames/s leave more than two resolutions (%.0f frames/s) of the budget of %.0f unused", fps["west->east"], fps["east->west"], 2*res, budget)
			}
			for _, n := range res.Notes {
				if strings.Contains(n, "ran out") || strings.Contains(n, "within 16") {
					t.Errorf("the confirmation ran out of trials: %s", n)
				}
			}
			var joint []results.Trial
			for _, tr := range rec.trials {
				if tr.Purpose == rfc2544.PurposeJointValidation {
					joint = append(joint, tr)
				}
			}
			// the pair reported is a confirming trial that passed in both directions (records come in pairs)
			confirmed := false
			for i := 0; i+1 < len(joint); i += 2 {
				a, b := joint[i], joint[i+1]
				confirmed = confirmed || (a.Pass && b.Pass && math.Abs(a.AchievedFPS-fps[a.Direction]) < 1 && math.Abs(b.AchievedFPS-fps[b.Direction]) < 1)
			}
			if !confirmed {
				t.Errorf("no confirming trial passed at the reported pair %v", fps)
			}
			t.Logf("west->east %.0f, east->west %.0f frames/s (budget %.0f); %d confirming records", fps["west->east"], fps["east->west"], budget, len(joint))
		})
	}
}

// After the joint trials lower a pair, what the DUT drops first above its NDR is what it dropped in the
// lowest joint trial it lost, not in a search trial far above the lowered rate.
func TestAboveTheLoweredNDRIsTheLowestJointLoss(t *testing.T) {
	p := planFor(t, v1alpha1.TestImixThroughput)
	p.FrameSizes = nil
	p.Traffic.Direction = v1alpha1.Bidirectional
	p.Throughput.Method = v1alpha1.SearchBinary
	p.Imix = &plan.Imix{Cycle: []int{64, 570, 64, 1518, 64, 570, 64, 64, 570, 64, 64, 570}, AverageFrameSize: 357.83}
	line := 10e9 / ((357.83 + 20) * 8)
	e := coupled{sim.New(sim.DUT{CapacityFPS: 0.2 * line}), 0.3 * line}
	rec := &recorder{}
	res, err := rfc2544.New(p, e, rec, rfc2544.Options{Sleep: e.Sleep}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "lowered") {
		t.Fatalf("the joint trials lowered nothing; notes %q", res.Notes)
	}
	for _, row := range res.Imix {
		ndr := pct(row.NDR.PercentOfLineRate)
		var lowest *results.Trial
		for i, tr := range rec.trials {
			if tr.Direction == row.Direction && !tr.Pass && !tr.TesterLimited && tr.OfferedPercent > ndr+1e-9 &&
				(lowest == nil || tr.OfferedPercent < lowest.OfferedPercent) {
				lowest = &rec.trials[i]
			}
		}
		if lowest == nil {
			continue // never lost above its NDR (west->east at line rate's cap)
		}
		if len(row.ClassesAboveNDR) == 0 {
			t.Fatalf("%s: no loss above the NDR %.3f%%: %+v", row.Direction, ndr, row.ClassesAboveNDR)
		}
		var tx int64
		for _, c := range row.ClassesAboveNDR {
			tx += c.TxFrames
		}
		if tx != lowest.TxFrames {
			t.Errorf("%s: the loss above the NDR %.3f%% is from a trial of %d frames, the lowest loss above it (%s at %.3f%%) sent %d",
				row.Direction, ndr, tx, lowest.Purpose, lowest.OfferedPercent, lowest.TxFrames)
		}
	}
}
