package estimate

import (
	"math"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/plan"
)

// What the DUT decides of a step's length, as the estimate's range says it.
const (
	FrameLossDecides  = "how many steps the frame loss curves take"
	BackToBackDecides = "how many bursts the back-to-back searches take"
	PathMTUDecides    = "how many probes the path MTU finder takes"
	// a latency run the DUT makes lossy at its NDR is run again (rfc2544's latency, validity retries)
	LatencyDecides = "how often a latency run loses frames and is run again"
)

// Search counts a search's trials without the model (the operator's estimate, and the runner's should the
// simulation refuse the plan): short trials to the width, the candidate and a step of validation, and the
// pair confirmed together. It returns the trials and their phases.
func Search(p *plan.Plan) (trials float64, phases time.Duration) {
	tp := p.Throughput
	ds := p.Durations
	width := tp.ResolutionPercent
	if tp.Goal != nil && tp.Goal.WidthPercent > 0 {
		width = tp.Goal.WidthPercent / 100 * max(tp.MaxRatePercent/2, tp.ResolutionPercent)
	}
	steps := float64(int(math.Ceil(math.Log2(math.Max(2, tp.MaxRatePercent/width)))))
	searches := 1.0
	if tp.PDRLossTolerancePercent != nil {
		searches = 2
	}
	add := func(n float64, d time.Duration) {
		trials, phases = trials+n, phases+time.Duration(n*float64(Phases(ds, d, false)))
	}
	switch {
	case tp.Method == v1alpha1.SearchBinary:
		add(steps*searches, ds.ValidationTrial)
	case tp.Goal != nil:
		perRate := math.Ceil(tp.Goal.DurationSum.Seconds() * (1 - tp.Goal.ExceedRatioPercent/100) / tp.Goal.FinalTrialDuration.Seconds())
		add(steps/2+1, min(ds.SearchTrial, tp.Goal.FinalTrialDuration))
		add(2*max(1, perRate)*searches, tp.Goal.FinalTrialDuration)
	default:
		add(steps/2+1, ds.SearchTrial)
		add(2*searches, ds.ValidationTrial)
	}
	if p.Traffic.Direction == v1alpha1.Bidirectional {
		add(searches, ds.ValidationTrial)
	}
	return trials, phases
}

// PathMTUProbes counts the path MTU finder's probes in all directions: at most the largest size and the
// smallest, a halving of the sizes between (a DUT that drops oversize frames silently) and the answer's two
// probes again; at least the largest alone (it crossed).
func PathMTUProbes(p *plan.Plan) (most, least int) {
	if p.PathMTU == nil {
		return 0, 0
	}
	span := p.PathMTU.MaxFrame - plan.MinFrameSize(p.Traffic.IPVersion, p.Traffic.VLAN != 0)
	halvings := 0
	for ; span > 1; span = (span + 1) / 2 {
		halvings++
	}
	dirs := len(p.Directions())
	return dirs * (4 + halvings), dirs
}

// FrameLossSteps are the most and the least steps a frame loss curve takes: from maxRate down in steps of
// at most 10 % of line rate; once the NDR is known (ndrKnown, the lowest of the directions), the curve ends
// two loss-free steps below it (sooner when steps above it lose nothing: the DUT decides).
func FrameLossSteps(p *plan.Plan, ndr float64, ndrKnown bool) (most, least int) {
	step := p.FrameLoss.StepPercent
	if step <= 0 || step > 10 {
		step = 10
	}
	most = int(math.Ceil(p.Throughput.MaxRatePercent/step - 1e-9))
	least = min(most, 2)
	if ndrKnown {
		most = min(most, int(math.Ceil((p.Throughput.MaxRatePercent-ndr)/step-1e-9))+2)
		least = min(most, max(2, most-2))
	}
	return most, least
}

// AssumedBurstScatter is the range of the back-to-back answers over the repetitions, in resolutions, that
// the estimate assumes before any is known: a DUT whose answers agree takes 3 trials a repetition, one
// whose answers scatter over tens of resolutions 8 to 10; this sits between, so the estimate is within a
// factor of two of either.
const AssumedBurstScatter = 8

// BurstTrials is what a lane's back-to-back step takes when its answers range over scatter frames: its
// first search blind, each later repetition in the bracket the earlier answers place (laterBurstTrials).
func BurstTrials(b plan.BackToBack, scatter int64) int {
	res := max(int64(1), b.Resolution)
	// the first search: maxFrames, then a bisection of [0, maxFrames]
	blind := 1 + bisections(b.MaxFrames, res)
	later := max(1, b.Repetitions) - 1
	return blind + later*laterBurstTrials(scatter, res)
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
