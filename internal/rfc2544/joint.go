package rfc2544

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/search"
)

// PurposeJointValidation marks the trials that confirm a Bidirectional pair of results together.
const PurposeJointValidation = "joint-validation"

// maxJointTrials bounds the trials that confirm one pair: each failure lowers the directions that lost by
// a step that doubles, so a dozen trials reach from any rate down to the resolution.
const maxJointTrials = 12

// confirmBidirectional makes the results of a Bidirectional search a pair shown loss-free together. Each
// direction was searched with its own verdict, its validation trial judged on its own loss while the other
// direction ran at whatever rate its search had then; a DUT whose directions share anything (a shaper on
// a bridge, cores, a crypto engine) can pass each alone and fail the pair. So a full-length trial runs with
// every direction at its reported rate at once; the directions that lost step down (by the resolution,
// doubling on each further loss) until one trial passes in all of them, and the rates of that trial are
// the results, their loss and latency its. The NDR and, when asked for, the PDR are confirmed each at its
// own tolerance. It returns the trials it ran.
func (r *Runner) confirmBidirectional(ctx context.Context, test v1alpha1.TestKind, size, rep int, res []*search.Result) (int, time.Duration, error) {
	lanes := r.lanes()
	if r.plan.Traffic.Direction != v1alpha1.Bidirectional || len(lanes) < 2 || len(res) != len(lanes) {
		return 0, 0, nil
	}
	tp := r.plan.Throughput
	var trials int
	var spent time.Duration
	confirm := func(label string, tol float64, rateOf func(*search.Result) (float64, bool), set func(l int, sr *search.Result, rate float64, m *search.Measurement)) error {
		rates := make([]float64, len(lanes))
		some := false
		for l, sr := range res {
			if sr == nil {
				return nil
			}
			if v, ok := rateOf(sr); ok && v > 0 {
				rates[l], some = v, true
			}
		}
		if !some {
			return nil
		}
		out, err := r.jointTrials(ctx, test, size, rep, lanes, rates, tol, label)
		trials += out.trials
		spent += out.spent
		if err != nil {
			return err
		}
		for l, sr := range res {
			switch {
			case out.spoiled:
				sr.TesterLimited = true
			case rates[l] > 0:
				set(l, sr, out.rates[l], out.measurement(l))
			}
		}
		return nil
	}
	err := confirm("NDR", tp.LossTolerancePercent,
		func(sr *search.Result) (float64, bool) { return sr.NDR, sr.Found },
		func(_ int, sr *search.Result, rate float64, m *search.Measurement) {
			if rate <= 0 {
				sr.Found, sr.NDR, sr.NDRTrial = false, 0, nil
				return
			}
			sr.NDR, sr.NDRTrial = rate, m
		})
	if err != nil || tp.PDRLossTolerancePercent == nil {
		return trials, spent, err
	}
	err = confirm("PDR", *tp.PDRLossTolerancePercent,
		func(sr *search.Result) (float64, bool) {
			if sr.PDR == nil {
				return 0, false
			}
			return *sr.PDR, true
		},
		func(_ int, sr *search.Result, rate float64, m *search.Measurement) {
			if rate <= 0 {
				sr.PDR, sr.PDRTrial = nil, nil
				return
			}
			sr.PDR, sr.PDRTrial = &rate, m
		})
	return trials, spent, err
}

// jointOutcome is what the confirming trials of one pair found.
type jointOutcome struct {
	rates   []float64     // per lane: the confirmed rate, 0 when none was
	passed  [][]dirResult // per lane: its directions' records of the passing trial
	trials  int
	spent   time.Duration
	spoiled bool // the tester spoiled the last trial: nothing was confirmed
}

// measurement is lane l's share of the passing trial, as a search measurement (nil when none passed).
func (o jointOutcome) measurement(l int) *search.Measurement {
	if o.passed == nil || o.rates[l] <= 0 {
		return nil
	}
	m := &search.Measurement{RatePercent: o.rates[l], Purpose: PurposeJointValidation}
	for _, dr := range o.passed[l] {
		m.Duration = time.Duration(dr.rec.DurationS * float64(time.Second))
		m.LossPercent = math.Max(m.LossPercent, dr.rec.LossPercent)
	}
	m.Detail = detail{dirs: o.passed[l]}
	return m
}

func (r *Runner) jointTrials(ctx context.Context, test v1alpha1.TestKind, size, rep int, lanes [][]int, rates []float64, tol float64, label string) (jointOutcome, error) {
	dirs := r.plan.Directions()
	res := r.plan.Throughput.ResolutionPercent
	what := fmt.Sprintf("throughput %d B", size)
	if test == v1alpha1.TestImixThroughput {
		what = "IMIX"
	}
	cur := append([]float64(nil), rates...)
	losses := make([]int, len(lanes))
	out := jointOutcome{rates: make([]float64, len(lanes))}
	var lowered []string
	for out.trials < maxJointTrials {
		ts := trialSpec{test: test, size: size, rep: rep, duration: r.plan.Durations.ValidationTrial, tol: tol}
		laneOf := map[int]int{}
		for l, lane := range lanes {
			if cur[l] <= 0 {
				continue
			}
			for _, d := range lane {
				ts.dirs = append(ts.dirs, d)
				ts.rates = append(ts.rates, cur[l])
				ts.purposes = append(ts.purposes, PurposeJointValidation)
				laneOf[d] = l
			}
		}
		if len(ts.dirs) == 0 {
			break
		}
		before := r.trialNo
		drs, aborted, spoiled, err := r.validTrial(ctx, ts)
		out.trials += r.trialNo - before
		var long time.Duration
		for _, dr := range drs {
			long = max(long, time.Duration(dr.rec.DurationS*float64(time.Second)))
		}
		out.spent += long * time.Duration(r.trialNo-before) // repetitions of a spoiled trial last as long
		if err != nil {
			return out, err
		}
		if aborted == engine.ReasonDUTStalled {
			return out, fmt.Errorf("%w: %s, the trial confirming the %s of both directions together", ErrDUTStalled, what, label)
		}
		if spoiled {
			out.spoiled = true
			r.note(fmt.Sprintf("%s: the tester spoiled the trial confirming the %s of both directions together %d times (%s): the pair was not confirmed, and is the tester's limit rather than the DUT's",
				what, label, r.plan.Validity.InvalidTrialRetries+1, spoiledBy(drs)))
			return out, nil
		}
		lost := make([]float64, len(lanes))
		for _, dr := range drs {
			l := laneOf[dr.dir]
			lost[l] = math.Max(lost[l], dr.rec.LossPercent)
			if aborted != "" || dr.rec.Aborted != "" {
				lost[l] = math.Inf(1)
			}
		}
		passed := true
		for l := range lanes {
			if cur[l] <= 0 || search.Pass(lost[l], tol) {
				continue
			}
			passed = false
			losses[l]++
			next := cur[l] - res*math.Pow(2, float64(losses[l]-1))
			if next < res/2 {
				next = 0
			}
			next = math.Round(next*1e6) / 1e6
			loss := "the trial was aborted"
			if !math.IsInf(lost[l], 1) {
				loss = "lost " + FormatLoss(lost[l]) + "%"
			}
			lowered = append(lowered, fmt.Sprintf("%s %s at %s%%, lowered to %s%%", laneName(dirs, lanes[l]), loss, FormatPct(cur[l]), FormatPct(next)))
			cur[l] = next
		}
		if passed {
			out.rates, out.passed = cur, make([][]dirResult, len(lanes))
			for _, dr := range drs {
				out.passed[laneOf[dr.dir]] = append(out.passed[laneOf[dr.dir]], dr)
			}
			if len(lowered) > 0 {
				r.note(fmt.Sprintf("%s: the directions' %ss, each searched on its own, were not loss-free together (%s); the rates reported passed a full-length trial with both directions at once",
					what, label, strings.Join(lowered, "; ")))
			}
			return out, nil
		}
	}
	if out.trials >= maxJointTrials {
		r.note(fmt.Sprintf("%s: no pair of %ss was loss-free together within %d full-length trials (%s): none is reported",
			what, label, maxJointTrials, strings.Join(lowered, "; ")))
	} else {
		r.note(fmt.Sprintf("%s: no %s down to the resolution was loss-free with both directions at once (%s): none is reported",
			what, label, strings.Join(lowered, "; ")))
	}
	return out, nil
}
