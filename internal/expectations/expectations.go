// Package expectations turns a TrafficTest's results and its regression expectations into a verdict.
package expectations

import (
	"fmt"
	"strconv"

	"linerate.dev/linerate/api/v1alpha1"
)

// Evaluate checks every expectation against the results. It returns VerdictNone when there are no
// expectations, and a failure message per unmet (or unmeasurable) expectation.
func Evaluate(exp *v1alpha1.Expectations, res *v1alpha1.Results) (v1alpha1.Verdict, []string) {
	if exp == nil || (len(exp.MinThroughput) == 0 && len(exp.MaxLatency) == 0 && exp.MaxPenalty == "" && exp.MinBackToBackFrames == nil) {
		return v1alpha1.VerdictNone, nil
	}
	if res == nil {
		res = &v1alpha1.Results{}
	}
	var failures []string
	for _, e := range exp.MinThroughput {
		failures = append(failures, checkThroughput(e, res)...)
	}
	for _, e := range exp.MaxLatency {
		failures = append(failures, checkLatency(e, res)...)
	}
	if exp.MaxPenalty != "" {
		limit, _ := strconv.ParseFloat(string(exp.MaxPenalty), 64)
		if len(res.Penalty) == 0 {
			failures = append(failures, "maxPenalty: no penalty was measured (is spec.baseline set and finished?)")
		}
		for _, p := range res.Penalty {
			if v, _ := strconv.ParseFloat(p.Percent, 64); v > limit {
				failures = append(failures, fmt.Sprintf("maxPenalty: %d B %s lost %s%% against the baseline, more than %s%%",
					p.FrameSize, p.Direction, p.Percent, exp.MaxPenalty))
			}
		}
	}
	if exp.MinBackToBackFrames != nil {
		if len(res.BackToBack) == 0 {
			failures = append(failures, "minBackToBackFrames: no back-to-back result was measured")
		}
		for _, b := range res.BackToBack {
			if b.Frames < *exp.MinBackToBackFrames {
				failures = append(failures, fmt.Sprintf("minBackToBackFrames: %d B %s held %d frames, fewer than %d",
					b.FrameSize, b.Direction, b.Frames, *exp.MinBackToBackFrames))
			}
		}
	}
	if len(failures) > 0 {
		return v1alpha1.VerdictFailed, failures
	}
	return v1alpha1.VerdictPassed, nil
}

func checkThroughput(e v1alpha1.ThroughputExpectation, res *v1alpha1.Results) []string {
	type row struct {
		size      int32
		direction string
		rate      v1alpha1.Rate
	}
	var rows []row
	for _, t := range res.Throughput {
		if e.FrameSize == 0 || e.FrameSize == t.FrameSize {
			rows = append(rows, row{t.FrameSize, t.Direction, t.NDR})
		}
	}
	if e.FrameSize == 0 {
		for _, m := range res.Imix {
			rows = append(rows, row{0, m.Direction, m.NDR})
		}
	}
	what := "every size"
	if e.FrameSize != 0 {
		what = fmt.Sprintf("%d B", e.FrameSize)
	}
	if len(rows) == 0 {
		return []string{fmt.Sprintf("minThroughput %s: no throughput was measured", what)}
	}
	var out []string
	for _, r := range rows {
		size := "IMIX"
		if r.size != 0 {
			size = fmt.Sprintf("%d B", r.size)
		}
		if e.L2BitsPerSecond != nil && r.rate.L2BitsPerSecond < e.L2BitsPerSecond.Value() {
			out = append(out, fmt.Sprintf("minThroughput %s %s: %s L2 is below %s", size, r.direction,
				FormatBits(r.rate.L2BitsPerSecond), FormatBits(e.L2BitsPerSecond.Value())))
		}
		if e.L1BitsPerSecond != nil && r.rate.L1BitsPerSecond < e.L1BitsPerSecond.Value() {
			out = append(out, fmt.Sprintf("minThroughput %s %s: %s L1 is below %s", size, r.direction,
				FormatBits(r.rate.L1BitsPerSecond), FormatBits(e.L1BitsPerSecond.Value())))
		}
		if e.FramesPerSecond != nil && r.rate.FramesPerSecond < e.FramesPerSecond.Value() {
			out = append(out, fmt.Sprintf("minThroughput %s %s: %d frames/s is below %d", size, r.direction,
				r.rate.FramesPerSecond, e.FramesPerSecond.Value()))
		}
		if e.PercentOfLineRate != "" {
			want, _ := strconv.ParseFloat(string(e.PercentOfLineRate), 64)
			got, _ := strconv.ParseFloat(r.rate.PercentOfLineRate, 64)
			if got < want {
				out = append(out, fmt.Sprintf("minThroughput %s %s: %s%% of line rate is below %s%%", size, r.direction,
					r.rate.PercentOfLineRate, e.PercentOfLineRate))
			}
		}
	}
	return out
}

func checkLatency(e v1alpha1.LatencyExpectation, res *v1alpha1.Results) []string {
	stat := e.Statistic
	if stat == "" {
		stat = "p99"
	}
	var out []string
	seen := 0
	for _, l := range res.Latency {
		if e.FrameSize != 0 && e.FrameSize != l.FrameSize {
			continue
		}
		seen++
		if !l.Aggregate.Valid {
			out = append(out, fmt.Sprintf("maxLatency %d B %s: latency could not be measured (%s)", l.FrameSize, l.Direction, l.Aggregate.Reason))
			continue
		}
		v := Statistic(l.Aggregate, stat)
		if v > e.Max.Nanoseconds() {
			out = append(out, fmt.Sprintf("maxLatency %d B %s: %s %s is above %s", l.FrameSize, l.Direction, stat,
				FormatNs(v), e.Max.Duration))
		}
	}
	if seen == 0 {
		out = append(out, fmt.Sprintf("maxLatency %d B: no latency was measured (is latency in spec.tests?)", e.FrameSize))
	}
	return out
}

// Statistic picks one value of a latency summary.
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

// FormatBits renders bit/s the way network engineers read them.
func FormatBits(v int64) string {
	f := float64(v)
	switch {
	case f >= 1e9:
		return strconv.FormatFloat(f/1e9, 'f', 3, 64) + " Gbit/s"
	case f >= 1e6:
		return strconv.FormatFloat(f/1e6, 'f', 2, 64) + " Mbit/s"
	case f >= 1e3:
		return strconv.FormatFloat(f/1e3, 'f', 1, 64) + " kbit/s"
	}
	return strconv.FormatInt(v, 10) + " bit/s"
}

// FormatNs renders nanoseconds with a readable unit.
func FormatNs(ns int64) string {
	switch {
	case ns >= 1_000_000:
		return strconv.FormatFloat(float64(ns)/1e6, 'f', 3, 64) + " ms"
	case ns >= 1_000:
		return strconv.FormatFloat(float64(ns)/1e3, 'f', 2, 64) + " µs"
	}
	return strconv.FormatInt(ns, 10) + " ns"
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
			})
		}
	}
	return out
}
