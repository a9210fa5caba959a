// Package search finds the throughput of a DUT: the highest offered rate whose trial loses at most the
// loss tolerance (RFC 2544 §26.1; NDR at tolerance 0, PDR at a partial tolerance).
//
// Two algorithms share one trial interface (Measure), so they can be compared on the same DUT:
//
//   - Binary is the plain RFC 2544 bisection: every trial full length, nothing remembered.
//   - Multistage, in the spirit of FD.io CSIT's MLRsearch, keeps every trial. It searches with short
//     trials, guesses from the forwarding rate of failed trials, widens and narrows until the short
//     trials' bounds are one goal width apart, and then decides with full-length trials: first at the
//     short trials' upper bound, then down (to a little under the forwarding rate of a full-length trial
//     that lost, or by the resolution, doubling after two failures) until one passes, or up in doubling
//     steps while they pass, until a full-length pass lies within the goal width under a full-length
//     failure (or the ceiling).
//
// The goal width is the resolution, an absolute step in percent of line rate, unless the goal sets RFC
// 9971's relative width (Goal.Width, Goal.WidthAt): then a bracket is narrow enough once its width is at
// most that fraction of its upper bound, and every step the search sizes by the width is sized at the rate
// it is taken from. Binary always bisects to the resolution.
//
// Under the RFC 2544 goal (the default) only full-length trials bound the answer, as in the plain search:
// the reported rate is a full-length pass below every full-length trial that lost, and "no rate passed"
// takes a full-length trial that lost at the lowest rate tried (the resolution). Short trials only steer:
// counting their losses too would take the least of many noisy draws near the answer, and a DUT whose
// capacity varies from trial to trial would be reported lower the more the search looked there (a note
// names a short trial that lost at or below the answer). Under an RFC 9971 goal (goal.go) every trial
// counts as the goal says.
//
// Rates are in percent of line rate (L1). Trials the tester could not offer (saturated) are kept in the
// history, marked, and excluded from the bounds; a saturated trial is repeated once (a preempted tester
// core falls short once), and a saturation that repeats lowers the ceiling of rates to try. A trial aborted
// because the DUT stalled ends the search with ErrAborted and what was measured so far.
package search

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Purposes of trials, as recorded in results.Trial.
const (
	PurposeSearch     = "search"
	PurposeValidation = "validation"
)

// Measurement is the outcome of one trial.
type Measurement struct {
	RatePercent float64
	Duration    time.Duration
	Purpose     string
	LossPercent float64
	// OverLatency: the trial's latency exceeded the run's latency bound (throughput.maxLatency). It fails
	// whatever its loss: the load is above what the DUT forwards without queueing.
	OverLatency bool
	// TesterLimited: the tester could not offer RatePercent (it reached AchievedPercent).
	TesterLimited   bool
	AchievedPercent float64
	// Aborted is the engine's reason for cutting the trial short (e.g. dut-stalled).
	Aborted string
	// Detail is the caller's own record of the trial (e.g. per-class counts), carried through.
	Detail any
}

// Measure runs one trial at ratePercent of line rate for d.
type Measure func(ctx context.Context, ratePercent float64, d time.Duration, purpose string) (Measurement, error)

// Params of a search.
type Params struct {
	// MaxRate is the highest rate tried, percent of line rate.
	MaxRate float64
	// Resolution is the width goal, percent of line rate, and the lowest rate the search tries. Under a
	// goal with a relative width (Goal.Width) that width stops Multistage instead, floored at its share of
	// the resolution (Goal.WidthAt).
	Resolution float64
	// LossTolerance is the NDR's loss tolerance in percent of frames.
	LossTolerance float64
	// PDRLossTolerance, when set, also searches the partial drop rate.
	PDRLossTolerance *float64
	// SearchTrial is the short trial of Multistage; ValidationTrial the full-length one.
	SearchTrial     time.Duration
	ValidationTrial time.Duration
	// MaxTrials caps the trials of one search (NDR and PDR together); default 60.
	MaxTrials int
	// Goal is what Multistage must establish at its answer, in RFC 9971's terms (goal.go); its loss ratio is
	// taken from LossTolerance (PDRLossTolerance for the PDR). nil: RFC 2544 strict, one full-length trial
	// of ValidationTrial at the answer and no trial at it above the tolerance. Binary is always strict.
	Goal *Goal
	// InvalidRetries is how often a trial the tester spoiled (TesterLimited) is repeated at the same rate
	// before the tester is taken as the limit there: a preempted core spoils one trial, a tester that
	// cannot offer the rate spoils every one. 0: the default, 2; negative: none.
	InvalidRetries int
}

// Result of a search.
type Result struct {
	// NDR is the highest validated rate (percent of line rate); Found is false when no rate passed.
	NDR      float64
	Found    bool
	NDRTrial *Measurement
	// AboveNDR is the lowest failing trial above the NDR, the one that shows what the DUT drops first.
	AboveNDR *Measurement
	PDR      *float64
	PDRTrial *Measurement
	// NDRConditional and PDRConditional are RFC 9971's conditional throughput at the NDR and the PDR, in
	// percent of line rate, where the goal's loss ratio is not zero: the load less the loss of the
	// full-length trial at the quantile the exceed ratio leaves (0: not computed, or a loss ratio of 0, where
	// it is the load itself).
	NDRConditional, PDRConditional float64
	// Trials and TrialTime count every trial of this search (traffic time only).
	Trials    int
	TrialTime time.Duration
	// TesterLimited: the answer is at the tester's ceiling, the DUT may be faster.
	TesterLimited bool
	// Aborted is the reason the search was cut short.
	Aborted string
	// ShortLoss is the lowest short search trial that lost more than the tolerance at or below the NDR,
	// where full-length trials kept within it (goals with FullLengthBounds): the DUT's capacity varies
	// from trial to trial near its NDR.
	ShortLoss *Measurement
	// Undetermined says why the search did not determine the NDR (it ran out of trials before its bounds
	// were one goal width apart). NDR is then at most a lower bound: the highest full-length pass so far.
	Undetermined string
	Notes        []string
	History      []Measurement
}

// ErrAborted ends a search whose trial was aborted by the engine (e.g. the DUT stalled).
var ErrAborted = errors.New("trial aborted")

// ErrTrialCap is noted when a search ran out of trials.
var ErrTrialCap = errors.New("trial cap reached")

const eps = 1e-9

func (p *Params) defaults() error {
	if p.MaxRate <= 0 || p.MaxRate > 100+eps {
		return fmt.Errorf("search: maxRate %g%% is not in (0, 100]", p.MaxRate)
	}
	if p.Resolution <= 0 {
		return fmt.Errorf("search: resolution %g%% must be positive", p.Resolution)
	}
	if p.ValidationTrial <= 0 {
		return fmt.Errorf("search: validation trial duration must be positive")
	}
	if p.SearchTrial <= 0 || p.SearchTrial > p.ValidationTrial {
		p.SearchTrial = p.ValidationTrial
	}
	if p.MaxTrials <= 0 {
		p.MaxTrials = 60
		if p.Goal != nil {
			// a goal that decides a rate from several trials needs as many per rate the search settles
			p.MaxTrials = max(60, 8*p.Goal.TrialsToDecide())
		}
	}
	switch {
	case p.InvalidRetries == 0:
		p.InvalidRetries = 2
	case p.InvalidRetries < 0:
		p.InvalidRetries = 0
	}
	return nil
}
