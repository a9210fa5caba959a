// Package estimate counts what a plan costs from the plan alone: the trials each step takes and how long
// their phases run, before anything of the DUT is known. The operator states it (Planned) for a test that
// waits for its testbed or its pods, without the search and engine code the runner's estimate runs. The
// runner's own estimate (internal/rfc2544) builds on these counts and words, and replaces the planned one
// once the run starts: it runs its search code on a model DUT, fitted to the trials as they complete.
package estimate

import (
	"fmt"
	"math"
	"slices"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/plan"
)

// TrialOverhead is the wall time around a trial besides its phases (defining it, starting it, fetching its
// counters, writing its record) that the estimate assumes until the run has measured its own.
const TrialOverhead = 150 * time.Millisecond

// Phases is the wall time of a trial's phases: warm-up, traffic, drain (at least backToBackTrial after a
// burst) and the DUT's rest.
func Phases(ds plan.Durations, d time.Duration, burst bool) time.Duration {
	if burst {
		return ds.WarmUp + max(ds.Drain, ds.BackToBackTrial) + ds.DUTRest
	}
	return ds.WarmUp + d + ds.Drain + ds.DUTRest
}

// Planned is the progress of a run not yet started: the plan's estimate, before anything of the DUT is
// known. The operator states it while a test waits for its testbed or its pods; the runner then reports
// its own, from its model of the DUT, and updates it as trials complete.
//
// A search is counted by formula (Search); latency repetitions, frame loss steps and back-to-back bursts
// as the runner counts them before any NDR is known, with the range where the DUT decides.
func Planned(p *plan.Plan) v1alpha1.Progress {
	if p.CalibrationRepetitions > 0 {
		// the tester pod runs the calibration's own plan (plan.AsCalibration), not the test's
		q := *p
		q.AsCalibration(p.CalibrationRepetitions)
		p = &q
	}
	var total, low, high time.Duration
	var decides []string
	steps := p.Steps()
	for _, s := range steps {
		mean, least, most, why := step(p, s.Test)
		total, low, high = total+mean, low+least, high+most
		if why != "" && most > least && !slices.Contains(decides, why) {
			decides = append(decides, why)
		}
	}
	secs := int64(math.Ceil(total.Seconds()))
	return v1alpha1.Progress{StepsTotal: int32(len(steps)), EstimatedTotalSeconds: secs, EstimatedSecondsLeft: secs,
		Summary: fmt.Sprintf("expected to take about %s%s", Round(total), Range(total, low, high, decides))}
}

// step is what one step of test t takes before anything of the DUT is known: the expected wall time, the
// least and the most, and what decides between them ("" where the plan alone does).
func step(p *plan.Plan, t v1alpha1.TestKind) (mean, low, high time.Duration, decides string) {
	ds := p.Durations
	trials := func(n float64, d time.Duration, burst bool) time.Duration {
		return time.Duration(n * float64(Phases(ds, d, burst)+TrialOverhead))
	}
	switch t {
	case v1alpha1.TestThroughput, v1alpha1.TestImixThroughput:
		reps := float64(max(1, p.Throughput.Repetitions))
		if t == v1alpha1.TestImixThroughput {
			reps = 1
		}
		n, phases := Search(p)
		mean = time.Duration(reps * (float64(phases) + n*float64(TrialOverhead)))
		return mean, mean, mean, ""
	case v1alpha1.TestLatency:
		reps := float64(max(1, p.Latency.Repetitions) * max(1, len(p.Latency.PercentOfNDR)))
		mean = trials(reps, ds.LatencyTrial, false)
		return mean, mean, trials(reps*float64(1+p.Validity.InvalidTrialRetries), ds.LatencyTrial, false), LatencyDecides
	case v1alpha1.TestFrameLoss:
		most, least := FrameLossSteps(p, 0, false)
		mean = trials(float64(max(1, most)), ds.ValidationTrial, false)
		return mean, trials(float64(max(1, least)), ds.ValidationTrial, false), mean, FrameLossDecides
	case v1alpha1.TestBackToBack:
		scatter := AssumedBurstScatter * max(int64(1), p.BackToBack.Resolution)
		for range p.Lanes() {
			mean += trials(float64(BurstTrials(p.BackToBack, scatter)), 0, true)
			low += trials(float64(BurstTrials(p.BackToBack, 0)), 0, true)
			high += trials(float64(BurstTrials(p.BackToBack, 2*scatter)), 0, true)
		}
		return mean, low, high, BackToBackDecides
	case v1alpha1.TestPathMTU:
		if p.PathMTU != nil {
			most, least := PathMTUProbes(p)
			mean = trials(float64(most), p.PathMTU.Trial, false)
			low = trials(float64(least), p.PathMTU.Trial, false)
		}
		return mean, low, mean, PathMTUDecides
	case v1alpha1.TestTimeline:
		if p.Timeline != nil {
			// one trial, every direction at once, as long as the plan says
			mean = trials(1, p.Timeline.Duration, false)
		}
		return mean, mean, mean, ""
	}
	return 0, 0, 0, ""
}
