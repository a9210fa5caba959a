package rfc2544

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine"
)

// rate expresses a percentage of line rate at a mean frame size in every unit of the result tables.
func (r *Runner) rate(percent, mean float64) v1alpha1.Rate {
	fps := percent / 100 * r.lineFPS(mean)
	return v1alpha1.Rate{
		FramesPerSecond:   int64(math.Round(fps)),
		L2BitsPerSecond:   int64(math.Round(fps * mean * 8)),
		L1BitsPerSecond:   int64(math.Round(fps * (mean + 20) * 8)),
		PercentOfLineRate: FormatPct(percent),
	}
}

func spread(v []float64) v1alpha1.Spread {
	if len(v) == 0 {
		return v1alpha1.Spread{}
	}
	mn, mx, sum := v[0], v[0], 0.0
	for _, x := range v {
		mn, mx, sum = math.Min(mn, x), math.Max(mx, x), sum+x
	}
	mean := sum / float64(len(v))
	ss := 0.0
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	sd := 0.0
	if len(v) > 1 {
		sd = math.Sqrt(ss / float64(len(v)-1)) // sample standard deviation
	}
	return v1alpha1.Spread{Repetitions: int32(len(v)), Mean: int64(math.Round(mean)), StdDev: int64(math.Round(sd)),
		Min: int64(math.Round(mn)), Max: int64(math.Round(mx))}
}

func latencySummary(l *engine.Latency) *v1alpha1.LatencySummary {
	if l == nil {
		return nil
	}
	if !l.Valid {
		reason := l.Reason
		if reason == "" {
			switch {
			case l.Negative > 0:
				reason = fmt.Sprintf("%d frames arrived before their stamp by the receiver's clock: the two nodes' clocks differ by more than the latency", l.Negative)
			case l.Clock == "unsynchronised":
				reason = "sender and receiver are on different clocks (two nodes without --clock realtime)"
			default:
				reason = "no frame was received"
			}
		}
		return &v1alpha1.LatencySummary{Valid: false, Reason: reason}
	}
	return &v1alpha1.LatencySummary{Valid: true, Frames: l.Count, ClockOffsetBoundNs: l.ClockBoundNs, MinNs: l.MinNs, MeanNs: l.MeanNs, P50Ns: l.P50Ns,
		P90Ns: l.P90Ns, P99Ns: l.P99Ns, P999Ns: l.P999Ns, P9999Ns: l.P9999Ns, MaxNs: l.MaxNs, PDVNs: l.PDVNs,
		JitterNs: l.JitterNs}
}

func metaTime(t time.Time) metav1.Time { return metav1.NewTime(t) }

// mergeLatency aggregates repetitions: percentiles from the merged histograms, the mean as the mean of
// the repetition means (RFC 2544 §26.2 reports the average of the repetitions).
func mergeLatency(reps []*engine.Latency) v1alpha1.LatencySummary {
	hist := map[int64]int64{}
	var out v1alpha1.LatencySummary
	var means []float64
	var jitter int64
	for _, l := range reps {
		if l == nil || !l.Valid || l.Count == 0 {
			continue
		}
		if !out.Valid || l.MinNs < out.MinNs {
			out.MinNs = l.MinNs
		}
		out.Valid = true
		out.ClockOffsetBoundNs = max(out.ClockOffsetBoundNs, l.ClockBoundNs)
		out.MaxNs = max(out.MaxNs, l.MaxNs)
		out.Frames += l.Count
		means = append(means, float64(l.MeanNs))
		jitter = max(jitter, l.JitterNs)
		for _, b := range l.Hist {
			hist[b[0]] += b[1]
		}
	}
	// Across two clocks a repetition refused for them (too far apart, frames "before" their stamps) is
	// not a missing sample: the others are biased the same way, and nothing of the set is the DUT's.
	for _, l := range reps {
		if l != nil && !l.Valid && l.Clock == "realtime" && out.Valid {
			s := latencySummary(l)
			return v1alpha1.LatencySummary{Valid: false, Reason: "a repetition across the two nodes' clocks was not measurable: " + s.Reason}
		}
	}
	if !out.Valid {
		reason := "no repetition measured latency"
		for _, l := range reps {
			if s := latencySummary(l); s != nil && s.Reason != "" {
				reason = s.Reason
			}
		}
		return v1alpha1.LatencySummary{Valid: false, Reason: reason}
	}
	sum := 0.0
	for _, m := range means {
		sum += m
	}
	out.MeanNs = int64(math.Round(sum / float64(len(means))))
	out.JitterNs = jitter
	uppers := make([]int64, 0, len(hist))
	var total int64
	for u, c := range hist {
		uppers = append(uppers, u)
		total += c
	}
	sort.Slice(uppers, func(i, j int) bool { return uppers[i] < uppers[j] })
	q := func(p float64) int64 {
		if total == 0 {
			return 0
		}
		rank := int64(math.Ceil(p * float64(total)))
		var seen int64
		for _, u := range uppers {
			seen += hist[u]
			if seen >= rank {
				return min(max(u, out.MinNs), out.MaxNs)
			}
		}
		return out.MaxNs
	}
	out.P50Ns, out.P90Ns, out.P99Ns, out.P999Ns, out.P9999Ns = q(0.5), q(0.9), q(0.99), q(0.999), q(0.9999)
	out.PDVNs = out.P999Ns - out.MinNs
	return out
}

// latency measures latency at the NDR of each direction, repeated (RFC 2544 §26.2; every frame is
// timestamped, so each repetition yields a distribution rather than one tagged frame).
func (r *Runner) latency(ctx context.Context, size int) error {
	if err := r.defineStreams(ctx, []int{size}); err != nil {
		return err
	}
	dirs := r.plan.Directions()
	ts := trialSpec{test: v1alpha1.TestLatency, size: size, duration: r.plan.Durations.LatencyTrial, tol: math.Inf(1)}
	for d := range dirs {
		info, ok := r.ndr[key{size, d}]
		if !ok || !info.found || info.percent <= 0 {
			r.note(fmt.Sprintf("latency %d B %s: skipped, no throughput (NDR) was found at this size", size, dirs[d].Name))
			continue
		}
		ts.dirs = append(ts.dirs, d)
		ts.rates = append(ts.rates, info.percent)
		ts.purposes = append(ts.purposes, "latency")
	}
	if len(ts.dirs) == 0 {
		return nil
	}
	reps := max(1, r.plan.Latency.Repetitions)
	per := make([][]*engine.Latency, len(dirs))
	var sums = make([][]v1alpha1.LatencySummary, len(dirs))
	flush := func() {
		// results so far replace the previous version of this size's rows
		var rows []v1alpha1.LatencyResult
		for _, lr := range r.res.Latency {
			if int(lr.FrameSize) != size {
				rows = append(rows, lr)
			}
		}
		for i, d := range ts.dirs {
			if len(per[d]) == 0 {
				continue
			}
			rows = append(rows, v1alpha1.LatencyResult{FrameSize: int32(size), Direction: dirs[d].Name,
				Rate: r.rate(ts.rates[i], float64(size)), Aggregate: mergeLatency(per[d]), Repetitions: sums[d]})
		}
		r.res.Latency = rows
	}
	for rep := 1; rep <= reps; rep++ {
		ts.rep = rep
		drs, aborted, _, err := r.validTrial(ctx, ts)
		if err != nil {
			flush()
			return err
		}
		for _, dr := range drs {
			if dr.rec.TesterLimited {
				r.note(fmt.Sprintf("latency %d B %s repetition %d: the tester spoiled it %d times (%s); repetition excluded",
					size, dirs[dr.dir].Name, rep, r.plan.Validity.InvalidTrialRetries+1, spoiledBy([]dirResult{dr})))
				continue
			}
			per[dr.dir] = append(per[dr.dir], dr.stream.Latency)
			if s := latencySummary(dr.stream.Latency); s != nil {
				sums[dr.dir] = append(sums[dr.dir], *s)
			}
		}
		if aborted == engine.ReasonDUTStalled {
			flush()
			return fmt.Errorf("%w: latency %d B repetition %d", ErrDUTStalled, size, rep)
		}
	}
	flush()
	return nil
}

// frameLoss runs the frame loss curve (RFC 2544 §26.3): from the maximum rate down in steps of at most
// 10 % of line rate, until two successive trials lose nothing.
func (r *Runner) frameLoss(ctx context.Context, size int) error {
	if err := r.defineStreams(ctx, []int{size}); err != nil {
		return err
	}
	dirs := r.plan.Directions()
	step := r.plan.FrameLoss.StepPercent
	if step <= 0 || step > 10 {
		step = 10
	}
	curves := make([]v1alpha1.FrameLossResult, len(dirs))
	for d := range dirs {
		curves[d] = v1alpha1.FrameLossResult{FrameSize: int32(size), Direction: dirs[d].Name}
	}
	publish := func() {
		for d := range curves {
			if len(curves[d].Points) > 0 {
				r.res.FrameLoss = append(r.res.FrameLoss, curves[d])
			}
		}
	}
	clean := 0
	for rate := r.plan.Throughput.MaxRatePercent; rate > 1e-9 && clean < 2; rate -= step {
		rate = math.Round(rate*1e6) / 1e6
		ts := trialSpec{test: v1alpha1.TestFrameLoss, size: size, duration: r.plan.Durations.ValidationTrial, tol: 0}
		for d := range dirs {
			ts.dirs = append(ts.dirs, d)
			ts.rates = append(ts.rates, rate)
			ts.purposes = append(ts.purposes, "step")
		}
		drs, aborted, spoiled, err := r.validTrial(ctx, ts)
		if err != nil {
			publish()
			return err
		}
		if spoiled {
			// fail closed: a point the tester spoiled is no point of the DUT's curve
			r.note(fmt.Sprintf("frame loss %d B at %s%%: the tester spoiled the trial %d times (%s); no point is reported there",
				size, FormatPct(rate), r.plan.Validity.InvalidTrialRetries+1, spoiledBy(drs)))
			continue
		}
		lossFree := true
		for _, dr := range drs {
			curves[dr.dir].Points = append(curves[dr.dir].Points, v1alpha1.FrameLossPoint{
				PercentOfLineRate: FormatPct(rate), LossPercent: FormatLoss(dr.rec.LossPercent),
				TxFrames: dr.rec.TxFrames, RxFrames: dr.rec.RxFrames})
			if dr.rec.Lost > 0 || dr.rec.Aborted != "" {
				lossFree = false
			}
		}
		if aborted == engine.ReasonDUTStalled {
			publish()
			return fmt.Errorf("%w: frame loss %d B at %s%%", ErrDUTStalled, size, FormatPct(rate))
		}
		if lossFree {
			clean++
		} else {
			clean = 0
		}
	}
	publish()
	return nil
}

// backToBack finds the longest burst at line rate the DUT forwards without loss (RFC 2544 §26.4): a
// binary search on the burst length per repetition, averaged over the repetitions.
func (r *Runner) backToBack(ctx context.Context, size int) error {
	if err := r.defineStreams(ctx, []int{size}); err != nil {
		return err
	}
	dirs := r.plan.Directions()
	b := r.plan.BackToBack
	res := max(int64(1), b.Resolution)
	reps := max(1, b.Repetitions)
	for _, lane := range r.lanes() {
		var lengths []float64
		var stalled error
		limited := false
		prev := int64(0)
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
			// Start from the previous repetition's answer: bursts are expensive and DUTs drift little.
			lo, hi := int64(0), b.MaxFrames
			if prev > 0 {
				if ok, err := burst(prev); err != nil {
					stalled = err
					break
				} else if ok {
					lo = prev
				} else {
					hi = prev
				}
			}
			if hi == b.MaxFrames && lo < hi {
				if ok, err := burst(hi); err != nil {
					stalled = err
					break
				} else if ok {
					lo = hi
				}
			}
			for hi-lo > res && stalled == nil {
				mid := lo + (hi-lo)/2
				ok, err := burst(mid)
				if err != nil {
					stalled = err
					break
				}
				if ok {
					lo = mid
				} else {
					hi = mid
				}
			}
			if stalled == nil {
				lengths = append(lengths, float64(lo))
				prev = lo
			}
		}
		if len(lengths) > 0 {
			sp := spread(lengths)
			for _, d := range lane {
				r.res.BackToBack = append(r.res.BackToBack, v1alpha1.BackToBackResult{FrameSize: int32(size),
					Direction: dirs[d].Name, Frames: sp.Mean, Spread: sp, TesterLimited: limited,
					BurstSeconds: strconv.FormatFloat(float64(sp.Mean)/r.lineFPS(float64(size)), 'g', 4, 64)})
			}
			if sp.Max >= b.MaxFrames {
				r.note(fmt.Sprintf("back-to-back %d B: the DUT forwarded the longest burst tried (%d frames); raise backToBack.maxFrames to find its limit", size, b.MaxFrames))
			}
		}
		if stalled != nil {
			return stalled
		}
	}
	return nil
}
