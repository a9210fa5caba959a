package search_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"linerate.dev/linerate/internal/engine/sim"
	"linerate.dev/linerate/internal/search"
)

const size = 64

func params(res float64) search.Params {
	return search.Params{MaxRate: 100, Resolution: res, SearchTrial: 10 * time.Second, ValidationTrial: 60 * time.Second}
}

type algo struct {
	name string
	run  func(context.Context, search.Params, search.Measure) (*search.Result, error)
}

var algos = []algo{{"Binary", search.Binary}, {"Multistage", search.Multistage}}

// checkNeverAboveFailure: the NDR is a full-length pass and no full-length trial at or below it failed;
// a shorter trial that lost at or below it (it only steers the search) is named in a note. Under the RFC
// 2544 goal (p.Goal nil or FullLengthBounds) "no rate passed" is a finding of full-length trials too: a
// search that ended on its own without an NDR shows a full-length trial that lost at or below the
// resolution, the lowest rate it tries (short trials that lost there prove nothing on their own).
func checkNeverAboveFailure(t *testing.T, r *search.Result, p search.Params) {
	t.Helper()
	tol := p.LossTolerance
	fullLength := func(m search.Measurement) bool { return m.Duration+time.Millisecond >= p.ValidationTrial }
	if !r.Found {
		strict := p.Goal == nil || p.Goal.FullLengthBounds
		if !strict || r.Undetermined != "" || r.TesterLimited || r.Aborted != "" {
			return
		}
		if !slices.ContainsFunc(r.History, func(m search.Measurement) bool {
			return fullLength(m) && !m.TesterLimited && m.Aborted == "" && !search.Pass(m.LossPercent, tol) && m.RatePercent <= p.Resolution+1e-9
		}) {
			t.Errorf("no rate passed, and no full-length trial at or below the resolution %g%% lost:%s", p.Resolution, rates(r))
		}
		return
	}
	if r.NDRTrial == nil || !fullLength(*r.NDRTrial) || !search.Pass(r.NDRTrial.LossPercent, tol) {
		t.Errorf("NDR %.3f%% is not backed by a passing full-length trial: %+v", r.NDR, r.NDRTrial)
	}
	for _, m := range r.History {
		if m.TesterLimited || search.Pass(m.LossPercent, tol) || m.RatePercent > r.NDR+1e-9 {
			continue
		}
		if fullLength(m) {
			t.Errorf("NDR %.3f%% is at or above a failed %s trial at %.3f%% (%s, loss %.4f%%)", r.NDR, m.Purpose, m.RatePercent, m.Duration, m.LossPercent)
		} else if !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "shorter trials lost frames at or below the NDR") }) {
			t.Errorf("a %s trial lost at %.3f%%, at or below the NDR %.3f%%, and no note says so: %q", m.Duration, m.RatePercent, r.NDR, r.Notes)
		}
	}
}

func TestFixedCapacity(t *testing.T) {
	for _, a := range algos {
		for _, capFPS := range []float64{1e6, 3.3e6, 5e6, 7.77e6, 12e6, 14.5e6} {
			for _, res := range []float64{0.1, 0.5, 1} {
				t.Run(fmt.Sprintf("%s/%g/%g", a.name, capFPS, res), func(t *testing.T) {
					e := sim.New(sim.DUT{CapacityFPS: capFPS})
					truth := e.DUT.CapacityPercent(size)
					p := params(res)
					r, err := a.run(context.Background(), p, e.Measure(size))
					if err != nil {
						t.Fatal(err)
					}
					if !r.Found || r.NDR > truth+1e-9 || r.NDR < truth-res-1e-9 {
						t.Errorf("NDR %.3f%%, truth %.3f%%, resolution %g", r.NDR, truth, res)
					}
					bound := int(math.Ceil(math.Log2(100/res))) + 2
					if a.name == "Multistage" {
						bound = 2*int(math.Ceil(math.Log2(100/res))) + 4
					}
					if r.Trials > bound {
						t.Errorf("%d trials, bound %d", r.Trials, bound)
					}
					checkNeverAboveFailure(t, r, p)
				})
			}
		}
	}
}

func TestLineRateDUT(t *testing.T) {
	for _, a := range algos {
		e := sim.New(sim.DUT{})
		r, err := a.run(context.Background(), params(0.5), e.Measure(size))
		if err != nil {
			t.Fatal(err)
		}
		if r.NDR != 100 || r.Trials > 2 {
			t.Errorf("%s: NDR %.3f after %d trials, want 100%% at once", a.name, r.NDR, r.Trials)
		}
	}
}

func TestNoisyCapacity(t *testing.T) {
	for _, a := range algos {
		for seed := range uint64(20) {
			e := sim.New(sim.DUT{CapacityL2Bps: 4e9, Noise: 0.01, Seed: seed})
			truth := e.DUT.CapacityPercent(1024)
			r, err := a.run(context.Background(), params(0.5), e.Measure(1024))
			if err != nil {
				t.Fatal(err)
			}
			// Noise of 1 % of capacity: allow three deviations either side plus the resolution below.
			if !r.Found || r.NDR > truth*1.03 || r.NDR < truth*0.97-0.5 {
				t.Errorf("%s seed %d: NDR %.3f%%, truth %.3f%% ± 3σ", a.name, seed, r.NDR, truth)
			}
			if r.Trials > 40 {
				t.Errorf("%s seed %d: %d trials", a.name, seed, r.Trials)
			}
			checkNeverAboveFailure(t, r, params(0.5))
		}
	}
}

func TestDriftingCapacity(t *testing.T) {
	for _, a := range algos {
		// Capacity falls by 20 % per simulated hour.
		e := sim.New(sim.DUT{CapacityFPS: 6e6, DriftPerHour: -0.2})
		r, err := a.run(context.Background(), params(0.5), e.Measure(size))
		if err != nil {
			t.Fatal(err)
		}
		checkNeverAboveFailure(t, r, params(0.5))
		// The NDR cannot be above the capacity the DUT had when the NDR's trial ran: at most the initial.
		if r.NDR > e.DUT.CapacityPercent(size)+1e-9 {
			t.Errorf("%s: NDR %.3f above the initial capacity", a.name, r.NDR)
		}
		now := e.DUT.CapacityPercent(size) * (1 - 0.2*e.Clock().Hours())
		if r.NDR < now-1 {
			t.Errorf("%s: NDR %.3f%% far below the capacity at the end %.3f%%", a.name, r.NDR, now)
		}
	}
}

func TestShortTrialsPassLongTrialsFail(t *testing.T) {
	// A deep buffer absorbs 10 s of a small overload but not 60 s: short trials overestimate, the
	// validation must fail and the search step down to the long-trial capacity.
	e := sim.New(sim.DUT{CapacityFPS: 5e6, BufferFrames: 3_000_000})
	r, err := search.Multistage(context.Background(), params(0.5), e.Measure(size))
	if err != nil {
		t.Fatal(err)
	}
	line := 10e9 / (84 * 8)
	truth60 := 100 * (5e6 + 3e6/60) / line
	if r.NDR > truth60 || r.NDR < truth60-0.5 {
		t.Errorf("NDR %.3f%%, 60 s truth %.3f%%", r.NDR, truth60)
	}
	failedValidation := false
	for _, m := range r.History {
		if m.Purpose == search.PurposeValidation && m.LossPercent > 0 {
			failedValidation = true
		}
	}
	if !failedValidation {
		t.Errorf("expected a failed validation: %+v", r.History)
	}
	checkNeverAboveFailure(t, r, params(0.5))
}

func TestDUTStalls(t *testing.T) {
	for _, a := range algos {
		e := sim.New(sim.DUT{CapacityFPS: 5e6, StallAfterTrials: 3})
		r, err := a.run(context.Background(), params(0.5), e.Measure(size))
		if !errors.Is(err, search.ErrAborted) {
			t.Fatalf("%s: err %v, want ErrAborted", a.name, err)
		}
		if r == nil || r.Aborted != "dut-stalled" || len(r.History) != 3 || r.Trials != 3 {
			t.Fatalf("%s: result %+v", a.name, r)
		}
	}
}

func TestTesterSaturates(t *testing.T) {
	for _, a := range algos {
		// The DUT forwards at line rate; the tester reaches only 8 Mpps at 64 B (53.8 %).
		e := sim.New(sim.DUT{TesterMaxFPS: 8e6})
		r, err := a.run(context.Background(), params(0.5), e.Measure(size))
		if err != nil {
			t.Fatal(err)
		}
		ceiling := 100 * 8e6 / (10e9 / (84 * 8))
		if !r.TesterLimited || r.NDR > ceiling || r.NDR < ceiling-1.5 {
			t.Errorf("%s: NDR %.3f%% testerLimited=%v, tester ceiling %.3f%%", a.name, r.NDR, r.TesterLimited, ceiling)
		}
		if r.NDRTrial == nil || r.NDRTrial.TesterLimited {
			t.Errorf("%s: the NDR trial must not be tester-limited", a.name)
		}
		if len(r.Notes) == 0 {
			t.Errorf("%s: no note about the tester limit", a.name)
		}
	}
}

func TestPDRInTheSameSearch(t *testing.T) {
	pdrTol := 1.0
	p := params(0.5)
	p.PDRLossTolerance = &pdrTol
	for _, a := range algos {
		// Above capacity the loss is (r-c)/r: the PDR at 1 % is c/0.99.
		e := sim.New(sim.DUT{CapacityFPS: 5e6})
		r, err := a.run(context.Background(), p, e.Measure(size))
		if err != nil {
			t.Fatal(err)
		}
		truth := e.DUT.CapacityPercent(size)
		pdrTruth := truth / (1 - pdrTol/100)
		if r.PDR == nil || *r.PDR < r.NDR || *r.PDR > pdrTruth+1e-9 || *r.PDR < pdrTruth-0.5 {
			t.Errorf("%s: NDR %.3f PDR %v, PDR truth %.3f", a.name, r.NDR, r.PDR, pdrTruth)
		}
	}
}

// shortTrialsAlwaysLose is a DUT whose short trials lose frames at every rate while its full-length trials
// keep within the tolerance up to capacity (percent of line rate): short trials mislead as far as they can.
func shortTrialsAlwaysLose(capacity float64) search.Measure {
	return func(_ context.Context, rate float64, d time.Duration, _ string) (search.Measurement, error) {
		loss := 0.01
		if rate > capacity {
			loss = (rate - capacity) / rate * 100
		} else if d >= 60*time.Second {
			loss = 0
		}
		return search.Measurement{LossPercent: loss, Duration: d}, nil
	}
}

// testerSpoilsAbove is measure with every trial above rate (percent of line rate) spoiled by the tester.
func testerSpoilsAbove(rate float64, measure search.Measure) search.Measure {
	return func(ctx context.Context, r float64, d time.Duration, purpose string) (search.Measurement, error) {
		m, err := measure(ctx, r, d, purpose)
		if r > rate {
			m.TesterLimited, m.AchievedPercent = true, r
		}
		return m, err
	}
}

// "No rate passed" is what full-length trials show, not short ones: a DUT that loses in every trial has
// no NDR, and one whose short trials lose at every rate but whose full-length trials pass has the NDR its
// full-length trials show.
func TestNoRatePasses(t *testing.T) {
	cases := []struct {
		name    string
		res     float64
		measure func() search.Measure
		// capacity is the highest full-length pass (the NDR within the resolution below it); 0: none
		capacity float64
		// testerLimited: the tester spoils every trial above capacity; there may be no NDR (Binary does not
		// try under the resolution), but then the tester, not the DUT, is why
		testerLimited bool
		maxTrials     int // for either search
	}{
		{"every trial loses", 1, func() search.Measure { return sim.New(sim.DUT{DropEvery: 100}).Measure(size) }, 0, false, 20},
		// Multistage: a dozen short trials down to the floor, then full-length trials that climb from the pass
		// there in doubling steps and bisect as Binary does, not through every rate a short trial lost at
		{"short trials always lose, full-length up to 40%", 0.5, func() search.Measure { return shortTrialsAlwaysLose(40) }, 40, false, 30},
		{"short trials always lose, full-length up to 3%", 1, func() search.Measure { return shortTrialsAlwaysLose(3) }, 3, false, 20},
		// the short trials reach under half the resolution as the tester's ceiling comes down: the search
		// goes on to full-length trials with a short failure as its only upper bound
		{"short trials always lose, tester spoils above 0.3%", 0.5, func() search.Measure { return testerSpoilsAbove(0.3, shortTrialsAlwaysLose(40)) }, 0.3, true, 60},
	}
	for _, c := range cases {
		for _, a := range algos {
			t.Run(c.name+"/"+a.name, func(t *testing.T) {
				p := params(c.res)
				r, err := a.run(context.Background(), p, c.measure())
				if err != nil {
					t.Fatal(err)
				}
				if r.Undetermined != "" {
					t.Errorf("undetermined: %s", r.Undetermined)
				}
				switch {
				case c.testerLimited && r.Found && r.NDR > c.capacity+1e-9:
					t.Errorf("NDR %.3f%% above the tester's limit %g%%:%s", r.NDR, c.capacity, rates(r))
				case c.testerLimited:
				case c.capacity == 0 && (r.Found || r.NDR != 0 || len(r.Notes) == 0):
					t.Errorf("found %v, NDR %.3f%%, notes %q, want no rate:%s", r.Found, r.NDR, r.Notes, rates(r))
				case c.capacity > 0 && (!r.Found || r.NDR > c.capacity+1e-9 || r.NDR < c.capacity-c.res-1e-9):
					t.Errorf("found %v, NDR %.3f%%, want within %g%% under %g%%; notes %q:%s", r.Found, r.NDR, c.res, c.capacity, r.Notes, rates(r))
				}
				if r.TesterLimited != c.testerLimited {
					t.Errorf("tester-limited %v, want %v; notes %q", r.TesterLimited, c.testerLimited, r.Notes)
				}
				if r.Trials > c.maxTrials {
					t.Errorf("%d trials, at most %d expected:%s", r.Trials, c.maxTrials, rates(r))
				}
				checkNeverAboveFailure(t, r, p)
			})
		}
	}
}

// A search that runs out of trials has not determined the NDR: it says so, with the reason, whatever
// rate it validated on the way (a lower bound, not the answer), and never as "no rate met the tolerance".
func TestTrialCapLeavesTheResultUndetermined(t *testing.T) {
	for _, tc := range []struct {
		name string
		dut  sim.DUT
		// cap of Binary's trials; Multistage, whose guesses from the forwarding rate of failed trials land
		// within the resolution of these DUTs in three, gets at most two
		cap int
		// validated: a full-length trial passed before Binary's cap (the lower bound is kept)
		validated bool
		// multistageCap: Multistage lands within the resolution of the steady DUTs in three trials (from the
		// forwarding rate of the first), so it gets two there; on the noisy one, six, so that its short
		// trials run before the cap (the short phase leaves four for full-length trials)
		multistageCap int
	}{
		{name: "noisy, fine resolution", dut: sim.DUT{CapacityFPS: 5e6, Noise: 0.02}, cap: 6, multistageCap: 6},
		{name: "buffer", dut: sim.DUT{CapacityFPS: 5e6, BufferFrames: 3_000_000}, cap: 9, multistageCap: 2},
		{name: "validated, width not reached", dut: sim.DUT{CapacityFPS: 5e6}, cap: 9, validated: true, multistageCap: 2},
	} {
		for _, a := range algos {
			t.Run(tc.name+"/"+a.name, func(t *testing.T) {
				p := params(0.01)
				p.MaxTrials = tc.cap
				if a.name == "Multistage" {
					p.MaxTrials = min(tc.cap, tc.multistageCap)
				}
				r, err := a.run(context.Background(), p, sim.New(tc.dut).Measure(size))
				if err != nil {
					t.Fatal(err)
				}
				if r.Trials > p.MaxTrials {
					t.Errorf("%d trials, cap %d", r.Trials, p.MaxTrials)
				}
				if r.Undetermined == "" || !strings.Contains(r.Undetermined, fmt.Sprintf("cap of %d trials", p.MaxTrials)) {
					t.Errorf("undetermined %q after %d trials (found %v, NDR %.3f%%, notes %q)", r.Undetermined, r.Trials, r.Found, r.NDR, r.Notes)
				}
				for _, n := range r.Notes {
					if strings.Contains(n, "met the loss tolerance") {
						t.Errorf("a capped search says no rate passed: %q", n)
					}
				}
				if tc.validated && a.name == "Binary" && !r.Found {
					t.Errorf("the full-length pass before the cap is lost: %s", rates(r))
				}
				if a.name == "Multistage" && tc.multistageCap > 4 && !slices.ContainsFunc(r.History, func(m search.Measurement) bool { return m.Purpose == search.PurposeSearch }) {
					t.Errorf("no short trial ran before the cap: %s", rates(r))
				}
				checkNeverAboveFailure(t, r, p)
			})
		}
	}
}

func TestMultistageIsFaster(t *testing.T) {
	var tb, tm time.Duration
	for _, c := range []float64{2e6, 5e6, 9e6} {
		for _, a := range algos {
			e := sim.New(sim.DUT{CapacityFPS: c})
			r, err := a.run(context.Background(), params(0.5), e.Measure(size))
			if err != nil {
				t.Fatal(err)
			}
			if a.name == "Binary" {
				tb += r.TrialTime
			} else {
				tm += r.TrialTime
			}
		}
	}
	if float64(tm) > 0.5*float64(tb) {
		t.Errorf("Multistage %s vs Binary %s of trial time", tm, tb)
	}
}

// TestTesterHiccup: one trial in which a preempted tester fell short of its rate (and lost the catch-up
// burst) must neither lower the ceiling nor mark the result tester-limited: the trial is repeated, and
// only a saturation that repeats counts.
func TestTesterHiccup(t *testing.T) {
	for _, a := range algos {
		for k := 1; k <= 6; k++ {
			t.Run(fmt.Sprintf("%s/trial%d", a.name, k), func(t *testing.T) {
				e := sim.New(sim.DUT{CapacityFPS: 5e6, TesterHiccupTrials: []int{k}})
				truth := e.DUT.CapacityPercent(size)
				r, err := a.run(context.Background(), params(0.5), e.Measure(size))
				if err != nil {
					t.Fatal(err)
				}
				if !r.Found || r.NDR > truth+1e-9 || r.NDR < truth-0.5-1e-9 || r.TesterLimited {
					t.Errorf("NDR %.3f%% testerLimited=%v, truth %.3f%%; notes %q", r.NDR, r.TesterLimited, truth, r.Notes)
				}
				checkNeverAboveFailure(t, r, params(0.5))
			})
		}
	}
}

// TestTesterSpoilsAboveARate: a tester that sends everything it is asked but spoils every trial above a
// rate (bursts after preemption: the trial is invalid, not short) is found as the limit in a bounded number
// of trials, whichever trials it spoils; the NDR is a valid pass at or below that rate and marked
// tester-limited, and no spoiled trial is booked as a pass or a fail. Found on a shared 2-core host: short
// trials at 0.108 % passed cleanly, every 5 s validation there was spoiled, and Multistage validated the
// same rate again and again until its trial cap.
func TestTesterSpoilsAboveARate(t *testing.T) {
	const dutPercent = 50.0
	cases := []struct {
		name      string
		spoiledAt float64 // the tester spoils trials above this rate
		longOnly  bool    // only full-length trials (a short one is over before the tester is preempted)
	}{
		{"long trials above 20%", 20, true},
		{"long trials above 0.11%", 0.11, true},
		{"every trial above 20%", 20, false},
		{"every trial above 0.11%", 0.11, false},
		{"long trials above 0.3% (below the resolution)", 0.3, true},
	}
	for _, a := range algos {
		for _, c := range cases {
			t.Run(a.name+"/"+c.name, func(t *testing.T) {
				measure := func(_ context.Context, rate float64, d time.Duration, _ string) (search.Measurement, error) {
					m := search.Measurement{RatePercent: rate, Duration: d, AchievedPercent: rate}
					if rate > c.spoiledAt && (!c.longOnly || d >= time.Minute) {
						m.TesterLimited = true
					}
					if rate > dutPercent {
						m.LossPercent = 100 * (rate - dutPercent) / rate
					}
					return m, nil
				}
				p := params(0.5)
				r, err := a.run(context.Background(), p, measure)
				if err != nil {
					t.Fatal(err)
				}
				if testing.Verbose() {
					t.Logf("%d trials, NDR %.3f%% found %v limited %v: %s", r.Trials, r.NDR, r.Found, r.TesterLimited, rates(r))
				}
				if r.Trials > 30 {
					t.Errorf("%d trials to find a tester limit at %.2f%% (history %s)", r.Trials, c.spoiledAt, rates(r))
				}
				if !r.TesterLimited {
					t.Errorf("not marked tester-limited: NDR %.3f%% found %v; notes %q", r.NDR, r.Found, r.Notes)
				}
				if r.Found && (r.NDR > c.spoiledAt+1e-9 || r.NDR < c.spoiledAt-2*p.Resolution-1e-9 || r.NDRTrial.TesterLimited) {
					t.Errorf("NDR %.3f%%, the tester's limit %.3f%% (history %s)", r.NDR, c.spoiledAt, rates(r))
				}
				if !r.Found && c.spoiledAt >= p.Resolution {
					t.Errorf("no NDR, though every trial up to %.2f%% was valid and passed (history %s)", c.spoiledAt, rates(r))
				}
				checkNeverAboveFailure(t, r, p)
			})
		}
	}
}

func rates(r *search.Result) string {
	s := ""
	for _, m := range r.History {
		mark := ""
		if m.TesterLimited {
			mark = "!"
		}
		s += fmt.Sprintf(" %.3f%s/%s", m.RatePercent, mark, m.Duration)
	}
	return s
}

// A DUT whose short trials lose a little below what its full-length trials hold (as one whose capacity
// varies from trial to trial does): under RFC 2544 the full-length trials decide, the answer is bracketed
// by a full-length pass and a full-length failure within the resolution, and the conflict is named.
func TestFullLengthTrialsDecideWhereAShortTrialLost(t *testing.T) {
	const capacity, shortLimit = 40.0, 39.0
	measure := func(_ context.Context, rate float64, d time.Duration, _ string) (search.Measurement, error) {
		var loss float64
		switch {
		case rate > capacity:
			loss = (rate - capacity) / rate * 100
		case d < 60*time.Second && rate > shortLimit:
			loss = 0.01
		}
		return search.Measurement{LossPercent: loss, Duration: d}, nil
	}
	p := params(0.5)
	r, err := search.Multistage(context.Background(), p, measure)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Found || r.NDR <= shortLimit || r.NDR > capacity {
		t.Fatalf("NDR %.3f%%, want above the short trials' %.1f%% and at most %.1f%%: %+v", r.NDR, shortLimit, capacity, r.History)
	}
	if r.ShortLoss == nil || r.ShortLoss.RatePercent > r.NDR || r.ShortLoss.Duration >= 60*time.Second {
		t.Errorf("the short trial that lost at or below the NDR is not named: %+v", r.ShortLoss)
	}
	fullFailAbove := false
	for _, m := range r.History {
		if m.Duration >= 60*time.Second && !search.Pass(m.LossPercent, 0) && m.RatePercent > r.NDR && m.RatePercent <= r.NDR+p.Resolution+1e-9 {
			fullFailAbove = true
		}
	}
	if !fullFailAbove {
		t.Errorf("no full-length failure within the resolution above the NDR %.3f%%: %+v", r.NDR, r.History)
	}
	checkNeverAboveFailure(t, r, p)
}

// TestADeepQueueHidesTheExcess: the demo's userspace IPsec gateways queue what they cannot encrypt and
// forward it in the trial's drain, so a short trial passes anywhere up to the plan's maxRate and a
// full-length one above the capacity loses only a little (0.3 % or 1.5 % here, however far above; the demo's
// gateways lose 0.1-0.7 %): a lost trial's forwarding rate says the DUT kept up almost to the rate offered.
// Stepping down from each lost trial's forwarding rate then walks down in small steps, and climbing from the
// pass it reaches in steps of the resolution walks back up (on the demo's 1418 B gateways, 20 full-length
// trials where Binary takes 10; here 12 to 25 before this test, and 15 at 0.3 %, a loss smaller than the
// steps, before the forwarding rule counted every trial under a lost trial's forwarding rate). Multistage
// finds the capacity in no more full-length trials than Binary, at any capacity below maxRate, but for the
// two under lost trials' forwarding rates that show the rates mislead.
func TestADeepQueueHidesTheExcess(t *testing.T) {
	p := search.Params{MaxRate: 10, Resolution: 0.02, SearchTrial: time.Second, ValidationTrial: 5 * time.Second}
	for _, tc := range []struct{ capacity, loss float64 }{
		{9.31, 1.5}, {7.906, 1.5}, {6.1, 1.5}, {4.37, 1.5}, {2.05, 1.5}, {0.77, 1.5},
		{9.31, 0.3}, {7.906, 0.3}, {6.1, 0.3}, {4.37, 0.3}, {2.05, 0.3}, {0.77, 0.3},
	} {
		capacity := tc.capacity
		t.Run(fmt.Sprintf("capacity %g%% loss %g%%", capacity, tc.loss), func(t *testing.T) {
			measure := func(_ context.Context, rate float64, d time.Duration, purpose string) (search.Measurement, error) {
				m := search.Measurement{RatePercent: rate, Duration: d, Purpose: purpose}
				if d >= p.ValidationTrial && rate > capacity+1e-9 {
					m.LossPercent = tc.loss
				}
				return m, nil
			}
			res, full := fullLengthTrialsOfBoth(t, p, measure)
			for name, r := range res {
				if !r.Found || r.NDR > capacity+1e-9 || r.NDR < capacity-p.Resolution-1e-9 {
					t.Errorf("%s: NDR %.3f%% (found %v), capacity %g%%", name, r.NDR, r.Found, capacity)
				}
				checkNeverAboveFailure(t, r, p)
			}
			if full["Multistage"] > full["Binary"]+2 {
				t.Errorf("Multistage took %d full-length trials, Binary %d (and 2):%s", full["Multistage"], full["Binary"], rates(res["Multistage"]))
			}
		})
	}
}

// TestADeepQueueAtEveryCapacity sweeps TestADeepQueueHidesTheExcess's DUT over 998 capacities from 0.02 %
// to 9.99 % and losses from 0.05 % to 3 %: Multistage finds each capacity in at most Binary's full-length
// trials and 2 (before the forwarding rule counted steps under a forwarding rate: and 5, at 935-936 of the
// 998 capacities where the loss was 0.3 % or less).
func TestADeepQueueAtEveryCapacity(t *testing.T) {
	p := search.Params{MaxRate: 10, Resolution: 0.02, SearchTrial: time.Second, ValidationTrial: 5 * time.Second}
	for _, loss := range []float64{0.05, 0.3, 1, 3} {
		worst := 0
		for i := 2; i < 1000; i++ {
			capacity := float64(i)*0.01 + 0.0037
			measure := func(_ context.Context, rate float64, d time.Duration, purpose string) (search.Measurement, error) {
				m := search.Measurement{RatePercent: rate, Duration: d, Purpose: purpose}
				if d >= p.ValidationTrial && rate > capacity+1e-9 {
					m.LossPercent = loss
				}
				return m, nil
			}
			res, full, err := runBoth(p, measure)
			if err != nil {
				t.Fatal(err)
			}
			if r := res["Multistage"]; !r.Found || r.NDR > capacity+1e-9 || r.NDR < capacity-p.Resolution-1e-9 {
				t.Errorf("loss %g%%: NDR %.3f%% (found %v), capacity %g%%", loss, r.NDR, r.Found, capacity)
			}
			worst = max(worst, full["Multistage"]-full["Binary"])
		}
		t.Logf("loss %g%%: at most Binary's full-length trials and %d", loss, worst)
		if worst > 2 {
			t.Errorf("loss %g%%: Multistage took Binary's full-length trials and %d", loss, worst)
		}
	}
}

// TestAQueueAsDeepAsTheShortBracket: a DUT whose queue lets a short trial through up to k goal widths above
// its capacity, and loses a little (0.3 % or 1.5 %) in a full-length trial anywhere above it, as
// TestADeepQueueHidesTheExcess's does. Its full-length losses' forwarding rates mislead as the deep queue's
// do, but the short trials bracket the capacity k widths above: the answer lies a few doubling steps down,
// where halving as Binary would (the rule for a queue no short trial shows) takes as many trials as Binary
// (4e6444c: 10.9-11.0 full-length trials on average at 0.3 %, where doubling takes 6.0 and 8.1). Over 143
// capacities from 0.02 % to 9.96 %, under RFC 2544's goal and under one that needs three full-length trials
// at a rate (durationSum 15 s, exceedRatio 50 %: c967bea halved there, 21.9-22.0), Multistage takes no more
// full-length trials on average than it does today (and a quarter of a trial), and under RFC 2544's goal no
// search more than Binary's and 2 of them.
func TestAQueueAsDeepAsTheShortBracket(t *testing.T) {
	rfc2544 := search.Params{MaxRate: 10, Resolution: 0.02, SearchTrial: time.Second, ValidationTrial: 5 * time.Second}
	sum3 := rfc2544
	sum3.Goal = &search.Goal{FinalTrialDuration: 5 * time.Second, DurationSum: 15 * time.Second, ExceedRatio: 0.5}
	for _, tc := range []struct {
		goal        string
		p           search.Params
		k, loss     float64
		meanAtMost  float64
		worstAtMost int // full-length trials beyond Binary's in one search; -1: not asked (Binary decides a rate with one)
	}{
		{"RFC 2544", rfc2544, 4, 0.3, 5.99, 2},
		{"RFC 2544", rfc2544, 4, 1.5, 5.24, 2},
		{"RFC 2544", rfc2544, 8, 0.3, 8.13, 2},
		{"RFC 2544", rfc2544, 8, 1.5, 7.01, 2},
		{"sum 15 s", sum3, 4, 0.3, 11.99, -1},
		{"sum 15 s", sum3, 8, 0.3, 16.24, -1},
	} {
		p := tc.p
		var sum, sumBinary, n, worst int
		for i := 2; i < 1000; i += 7 {
			capacity := float64(i)*0.01 + 0.0037
			measure := func(_ context.Context, rate float64, d time.Duration, purpose string) (search.Measurement, error) {
				m := search.Measurement{RatePercent: rate, Duration: d, Purpose: purpose}
				switch {
				case d >= p.ValidationTrial && rate > capacity+1e-9:
					m.LossPercent = tc.loss
				case d < p.ValidationTrial && rate > capacity+tc.k*p.Resolution+1e-9:
					m.LossPercent = 100 * (rate - capacity - tc.k*p.Resolution) / rate // what the queue cannot hold
				}
				return m, nil
			}
			res, full, err := runBoth(p, measure)
			if err != nil {
				t.Fatal(err)
			}
			if r := res["Multistage"]; !r.Found || r.NDR > capacity+1e-9 || r.NDR < capacity-p.Resolution-1e-9 {
				t.Errorf("%s, k %g, loss %g%%: NDR %.3f%% (found %v), capacity %g%%", tc.goal, tc.k, tc.loss, r.NDR, r.Found, capacity)
			}
			sum, sumBinary, n = sum+full["Multistage"], sumBinary+full["Binary"], n+1
			worst = max(worst, full["Multistage"]-full["Binary"])
		}
		mean, meanBinary := float64(sum)/float64(n), float64(sumBinary)/float64(n)
		t.Logf("%s, k %g, loss %g%%: full-length trials on average: Multistage %.2f, Binary %.2f; at most Binary's and %d",
			tc.goal, tc.k, tc.loss, mean, meanBinary, worst)
		if mean > tc.meanAtMost+0.25 || (tc.worstAtMost >= 0 && worst > tc.worstAtMost) {
			t.Errorf("%s, k %g, loss %g%%: Multistage took %.2f full-length trials on average (at most %.2f), Binary's and %d in one search",
				tc.goal, tc.k, tc.loss, mean, tc.meanAtMost+0.25, worst)
		}
	}
}

// TestAPDRFarAboveTheNDR: a DUT that loses a few frames in a hundred thousand well below where it
// overloads (the demo's gateways at 1418 B, now and then preempted on a shared CPU) has its NDR far below
// its PDR. The PDR's search starts with a lower bound the NDR's trials gave it far below where its short
// trials pass; climbing from that bound in steps of the resolution took the demo's search eight full-length
// trials where deciding at the short trials' answer first takes one. Multistage finds both rates in no more
// full-length trials than Binary's two searches.
func TestAPDRFarAboveTheNDR(t *testing.T) {
	pdrTol := 0.5
	p := search.Params{MaxRate: 10, Resolution: 0.02, SearchTrial: time.Second, ValidationTrial: 5 * time.Second, PDRLossTolerance: &pdrTol}
	for _, tc := range []struct{ ndr, pdr float64 }{{3.52, 7.06}, {1.3, 8.8}, {5.01, 6.02}} {
		t.Run(fmt.Sprintf("NDR %g%% PDR %g%%", tc.ndr, tc.pdr), func(t *testing.T) {
			measure := func(_ context.Context, rate float64, d time.Duration, purpose string) (search.Measurement, error) {
				m := search.Measurement{RatePercent: rate, Duration: d, Purpose: purpose}
				switch {
				case rate > tc.pdr*1.03:
					m.LossPercent = 100 * (rate - tc.pdr*1.03) / rate // overloaded, whatever the trial's length
				case rate > tc.pdr+1e-9 && d >= p.ValidationTrial:
					m.LossPercent = 0.6 // a queue holds a short trial's excess a little above the PDR
				case rate > tc.ndr+1e-9 && d >= p.ValidationTrial:
					m.LossPercent = 0.03 // a full-length trial catches a preemption
				}
				return m, nil
			}
			res, full := fullLengthTrialsOfBoth(t, p, measure)
			for name, r := range res {
				if !r.Found || r.NDR > tc.ndr+1e-9 || r.NDR < tc.ndr-p.Resolution-1e-9 {
					t.Errorf("%s: NDR %.3f%% (found %v), truth %g%%", name, r.NDR, r.Found, tc.ndr)
				}
				if r.PDR == nil || *r.PDR > tc.pdr+1e-9 || *r.PDR < tc.pdr-p.Resolution-1e-9 {
					t.Errorf("%s: PDR %v, truth %g%%", name, r.PDR, tc.pdr)
				}
			}
			if full["Multistage"] > full["Binary"] {
				t.Errorf("Multistage took %d full-length trials, Binary %d:%s", full["Multistage"], full["Binary"], rates(res["Multistage"]))
			}
		})
	}
}

// fullLengthTrialsOfBoth runs Binary and Multistage with p on measure: their results and how many
// full-length trials each ran, by name.
func fullLengthTrialsOfBoth(t *testing.T, p search.Params, measure search.Measure) (map[string]*search.Result, map[string]int) {
	t.Helper()
	res, full, err := runBoth(p, measure)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("full-length trials: Multistage %d, Binary %d", full["Multistage"], full["Binary"])
	return res, full
}

// runBoth runs both searches: their results and how many full-length trials each ran.
func runBoth(p search.Params, measure search.Measure) (map[string]*search.Result, map[string]int, error) {
	res, full := map[string]*search.Result{}, map[string]int{}
	for _, a := range algos {
		r, err := a.run(context.Background(), p, measure)
		if err != nil {
			return nil, nil, err
		}
		res[a.name] = r
		for _, m := range r.History {
			if m.Duration >= p.ValidationTrial {
				full[a.name]++
			}
		}
	}
	return res, full, nil
}
