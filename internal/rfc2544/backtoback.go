package rfc2544

import (
	"context"
	"fmt"
	"strconv"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine"
)

// Back-to-back (RFC 2544 §26.4 as RFC 9004 updates it): the longest burst at line rate the DUT forwards
// without loss, found by N independent searches per size and direction, reported as their mean, minimum,
// maximum and standard deviation, with the implied DUT buffer time (mean burst ÷ line rate) and the
// corrected one (× (1 − throughput ÷ line rate): the frames the DUT forwarded during the burst were never
// in its buffer).
//
// Independence is kept without a blind search from maxFrames in every repetition: a repetition starts
// from a bracket around the earlier repetitions' answers, but its answer stands only on its own trials — a
// burst that passed in it and one a resolution longer that failed in it. A bracket end that does not hold
// (the shorter burst fails, or the longer passes) is widened, halving or doubling, until it does.

// backToBack measures the back-to-back burst at one frame size.
func (r *Runner) backToBack(ctx context.Context, size int) error {
	if err := r.defineStreams(ctx, []int{size}); err != nil {
		return err
	}
	dirs := r.plan.Directions()
	b := r.plan.BackToBack
	res := max(int64(1), b.Resolution)
	reps := max(1, b.Repetitions)
	for _, lane := range r.plan.Lanes() {
		if why := r.refusedAt(size, lane[0]); why != "" {
			// no frame of the size crosses (the lane's directions share the throughput's verdict)
			for _, d := range lane {
				r.res.BackToBack = append(r.res.BackToBack, v1alpha1.BackToBackResult{FrameSize: int32(size),
					Direction: dirs[d].Name, NotMeasurable: "the DUT refused every frame of this size as " + r.refusedAt(size, d)})
			}
			continue
		}
		if why := r.atLineRate(size, lane); why != "" {
			// the full-length trial at line rate lost none of its frames: that many back to back, at least
			held := int64(r.lineFPS(float64(size)) * r.jointGoal(0).FinalTrialDuration.Seconds())
			for _, d := range lane {
				r.res.BackToBack = append(r.res.BackToBack, v1alpha1.BackToBackResult{FrameSize: int32(size),
					Direction: dirs[d].Name, NotMeasurable: why, Frames: held})
			}
			r.note(fmt.Sprintf("back-to-back %d B %s: not measured, %s", size, laneName(dirs, lane), why))
			continue
		}
		var lengths []int64
		var stalled error
		limited, saturated := false, false
		for rep := 1; rep <= reps && stalled == nil; rep++ {
			burst := func(n int64) (bool, error) {
				ts := trialSpec{test: v1alpha1.TestBackToBack, size: size, rep: rep, burst: n, tol: 0}
				for _, d := range lane {
					ts.dirs = append(ts.dirs, d)
					ts.rates = append(ts.rates, 100)
					ts.purposes = append(ts.purposes, "burst")
				}
				drs, aborted, spoiled, err := r.validTrial(ctx, ts)
				if err != nil {
					return false, err
				}
				if aborted == engine.ReasonDUTStalled {
					return false, fmt.Errorf("%w: back-to-back %d B burst of %d", ErrDUTStalled, size, n)
				}
				if spoiled {
					// the tester cannot send or receive this burst cleanly: longer ones are not tried, and
					// the answer is a lower bound of the DUT's
					limited = true
					r.note(fmt.Sprintf("back-to-back %d B: the tester spoiled a burst of %d frames %d times (%s); the result is the tester's limit, a lower bound of the DUT's",
						size, n, r.plan.Validity.InvalidTrialRetries+1, spoiledBy(drs)))
					return false, nil
				}
				for _, dr := range drs {
					if dr.rec.Lost > 0 || dr.rec.Aborted != "" {
						return false, nil
					}
				}
				return true, nil
			}
			n, err := searchBurst(burst, lengths, b.MaxFrames, res)
			if err != nil {
				stalled = err
				break
			}
			saturated = saturated || n >= b.MaxFrames
			lengths = append(lengths, n)
			r.bursts[key{size, lane[0]}] = lengths
		}
		if len(lengths) > 0 {
			r.backToBackRows(size, lane, lengths, limited, saturated)
		}
		if stalled != nil {
			return stalled
		}
	}
	return nil
}

// backToBackRows reports a lane's repetitions, one row per direction.
func (r *Runner) backToBackRows(size int, lane []int, lengths []int64, limited, saturated bool) {
	dirs := r.plan.Directions()
	fl := make([]float64, len(lengths))
	for i, n := range lengths {
		fl[i] = float64(n)
	}
	sp := spread(fl)
	line := r.lineFPS(float64(size))
	implied := float64(sp.Mean) / line
	for _, d := range lane {
		row := v1alpha1.BackToBackResult{FrameSize: int32(size), Direction: dirs[d].Name, Frames: sp.Mean, Spread: sp,
			TesterLimited: limited, Saturated: saturated, BurstSeconds: strconv.FormatFloat(implied, 'g', 4, 64)}
		// the correction takes out what the DUT forwarded during the burst: a tester's ceiling in place of
		// the DUT's throughput would book a buffer the DUT may not have
		if info, ok := r.ndr[key{size, d}]; ok && info.found && !info.testerLimited {
			row.CorrectedBufferSeconds = strconv.FormatFloat(implied*(1-info.percent/100), 'g', 4, 64)
		}
		r.res.BackToBack = append(r.res.BackToBack, row)
	}
	if !saturated {
		return
	}
	why := "raise backToBack.maxFrames to find its limit"
	switch t, measured := r.throughputShortOfProof(size, lane); {
	case !measured:
		why += ", and measure throughput too: a DUT that forwards line rate never fills its buffer, and back-to-back has no figure for it (RFC 9004)"
	case t != "":
		// a DUT that forwards line rate never fills its buffer: a longer burst would pass as well
		why = fmt.Sprintf("its throughput at this size %s, so the DUT may forward at line rate, where a burst never fills its buffer and back-to-back has no figure (RFC 9004)", t)
	}
	r.note(fmt.Sprintf("back-to-back %d B %s: the DUT forwarded the longest burst tried (%d frames) in at least one search, so the figure is a lower bound (saturated); %s",
		size, laneName(dirs, lane), r.plan.BackToBack.MaxFrames, why))
}

// throughputShortOfProof says why a lane's throughput at a size cannot show whether the DUT forwards at
// line rate ("" when it can): a direction's NDR was the tester's limit or is undetermined; measured is
// false when no throughput was measured there at all.
func (r *Runner) throughputShortOfProof(size int, lane []int) (why string, measured bool) {
	for _, d := range lane {
		info, ok := r.ndr[key{size, d}]
		switch {
		case !ok:
			return "", false
		case !info.testerLimited && !info.found && info.percent > 0:
			return fmt.Sprintf("is undetermined, at least %.2f%% of line rate", info.percent), true
		case !info.testerLimited:
			continue
		case info.found:
			return fmt.Sprintf("was the tester's limit (%.2f%% of line rate)", info.percent), true
		case info.percent > 0:
			return fmt.Sprintf("is undetermined, at least %.2f%% of line rate, with the tester the limit", info.percent), true
		default:
			return "was not measured: the tester was the limit before any rate passed", true
		}
	}
	return "", true
}

// atLineRate says why a lane's back-to-back burst cannot be measured at a size ("" when it can): every
// direction in it forwarded a full-length trial at line rate without losing a frame, so a line-rate burst
// never fills the DUT's buffer (RFC 9004). A throughput a resolution short of line rate, or one that lost
// frames within a loss tolerance, is no such proof: the bursts are searched.
func (r *Runner) atLineRate(size int, lane []int) string {
	if r.plan.Throughput.LossTolerancePercent > 0 || (r.plan.Throughput.Goal != nil && r.plan.Throughput.Goal.ExceedRatioPercent > 0) {
		return "" // the NDR's trials may have lost frames: no proof that a line-rate burst loses none
	}
	for _, d := range lane {
		info, ok := r.ndr[key{size, d}]
		if !ok || !info.found || info.percent < 100-1e-9 {
			return ""
		}
	}
	return "its throughput at this size is line rate without loss: a burst at line rate never fills the DUT's buffer (RFC 9004)"
}

// searchBurst is one repetition's search for the longest burst that passes, within res frames, at most
// maxFrames. earlier are the answers of the earlier repetitions: they place the first bracket, and only
// trials of this repetition decide its answer.
func searchBurst(pass func(int64) (bool, error), earlier []int64, maxFrames, res int64) (int64, error) {
	lo, hi := int64(0), maxFrames+1 // lo passed (0 trivially), hi failed (maxFrames+1: not yet known)
	if len(earlier) == 0 {
		ok, err := pass(maxFrames)
		if err != nil {
			return 0, err
		}
		if ok {
			return maxFrames, nil
		}
		hi = maxFrames
	} else {
		mn, mx := earlier[0], earlier[0]
		for _, n := range earlier {
			mn, mx = min(mn, n), max(mx, n)
		}
		margin := max(res, (mx-mn)/2)
		// the shorter end: passes in this repetition, halving until it does
		for guess := mn - margin; ; {
			if guess < res {
				break // a burst shorter than the resolution: lo stays 0
			}
			ok, err := pass(guess)
			if err != nil {
				return 0, err
			}
			if ok {
				lo = guess
				break
			}
			hi, guess = guess, guess/2
		}
		// the longer end: fails in this repetition, doubling until it does
		for guess := min(mx+margin, maxFrames); hi > maxFrames; {
			if guess <= lo {
				guess = min(maxFrames, lo+res)
			}
			ok, err := pass(guess)
			if err != nil {
				return 0, err
			}
			if !ok {
				hi = guess
				break
			}
			lo = guess
			if guess >= maxFrames {
				return maxFrames, nil
			}
			guess = min(maxFrames, 2*guess)
		}
	}
	for hi-lo > res {
		mid := lo + (hi-lo)/2
		ok, err := pass(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}
