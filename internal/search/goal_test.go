package search_test

import (
	"context"
	"math"
	"testing"
	"time"

	"linerate.dev/linerate/internal/engine/sim"
	"linerate.dev/linerate/internal/search"
)

// trials makes n trials of d at a loss in percent.
// trials are n trials of d at a loss, short search trials below a minute, full-length validations above.
func trials(n int, d time.Duration, lossPercent float64) []search.Measurement {
	purpose := search.PurposeValidation
	if d < time.Minute {
		purpose = search.PurposeSearch
	}
	out := make([]search.Measurement, n)
	for i := range out {
		out[i] = search.Measurement{Duration: d, LossPercent: lossPercent, Purpose: purpose}
	}
	return out
}

func join(parts ...[]search.Measurement) []search.Measurement {
	var out []search.Measurement
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// RFC 9971's load classification on trial sequences worked out by hand: which time counts as high-loss,
// what the duration sum makes of time still missing, and where the exceed ratio puts the load.
func TestGoalClassifiesALoad(t *testing.T) {
	const s = time.Second
	strict := search.Strict(60*s, 0)
	// RFC 9971's zero exceed ratio at the full length, with short trials counting as the RFC counts them
	zeroExceed := search.Goal{FinalTrialDuration: 60 * s, DurationSum: 60 * s}
	tst009 := search.Goal{FinalTrialDuration: 60 * s, DurationSum: 120 * s, ExceedRatio: 0.5}
	csitNDR := search.Goal{FinalTrialDuration: s, DurationSum: 21 * s, ExceedRatio: 0.5}
	csitPDR := search.Goal{FinalTrialDuration: s, DurationSum: 21 * s, LossRatio: 0.005, ExceedRatio: 0.5}
	exceed25 := search.Goal{FinalTrialDuration: 60 * s, DurationSum: 120 * s, ExceedRatio: 0.25}
	for _, tc := range []struct {
		name   string
		goal   search.Goal
		trials []search.Measurement
		want   search.Class
		// optimistic and pessimistic exceed ratios by hand
		opt, pess float64
	}{
		// the RFC's own example: 59 short clean seconds and one short lossy one
		{"RFC 9971, exceed ratio 0: 59 short clean, 1 short lossy", zeroExceed, join(trials(59, s, 0), trials(1, s, 1)), search.UpperBound, 1.0 / 60, 1},
		{"RFC 2544: 59 short clean, 1 short lossy only steer", strict, join(trials(59, s, 0), trials(1, s, 1)), search.Undecided, 0, 1},
		{"RFC 2544: a full-length clean trial decides over a short lossy one", strict, join(trials(1, 10*s, 1), trials(1, 60*s, 0)), search.LowerBound, 0, 0},
		{"RFC 2544: a full-length lossy trial decides over clean ones", strict, join(trials(2, 60*s, 0), trials(1, 60*s, 0.01)), search.UpperBound, 1, 1},
		{"RFC 2544: a validation the clock measured short still loses", strict, []search.Measurement{{Duration: 59 * s, LossPercent: 1, Purpose: search.PurposeValidation}}, search.UpperBound, 1, 1},
		{"TST009: 59 short clean balance 1 short lossy", tst009, join(trials(59, s, 0), trials(1, s, 1)), search.Undecided, 0, 1},
		{"RFC 2544: one full-length clean trial", strict, trials(1, 60*s, 0), search.LowerBound, 0, 0},
		{"RFC 2544: one full-length trial losing a frame in a million", strict, trials(1, 60*s, 1e-4), search.UpperBound, 1, 1},
		{"RFC 2544: a short clean trial decides nothing", strict, trials(1, 10*s, 0), search.Undecided, 0, 1},
		{"RFC 2544: a trial the clock measured a hair short is full-length", strict, trials(1, 60*s-500*time.Microsecond, 0), search.LowerBound, 0, 0},
		{"RFC 9971, exceed ratio 0: a short lossy trial is an upper bound", zeroExceed, trials(1, 10*s, 0.5), search.UpperBound, 10.0 / 60, 1},
		{"RFC 2544: a short lossy trial is no bound", strict, trials(1, 10*s, 0.5), search.Undecided, 0, 1},
		{"RFC 2544: no trial", strict, nil, search.Undecided, 0, 1},
		{"CSIT NDR: 11 clean seconds already decide", csitNDR, trials(11, s, 0), search.LowerBound, 0, 10.0 / 21},
		{"CSIT NDR: 10 clean seconds do not", csitNDR, trials(10, s, 0), search.Undecided, 0, 11.0 / 21},
		{"CSIT NDR: 11 lossy seconds of 21 exceed half", csitNDR, join(trials(10, s, 0), trials(11, s, 0.1)), search.UpperBound, 11.0 / 21, 11.0 / 21},
		{"CSIT NDR: 10 lossy seconds of 21 do not", csitNDR, join(trials(11, s, 0), trials(10, s, 0.1)), search.LowerBound, 10.0 / 21, 10.0 / 21},
		{"CSIT NDR: past the sum the whole grows", csitNDR, join(trials(15, s, 0), trials(14, s, 0.1)), search.LowerBound, 14.0 / 29, 14.0 / 29},
		{"CSIT PDR: 0.4 % loss is low-loss", csitPDR, trials(21, s, 0.4), search.LowerBound, 0, 0},
		{"CSIT PDR: 0.6 % loss is high-loss", csitPDR, trials(11, s, 0.6), search.UpperBound, 11.0 / 21, 21.0 / 21},
		// the exceed ratio's balancing: 30 short clean seconds balance 30 × 0.25 / 0.75 = 10 short lossy ones
		{"exceed 25 %: short lossy time past what short clean time balances is an upper bound", exceed25,
			join(trials(1, 60*s, 0), trials(30, s, 0), trials(45, s, 1)), search.UpperBound, 35.0 / 120, 60.0 / 120},
		{"exceed 25 %: just within it is undecided", exceed25,
			join(trials(1, 60*s, 0), trials(30, s, 0), trials(39, s, 1)), search.Undecided, 29.0 / 120, 60.0 / 120},
		{"exceed 25 %: balanced exactly, with the sum in full-length clean time, is a lower bound", exceed25,
			join(trials(2, 60*s, 0), trials(30, s, 0), trials(10, s, 1)), search.LowerBound, 0, 0},
		// a trial over the latency bound (throughput.maxLatency) is high-loss whatever it lost
		{"RFC 2544: a clean full-length trial over the latency bound is an upper bound", strict,
			[]search.Measurement{{Duration: 60 * s, Purpose: search.PurposeValidation, OverLatency: true}}, search.UpperBound, 1, 1},
		{"CSIT NDR: 11 clean seconds of 21 over the latency bound exceed half", csitNDR,
			join(trials(10, s, 0), []search.Measurement{{Duration: 11 * s, Purpose: search.PurposeSearch, OverLatency: true}}), search.UpperBound, 11.0 / 21, 11.0 / 21},
		{"spoiled and aborted trials do not count", strict,
			[]search.Measurement{{Duration: 60 * s, LossPercent: 5, TesterLimited: true}, {Duration: 60 * s, LossPercent: 100, Aborted: "dut-stalled"}, {Duration: 60 * s}},
			search.LowerBound, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, st := tc.goal.Classify(tc.trials)
			if got != tc.want || math.Abs(st.Optimistic-tc.opt) > 1e-9 || math.Abs(st.Pessimistic-tc.pess) > 1e-9 {
				t.Errorf("%s (optimistic %.4f, pessimistic %.4f), want %s (%.4f, %.4f); %+v", got, st.Optimistic, st.Pessimistic, tc.want, tc.opt, tc.pess, st)
			}
		})
	}
}

// The conditional throughput: the load less the loss of the full-length trial at the quantile the exceed
// ratio leaves.
func TestConditionalThroughput(t *testing.T) {
	const s = time.Second
	csit := search.Goal{FinalTrialDuration: s, DurationSum: 21 * s, ExceedRatio: 0.5}
	for _, tc := range []struct {
		goal   search.Goal
		trials []search.Measurement
		want   float64
	}{
		{search.Strict(60*s, 0), trials(1, 60*s, 0), 10},
		{search.Strict(60*s, 1), trials(1, 60*s, 0.5), 10 * (1 - 0.005)},
		// 11 clean seconds of 21 cover the half that must be good: their loss, 0
		{csit, join(trials(10, s, 2), trials(11, s, 0)), 10},
		// only 10 clean: the 11th second is the best lossy one, 2 %
		{csit, join(trials(11, s, 2), trials(10, s, 0)), 10 * 0.98},
		// too little full-length time to cover the half: nothing
		{csit, trials(5, s, 0), 0},
	} {
		if got := tc.goal.ConditionalThroughput(10, tc.trials); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%+v over %d trials: %.4f%%, want %.4f%%", tc.goal, len(tc.trials), got, tc.want)
		}
	}
}

// With FD.io CSIT's goal a DUT that loses now and then is decided by the share of lossy time at a load,
// not by the first lossy trial: the search repeats a load until the duration sum decides it. On a DUT
// whose every trial passes or fails by its rate, it lands where RFC 2544 strict lands.
func TestMultistageMeetsItsGoal(t *testing.T) {
	csit := search.Goal{FinalTrialDuration: time.Second, DurationSum: 21 * time.Second, ExceedRatio: 0.5}
	for _, g := range []struct {
		name string
		goal *search.Goal
	}{{"RFC 2544 strict", nil}, {"CSIT NDR", &csit}} {
		t.Run(g.name, func(t *testing.T) {
			e := sim.New(sim.DUT{CapacityFPS: 5e6})
			p := params(0.5)
			p.Goal = g.goal
			if g.goal != nil {
				p.SearchTrial, p.ValidationTrial = time.Second, time.Second
			}
			r, err := search.Multistage(context.Background(), p, e.Measure(size))
			if err != nil {
				t.Fatal(err)
			}
			truth := e.DUT.CapacityPercent(size)
			if !r.Found || r.Undetermined != "" || r.NDR > truth+1e-9 || r.NDR < truth-0.5-1e-9 {
				t.Errorf("NDR %.3f%% (undetermined %q), truth %.3f%%: %s", r.NDR, r.Undetermined, truth, rates(r))
			}
			// a rate decided by CSIT's goal takes 11 trials of 1 s; two such rates bracket the answer
			if g.goal != nil && r.Trials > 60 {
				t.Errorf("%d trials", r.Trials)
			}
			t.Logf("%s: NDR %.3f%% in %d trials, %s of traffic", g.name, r.NDR, r.Trials, r.TrialTime)
			goal := search.Strict(p.ValidationTrial, 0)
			if g.goal != nil {
				goal = *g.goal
			}
			var at []search.Measurement
			for _, m := range r.History {
				if m.RatePercent == r.NDR {
					at = append(at, m)
				}
			}
			if c, st := goal.Classify(at); c != search.LowerBound {
				t.Errorf("the NDR %.3f%% is %s by its own goal (%+v)", r.NDR, c, st)
			}
		})
	}
}

// The NDR under a latency bound: a search whose DUT queues above its capacity (latency grows with the load
// past it, no frame lost) finds the capacity, each method, where loss alone finds the line rate; a
// measurement passes only within both (Measurement.Passes).
func TestALatencyBoundFindsWhereTheQueueGrows(t *testing.T) {
	const capacity, resolution = 40.0, 0.5
	queueing := func(_ context.Context, rate float64, d time.Duration, purpose string) (search.Measurement, error) {
		return search.Measurement{RatePercent: rate, Duration: d, Purpose: purpose, OverLatency: rate > capacity}, nil
	}
	p := search.Params{MaxRate: 100, Resolution: resolution, SearchTrial: time.Second, ValidationTrial: 10 * time.Second}
	for name, algo := range map[string]func(context.Context, search.Params, search.Measure) (*search.Result, error){
		"Multistage": search.Multistage, "Binary": search.Binary} {
		res, err := algo(context.Background(), p, queueing)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Found || res.NDR > capacity || res.NDR < capacity-resolution {
			t.Errorf("%s: NDR %.3f%%, the queue grows past %.1f%% (resolution %.1f)", name, res.NDR, capacity, resolution)
		}
		if res.AboveNDR == nil || !res.AboveNDR.OverLatency {
			t.Errorf("%s: the trial above the NDR %+v is not the one over the bound", name, res.AboveNDR)
		}
	}
	for _, tc := range []struct {
		m    search.Measurement
		want bool
	}{
		{search.Measurement{}, true},
		{search.Measurement{LossPercent: 0.1}, false},
		{search.Measurement{OverLatency: true}, false},
	} {
		if got := tc.m.Passes(0); got != tc.want {
			t.Errorf("%+v passes: %v, want %v", tc.m, got, tc.want)
		}
	}
}
