package rfc2544

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/search"
)

// PurposeJointValidation marks the trials that confirm a Bidirectional pair of results together.
const PurposeJointValidation = "joint-validation"

// maxJointTrials bounds the pairs of rates tried to confirm one pair (times the trials the goal needs to
// decide one): stepping down (doubling) and back up (bisecting) between the search's rates and the
// resolution.
const maxJointTrials = 16

// confirmBidirectional makes the results of a Bidirectional search a pair shown loss-free together. Each
// direction was searched with its own verdict, its validation trial judged on its own loss while the other
// direction ran at whatever rate its search had then; a DUT whose directions share anything (a shaper on
// a bridge, cores, a crypto engine) can pass each alone and fail the pair. So a full-length trial runs with
// every direction that has a result at its reported rate at once; the directions that lost step down (by
// the resolution, doubling on each further loss) until one trial passes in all of them, and then bisect
// back up towards their lowest joint loss, to the resolution. The rates of the last passing trial are the
// results, their loss and latency its. The NDR and, when asked for, the PDR are confirmed each at its own
// tolerance. A pair that could not be confirmed (the tester spoiled the trial, the engine or the DUT cut it
// short, the trials ran out) is undetermined, with the reason. It returns the trials it ran.
func (r *Runner) confirmBidirectional(ctx context.Context, test v1alpha1.TestKind, size, rep int, res []*search.Result) (int, time.Duration, error) {
	lanes := r.plan.Lanes()
	if r.plan.Traffic.Direction != v1alpha1.Bidirectional || len(lanes) < 2 || len(res) != len(lanes) {
		return 0, 0, nil
	}
	for _, sr := range res {
		if sr == nil {
			return 0, 0, nil
		}
	}
	// a lane whose NDR is undetermined has no rate to run the pair at: the pair is undetermined
	for _, sr := range res {
		if sr.Undetermined == "" {
			continue
		}
		for _, other := range res {
			if other.Found && other.Undetermined == "" {
				unconfirmed(other, "the other direction's NDR is undetermined, so the pair could not be confirmed together")
			}
		}
		return 0, 0, nil
	}
	tp := r.plan.Throughput
	var trials int
	var spent time.Duration
	pdrUnconfirmed := make([]bool, len(res))
	confirm := func(label string, tol float64, rateOf func(*search.Result) (float64, bool), set func(sr *search.Result, rate float64, m, above *search.Measurement)) error {
		rates := make([]float64, len(lanes))
		some := false
		for l, sr := range res {
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
			out.undetermined = fmt.Sprintf("the %ss were not confirmed together: %v", label, err)
		}
		for l, sr := range res {
			switch {
			case rates[l] <= 0:
			case out.undetermined != "":
				if label == "NDR" && sr.Undetermined == "" {
					unconfirmed(sr, out.undetermined)
				}
				if label == "PDR" {
					sr.PDR, sr.PDRTrial, sr.PDRConditional, pdrUnconfirmed[l] = nil, nil, 0, true
				}
			default:
				set(sr, out.rates[l], out.measurement(l), out.above[l])
			}
			if out.spoiled && out.undetermined != "" && rates[l] > 0 {
				sr.TesterLimited = true // the tester kept this pair from being confirmed
			}
		}
		return err
	}
	err := confirm("NDR", tp.LossTolerancePercent,
		func(sr *search.Result) (float64, bool) { return sr.NDR, sr.Found && sr.Undetermined == "" },
		func(sr *search.Result, rate float64, m, above *search.Measurement) {
			if rate <= 0 {
				sr.Found, sr.NDR, sr.NDRTrial, sr.NDRConditional = false, 0, nil, 0
				return
			}
			sr.NDR, sr.NDRTrial = rate, m
			// confirmed by one full-length trial of the pair: that trial is its own quantile
			sr.NDRConditional = conditionalOfOne(tp.LossTolerancePercent, rate, m)
			// what the DUT drops first above the NDR is now what it dropped first together
			if above != nil && above.RatePercent > rate && (sr.AboveNDR == nil || above.RatePercent <= sr.AboveNDR.RatePercent) {
				sr.AboveNDR = above
			}
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
		func(sr *search.Result, rate float64, m, _ *search.Measurement) {
			if rate <= 0 {
				sr.PDR, sr.PDRTrial, sr.PDRConditional = nil, nil, 0
				return
			}
			sr.PDR, sr.PDRTrial = &rate, m
			sr.PDRConditional = conditionalOfOne(*tp.PDRLossTolerancePercent, rate, m)
		})
	// the NDR pair passed together within the NDR's tolerance, so within the PDR's: the PDR is no lower
	for l, sr := range res {
		if sr.Found && sr.Undetermined == "" && sr.NDR > 0 && !pdrUnconfirmed[l] && (sr.PDR == nil || *sr.PDR < sr.NDR) {
			ndr := sr.NDR
			sr.PDR, sr.PDRTrial = &ndr, sr.NDRTrial
			sr.PDRConditional = conditionalOfOne(*tp.PDRLossTolerancePercent, ndr, sr.NDRTrial)
		}
	}
	return trials, spent, err
}

// conditionalOfOne is RFC 9971's conditional throughput of a load one full-length trial confirmed, under a
// goal of loss tolerance tol percent (0 where the tolerance is 0: the load itself is the answer).
func conditionalOfOne(tol, rate float64, m *search.Measurement) float64 {
	if tol <= 0 || m == nil {
		return 0
	}
	return rate * (1 - m.LossPercent/100)
}

// unconfirmed makes a lane's result undetermined: the rate its own search found lost, or may have lost,
// with the other direction running, so it is no lower bound of anything; it stays in the reason only.
func unconfirmed(sr *search.Result, why string) {
	sr.Undetermined = fmt.Sprintf("%s (alone, its search found %s%%)", why, FormatPct(sr.NDR))
	sr.Found, sr.NDR, sr.NDRTrial, sr.PDR, sr.PDRTrial = false, 0, nil, nil, nil
	sr.NDRConditional, sr.PDRConditional = 0, 0
}

// jointOutcome is what the confirming trials of one pair found.
type jointOutcome struct {
	rates  []float64     // per lane: the confirmed rate, 0 when none was
	passed [][]dirResult // per lane: its directions' records of the last passing trial
	// above is, per lane, its trial at the lowest rate it lost at together (nil: none): what the DUT drops
	// first above the confirmed rate
	above  []*search.Measurement
	trials int
	spent  time.Duration
	// undetermined says why no pair was confirmed; spoiled that the tester was why
	undetermined string
	spoiled      bool
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
		m.OverLatency = m.OverLatency || dr.rec.OverLatency
	}
	m.Detail = detail{dirs: o.passed[l]}
	return m
}

// jointGoal is the goal a confirming trial is judged by: the search's (RFC 2544 strict unless the plan
// sets one), at a tolerance.
func (r *Runner) jointGoal(tol float64) search.Goal {
	if g := r.searchGoal(); g != nil {
		g.LossRatio = tol / 100
		return *g
	}
	return search.Strict(r.plan.Durations.ValidationTrial, tol)
}

// searchGoal is the plan's search goal in the search's terms, its loss ratio left to the tolerance searched
// (nil: RFC 2544 strict).
func (r *Runner) searchGoal() *search.Goal {
	g := r.plan.Throughput.Goal
	if g == nil {
		return nil
	}
	// the RFC 2544 preset at exceed ratio 0 reads trials as the default goal does, whatever durations it sets
	return &search.Goal{FinalTrialDuration: g.FinalTrialDuration, DurationSum: g.DurationSum, ExceedRatio: g.ExceedRatioPercent / 100,
		Width: g.WidthPercent / 100, FullLengthBounds: g.Preset == v1alpha1.GoalRFC2544 && g.ExceedRatioPercent == 0}
}

// jointTrials runs the confirming trials of one pair (see confirmBidirectional). A pair of rates is run
// until the goal decides every lane at it (one full-length trial under RFC 2544; under a goal with a
// duration sum, as many as it takes); a lane whose trials make its rate an upper bound lost.
func (r *Runner) jointTrials(ctx context.Context, test v1alpha1.TestKind, size, rep int, lanes [][]int, rates []float64, tol float64, label string) (jointOutcome, error) {
	dirs := r.plan.Directions()
	res := r.plan.Throughput.ResolutionPercent
	goal := r.jointGoal(tol)
	limit := maxJointTrials * goal.TrialsToDecide()
	what := fmt.Sprintf("throughput %d B", size)
	if test == v1alpha1.TestImixThroughput {
		what = "IMIX"
	}
	out := jointOutcome{rates: make([]float64, len(lanes)), above: make([]*search.Measurement, len(lanes))}
	try := append([]float64(nil), rates...) // the rates of the next trial
	failed := make([]float64, len(lanes))   // per lane: the lowest rate it lost at together (+Inf: none)
	losses := make([]int, len(lanes))
	for l := range failed {
		failed[l] = math.Inf(1)
	}
	var at [][]search.Measurement // per lane: its trials at the current pair of rates
	var atDR [][][]dirResult      // per lane: the records of those trials
	var lowered []string
	confirmed, capped := false, false
	for {
		if out.trials >= limit {
			capped = true
			if !confirmed {
				out.undetermined = fmt.Sprintf("no pair of %ss was loss-free together within %d full-length trials (%s)", label, limit, strings.Join(lowered, "; "))
				r.note(fmt.Sprintf("%s: %s", what, out.undetermined))
			}
			break
		}
		ts := trialSpec{test: test, size: size, rep: rep, duration: goal.FinalTrialDuration, tol: tol}
		laneOf := map[int]int{}
		for l, lane := range lanes {
			if try[l] <= 0 {
				continue
			}
			for _, d := range lane {
				ts.dirs = append(ts.dirs, d)
				ts.rates = append(ts.rates, try[l])
				ts.purposes = append(ts.purposes, PurposeJointValidation)
				laneOf[d] = l
			}
		}
		if len(ts.dirs) == 0 {
			// every direction lost down to the resolution with the others running: none has a result
			r.note(fmt.Sprintf("%s: no %s down to the resolution was loss-free with the other direction running (%s)", what, label, strings.Join(lowered, "; ")))
			out.rates = make([]float64, len(lanes))
			break
		}
		if at == nil {
			at, atDR = make([][]search.Measurement, len(lanes)), make([][][]dirResult, len(lanes))
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
			return out, fmt.Errorf("%w: %s, the trial confirming the %ss together", ErrDUTStalled, what, label)
		}
		if spoiled || aborted != "" {
			// the tester (or the engine) spoiled it: what it says is not the DUT's
			out.spoiled = spoiled
			why := "the engine aborted it (" + aborted + ")"
			if spoiled {
				why = fmt.Sprintf("the tester spoiled it %d times (%s)", r.plan.Validity.InvalidTrialRetries+1, spoiledBy(drs))
			}
			if !confirmed {
				out.undetermined = fmt.Sprintf("the %ss were not confirmed together: %s", label, why)
				r.note(fmt.Sprintf("%s: %s; the pair is not reported as the DUT's", what, out.undetermined))
			}
			break
		}
		lost, over := make([]float64, len(lanes)), make([]bool, len(lanes))
		for _, dr := range drs {
			l := laneOf[dr.dir]
			lost[l] = math.Max(lost[l], dr.rec.LossPercent)
			over[l] = over[l] || dr.rec.OverLatency
		}
		// judge each lane by the goal over its trials at this pair of rates
		passed, decided := true, true
		lostLane := make([]bool, len(lanes))
		for l := range lanes {
			if try[l] <= 0 {
				continue
			}
			at[l] = append(at[l], search.Measurement{RatePercent: try[l], Duration: long, LossPercent: lost[l], OverLatency: over[l]})
			var mine []dirResult
			for _, dr := range drs {
				if laneOf[dr.dir] == l {
					mine = append(mine, dr)
				}
			}
			atDR[l] = append(atDR[l], mine)
			switch c, _ := goal.Classify(at[l]); c {
			case search.UpperBound:
				passed, lostLane[l] = false, true
				if try[l] < failed[l] {
					failed[l] = try[l]
					out.above[l] = &search.Measurement{RatePercent: try[l], Duration: long, LossPercent: lost[l], OverLatency: over[l],
						Purpose: PurposeJointValidation, Detail: detail{dirs: mine}}
				}
			case search.Undecided:
				passed, decided = false, false
			}
		}
		if !decided && !slices.Contains(lostLane, true) {
			continue // the same pair again until the goal decides it
		}
		pairAt, pairDR := at, atDR
		at, atDR = nil, nil // the next trial runs another pair
		ran := append([]float64(nil), try...)
		switch {
		case passed:
			confirmed = true
			// each lane stands on its trial at the goal's quantile (RFC 2544 strict: the one trial)
			out.rates, out.passed = ran, make([][]dirResult, len(lanes))
			for l := range lanes {
				if q, ok := goal.QuantileTrial(pairAt[l]); ok {
					out.passed[l] = pairDR[l][q]
				}
			}
		case confirmed:
			// a climb lost: the lanes that lost go back to their confirmed rate, the others stay; a lane
			// that lost at its confirmed rate lost to the others' climb, which is a joint loss of theirs
			for l := range lanes {
				if lostLane[l] {
					try[l] = out.rates[l]
				}
			}
			for l := range lanes {
				if !lostLane[l] || ran[l] != out.rates[l] {
					continue
				}
				for m := range lanes {
					if try[m] > out.rates[m] {
						failed[m] = math.Min(failed[m], try[m])
						try[m] = out.rates[m]
					}
				}
			}
		default:
			// not yet confirmed: the lanes that lost step down, by a step that doubles
			for l := range lanes {
				if !lostLane[l] {
					continue
				}
				losses[l]++
				// a step of the goal width there (the resolution unless the goal sets a relative width)
				next := try[l] - goal.WidthAt(try[l], res)*math.Pow(2, float64(losses[l]-1))
				if next < res/2 {
					next = 0
				}
				next = math.Round(next*1e6) / 1e6
				lowered = append(lowered, fmt.Sprintf("%s lost %s%% at %s%%, lowered to %s%%", laneName(dirs, lanes[l]), FormatLoss(lost[l]), FormatPct(try[l]), FormatPct(next)))
				try[l] = next
			}
			continue
		}
		// climb: every lane more than a goal width below its lowest joint loss bisects towards it
		climb := false
		for l := range lanes {
			if rates[l] > 0 && !math.IsInf(failed[l], 1) && failed[l]-try[l] > goal.WidthAt(failed[l], res)+1e-9 {
				try[l] = math.Round((try[l]+failed[l])/2*1e6) / 1e6
				climb = true
			}
		}
		if !climb && slices.Equal(try, out.rates) {
			break
		}
		// else: climb, or confirm the rates a lost climb left (a lane that passed in it stays up)
	}
	if confirmed && len(lowered) > 0 {
		var final []string
		for l := range lanes {
			if rates[l] > 0 {
				final = append(final, fmt.Sprintf("%s %s%%", laneName(dirs, lanes[l]), FormatPct(out.rates[l])))
			}
		}
		width := "the resolution"
		if goal.Width > 0 {
			width = "the goal width"
		}
		how := "within " + width + " of the lowest joint loss"
		if capped {
			how = fmt.Sprintf("when the %d trials allowed ran out, before the climb back reached %s", limit, width)
		}
		r.note(fmt.Sprintf("%s: the %ss each direction's own search found were not loss-free together (%s); confirmed together at %s, %s",
			what, label, strings.Join(lowered, "; "), strings.Join(final, ", "), how))
	}
	return out, nil
}
