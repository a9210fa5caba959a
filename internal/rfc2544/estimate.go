package rfc2544

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/plan"
)

// A run's cost should never surprise the user: before it starts the plan states how long it is expected to
// take, and as trials complete the estimate of what is left is updated from what was measured (the NDRs
// decide how long the frame loss curve is, and whether a size's back-to-back burst can be measured at all).
//
// The model counts trials per step and what each trial costs on the wall clock: warm-up, traffic, drain,
// the DUT's rest and the control round trips around a trial. Where the DUT decides (how many frame loss
// steps until two are loss-free), it takes the longest case, so the estimate errs long there.

// trialOverhead is the wall time around a trial besides its phases: defining it, starting it, fetching its
// counters, writing its record.
const trialOverhead = 150 * time.Millisecond

// StepEstimate is the expected cost of one step: one test at one frame size (0: IMIX).
type StepEstimate struct {
	Test      v1alpha1.TestKind
	FrameSize int
	Trials    int
	Time      time.Duration
}

// Estimate is the expected cost of a run, step by step in the order they run.
type Estimate struct {
	Steps []StepEstimate
	Total time.Duration
}

// String summarises an estimate per test: "about 12m30s: throughput 3m (60 trials), ...".
func (e Estimate) String() string {
	type sum struct {
		trials int
		time   time.Duration
	}
	var order []v1alpha1.TestKind
	per := map[v1alpha1.TestKind]*sum{}
	for _, s := range e.Steps {
		if per[s.Test] == nil {
			per[s.Test] = &sum{}
			order = append(order, s.Test)
		}
		per[s.Test].trials += s.Trials
		per[s.Test].time += s.Time
	}
	var parts []string
	for _, t := range order {
		parts = append(parts, fmt.Sprintf("%s %s (%d trials)", t, roundDuration(per[t].time), per[t].trials))
	}
	return fmt.Sprintf("about %s: %s", roundDuration(e.Total), strings.Join(parts, ", "))
}

func roundDuration(d time.Duration) time.Duration {
	if d >= time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}

// Estimate is the expected cost of the whole plan from what is known now (before the run: the plan alone).
func (r *Runner) Estimate() Estimate {
	var e Estimate
	for _, t := range r.plan.Tests {
		if t == v1alpha1.TestImixThroughput {
			e.Steps = append(e.Steps, r.estimateStep(t, 0))
			continue
		}
		for _, size := range r.plan.FrameSizes {
			e.Steps = append(e.Steps, r.estimateStep(t, size))
		}
	}
	for _, s := range e.Steps {
		e.Total += s.Time
	}
	return e
}

// PlannedProgress is the progress of a run not yet started: the plan's estimate, before anything of the
// DUT is known. The operator states it while a test waits for its testbed or its pods; the runner then
// reports its own, from the same model, and updates it as trials complete.
func PlannedProgress(p *plan.Plan) v1alpha1.Progress {
	if p.CalibrationRepetitions > 0 {
		// the tester pod runs the calibration's own plan (plan.AsCalibration), not the test's
		q := *p
		q.AsCalibration(p.CalibrationRepetitions)
		p = &q
	}
	r := New(p, nil, nil, Options{})
	total := r.Estimate().Total
	secs := int64(math.Ceil(total.Seconds()))
	return v1alpha1.Progress{StepsTotal: int32(r.countSteps()), EstimatedTotalSeconds: secs, EstimatedSecondsLeft: secs,
		Summary: fmt.Sprintf("expected to take about %s", roundDuration(total))}
}

// trialCost is the wall time of one trial of traffic time d.
func (r *Runner) trialCost(d time.Duration) time.Duration {
	ds := r.plan.Durations
	return ds.WarmUp + d + ds.Drain + ds.DUTRest + trialOverhead
}

func (r *Runner) estimateStep(t v1alpha1.TestKind, size int) StepEstimate {
	p := r.plan
	ds := p.Durations
	s := StepEstimate{Test: t, FrameSize: size}
	add := func(n int, d time.Duration) {
		s.Trials += n
		s.Time += time.Duration(n) * r.trialCost(d)
	}
	burst := func(n int) {
		// a burst takes no traffic time to speak of; the drain after it lasts backToBackTrial at least
		s.Trials += n
		s.Time += time.Duration(n) * (r.trialCost(0) - ds.Drain + max(ds.Drain, ds.BackToBackTrial))
	}
	switch t {
	case v1alpha1.TestThroughput, v1alpha1.TestImixThroughput:
		tp := p.Throughput
		width := tp.ResolutionPercent
		if tp.Goal != nil && tp.Goal.WidthPercent > 0 {
			// a relative goal width, taken at half the highest rate: where the answer lies is not known yet
			width = tp.Goal.WidthPercent / 100 * max(tp.MaxRatePercent/2, tp.ResolutionPercent)
		}
		steps := int(math.Ceil(math.Log2(math.Max(2, tp.MaxRatePercent/width))))
		reps := max(1, tp.Repetitions)
		if t == v1alpha1.TestImixThroughput {
			reps = 1
		}
		searches := 1
		if tp.PDRLossTolerancePercent != nil {
			searches = 2
		}
		for range reps * searches {
			switch {
			case tp.Method == v1alpha1.SearchBinary:
				add(steps, ds.ValidationTrial)
			case tp.Goal != nil:
				// each rate validated takes the trials that decide it: the duration sum less the share that
				// may exceed, in trials of the final duration
				perRate := int(math.Ceil(tp.Goal.DurationSum.Seconds() * (1 - tp.Goal.ExceedRatioPercent/100) / tp.Goal.FinalTrialDuration.Seconds()))
				add(steps/2+1, min(ds.SearchTrial, tp.Goal.FinalTrialDuration))
				add(2*max(1, perRate), tp.Goal.FinalTrialDuration)
			default:
				// short trials to the width (guesses from the forwarding rate of failed trials halve the
				// bisection), then the candidate and a step of validation
				add(steps/2+1, ds.SearchTrial)
				add(2, ds.ValidationTrial)
			}
			if p.Traffic.Direction == v1alpha1.Bidirectional {
				add(1, ds.ValidationTrial) // the pair confirmed together
			}
		}
	case v1alpha1.TestLatency:
		add(max(1, p.Latency.Repetitions), ds.LatencyTrial)
	case v1alpha1.TestFrameLoss:
		step := p.FrameLoss.StepPercent
		if step <= 0 || step > 10 {
			step = 10
		}
		n := int(math.Ceil(p.Throughput.MaxRatePercent/step - 1e-9))
		// once the NDR is known, the curve ends two loss-free steps below it
		if ndr, ok := r.lowestNDR(size); ok {
			n = min(n, int(math.Ceil((p.Throughput.MaxRatePercent-ndr)/step-1e-9))+2)
		}
		add(max(1, n), ds.ValidationTrial)
	case v1alpha1.TestBackToBack:
		b := p.BackToBack
		res := max(int64(1), b.Resolution)
		// the first search: maxFrames, then a bisection of [0, maxFrames]
		blind := 1 + bisections(b.MaxFrames, res)
		for _, lane := range r.lanes() {
			if r.atLineRate(size, lane) != "" {
				continue
			}
			burst(blind + (max(1, b.Repetitions)-1)*laterBurstTrials(r.burstScatter(size, lane[0]), res))
		}
	}
	return s
}

// assumedBurstScatter is the range of the back-to-back answers over the repetitions, in resolutions, that
// the estimate assumes before any is known: a DUT whose answers agree takes 3 trials a repetition, one
// whose answers scatter over tens of resolutions 8 to 10; this sits between, so the estimate is within a
// factor of two of either.
const assumedBurstScatter = 8

// burstScatter is the range of a lane's back-to-back answers at a size, as far as the run knows it: the
// answers there once two are in, else the widest scatter at another size in resolutions, else the
// assumption.
func (r *Runner) burstScatter(size, dir int) int64 {
	res := max(int64(1), r.plan.BackToBack.Resolution)
	if known := r.bursts[key{size, dir}]; len(known) > 1 {
		return answerRange(known)
	}
	widest, seen := int64(0), false
	for _, known := range r.bursts {
		if len(known) > 1 {
			widest, seen = max(widest, answerRange(known)), true
		}
	}
	if seen {
		return widest
	}
	return assumedBurstScatter * res
}

func answerRange(v []int64) int64 {
	return slices.Max(v) - slices.Min(v)
}

// laterBurstTrials is what searchBurst takes in a repetition after the first, when the earlier answers
// range over scatter frames and this one's lies in their bracket: a trial at each end (the shorter passes,
// the longer fails), then a bisection of the bracket, the range and a margin either side. An answer
// outside the bracket takes more: the DUT decides that, and the model does not guess it.
func laterBurstTrials(scatter, res int64) int {
	margin := max(res, scatter/2)
	return 2 + bisections(scatter+2*margin, res)
}

// bisections is how many halvings take a bracket of width frames to res or less.
func bisections(width, res int64) int {
	n := 0
	for ; width > res; n++ {
		width = (width + 1) / 2
	}
	return n
}

// lowestNDR is the lowest NDR measured at a size over the directions (false when none is known yet).
func (r *Runner) lowestNDR(size int) (float64, bool) {
	low, ok := 0.0, false
	for k, v := range r.ndr {
		if k.size == size && (!ok || v.percent < low) {
			low, ok = v.percent, true
		}
	}
	return low, ok
}

// remaining is the expected wall time left: the steps not yet done, from what is known now, and of the
// step under way what its estimate has not yet spent (at least one more trial).
func (r *Runner) remaining(stepElapsed time.Duration) time.Duration {
	e := r.Estimate()
	var left time.Duration
	for i, s := range e.Steps {
		switch {
		case i < r.stepsDone:
		case i == r.stepsDone:
			// a step that has spent its estimate still has at least the trial under way
			floor := time.Duration(0)
			if s.Trials > 0 {
				floor = s.Time / time.Duration(s.Trials)
			}
			left += max(s.Time-stepElapsed, floor)
		default:
			left += s.Time
		}
	}
	return left
}
