package rfc2544

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/expectations"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/search"
)

// Latency (RFC 2544 §26.2, RFC 8219 §7.2): every frame of a latency trial is timestamped, so each
// repetition yields a distribution, not one tagged frame. A repetition that lost more than the throughput's
// loss tolerance measured a queue the DUT was overflowing, not its latency at the throughput: it is run
// again (a DUT whose capacity wanders may carry the NDR in the next trial), up to the validity's retries,
// and one that lost in every run is invalid, recorded as such and left out of every summary.

// rfc8219MinRepetitions and rfc8219Frames (timestamped frames per repetition) are what RFC 8219 §7.2 asks
// for.
const (
	rfc8219MinRepetitions = 20
	rfc8219Frames         = 500
)

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
	s := &v1alpha1.LatencySummary{Valid: true, Frames: l.Count, ClockOffsetBoundNs: l.ClockBoundNs, MinNs: l.MinNs, MeanNs: l.MeanNs, P50Ns: l.P50Ns,
		P90Ns: l.P90Ns, P99Ns: l.P99Ns, P999Ns: l.P999Ns, P9999Ns: l.P9999Ns, MaxNs: l.MaxNs, PDVNs: l.PDVNs,
		JitterNs: l.JitterNs, ResolutionNs: l.ResolutionNs}
	withoutUnsupportedPercentiles(s)
	return s
}

// percentileFields are a summary's percentiles by their statistic's name.
func percentileFields(s *v1alpha1.LatencySummary) map[v1alpha1.Statistic]*int64 {
	return map[v1alpha1.Statistic]*int64{"p50": &s.P50Ns, "p90": &s.P90Ns, "p99": &s.P99Ns, "p99.9": &s.P999Ns, "p99.99": &s.P9999Ns}
}

// withoutUnsupportedPercentiles leaves out the percentiles too few frames cannot support: of fewer than
// 1/(1-p) frames the p-th percentile is the largest latency seen under another name, and a p99.99 of 500
// frames would claim a tail nobody measured. The PDV (p99.9 minus min) goes with p99.9.
func withoutUnsupportedPercentiles(s *v1alpha1.LatencySummary) {
	for stat, v := range percentileFields(s) {
		if s.Frames < expectations.PercentileFrames(stat) {
			*v = 0
		}
	}
	if s.P999Ns == 0 {
		s.PDVNs = 0
	}
}

// mergeLatency aggregates repetitions: percentiles from the merged histograms, the mean as the mean of
// the repetition means (RFC 2544 §26.2 reports the average of the repetitions).
func mergeLatency(reps []*engine.Latency) v1alpha1.LatencySummary {
	hist := map[int64]int64{}
	var sub int64 // the engines' buckets per power of two (0: exact, as the simulated engine's)
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
		sub = max(sub, l.HistSub)
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
	// a percentile is the middle of its bucket, as the engine reports one trial's: within half the bucket's
	// width of the sample it stands for (the resolution stated)
	q := func(p float64) int64 {
		if total == 0 {
			return 0
		}
		rank := int64(math.Ceil(p * float64(total)))
		var seen int64
		for _, u := range uppers {
			seen += hist[u]
			if seen >= rank {
				lower, width := engine.HistBucket(u, sub)
				out.ResolutionNs = max(out.ResolutionNs, width/2)
				return min(max(lower+(width-1)/2, out.MinNs), out.MaxNs)
			}
		}
		return out.MaxNs
	}
	for stat, v := range percentileFields(&out) {
		if quantile, _ := expectations.Quantile(stat); out.Frames >= expectations.PercentileFrames(stat) {
			*v = q(quantile)
		}
	}
	if out.P999Ns > 0 {
		out.PDVNs = out.P999Ns - out.MinNs
	}
	return out
}

// latency measures latency at each of the plan's loads (in percent of the NDR of each direction), each
// load repeated.
func (r *Runner) latency(ctx context.Context, size int) error {
	if err := r.defineStreams(ctx, []int{size}); err != nil {
		return err
	}
	loads := r.plan.Latency.PercentOfNDR
	for i, load := range loads {
		if r.resumedLatency[latencyLoad{size, plan.LoadPercent(load)}] {
			continue // a resumed run: the checkpoint holds this load's rows (and its notes)
		}
		if err := r.latencyAt(ctx, size, load, i == 0); err != nil {
			return err
		}
		if i < len(loads)-1 {
			r.checkpointWithinStep()
		}
	}
	return nil
}

// latencyLoad is one load of a latency step: a frame size, and the load as plan.LoadPercent writes it.
type latencyLoad struct {
	size int
	load string
}

// latencyLoadName names a load in notes: "at the NDR", "at the sparse probe", "at 50% of the NDR".
func latencyLoadName(load float64) string { return plan.LoadPhrase(plan.LoadPercent(load)) }

// latencyAt measures latency at one load of each direction's NDR, repeated; the first load of a size says
// what holds for all of them.
func (r *Runner) latencyAt(ctx context.Context, size int, load float64, first bool) error {
	dirs := r.plan.Directions()
	tol := r.plan.Throughput.LossTolerancePercent
	ts := trialSpec{test: v1alpha1.TestLatency, size: size, duration: r.plan.Durations.LatencyTrial, tol: tol}
	at := latencyLoadName(load)
	for d := range dirs {
		info, ok := r.ndr[key{size, d}]
		if !ok || !info.found || info.percent <= 0 {
			if first {
				r.note(fmt.Sprintf("latency %d B %s: skipped, no throughput (NDR) was found at this size", size, dirs[d].Name))
			}
			continue
		}
		ts.dirs = append(ts.dirs, d)
		ts.rates = append(ts.rates, plan.LatencyLoadPercent(info.percent, load, r.lineFPS(float64(size)), ts.duration.Seconds()))
		ts.purposes = append(ts.purposes, "latency "+at) // the records and the progress line name the load
	}
	if len(ts.dirs) == 0 {
		return nil
	}
	reps := max(1, r.plan.Latency.Repetitions)
	if reps < rfc8219MinRepetitions && first {
		r.note(fmt.Sprintf("latency was repeated %d times per size, direction and load; RFC 8219 asks for at least %d (spec.latency.repetitions)", reps, rfc8219MinRepetitions))
	}
	per := make([][]*engine.Latency, len(dirs))
	sums := make([][]v1alpha1.LatencySummary, len(dirs))
	invalid := make([]int, len(dirs))
	var lossy, rerun []string
	flush := func() {
		// results so far replace the previous version of this size's rows
		var rows []v1alpha1.LatencyResult
		for _, lr := range r.res.Latency {
			if int(lr.FrameSize) != size || plan.RowLoad(lr) != plan.LoadPercent(load) {
				rows = append(rows, lr)
			}
		}
		for i, d := range ts.dirs {
			if len(sums[d]) == 0 {
				continue
			}
			agg := mergeLatency(per[d])
			if len(per[d]) == 0 && invalid[d] > 0 {
				agg = v1alpha1.LatencySummary{Valid: false, Reason: fmt.Sprintf("all %d repetitions were invalid (see each)", invalid[d])}
			}
			rows = append(rows, v1alpha1.LatencyResult{FrameSize: int32(size), Direction: dirs[d].Name,
				Rate: r.rate(ts.rates[i], float64(size)), PercentOfNDR: v1alpha1.Percent(plan.LoadPercent(load)), Aggregate: agg, RFC8219: rfc8219Summary(sums[d], invalid[d]),
				Repetitions: sums[d], Note: fewFramesNote(sums[d])})
		}
		r.res.Latency = rows
		if len(rerun) > 0 {
			r.note(fmt.Sprintf("latency %d B %s: repetitions %s lost more than the loss tolerance of %s%% and were run again (at most %d times each): the DUT did not carry the load again trial for trial; each repetition says how many of its runs lost, and every run is in the trial records",
				size, at, joinList(rerun), FormatLoss(tol), r.plan.Validity.InvalidTrialRetries))
		}
		if len(lossy) > 0 {
			r.note(fmt.Sprintf("latency %d B %s: repetitions %s lost more than the loss tolerance of %s%%; a latency trial at a lossy rate measures a full queue, not the DUT's latency (RFC 8219), so they are invalid and left out",
				size, at, joinList(lossy), FormatLoss(tol)))
		}
	}
	again := 0 // runs of this repetition that the DUT made lossy
	for rep := 1; rep <= reps; rep++ {
		ts.rep = rep
		drs, aborted, _, err := r.validTrial(ctx, ts)
		if err != nil {
			flush()
			return err
		}
		// A DUT whose capacity wanders loses a few frames at its NDR in one trial and none in the next: the
		// repetition is run again, as a trial the tester spoiled is; the lossy runs stay in the trial records
		// and the repetition says how many there were. One that loses every time is invalid (below).
		if aborted == "" && again < r.plan.Validity.InvalidTrialRetries && lostByTheDUT(drs, tol) {
			again++
			if again == 1 {
				rerun = append(rerun, strconv.Itoa(rep))
			}
			rep--
			continue
		}
		lossyRuns := again
		again = 0
		// the directions of a repetition loaded the DUT together: one invalid makes the others' load not
		// the planned one, so the whole repetition is invalid
		bad := ""
		for _, dr := range drs {
			if dr.rec.TesterLimited || dr.rec.Aborted != "" || !search.Pass(dr.rec.LossPercent, tol) {
				bad = dirs[dr.dir].Name
			}
		}
		for _, dr := range drs {
			switch {
			case bad != "" && bad != dirs[dr.dir].Name && !dr.rec.TesterLimited && dr.rec.Aborted == "" && search.Pass(dr.rec.LossPercent, tol):
				invalid[dr.dir]++
				sums[dr.dir] = append(sums[dr.dir], v1alpha1.LatencySummary{Valid: false,
					Reason: fmt.Sprintf("the %s trial run with it was invalid, so the DUT did not carry the planned load", bad)})
			case dr.rec.TesterLimited:
				r.note(fmt.Sprintf("latency %d B %s %s repetition %d: the tester spoiled it %d times (%s); repetition excluded",
					size, dirs[dr.dir].Name, at, rep, r.plan.Validity.InvalidTrialRetries+1, spoiledBy([]dirResult{dr})))
				invalid[dr.dir]++
				sums[dr.dir] = append(sums[dr.dir], v1alpha1.LatencySummary{Valid: false, Reason: "the tester spoiled it: " + spoiledBy([]dirResult{dr})})
			case dr.rec.Aborted != "" || !search.Pass(dr.rec.LossPercent, tol):
				invalid[dr.dir]++
				lossy = append(lossy, fmt.Sprintf("%d %s", rep, dirs[dr.dir].Name))
				why := fmt.Sprintf("lost %s%% of its frames, more than the loss tolerance of %s%%", FormatLoss(dr.rec.LossPercent), FormatLoss(tol))
				if dr.rec.Aborted != "" {
					why = "the trial was aborted: " + dr.rec.Aborted
				}
				sums[dr.dir] = append(sums[dr.dir], v1alpha1.LatencySummary{Valid: false, Reason: why})
			default:
				// mergeLatency needs the refused ones too: across two clocks one refusal voids the set
				per[dr.dir] = append(per[dr.dir], dr.stream.Latency)
				s := latencySummary(dr.stream.Latency)
				if s == nil {
					s = &v1alpha1.LatencySummary{Valid: false, Reason: "the engine returned no latency for the trial"}
				}
				if s.Valid && lossyRuns > 0 {
					s.Reason = fmt.Sprintf("measured in run %d: the %d run(s) before it lost more than the loss tolerance (in the trial records)", lossyRuns+1, lossyRuns)
				}
				sums[dr.dir] = append(sums[dr.dir], *s)
				if !s.Valid {
					invalid[dr.dir]++ // the engine could not measure it (clocks, no frame, none returned)
				}
			}
		}
		if aborted == engine.ReasonDUTStalled {
			flush()
			return fmt.Errorf("%w: latency %d B %s repetition %d", ErrDUTStalled, size, at, rep)
		}
	}
	flush()
	// RFC 8219 asks for the summary over at least 20 repetitions: say so where invalid ones left fewer
	for _, d := range ts.dirs {
		// the run's notes say where RFC 8219's 500 frames were missed; the row's note also where only
		// the worst case was left out (the sparse probe's usual 500 to 999)
		if few := fewFramesNote(sums[d]); few != "" && fewestFrames(sums[d]) < rfc8219Frames {
			r.note(fmt.Sprintf("latency %d B %s %s: %s", size, dirs[d].Name, at, few))
		}
		if valid := len(sums[d]) - invalid[d]; reps >= rfc8219MinRepetitions && valid > 0 && valid < rfc8219MinRepetitions {
			r.note(fmt.Sprintf("latency %d B %s %s: the RFC 8219 summary is over %d valid repetitions of %d, fewer than the %d it asks for",
				size, dirs[d].Name, at, valid, reps, rfc8219MinRepetitions))
		}
	}
	return nil
}

// lostByTheDUT says a latency repetition lost more than the tolerance in some direction, and the tester
// spoiled none of them.
func lostByTheDUT(drs []dirResult, tol float64) bool {
	lost := false
	for _, dr := range drs {
		if dr.rec.TesterLimited || dr.rec.Aborted != "" {
			return false
		}
		lost = lost || !search.Pass(dr.rec.LossPercent, tol)
	}
	return lost
}

// rfc8219Summary is RFC 8219 §7.2's summary of the valid repetitions (nil when none is valid): the medians
// of their typical (median) and worst-case (99.9th percentile) latencies, the 1st and 99th percentiles of
// those as their spread, and the median of their PDVs.
func rfc8219Summary(reps []v1alpha1.LatencySummary, invalid int) *v1alpha1.LatencyRepetitions {
	var typical, worst, pdv []int64
	for _, s := range reps {
		if !s.Valid {
			continue
		}
		// a repetition too short for a percentile has none (withoutUnsupportedPercentiles): it is not one
		// of 0 (a single frame has no median; fewer than 1,000 no worst case, p99.9)
		if s.Frames >= expectations.PercentileFrames("p50") {
			typical = append(typical, s.P50Ns)
		}
		if s.Frames >= expectations.PercentileFrames("p99.9") {
			worst, pdv = append(worst, s.P999Ns), append(pdv, s.PDVNs)
		}
	}
	if len(typical) == 0 {
		return nil
	}
	// the repetitions summarised are those with a typical latency; the worst case may be of fewer
	out := &v1alpha1.LatencyRepetitions{Repetitions: int32(len(typical)), Invalid: int32(invalid),
		TypicalNs: median(typical), TypicalP1Ns: nearestRank(typical, 0.01), TypicalP99Ns: nearestRank(typical, 0.99)}
	if len(worst) > 0 {
		out.WorstCaseNs, out.WorstCaseP1Ns, out.WorstCaseP99Ns = median(worst), nearestRank(worst, 0.01), nearestRank(worst, 0.99)
		out.PDVNs = median(pdv)
	}
	return out
}

// fewFramesNote says where a latency row's repetitions timestamped fewer frames than RFC 8219's 500, or
// too few for its worst case (p99.9: 1,000), and which percentiles their count left out; "" where none
// did (p99.99's 10,000 alone is not worth a note: its figure is left out, shown as –).
func fewFramesNote(reps []v1alpha1.LatencySummary) string {
	fewest := fewestFrames(reps)
	if fewest < 0 || fewest >= max(rfc8219Frames, expectations.PercentileFrames("p99.9")) {
		return ""
	}
	var left []string
	for _, stat := range []v1alpha1.Statistic{"p50", "p90", "p99", "p99.9", "p99.99"} {
		if fewest < expectations.PercentileFrames(stat) {
			left = append(left, string(stat))
		}
	}
	few := fmt.Sprintf("fewer than the %d RFC 8219 asks for", rfc8219Frames)
	if fewest >= rfc8219Frames {
		few = fmt.Sprintf("enough for RFC 8219 (%d), too few for its worst case (p99.9 needs %d)", rfc8219Frames, expectations.PercentileFrames("p99.9"))
	}
	return fmt.Sprintf("a repetition timestamped %d frames, %s (a longer spec.durations.latencyTrial or a higher load gives more); a repetition leaves out the percentiles its frames cannot support (%s), and the worst case and PDV with p99.9",
		fewest, few, joinList(left))
}

// fewestFrames is the fewest frames a valid repetition timestamped; -1 where none is valid.
func fewestFrames(reps []v1alpha1.LatencySummary) int64 {
	fewest := int64(-1)
	for _, s := range reps {
		if s.Valid && (fewest < 0 || s.Frames < fewest) {
			fewest = s.Frames
		}
	}
	return fewest
}

// median of v (the mean of the middle two when their number is even, rounded).
func median(v []int64) int64 {
	s := slices.Sorted(slices.Values(v))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return int64(math.Round((float64(s[n/2-1]) + float64(s[n/2])) / 2))
}

// nearestRank is the p-quantile of v by the nearest-rank method: the smallest value at least p of the
// values are not above.
func nearestRank(v []int64, p float64) int64 {
	s := slices.Sorted(slices.Values(v))
	rank := max(1, int(math.Ceil(p*float64(len(s)))))
	return s[rank-1]
}

// joinList joins items as "a, b and c".
func joinList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
