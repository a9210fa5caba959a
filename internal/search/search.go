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
	"math"
	"strings"
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

// Pass says whether a loss meets a tolerance.
func Pass(lossPercent, tolerance float64) bool { return lossPercent <= tolerance+eps }

type state struct {
	p       Params
	m       Measure
	r       *Result
	ceiling float64 // highest rate the tester can offer (MaxRate until a trial saturates)
	// ceilingNote is the index in r.Notes of the note on the ceiling (-1: none yet): one note, kept current
	ceilingNote int
	// rel is the goal's relative width (Goal.Width) under Multistage; 0: the resolution
	rel float64
}

// width is how far apart a lower bound and an upper bound at upper may be, percent of line rate: the
// resolution, or the goal's relative width of upper (Goal.WidthAt).
func (s *state) width(upper float64) float64 {
	return Goal{Width: s.rel}.WidthAt(math.Min(upper, s.p.MaxRate), s.p.Resolution)
}

func round(r float64) float64 { return math.Round(r*1e6) / 1e6 }

func (s *state) measure(ctx context.Context, rate float64, d time.Duration, purpose string) (*Measurement, error) {
	rate = round(rate)
	m, err := s.trial(ctx, rate, d, purpose)
	if err != nil || !m.TesterLimited {
		return m, err
	}
	// A tester that spoils a trial once is often a preempted core on a shared host, not a tester that
	// cannot offer the rate: repeat the trial, and only a tester that spoils every repetition lowers the
	// ceiling. The spoiled trials stay in the history, marked and excluded.
	for i := 0; i < s.p.InvalidRetries && s.r.Trials < s.p.MaxTrials; i++ {
		s.r.Notes = appendOnce(s.r.Notes, "trials the tester spoiled were repeated at the same rate")
		if m, err = s.trial(ctx, rate, d, purpose); err != nil || !m.TesterLimited {
			return m, err
		}
	}
	// A tester that sent short reached AchievedPercent: its limit. One that sent everything but spoiled the
	// trial otherwise (bursts, receive drops) can do less than this rate, by how much is unknown: the rate
	// becomes an upper bound the searches treat as they treat a failure (they bisect below it, and descend
	// in growing steps while nothing below it is valid), so the tester's limit is found to the goal width.
	w := s.width(rate)
	c := rate - w/2
	if m.AchievedPercent > 0 && m.AchievedPercent < rate-w {
		c = m.AchievedPercent
	}
	if c < s.ceiling {
		s.ceiling = round(math.Max(c, 0))
		note := fmt.Sprintf("the tester spoiled every trial at %.2f%% of line rate (it reached %.2f%%): it is the limit there, and rates above %.2f%% are not tried",
			rate, m.AchievedPercent, s.ceiling)
		if s.ceilingNote < 0 {
			s.ceilingNote = len(s.r.Notes)
			s.r.Notes = append(s.r.Notes, note)
		} else {
			s.r.Notes[s.ceilingNote] = note
		}
	}
	return m, nil
}

// trial runs and records one trial.
func (s *state) trial(ctx context.Context, rate float64, d time.Duration, purpose string) (*Measurement, error) {
	if s.r.Trials >= s.p.MaxTrials {
		return nil, ErrTrialCap
	}
	m, err := s.m(ctx, rate, d, purpose)
	if err != nil {
		return nil, err
	}
	m.RatePercent, m.Purpose = rate, purpose
	if m.Duration == 0 {
		m.Duration = d
	}
	s.r.Trials++
	s.r.TrialTime += m.Duration
	s.r.History = append(s.r.History, m)
	if m.Aborted != "" {
		s.r.Aborted = m.Aborted
		return &s.r.History[len(s.r.History)-1], fmt.Errorf("%w at %.3f%% of line rate: %s", ErrAborted, rate, m.Aborted)
	}
	return &s.r.History[len(s.r.History)-1], nil
}

func appendOnce(notes []string, n string) []string {
	for _, x := range notes {
		if x == n {
			return notes
		}
	}
	return append(notes, n)
}

// bounds over the history for a tolerance: hi is the lowest rate of any failed trial (+Inf when none),
// lo the highest rate below hi with a pass of at least minDur (-1 when none).
func (s *state) bounds(tol float64, minDur time.Duration) (lo float64, loM *Measurement, hi float64, hiM *Measurement) {
	hi, lo = math.Inf(1), -1
	for i := range s.r.History {
		m := &s.r.History[i]
		if m.TesterLimited || m.Aborted != "" {
			continue
		}
		if !Pass(m.LossPercent, tol) && (m.RatePercent < hi || (m.RatePercent == hi && m.Duration > hiM.Duration)) {
			hi, hiM = m.RatePercent, m
		}
	}
	for i := range s.r.History {
		m := &s.r.History[i]
		if m.TesterLimited || m.Aborted != "" || m.Duration < minDur || !Pass(m.LossPercent, tol) {
			continue
		}
		if m.RatePercent < hi && (m.RatePercent > lo || (m.RatePercent == lo && m.Duration > loM.Duration)) {
			lo, loM = m.RatePercent, m
		}
	}
	return
}

func (s *state) finish(tol float64) (float64, *Measurement) {
	lo, loM, _ := s.goalBounds(tol)
	return lo, loM
}

// goal is the search's goal at a loss tolerance in percent.
func (s *state) goal(tol float64) Goal {
	if s.p.Goal == nil {
		return Strict(s.p.ValidationTrial, tol)
	}
	g := *s.p.Goal
	g.LossRatio = tol / 100
	return g
}

// at is every trial at a rate.
func (s *state) at(rate float64) []Measurement {
	var out []Measurement
	for _, i := range s.indicesAt(rate) {
		out = append(out, s.r.History[i])
	}
	return out
}

// indicesAt are the indices in the history of the trials at a rate.
func (s *state) indicesAt(rate float64) []int {
	var out []int
	for i, m := range s.r.History {
		if m.RatePercent == rate {
			out = append(out, i)
		}
	}
	return out
}

// goalBounds are RFC 9971's relevant bounds over the history: hi the lowest rate its trials make an upper
// bound (+Inf when none), lo the highest rate below it they make a lower bound (-1 when none), loM the
// full-length trial at lo with the least loss.
func (s *state) goalBounds(tol float64) (lo float64, loM *Measurement, hi float64) {
	g := s.goal(tol)
	lo, hi = -1, math.Inf(1)
	class := map[float64]Class{}
	for _, m := range s.r.History {
		if _, done := class[m.RatePercent]; !done {
			class[m.RatePercent], _ = g.Classify(s.at(m.RatePercent))
		}
	}
	for rate, c := range class {
		if c == UpperBound && rate < hi {
			hi = rate
		}
	}
	for rate, c := range class {
		if c == LowerBound && rate < hi && rate > lo {
			lo = rate
		}
	}
	// the trial that stands for lo: the one at the goal's quantile (RFC 2544 strict: the full-length pass)
	if lo >= 0 {
		if q, ok := g.QuantileTrial(s.at(lo)); ok {
			loM = &s.r.History[s.indicesAt(lo)[q]]
		}
	}
	return lo, loM, hi
}

// candidateAbove is the lowest rate above lo whose trials lost more than the tolerance and that its goal
// has not made a lower bound: the top of the bracket phase 2 narrows (+Inf when none).
func (s *state) candidateAbove(lo, tol float64) float64 {
	g := s.goal(tol)
	top := math.Inf(1)
	for _, m := range s.r.History {
		if m.TesterLimited || m.Aborted != "" || Pass(m.LossPercent, tol) || m.RatePercent <= lo || m.RatePercent >= top {
			continue
		}
		if c, _ := g.Classify(s.at(m.RatePercent)); c != LowerBound {
			top = m.RatePercent
		}
	}
	return top
}

func (s *state) aboveNDR(ndr float64) *Measurement {
	var best *Measurement
	for i := range s.r.History {
		m := &s.r.History[i]
		if m.TesterLimited || m.Aborted != "" || Pass(m.LossPercent, s.p.LossTolerance) || m.RatePercent <= ndr {
			continue
		}
		// a full-length trial first: what the DUT drops in a trial of the length the answer stands on
		better := best == nil || (m.Duration > best.Duration && m.Purpose != PurposeSearch && best.Purpose == PurposeSearch) ||
			((m.Purpose == PurposeSearch) == (best.Purpose == PurposeSearch) &&
				(m.RatePercent < best.RatePercent || (m.RatePercent == best.RatePercent && m.Duration > best.Duration)))
		if better {
			best = m
		}
	}
	return best
}

// Binary is the plain RFC 2544 binary search with full-length trials, run once for the NDR and once
// more, from scratch, for the PDR.
func Binary(ctx context.Context, p Params, m Measure) (*Result, error) {
	if err := p.defaults(); err != nil {
		return nil, err
	}
	s := &state{p: p, m: m, r: &Result{}, ceiling: p.MaxRate, ceilingNote: -1}
	ndr, ndrM, err := s.binary(ctx, p.LossTolerance)
	s.setNDR(ndr, ndrM)
	if err != nil {
		return s.r, s.stop(err, "NDR")
	}
	if p.PDRLossTolerance != nil {
		pdr, pdrM, err := s.binary(ctx, *p.PDRLossTolerance)
		if pdrM != nil {
			s.r.PDR, s.r.PDRTrial = &pdr, pdrM
		}
		if err != nil {
			return s.r, s.stop(err, "PDR")
		}
	}
	return s.r, nil
}

// stop ends a search on an error; what, "NDR" or "PDR", is the result it was searching for. Running out of
// trials is no error of the run: the result is undetermined, and says why.
func (s *state) stop(err error, what string) error {
	if !errors.Is(err, ErrTrialCap) {
		return err
	}
	tol := s.p.LossTolerance
	if what == "PDR" && s.p.PDRLossTolerance != nil {
		tol = *s.p.PDRLossTolerance
	}
	lo, _, hi := s.goalBounds(tol)
	why := fmt.Sprintf("the search reached its cap of %d trials before a rate met its goal", s.p.MaxTrials)
	switch {
	case lo >= 0 && s.rel > 0:
		why = fmt.Sprintf("the search reached its cap of %d trials with its bounds %.3f%% and %.3f%% of line rate, wider than the goal width of %.3g%% of the upper bound (%.4f%% of line rate)",
			s.p.MaxTrials, lo, math.Min(hi, s.ceiling), s.rel*100, s.width(math.Min(hi, s.ceiling)))
	case lo >= 0:
		why = fmt.Sprintf("the search reached its cap of %d trials with its bounds %.3f%% and %.3f%% of line rate, wider than the resolution of %.3f%%",
			s.p.MaxTrials, lo, math.Min(hi, s.ceiling), s.p.Resolution)
	}
	if what == "PDR" {
		s.r.PDR, s.r.PDRTrial = nil, nil
		s.r.Notes = appendOnce(s.r.Notes, "the PDR is undetermined: "+why)
		return nil
	}
	s.r.Undetermined = why
	// the notes of a search that ended on its own (no rate met the tolerance) do not hold for this one
	kept := s.r.Notes[:0]
	for _, n := range s.r.Notes {
		if !strings.HasPrefix(n, "no rate down to") {
			kept = append(kept, n)
		}
	}
	s.r.Notes = kept
	return nil
}

func (s *state) setNDR(ndr float64, m *Measurement) {
	if m == nil {
		s.r.Found, s.r.NDR = false, 0
		if s.ceiling < s.p.MaxRate-eps && !s.validFailureUpTo(s.ceiling) {
			// no valid trial passed, none failed where the tester could still offer the rate, and the tester
			// spoiled every trial above: nothing here is the DUT's
			s.r.TesterLimited = true
			s.r.Notes = appendOnce(s.r.Notes, fmt.Sprintf("no valid trial passed down to %.2f%% of line rate, and the tester was the limit from %.2f%% on: no throughput of the DUT was measured", s.p.Resolution, s.ceiling))
			return
		}
		s.r.Notes = appendOnce(s.r.Notes, fmt.Sprintf("no rate down to %.2f%% of line rate met the loss tolerance", s.p.Resolution))
	} else {
		s.r.Found, s.r.NDR, s.r.NDRTrial = true, ndr, m
		s.r.AboveNDR = s.aboveNDR(ndr)
		if low := s.shortLossAtOrBelow(ndr, s.p.LossTolerance); low != nil {
			s.r.ShortLoss = low
			s.r.Notes = appendOnce(s.r.Notes, fmt.Sprintf("shorter trials lost frames at or below the NDR (the lowest at %.3f%% of line rate in %s, loss %.4f%%, above the tolerance) where full-length trials kept within it: the DUT's capacity varies from trial to trial near its NDR; RFC 2544 decides by the full-length trials, the short ones only steer the search",
				low.RatePercent, low.Duration, low.LossPercent))
		}
		if s.ceiling < s.p.MaxRate-eps && ndr >= s.ceiling-s.width(s.ceiling)-eps {
			s.r.TesterLimited = true
		}
	}
}

// fullTrialsAt counts the valid trials at a rate that are not short search trials.
func (s *state) fullTrialsAt(rate float64) int {
	n := 0
	for _, m := range s.at(round(rate)) {
		if !m.TesterLimited && m.Aborted == "" && m.Purpose != PurposeSearch {
			n++
		}
	}
	return n
}

// shortLossAtOrBelow is the lowest trial shorter than the goal's full length that lost more than the
// tolerance at or below rate, under a goal where such trials only steer (nil: none).
func (s *state) shortLossAtOrBelow(rate, tol float64) *Measurement {
	g := s.goal(tol)
	if !g.FullLengthBounds {
		return nil
	}
	var low *Measurement
	for i := range s.r.History {
		m := &s.r.History[i]
		if m.TesterLimited || m.Aborted != "" || m.Purpose != PurposeSearch || g.full(*m) || Pass(m.LossPercent, tol) || m.RatePercent > rate+eps {
			continue
		}
		if low == nil || m.RatePercent < low.RatePercent {
			low = m
		}
	}
	return low
}

// validFailureUpTo says whether a trial the tester did not spoil failed at a rate up to limit: then the DUT,
// not the tester, is why no rate passed.
func (s *state) validFailureUpTo(limit float64) bool {
	for _, m := range s.r.History {
		if !m.TesterLimited && m.Aborted == "" && m.RatePercent <= limit+eps && !Pass(m.LossPercent, s.p.LossTolerance) {
			return true
		}
	}
	return false
}

// binary bisects [0, ceiling] with full-length trials; the history is not reused.
func (s *state) binary(ctx context.Context, tol float64) (float64, *Measurement, error) {
	lo, hi := 0.0, s.ceiling
	var loM *Measurement
	rate := s.ceiling
	for {
		m, err := s.measure(ctx, rate, s.p.ValidationTrial, PurposeValidation)
		if err != nil {
			return lo, loM, err
		}
		switch {
		case m.TesterLimited:
			hi = math.Min(hi, s.ceiling)
			if lo >= s.ceiling-eps {
				return lo, loM, nil
			}
		case Pass(m.LossPercent, tol):
			lo, loM = rate, m
		default:
			hi = rate
		}
		if lo >= s.ceiling-eps || hi-lo <= s.p.Resolution+eps {
			return lo, loM, nil
		}
		rate = (lo + hi) / 2
		if m.TesterLimited && rate < lo {
			return lo, loM, nil
		}
	}
}

// Multistage runs the trial-reusing search described in the package comment.
func Multistage(ctx context.Context, p Params, m Measure) (*Result, error) {
	if err := p.defaults(); err != nil {
		return nil, err
	}
	s := &state{p: p, m: m, r: &Result{}, ceiling: p.MaxRate, ceilingNote: -1}
	if p.Goal != nil {
		s.rel = p.Goal.Width
	}
	ndr, ndrM, err := s.multistage(ctx, p.LossTolerance)
	s.setNDR(ndr, ndrM)
	if err != nil {
		return s.r, s.stop(err, "NDR")
	}
	if p.PDRLossTolerance != nil {
		pdr, pdrM, err := s.multistage(ctx, *p.PDRLossTolerance)
		if pdrM != nil {
			s.r.PDR, s.r.PDRTrial = &pdr, pdrM
		}
		if err != nil {
			return s.r, s.stop(err, "PDR")
		}
	}
	return s.r, nil
}

// reserve is how many trials of the cap the short-trial phase leaves for validation.
const reserve = 4

func (s *state) multistage(ctx context.Context, tol float64) (float64, *Measurement, error) {
	// res is the lowest rate the search tries; s.width(u) the goal width at an upper bound u, the step the
	// search sizes its moves by there (both the resolution unless the goal sets a relative width)
	res := s.p.Resolution
	short := s.p.SearchTrial
	expand := 0 // consecutive passes above the lower bound: the step above it doubles
	lastLo := -2.0
	down := 0 // consecutive guesses below the lowest failure without a pass: the step down doubles
	// fullLengthBounds: only full-length trials bound the answer (RFC 2544); short ones steer
	fullLengthBounds := s.goal(tol).FullLengthBounds
	// Phase 1: short trials until the bounds are one goal width apart.
shortPhase:
	for s.r.Trials < s.p.MaxTrials-reserve {
		if s.ceiling < res/2 {
			return 0, nil, nil // the tester spoiled every rate it could be asked for
		}
		lo, _, hi, hiM := s.bounds(tol, short)
		hiEff := math.Min(hi, s.ceiling+eps)
		w := s.width(hiEff)
		if lo >= 0 && hiEff-lo <= w+eps {
			break
		}
		if lo > lastLo && lastLo >= 0 {
			expand++
		} else if lo <= lastLo {
			expand = 0
		}
		lastLo = lo
		var rate float64
		switch {
		case lo < 0 && math.IsInf(hi, 1) && s.ceiling < s.p.MaxRate-eps:
			// the tester spoiled every rate tried and nothing failed: halve until a trial is valid
			rate = s.ceiling / 2
		case lo < 0 && math.IsInf(hi, 1):
			rate = s.ceiling
		case lo < 0:
			// Only failures so far: guess from the forwarding rate of the lowest failure, a little under,
			// and step down in doubling steps while the guesses keep failing, the steps never below half the
			// lowest failure (where a plain bisection would be; the guess itself may be lower)
			est := hiM.RatePercent * (1 - hiM.LossPercent/100)
			rate = math.Min(est-s.width(est)/4, math.Max(hiEff/2, hiEff-w*math.Pow(2, float64(down))))
			down++
			if est <= 0 || rate <= res/2 {
				rate = hiEff / 2
			}
			if hiEff <= res+eps {
				if !fullLengthBounds {
					return 0, nil, nil
				}
				// short trials lost down to the lowest rate the search tries, which under RFC 2544 shows
				// nothing: "no rate passed" needs a full-length trial there that lost (phase 2 runs it)
				break shortPhase
			}
		default:
			down = 0
			// steps up from the lower bound are sized by the width there: a step of it is a bracket narrow
			// enough wherever the answer lies above
			wLo := s.width(lo)
			step := wLo * math.Pow(2, float64(expand))
			mid := (lo + hiEff) / 2
			rate = math.Min(lo+step, mid)
			if hiM != nil {
				// A failure's forwarding rate is a good guess when it lies inside the bounds.
				if est := hiM.RatePercent * (1 - hiM.LossPercent/100); est > lo+wLo && est < rate {
					rate = est
				}
			}
			if rate > s.ceiling {
				rate = s.ceiling
			}
		}
		if _, err := s.measure(ctx, rate, short, PurposeSearch); err != nil {
			return s.finishErr(tol, err)
		}
	}

	// Phase 2: full-length trials from the candidate down until one passes, then bisect to the width. A
	// validation the tester spoiled lowers the ceiling as a failure lowers the upper bound.
	misses := 0               // full-length trials that failed or that the tester spoiled: the step down doubles
	climb := 0                // full-length passes in a row above the lower bound: the step up doubles
	spoiled := false          // the last full-length trial was spoiled: the tester's limit may be far below, halve
	var lastFail *Measurement // the last full-length trial that lost (not spoiled)
	triedTop := false         // the first full-length trial went to the short trials' upper bound
	for {
		if s.ceiling < res/2 {
			return 0, nil, nil // the tester spoiled every rate it could be asked for
		}
		loS, _, hi, _ := s.bounds(tol, short)
		loV, loVM, hiG := s.goalBounds(tol)
		hiEff := math.Min(hiG, s.ceiling+eps)
		if loV >= 0 && hiEff-loV <= s.width(hiEff)+eps {
			return loV, loVM, nil
		}
		var rate float64
		switch {
		case loV >= 0:
			// bisect between the lower bound and the lowest rate above it that lost (or the ceiling); when
			// they are a goal width apart that rate is only a candidate upper bound: its trials decide it
			top := math.Min(s.candidateAbove(loV, tol), s.ceiling+eps)
			if fullLengthBounds && loS < 0 {
				// no short trial passed, yet a full-length one did: the short trials misled at every rate
				// they tried, and bisecting up to each rate one lost at would take longer than Binary
				top = math.Min(hiG, s.ceiling+eps)
			}
			rate = (loV + top) / 2
			w := s.width(top)
			switch {
			case top-loV <= w+eps:
				rate = math.Min(top, s.ceiling)
			case top-loV > 2*w+eps:
				// the answer is likely close above the lower bound (a full-length pass just under the
				// forwarding rate of a failure, or above every short trial that lost nearby), not halfway to
				// a failure far away: climb in steps that double
				rate = math.Min(rate, loV+s.width(loV)*math.Pow(2, float64(climb)))
			}
		case loS >= 0 && misses == 0:
			// the first full-length trial goes to the short trials' upper bound, not their lower one: the
			// lowest short failure is the least of several noisy draws, and a search that only climbs
			// from below the noise until a trial fails answers low by a part of it; from there the answer
			// is found by stepping down when it fails (as it does on a steady DUT) or up when it passes
			rate = math.Min(loS, s.ceiling)
			if hi <= s.ceiling && hi-loS <= s.width(hi)+eps && !triedTop && s.goal(tol).FullLengthBounds {
				rate, triedTop = hi, true
			}
		case loS >= 0 && misses == 1 && triedTop && s.fullTrialsAt(loS) == 0:
			// the top lost at full length: validate the short-trial candidate, or lower when the top's
			// forwarding rate says so
			rate = math.Min(s.belowForwarding(lastFail, s.width(loS), loS), s.ceiling)
		case fullLengthBounds && loS < 0 && misses == 0 && hi < math.Min(hiG, s.ceiling+eps):
			// no short trial passed, and their losses bound nothing: a full-length trial at the lowest of them
			// decides whether the DUT loses there too (then the search steps down from it, or at the lowest
			// rate it tries finds no rate) or the short trials misled (then it climbs from that pass)
			rate = hi
		default:
			top := math.Min(hi, s.ceiling)
			if fullLengthBounds {
				// only a full-length failure is an upper bound: a short one below it steered the trials so far
				// and decides nothing, least of all that no rate passed
				top = math.Min(hiG, s.ceiling)
				if hiG <= res+eps {
					return 0, nil, nil // a full-length trial at the lowest rate the search tries lost
				}
			}
			if loS >= 0 {
				top = math.Min(top, loS+s.width(loS))
			}
			w := s.width(top)
			step := w
			if misses >= 2 {
				step = w * math.Pow(2, float64(misses-1))
			}
			if spoiled {
				step = math.Max(step, top/2)
			}
			rate = s.belowForwarding(lastFail, w, top-step)
			if rate <= eps {
				if top > res/2 {
					rate = top / 2
				} else {
					return 0, nil, nil
				}
			}
		}
		m, err := s.measure(ctx, rate, s.p.ValidationTrial, PurposeValidation)
		if err != nil {
			return s.finishErr(tol, err)
		}
		// a goal that needs more than one trial at a rate (a duration sum beyond one trial, an exceed
		// ratio) repeats it until its trials decide it
		g := s.goal(tol)
		c, _ := g.Classify(s.at(round(rate)))
		for !m.TesterLimited && c == Undecided {
			if m, err = s.measure(ctx, rate, s.p.ValidationTrial, PurposeValidation); err != nil {
				return s.finishErr(tol, err)
			}
			c, _ = g.Classify(s.at(round(rate)))
		}
		spoiled = m.TesterLimited
		if !m.TesterLimited && !Pass(m.LossPercent, tol) {
			lastFail = m
		}
		if m.TesterLimited || c == UpperBound {
			misses++
			climb = 0
		} else if c == LowerBound && loV >= 0 && rate > loV {
			climb++
		}
	}
}

// belowForwarding is rate, or a little (an eighth of the goal width w) under the forwarding rate of the
// full-length trial that lost when that is lower: such a trial forwarded at about the DUT's full-length
// rate, and a step that stops above it only fails again (a buffer made the short trials pass too high).
func (s *state) belowForwarding(lost *Measurement, w, rate float64) float64 {
	if lost == nil {
		return rate
	}
	if est := lost.RatePercent*(1-lost.LossPercent/100) - w/8; est > s.p.Resolution/2 && est < rate {
		return est
	}
	return rate
}

func (s *state) finishErr(tol float64, err error) (float64, *Measurement, error) {
	lo, loM := s.finish(tol)
	if loM == nil {
		return 0, nil, err
	}
	return lo, loM, err
}
