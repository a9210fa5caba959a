// Package expectations turns a TrafficTest's results and its regression expectations into a verdict.
package expectations

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/units"
)

// Evaluate checks every expectation against the results of a run that planned the given rows. It returns
// VerdictNone when there are no expectations. Otherwise the verdict fails closed:
//   - Failed, with a message per expectation a measured result did not meet;
//   - Inconclusive, when nothing failed but something could not be decided: a planned row was not
//     measured (or the tester spoiled every trial of it), an expectation's row is missing, a tester-limited
//     throughput lies below the expected value (the DUT may be faster), a latency was not measurable, or
//     planned is nil (what the run planned is unknown);
//   - Passed only when every planned row was measured and every expectation was met by a measured value.
//
// A tester-limited throughput at or above the expected value meets it: the DUT is at least that good.
func Evaluate(exp *v1alpha1.Expectations, res *v1alpha1.Results, planned []plan.Row) (v1alpha1.Verdict, []string) {
	if exp == nil || (len(exp.MinThroughput) == 0 && len(exp.MaxLatency) == 0 && exp.MaxPenalty == "" && exp.MaxNDRDrop == "" && exp.MinBackToBackFrames == nil && exp.Timeline == nil) {
		return v1alpha1.VerdictNone, nil
	}
	if res == nil {
		res = &v1alpha1.Results{}
	}
	var failures, undecided []string
	for _, e := range exp.MinThroughput {
		f, u := checkThroughput(e, res)
		failures, undecided = append(failures, f...), append(undecided, u...)
	}
	for _, e := range exp.MaxLatency {
		f, u := checkLatency(e, res)
		failures, undecided = append(failures, f...), append(undecided, u...)
	}
	if exp.MaxPenalty != "" {
		limit, _ := strconv.ParseFloat(string(exp.MaxPenalty), 64)
		if len(res.Penalty) == 0 {
			undecided = append(undecided, "maxPenalty: no penalty was measured (is spec.baseline set and finished?)")
		}
		for _, p := range res.Penalty {
			v, _ := strconv.ParseFloat(p.Percent, 64)
			over := v > limit
			switch {
			case over && (p.Bound == v1alpha1.PenaltyAtMost || p.Bound == v1alpha1.PenaltyUnknown):
				undecided = append(undecided, fmt.Sprintf("maxPenalty: %d B %s lost %s%% against the baseline, more than %s%%, but this run's figure is the tester's limit or undetermined: the DUT may lose less",
					p.FrameSize, p.Direction, p.Percent, exp.MaxPenalty))
			case over:
				failures = append(failures, fmt.Sprintf("maxPenalty: %d B %s lost %s%% against the baseline, more than %s%%",
					p.FrameSize, p.Direction, p.Percent, exp.MaxPenalty))
			case p.Bound == v1alpha1.PenaltyAtLeast || p.Bound == v1alpha1.PenaltyUnknown:
				undecided = append(undecided, fmt.Sprintf("maxPenalty: %d B %s lost %s%% against the baseline, within %s%%, but the baseline's figure is the tester's limit or undetermined: the DUT may lose more",
					p.FrameSize, p.Direction, p.Percent, exp.MaxPenalty))
			}
		}
	}
	if exp.MaxNDRDrop != "" {
		f, u := checkNDRDrop(exp.MaxNDRDrop, res)
		failures, undecided = append(failures, f...), append(undecided, u...)
	}
	if exp.MinBackToBackFrames != nil {
		// a planned size the DUT refused has no back-to-back row at all where no direction carried it: no
		// burst of it crosses, which fails the expectation as a row of 0 frames would
		have := map[plan.Row]bool{}
		for _, b := range res.BackToBack {
			have[plan.Row{FrameSize: int(b.FrameSize), Direction: b.Direction}] = true
		}
		refusedRows := 0
		for _, r := range planned {
			k := plan.Row{FrameSize: r.FrameSize, Direction: r.Direction}
			if why := refusedSize(res, int32(r.FrameSize), r.Direction); r.Test == v1alpha1.TestBackToBack && why != "" && !have[k] {
				refusedRows++
				failures = append(failures, fmt.Sprintf("minBackToBackFrames: %d B %s: the DUT forwards no frame of that size (refused as %s)",
					r.FrameSize, r.Direction, why))
			}
		}
		if len(res.BackToBack) == 0 && refusedRows == 0 {
			undecided = append(undecided, "minBackToBackFrames: no back-to-back result was measured")
		}
		for _, b := range res.BackToBack {
			if why := refusedSize(res, b.FrameSize, b.Direction); why != "" {
				failures = append(failures, fmt.Sprintf("minBackToBackFrames: %d B %s: the DUT forwards no frame of that size (refused as %s)",
					b.FrameSize, b.Direction, why))
				continue
			}
			if b.NotMeasurable != "" && b.Frames >= *exp.MinBackToBackFrames {
				continue // a full-length trial at line rate lost none of its b.Frames frames
			}
			if b.NotMeasurable != "" {
				undecided = append(undecided, fmt.Sprintf("minBackToBackFrames: %d B %s was not measured (%s); its full-length trial at line rate held %d frames, fewer than %d",
					b.FrameSize, b.Direction, b.NotMeasurable, b.Frames, *exp.MinBackToBackFrames))
				continue
			}
			if b.Frames < *exp.MinBackToBackFrames && b.Saturated {
				undecided = append(undecided, fmt.Sprintf("minBackToBackFrames: %d B %s forwarded the longest burst tried (%d frames), fewer than %d: raise backToBack.maxFrames",
					b.FrameSize, b.Direction, b.Frames, *exp.MinBackToBackFrames))
			} else if b.Frames < *exp.MinBackToBackFrames && b.TesterLimited {
				undecided = append(undecided, fmt.Sprintf("minBackToBackFrames: %d B %s held %d frames, fewer than %d, but the tester was the limit (testerLimited)",
					b.FrameSize, b.Direction, b.Frames, *exp.MinBackToBackFrames))
			} else if b.Frames < *exp.MinBackToBackFrames {
				failures = append(failures, fmt.Sprintf("minBackToBackFrames: %d B %s held %d frames, fewer than %d",
					b.FrameSize, b.Direction, b.Frames, *exp.MinBackToBackFrames))
			}
		}
	}
	if exp.Timeline != nil {
		f, u := checkTimeline(exp.Timeline, res)
		failures, undecided = append(failures, f...), append(undecided, u...)
	}
	if planned == nil {
		undecided = append(undecided, "what the run planned is unknown, so whether every result was measured is too")
	}
	for _, r := range Missing(res, planned) {
		undecided = append(undecided, "not measured: "+r.String())
	}
	switch {
	case len(failures) > 0:
		return v1alpha1.VerdictFailed, append(failures, prefixed("inconclusive: ", undecided)...)
	case len(undecided) > 0:
		return v1alpha1.VerdictInconclusive, prefixed("inconclusive: ", undecided)
	}
	return v1alpha1.VerdictPassed, nil
}

func prefixed(p string, msgs []string) []string {
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, p+m)
	}
	return out
}

// Missing lists the planned rows the results do not hold, the throughput rows whose only figure is a
// tester limit without a single valid trial below it (an NDR of 0 marked testerLimited), and those whose
// search ran out of trials (undetermined).
func Missing(res *v1alpha1.Results, planned []plan.Row) []plan.Row {
	if res == nil {
		res = &v1alpha1.Results{}
	}
	have := map[plan.Row]bool{}
	for _, t := range res.Throughput {
		have[plan.Row{Test: v1alpha1.TestThroughput, FrameSize: int(t.FrameSize), Direction: t.Direction}] = measured(t.TesterLimited, t.NDR) && t.Undetermined == ""
	}
	for _, m := range res.Imix {
		have[plan.Row{Test: v1alpha1.TestImixThroughput, Direction: m.Direction}] = measured(m.TesterLimited, m.NDR) && m.Undetermined == ""
	}
	for _, l := range res.Latency {
		// a row whose every repetition was invalid (lossy, spoiled, across clocks too far apart) holds none
		have[plan.Row{Test: v1alpha1.TestLatency, FrameSize: int(l.FrameSize), Direction: l.Direction, Load: plan.RowLoad(l)}] = l.Aggregate.Valid
	}
	for _, f := range res.FrameLoss {
		have[plan.Row{Test: v1alpha1.TestFrameLoss, FrameSize: int(f.FrameSize), Direction: f.Direction}] = len(f.Points) > 0
	}
	for _, b := range res.BackToBack {
		have[plan.Row{Test: v1alpha1.TestBackToBack, FrameSize: int(b.FrameSize), Direction: b.Direction}] = true
	}
	for _, m := range res.PathMTU {
		have[plan.Row{Test: v1alpha1.TestPathMTU, Direction: m.Direction}] = m.Undetermined == ""
	}
	for _, t := range res.Timeline {
		// a timeline the tester spoiled beyond timeline.maxTesterSpoiled says nothing of the DUT
		have[plan.Row{Test: v1alpha1.TestTimeline, FrameSize: int(t.FrameSize), Direction: t.Direction}] = !t.TesterLimited
	}
	// a size the DUT refused in a direction (throughput's refused: too big for its MTU) has nothing more to
	// measure there: its NDR of 0 is the result, and the tests that follow have no rate to run at
	refused := map[plan.Row]bool{}
	for _, t := range res.Throughput {
		if t.Refused != "" {
			refused[plan.Row{FrameSize: int(t.FrameSize), Direction: t.Direction}] = true
		}
	}
	var out []plan.Row
	for _, r := range planned {
		if !have[r] && (r.Test == v1alpha1.TestThroughput || !refused[plan.Row{FrameSize: r.FrameSize, Direction: r.Direction}]) {
			out = append(out, r)
		}
	}
	return out
}

// refusedSize says why the DUT forwards no frame of a size in a direction, as its throughput row says ("":
// it does, or no row says).
func refusedSize(res *v1alpha1.Results, size int32, dir string) string {
	for _, t := range res.Throughput {
		if t.FrameSize == size && t.Direction == dir {
			return t.Refused
		}
	}
	return ""
}

// measured says whether a throughput row holds a figure of the DUT: a tester limit with no valid
// trial below it (NDR 0) holds none.
func measured(testerLimited bool, ndr v1alpha1.Rate) bool {
	return !testerLimited || ndr.FramesPerSecond > 0
}

func checkThroughput(e v1alpha1.ThroughputExpectation, res *v1alpha1.Results) (failures, undecided []string) {
	type row struct {
		size         int32
		direction    string
		rate         v1alpha1.Rate
		limited      bool
		undetermined string
	}
	var rows []row
	for _, t := range res.Throughput {
		if e.FrameSize == 0 || e.FrameSize == t.FrameSize {
			rows = append(rows, row{t.FrameSize, t.Direction, t.NDR, t.TesterLimited, t.Undetermined})
		}
	}
	if e.FrameSize == 0 {
		for _, m := range res.Imix {
			rows = append(rows, row{0, m.Direction, m.NDR, m.TesterLimited, m.Undetermined})
		}
	}
	what := "every size"
	if e.FrameSize != 0 {
		what = fmt.Sprintf("%d B", e.FrameSize)
	}
	if len(rows) == 0 {
		return nil, []string{fmt.Sprintf("minThroughput %s: no throughput was measured", what)}
	}
	for _, r := range rows {
		size := "IMIX"
		if r.size != 0 {
			size = fmt.Sprintf("%d B", r.size)
		}
		var below []string
		if e.L2BitsPerSecond != nil && r.rate.L2BitsPerSecond < e.L2BitsPerSecond.Value() {
			below = append(below, fmt.Sprintf("%s L2 is below %s", units.FormatBits(r.rate.L2BitsPerSecond), units.FormatBits(e.L2BitsPerSecond.Value())))
		}
		if e.L1BitsPerSecond != nil && r.rate.L1BitsPerSecond < e.L1BitsPerSecond.Value() {
			below = append(below, fmt.Sprintf("%s L1 is below %s", units.FormatBits(r.rate.L1BitsPerSecond), units.FormatBits(e.L1BitsPerSecond.Value())))
		}
		if e.FramesPerSecond != nil && r.rate.FramesPerSecond < e.FramesPerSecond.Value() {
			below = append(below, fmt.Sprintf("%d frames/s is below %d", r.rate.FramesPerSecond, e.FramesPerSecond.Value()))
		}
		if e.PercentOfLineRate != "" {
			want, _ := strconv.ParseFloat(string(e.PercentOfLineRate), 64)
			got, _ := strconv.ParseFloat(r.rate.PercentOfLineRate, 64)
			if got < want {
				below = append(below, fmt.Sprintf("%s%% of line rate is below %s%%", r.rate.PercentOfLineRate, e.PercentOfLineRate))
			}
		}
		for _, b := range below {
			if r.undetermined != "" {
				// a lower bound below the expected value says nothing of the DUT's throughput
				undecided = append(undecided, fmt.Sprintf("minThroughput %s %s: %s, but the NDR is undetermined (%s)", size, r.direction, b, r.undetermined))
				continue
			}
			if r.limited {
				// the tester, not the DUT, stopped there: the DUT may well reach the expected value
				undecided = append(undecided, fmt.Sprintf("minThroughput %s %s: %s, but the tester was the limit (testerLimited)", size, r.direction, b))
			} else {
				failures = append(failures, fmt.Sprintf("minThroughput %s %s: %s", size, r.direction, b))
			}
		}
	}
	return failures, undecided
}

func checkLatency(e v1alpha1.LatencyExpectation, res *v1alpha1.Results) (failures, undecided []string) {
	stat := e.Statistic
	if stat == "" {
		stat = "p99"
	}
	seen := 0
	for _, l := range res.Latency {
		// RFC 2544's latency is the NDR's: the points below it on the curve are not what a maxLatency bounds
		if (e.FrameSize != 0 && e.FrameSize != l.FrameSize) || plan.RowLoad(l) != "100" {
			continue
		}
		seen++
		if !l.Aggregate.Valid {
			undecided = append(undecided, fmt.Sprintf("maxLatency %d B %s: latency could not be measured (%s)", l.FrameSize, l.Direction, l.Aggregate.Reason))
			continue
		}
		// across two nodes each value is the true latency only to within the clocks' bound: a pass must
		// hold at the top of it, a failure at its bottom, and between the two it is undecided
		v, bound := Statistic(l.Aggregate, stat), l.Aggregate.ClockOffsetBoundNs
		switch {
		case v == 0:
			// a percentile the frames cannot support is not reported: it is not a latency of 0
			undecided = append(undecided, fmt.Sprintf("maxLatency %d B %s: %s needs %d timestamped frames, the latency test measured %d (spec.durations.latencyTrial)",
				l.FrameSize, l.Direction, stat, PercentileFrames(stat), l.Aggregate.Frames))
		case v > e.Max.Nanoseconds() && ndrTesterLimited(res, l.FrameSize, l.Direction):
			// at an NDR that is the tester's own limit, its own queues may be in the latency
			undecided = append(undecided, fmt.Sprintf("maxLatency %d B %s: %s %s is above %s, measured at an NDR that is the tester's limit", l.FrameSize, l.Direction, stat,
				units.FormatNs(v), e.Max.Duration))
		case v-bound > e.Max.Nanoseconds() && v-bound-l.TesterMaxLatencyNs <= e.Max.Nanoseconds():
			undecided = append(undecided, fmt.Sprintf("maxLatency %d B %s: %s %s is above %s by no more than the tester's own latency of up to %s (its calibration)", l.FrameSize, l.Direction, stat,
				units.FormatNs(v), e.Max.Duration, units.FormatNs(l.TesterMaxLatencyNs)))
		case v-bound > e.Max.Nanoseconds():
			failures = append(failures, fmt.Sprintf("maxLatency %d B %s: %s %s is above %s", l.FrameSize, l.Direction, stat,
				units.FormatNs(v), e.Max.Duration))
		case v+bound > e.Max.Nanoseconds():
			undecided = append(undecided, fmt.Sprintf("maxLatency %d B %s: %s %s ± %s (the two nodes' clocks) may be above %s", l.FrameSize, l.Direction, stat,
				units.FormatNs(v), units.FormatNs(bound), e.Max.Duration))
		}
	}
	if seen == 0 {
		undecided = append(undecided, fmt.Sprintf("maxLatency %d B: no latency was measured at the NDR (is latency in spec.tests, and 100 in spec.latency.percentOfNDR?)", e.FrameSize))
	}
	return failures, undecided
}

// quantiles are the percentile statistics as quantiles, literals as the engine's hist.c has them: 99.9/100
// in floating point is a hair above 0.999, and its nearest rank one too high wherever 0.999·N is whole.
var quantiles = map[v1alpha1.Statistic]float64{"p50": 0.5, "p90": 0.9, "p99": 0.99, "p99.9": 0.999, "p99.99": 0.9999}

// Quantile is a percentile statistic as a quantile (p99.9: 0.999); false for min, mean and max.
func Quantile(stat v1alpha1.Statistic) (float64, bool) {
	q, ok := quantiles[stat]
	return q, ok
}

// PercentileFrames is how many frames a percentile statistic needs before it is more than the largest
// latency seen: the p-th percentile has 1/(1-p) frames at or above it (p99.9 needs 1,000). A summary of
// fewer frames leaves it out (0); min, mean and max need one (PercentileFrames says 0 of them).
func PercentileFrames(stat v1alpha1.Statistic) int64 {
	q, ok := quantiles[stat]
	if !ok {
		return 0
	}
	return int64(math.Round(1 / (1 - q)))
}

// Statistic picks one value of a latency summary: 0 where it was not reported (a percentile its frames
// cannot support).
func Statistic(s v1alpha1.LatencySummary, stat v1alpha1.Statistic) int64 {
	switch stat {
	case "min":
		return s.MinNs
	case "mean":
		return s.MeanNs
	case "p50":
		return s.P50Ns
	case "p90":
		return s.P90Ns
	case "p99.9":
		return s.P999Ns
	case "p99.99":
		return s.P9999Ns
	case "max":
		return s.MaxNs
	default:
		return s.P99Ns
	}
}

// Penalty compares throughput with a baseline run (e.g. the same path without encryption), per frame size
// and direction, in percent of the baseline's L2 rate and in bit/s.
func Penalty(res, baseline *v1alpha1.Results) []v1alpha1.PenaltyResult {
	var out []v1alpha1.PenaltyResult
	for _, t := range res.Throughput {
		for _, b := range baseline.Throughput {
			if b.FrameSize != t.FrameSize || b.Direction != t.Direction || b.NDR.L2BitsPerSecond <= 0 {
				continue
			}
			lost := b.NDR.L2BitsPerSecond - t.NDR.L2BitsPerSecond
			out = append(out, v1alpha1.PenaltyResult{
				FrameSize: t.FrameSize, Direction: t.Direction, L2BitsPerSecond: lost,
				Percent: strconv.FormatFloat(100*float64(lost)/float64(b.NDR.L2BitsPerSecond), 'f', 2, 64),
				Bound:   penaltyBound(t.TesterLimited || t.Undetermined != "", b.TesterLimited || b.Undetermined != ""),
			})
		}
	}
	return out
}

// penaltyBound is which way a penalty may be off when this run's figure, the baseline's or both are lower
// bounds (the tester's limit, or a search that did not end).
func penaltyBound(run, baseline bool) v1alpha1.PenaltyBound {
	switch {
	case run && baseline:
		return v1alpha1.PenaltyUnknown
	case run:
		return v1alpha1.PenaltyAtMost
	case baseline:
		return v1alpha1.PenaltyAtLeast
	}
	return ""
}

// Change compares a run with an earlier run of the same measurement, per size and direction both
// measured: the NDR change, and the latency change where both latencies are valid. A row either run
// measured at the tester's ceiling is marked, so no one reads the tester's change as the DUT's.
func Change(res, prev *v1alpha1.Results) []v1alpha1.ChangeResult {
	var out []v1alpha1.ChangeResult
	row := func(size int32, dir string, cur, old v1alpha1.Rate, limited bool) {
		if old.L2BitsPerSecond <= 0 {
			return
		}
		d := cur.L2BitsPerSecond - old.L2BitsPerSecond
		c := v1alpha1.ChangeResult{FrameSize: size, Direction: dir, NDRL2BitsPerSecond: d, TesterLimited: limited,
			NDRPercent: strconv.FormatFloat(100*float64(d)/float64(old.L2BitsPerSecond), 'f', 2, 64)}
		// a p99 too few frames supported is not reported in either run: no change of it is known
		if a, b, ok := validLatency(res, prev, size, dir); ok && a.P99Ns > 0 && b.P99Ns > 0 {
			p99, mean := a.P99Ns-b.P99Ns, a.MeanNs-b.MeanNs
			c.LatencyP99Ns, c.LatencyMeanNs = &p99, &mean
			if b.P99Ns > 0 {
				c.LatencyP99Percent = strconv.FormatFloat(100*float64(p99)/float64(b.P99Ns), 'f', 2, 64)
			}
		}
		out = append(out, c)
	}
	for _, t := range res.Throughput {
		for _, o := range prev.Throughput {
			if o.FrameSize == t.FrameSize && o.Direction == t.Direction {
				row(t.FrameSize, t.Direction, t.NDR, o.NDR, t.TesterLimited || o.TesterLimited || t.Undetermined != "" || o.Undetermined != "")
			}
		}
	}
	for _, m := range res.Imix {
		for _, o := range prev.Imix {
			if o.Direction == m.Direction {
				row(0, m.Direction, m.NDR, o.NDR, m.TesterLimited || o.TesterLimited || m.Undetermined != "" || o.Undetermined != "")
			}
		}
	}
	return out
}

func validLatency(res, prev *v1alpha1.Results, size int32, dir string) (cur, old v1alpha1.LatencySummary, ok bool) {
	find := func(r *v1alpha1.Results) (v1alpha1.LatencySummary, bool) {
		for _, l := range r.Latency {
			if l.FrameSize == size && l.Direction == dir && l.Aggregate.Valid && plan.RowLoad(l) == "100" {
				return l.Aggregate, true
			}
		}
		return v1alpha1.LatencySummary{}, false
	}
	cur, ok1 := find(res)
	old, ok2 := find(prev)
	// a difference of latencies measured across two nodes' clocks carries both clock errors: not a change
	return cur, old, ok1 && ok2 && cur.ClockOffsetBoundNs == 0 && old.ClockOffsetBoundNs == 0
}

// checkNDRDrop judges maxNDRDrop: no NDR may fall more than the limit below what the previous run
// reported at the same size and direction. A run with nothing to compare with (the first of a schedule)
// has nothing to judge. Where this run's NDR is the tester's ceiling, a fall is undecided (the DUT may be
// faster), never failed; at or above the limit it is met, as a minThroughput is (the DUT is at least that
// good). A row the previous run lacks is undecided: nothing was compared there.
func checkNDRDrop(maxDrop v1alpha1.Percent, res *v1alpha1.Results) (failures, undecided []string) {
	if res.ComparedWith == "" {
		return nil, nil
	}
	limit, _ := strconv.ParseFloat(string(maxDrop), 64)
	rowName := func(size int32, dir string) string {
		if size == 0 {
			return "IMIX " + dir
		}
		return fmt.Sprintf("%d B %s", size, dir)
	}
	compared := map[string]bool{}
	for _, c := range res.Change {
		change, _ := strconv.ParseFloat(c.NDRPercent, 64)
		row := rowName(c.FrameSize, c.Direction)
		compared[row] = true
		if -change <= limit {
			continue
		}
		if rowTesterLimited(res, c.FrameSize, c.Direction) {
			undecided = append(undecided, fmt.Sprintf("maxNDRDrop: %s NDR changed %s%% against %s, but this run's figure is the tester's limit or an undetermined lower bound: the DUT may be faster", row, c.NDRPercent, res.ComparedWith))
			continue
		}
		failures = append(failures, fmt.Sprintf("maxNDRDrop: %s NDR changed %s%% against %s, a drop of more than %s%%", row, c.NDRPercent, res.ComparedWith, maxDrop))
	}
	for _, t := range res.Throughput {
		if row := rowName(t.FrameSize, t.Direction); !compared[row] {
			undecided = append(undecided, fmt.Sprintf("maxNDRDrop: %s has no NDR in %s to compare with", row, res.ComparedWith))
		}
	}
	for _, m := range res.Imix {
		if row := rowName(0, m.Direction); !compared[row] {
			undecided = append(undecided, fmt.Sprintf("maxNDRDrop: %s has no NDR in %s to compare with", row, res.ComparedWith))
		}
	}
	return failures, undecided
}

// ndrTesterLimited says whether the NDR of a size and direction is the tester's limit (an undetermined NDR
// is a lower bound of the DUT's, not the tester's limit: latency at it is the DUT's).
func ndrTesterLimited(res *v1alpha1.Results, size int32, dir string) bool {
	for _, t := range res.Throughput {
		if t.FrameSize == size && t.Direction == dir {
			return t.TesterLimited
		}
	}
	return false
}

func rowTesterLimited(res *v1alpha1.Results, size int32, dir string) bool {
	if size == 0 {
		for _, m := range res.Imix {
			if m.Direction == dir {
				return m.TesterLimited || m.Undetermined != ""
			}
		}
		return false
	}
	for _, t := range res.Throughput {
		if t.FrameSize == size && t.Direction == dir {
			return t.TesterLimited || t.Undetermined != ""
		}
	}
	return false
}

// checkTimeline judges each timeline row. What the DUT's own bins show fails it whatever the tester did
// elsewhere (those outages happened); a row within the bounds whose bins the tester spoiled beyond
// timeline.maxTesterSpoiled decides nothing, since the outages may be in the bins it could not judge.
func checkTimeline(e *v1alpha1.TimelineExpectation, res *v1alpha1.Results) (failures, undecided []string) {
	if len(res.Timeline) == 0 {
		return nil, []string{"timeline: no timeline was measured"}
	}
	for _, t := range res.Timeline {
		row := fmt.Sprintf("%d B %s", t.FrameSize, t.Direction)
		var over []string
		if e.MaxOutages != nil && t.Outages > *e.MaxOutages {
			over = append(over, fmt.Sprintf("%d outages, more than %d", t.Outages, *e.MaxOutages))
		}
		if e.MaxOutage != nil && t.LongestOutageMilliseconds != "" {
			ms, _ := strconv.ParseFloat(t.LongestOutageMilliseconds, 64)
			if ms*1e6 > float64(e.MaxOutage.Nanoseconds()) {
				over = append(over, fmt.Sprintf("an outage of %s ms, longer than %s", t.LongestOutageMilliseconds, e.MaxOutage.Duration))
			}
		}
		if e.MaxLoss != "" {
			limit, _ := strconv.ParseFloat(string(e.MaxLoss), 64)
			if v, _ := strconv.ParseFloat(t.LossPercent, 64); v > limit {
				over = append(over, fmt.Sprintf("%s%% lost, more than %s%%", t.LossPercent, e.MaxLoss))
			}
		}
		availability, undecidedAvailability := checkAvailability(e, t)
		over = append(over, availability...)
		switch {
		case len(over) > 0:
			failures = append(failures, "timeline: "+row+": "+strings.Join(over, "; "))
		case undecidedAvailability != "":
			undecided = append(undecided, "timeline: "+row+": "+undecidedAvailability)
		case t.TesterLimited:
			undecided = append(undecided, "timeline: "+row+": within the bounds where it was judged, but the tester spoiled "+
				strconv.FormatInt(t.TesterBins, 10)+" of its "+strconv.FormatInt(t.Bins, 10)+" bins: the DUT may have lost frames there")
		case (e.MaxOutages != nil || e.MaxOutage != nil || e.MaxLoss != "") && (t.TesterOutages > 0 || t.TesterLostFrames > 0):
			undecided = append(undecided, "timeline: "+row+": within the bounds where it was judged, but "+
				strconv.FormatInt(t.TesterLostFrames, 10)+" frames were lost in bins the tester spoiled ("+
				strconv.FormatInt(t.TesterOutages, 10)+" outages there): an outage of the DUT's may lie in them")
		}
	}
	return failures, undecided
}

// checkAvailability judges a row against minAvailability, exactly (in seconds, not on the rounded
// percentage): what the DUT's seconds prove fails it (the tester's seconds can only add unavailable
// time), unless the trial was cut short (the seconds it did not run could bring it over); where the
// tester's seconds or the run open at the end could bring it under the bound, it is undecided.
func checkAvailability(e *v1alpha1.TimelineExpectation, t v1alpha1.TimelineResult) (over []string, undecided string) {
	if e.MinAvailability == "" {
		return nil, ""
	}
	if t.AvailabilityPercent == "" || t.AvailabilitySeconds <= 0 {
		if t.BinMilliseconds > 1000 || (t.BinMilliseconds > 0 && 1000%t.BinMilliseconds != 0) {
			return nil, fmt.Sprintf("no availability: its %d ms bins do not divide a second", t.BinMilliseconds)
		}
		return nil, "no availability: no second was judged"
	}
	limit, ok := new(big.Rat).SetString(string(e.MinAvailability))
	if !ok {
		return nil, fmt.Sprintf("minAvailability %q is not a number", e.MinAvailability)
	}
	// available / seconds < limit / 100, in integers and the limit's exact decimal
	below := func(unavailable int64) bool {
		avail := new(big.Rat).SetInt64(100 * (t.AvailabilitySeconds - unavailable))
		return avail.Cmp(new(big.Rat).Mul(limit, new(big.Rat).SetInt64(t.AvailabilitySeconds))) < 0
	}
	switch {
	case below(t.UnavailableSeconds) && !t.CutShort:
		return []string{fmt.Sprintf("available %s%% of the time (%d of %d s unavailable), less than %s%%",
			t.AvailabilityPercent, t.UnavailableSeconds, t.AvailabilitySeconds, e.MinAvailability)}, ""
	case below(t.UnavailableSeconds):
		return nil, fmt.Sprintf("available %s%% of the %d s judged, less than %s%%, but the trial was cut short: the seconds "+
			"it did not run could bring it over", t.AvailabilityPercent, t.AvailabilitySeconds, e.MinAvailability)
	case t.UnavailableSecondsAtMost > 0 && below(t.UnavailableSecondsAtMost):
		return nil, fmt.Sprintf("available %s%% of the time where it was judged, but the seconds the tester spoiled and the run "+
			"open at the end could make up to %d of %d s unavailable (%s%%, less than %s%%)", t.AvailabilityPercent,
			t.UnavailableSecondsAtMost, t.AvailabilitySeconds,
			plan.AvailabilityPercent(t.AvailabilitySeconds-t.UnavailableSecondsAtMost, t.AvailabilitySeconds), e.MinAvailability)
	}
	return nil, ""
}
