package search_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"linerate.dev/linerate/internal/engine/sim"
	"linerate.dev/linerate/internal/search"
)

// lineFPS is the sim DUT's default line rate (10 Gbit/s) in 64 B frames per second.
const lineFPS = 10e9 / ((size + 20) * 8)

// The absolute width a goal accepts at an upper bound: the resolution without a relative width, the
// width's share of the upper bound with one, never less than its share of the resolution.
func TestGoalWidthAt(t *testing.T) {
	for _, tc := range []struct {
		width, upper, res, want float64
	}{
		{0, 50, 0.5, 0.5},           // RFC 2544: the resolution wherever the answer lies
		{0, 2, 0.1, 0.1},            // likewise
		{0.005, 2, 0.5, 0.01},       // CSIT's 0.5 % at 2 % of line rate: 50 times finer than 0.5
		{0.005, 90, 0.5, 0.45},      // at 90 %
		{0.005, 100, 0.1, 0.5},      // coarser than a resolution of 0.1
		{0.005, 0.2, 0.5, 0.0025},   // below the resolution (the lowest rate tried): its share of it
		{0.02, 80, 0.5, 1.6},        // a wider goal: coarser than the resolution
		{0.005, 0.5, 0.5, 0.0025},   // at the resolution itself
		{0.005, 1, 0.000001, 0.005}, // a fine resolution lowers the floor
	} {
		if got := (search.Goal{Width: tc.width}).WidthAt(tc.upper, tc.res); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("width %g at %g%% (resolution %g): %g, want %g", tc.width, tc.upper, tc.res, got, tc.want)
		}
	}
}

// upperBound is the lowest rate above the NDR whose trials the goal classifies as an upper bound (the
// search's U), maxRate when none is.
func upperBound(r *search.Result, g search.Goal, maxRate float64) float64 {
	at := map[float64][]search.Measurement{}
	for _, m := range r.History {
		at[m.RatePercent] = append(at[m.RatePercent], m)
	}
	u := maxRate
	for rate, ms := range at {
		if c, _ := g.Classify(ms); c == search.UpperBound && rate > r.NDR && rate < u {
			u = rate
		}
	}
	return u
}

// With a relative goal width (RFC 9971) Multistage stops once (U − L) / U is at most the width, L the
// NDR and U the lowest rate its goal makes an upper bound above it: at a low NDR the bracket is far finer
// than the resolution, at a high one coarser than a fine resolution, and near the resolution (the lowest
// rate tried) it is floored at the width's share of it. The DUTs are steady, so the truth lies in [L, U].
func TestMultistageStopsAtTheGoalWidth(t *testing.T) {
	rfc := search.Strict(60*time.Second, 0)
	rfc.Width = 0.005
	csit := search.Goal{FinalTrialDuration: time.Second, DurationSum: 21 * time.Second, ExceedRatio: 0.5, Width: 0.005}
	for _, tc := range []struct {
		name     string
		goal     search.Goal
		capacity float64 // percent of line rate
		res      float64
		// maxBracket is the widest U − L may be, percent of line rate: the goal width at U
		maxBracket float64
		maxTrials  int
	}{
		{"RFC 2544 reading, NDR 2 %", rfc, 2, 0.5, 0.01, 20},
		{"RFC 2544 reading, NDR 33.6 %", rfc, 33.6, 0.5, 0.17, 20},
		{"RFC 2544 reading, NDR 90 %: coarser than a resolution of 0.1", rfc, 90, 0.1, 0.45, 20},
		{"RFC 2544 reading, NDR 0.6 %: at the floor", rfc, 0.6, 0.5, 0.003, 30},
		{"CSIT, NDR 2 %", csit, 2, 0.5, 0.01, 150},
		{"CSIT, NDR 90 %", csit, 90, 0.5, 0.45, 150},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := sim.New(sim.DUT{CapacityFPS: tc.capacity / 100 * lineFPS})
			truth := e.DUT.CapacityPercent(size)
			p := params(tc.res)
			g := tc.goal
			p.Goal = &g
			if g.FinalTrialDuration < p.ValidationTrial {
				p.SearchTrial, p.ValidationTrial = g.FinalTrialDuration, g.FinalTrialDuration
			}
			r, err := search.Multistage(context.Background(), p, e.Measure(size))
			if err != nil {
				t.Fatal(err)
			}
			if !r.Found || r.Undetermined != "" {
				t.Fatalf("no NDR (undetermined %q): %s", r.Undetermined, rates(r))
			}
			u := upperBound(r, g, p.MaxRate)
			if (u-r.NDR)/u > g.Width+1e-9 || u-r.NDR > tc.maxBracket+1e-9 {
				t.Errorf("L %.4f%%, U %.4f%%: (U − L) / U = %.5f, goal width %g (at most %g%% of line rate): %s",
					r.NDR, u, (u-r.NDR)/u, g.Width, tc.maxBracket, rates(r))
			}
			if r.NDR > truth+1e-9 || u < truth-1e-9 {
				t.Errorf("the truth %.4f%% is not in [L %.4f%%, U %.4f%%]", truth, r.NDR, u)
			}
			// the search exposes U as the lowest failing trial above the NDR
			if u < p.MaxRate && (r.AboveNDR == nil || r.AboveNDR.RatePercent != u) {
				t.Errorf("AboveNDR %+v, want a trial at U %.4f%%", r.AboveNDR, u)
			}
			if r.Trials > tc.maxTrials {
				t.Errorf("%d trials, at most %d: %s", r.Trials, tc.maxTrials, rates(r))
			}
			if c, st := g.Classify(atRate(r, r.NDR)); c != search.LowerBound {
				t.Errorf("the NDR %.4f%% is %s by its own goal (%+v)", r.NDR, c, st)
			}
			t.Logf("truth %.4f%%: L %.4f%%, U %.4f%% (%.4f apart) in %d trials", truth, r.NDR, u, u-r.NDR, r.Trials)
		})
	}
}

// The same DUT searched with the resolution and with a relative width of 0.5 %: at a low NDR the width
// brackets it finer (an absolute resolution of 0.5 is a quarter of a 2 % NDR), at a high NDR coarser than
// a fine resolution, in fewer trials.
func TestGoalWidthAgainstTheResolution(t *testing.T) {
	for _, tc := range []struct {
		name     string
		capacity float64 // percent of line rate
		res      float64
		finer    bool // the width brackets finer than the resolution
	}{
		{"NDR 2 %, resolution 0.5", 2, 0.5, true},
		{"NDR 5 %, resolution 0.5", 5, 0.5, true},
		{"NDR 90 %, resolution 0.1", 90, 0.1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bracket := map[bool]float64{}
			trials := map[bool]int{}
			for _, relative := range []bool{false, true} {
				e := sim.New(sim.DUT{CapacityFPS: tc.capacity / 100 * lineFPS})
				p := params(tc.res)
				g := search.Strict(p.ValidationTrial, 0)
				if relative {
					g.Width = 0.005
					p.Goal = &g
				}
				r, err := search.Multistage(context.Background(), p, e.Measure(size))
				if err != nil || !r.Found {
					t.Fatalf("relative %v: %v, found %v: %s", relative, err, r.Found, rates(r))
				}
				bracket[relative], trials[relative] = upperBound(r, g, p.MaxRate)-r.NDR, r.Trials
			}
			t.Logf("resolution %g: U − L %.4f%% in %d trials; width 0.5 %%: %.4f%% in %d trials",
				tc.res, bracket[false], trials[false], bracket[true], trials[true])
			if tc.finer && !(bracket[true] < bracket[false] && bracket[true] <= 0.005*tc.capacity*1.01) {
				t.Errorf("the width's bracket %.4f%% is not finer than the resolution's %.4f%%", bracket[true], bracket[false])
			}
			if !tc.finer && !(bracket[true] > tc.res && trials[true] <= trials[false]) {
				t.Errorf("the width's bracket %.4f%% in %d trials is not coarser than the resolution %g (%d trials)",
					bracket[true], trials[true], tc.res, trials[false])
			}
		})
	}
}

// A search that runs out of trials under a relative width says so in the width's terms. The DUT drops
// everything above 2 % of line rate, so a failure's forwarding rate guesses nothing and the search halves.
func TestGoalWidthUndetermined(t *testing.T) {
	cliff := func(_ context.Context, rate float64, d time.Duration, _ string) (search.Measurement, error) {
		m := search.Measurement{Duration: d}
		if rate > 2 {
			m.LossPercent = 100
		}
		return m, nil
	}
	p := params(0.5)
	g := search.Strict(p.ValidationTrial, 0)
	g.Width = 0.005
	p.Goal, p.MaxTrials = &g, 15
	r, err := search.Multistage(context.Background(), p, cliff)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Undetermined, "wider than the goal width of 0.5% of the upper bound") {
		t.Errorf("undetermined %q: %s", r.Undetermined, rates(r))
	}
}

// Binary is RFC 2544's bisection to the resolution: a goal's relative width (which the API refuses with
// Binary) changes nothing.
func TestBinaryKeepsTheResolution(t *testing.T) {
	run := func(g *search.Goal) *search.Result {
		p := params(0.5)
		p.Goal = g
		r, err := search.Binary(context.Background(), p, sim.New(sim.DUT{CapacityFPS: 0.02 * lineFPS}).Measure(size))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	g := search.Strict(60*time.Second, 0)
	g.Width = 0.005
	plain, width := run(nil), run(&g)
	if plain.NDR != width.NDR || plain.Trials != width.Trials {
		t.Errorf("Binary with a goal width: NDR %.4f%% in %d trials, without: %.4f%% in %d", width.NDR, width.Trials, plain.NDR, plain.Trials)
	}
}

// atRate is every trial of a result at a rate.
func atRate(r *search.Result, rate float64) []search.Measurement {
	var out []search.Measurement
	for _, m := range r.History {
		if m.RatePercent == rate {
			out = append(out, m)
		}
	}
	return out
}
