package search

import (
	"context"
	"math"
)

// Multistage runs the trial-reusing search described in the package comment.
func Multistage(ctx context.Context, p Params, m Measure) (*Result, error) {
	s, err := newState(p, m, true)
	if err != nil {
		return nil, err
	}
	return s.run(ctx, s.multistage)
}

// reserve is how many trials of the cap the short-trial phase leaves for validation.
const reserve = 4

// multistage searches one loss tolerance: short trials to a bracket one goal width wide, then full-length
// trials decide. The goal width at an upper bound u, s.width(u), is also the step the search sizes its
// moves by there (the resolution unless the goal sets a relative width).
func (s *state) multistage(ctx context.Context, tol float64) (float64, *Measurement, error) {
	if ended, ndr, ndrM, err := s.shortPhase(ctx, tol); ended {
		return ndr, ndrM, err
	}
	return s.fullLengthPhase(ctx, tol)
}

// shortSteps is what phase 1 carries from one short trial to the next.
type shortSteps struct {
	expand int // consecutive passes above the lower bound: the step above it doubles
	lastLo float64
	down   int // consecutive guesses below the lowest failure without a pass: the step down doubles
}

// nextShort is what phase 1 does next.
type nextShort int

const (
	runShort       nextShort = iota // a short trial at the rate
	toFullLength                    // phase 1 is over: full-length trials decide
	noRateAtShorts                  // the search ends here: no rate passed
)

// shortPhase is phase 1: short trials until the bounds are one goal width apart. ended: the search ended
// in it, with ndr, ndrM and err its answer.
func (s *state) shortPhase(ctx context.Context, tol float64) (ended bool, ndr float64, ndrM *Measurement, err error) {
	steps := shortSteps{lastLo: -2}
	for s.r.Trials < s.p.MaxTrials-reserve {
		if s.ceiling < s.p.Resolution/2 {
			return true, 0, nil, nil // the tester spoiled every rate it could be asked for
		}
		rate, next := s.nextShortRate(tol, &steps)
		switch next {
		case toFullLength:
			return false, 0, nil, nil
		case noRateAtShorts:
			return true, 0, nil, nil
		}
		if _, err := s.measure(ctx, rate, s.p.SearchTrial, PurposeSearch); err != nil {
			ndr, ndrM, err := s.finishErr(tol, err)
			return true, ndr, ndrM, err
		}
	}
	return false, 0, nil, nil
}

// nextShortRate is the rate of the next short trial, from the short trials' bounds so far.
func (s *state) nextShortRate(tol float64, steps *shortSteps) (float64, nextShort) {
	lo, _, hi, hiM := s.bounds(tol, s.p.SearchTrial)
	hiEff := math.Min(hi, s.ceiling+eps)
	w := s.width(hiEff)
	if lo >= 0 && hiEff-lo <= w+eps {
		return 0, toFullLength
	}
	if lo > steps.lastLo && steps.lastLo >= 0 {
		steps.expand++
	} else if lo <= steps.lastLo {
		steps.expand = 0
	}
	steps.lastLo = lo
	switch {
	case lo < 0 && math.IsInf(hi, 1) && s.ceiling < s.p.MaxRate-eps:
		// the tester spoiled every rate tried and nothing failed: halve until a trial is valid
		return s.ceiling / 2, runShort
	case lo < 0 && math.IsInf(hi, 1):
		return s.ceiling, runShort
	case lo < 0:
		return s.guessBelowFailures(tol, hiM, hiEff, w, steps)
	default:
		steps.down = 0
		return s.stepAboveLowerBound(lo, hiEff, hiM, steps.expand), runShort
	}
}

// guessBelowFailures is the next short trial when there are only failures so far: guess from the
// forwarding rate of the lowest failure (hiM, at hiEff), a little under, and step down in doubling steps
// while the guesses keep failing, the steps never below half the lowest failure (where a plain bisection
// would be; the guess itself may be lower).
func (s *state) guessBelowFailures(tol float64, hiM *Measurement, hiEff, w float64, steps *shortSteps) (float64, nextShort) {
	est := forwardingRate(hiM)
	rate := math.Min(est-s.width(est)/4, math.Max(hiEff/2, hiEff-w*math.Pow(2, float64(steps.down))))
	steps.down++
	if est <= 0 || rate <= s.p.Resolution/2 {
		rate = hiEff / 2
	}
	if hiEff <= s.p.Resolution+eps {
		if !s.goal(tol).FullLengthBounds {
			return 0, noRateAtShorts
		}
		// short trials lost down to the lowest rate the search tries, which under RFC 2544 shows
		// nothing: "no rate passed" needs a full-length trial there that lost (phase 2 runs it)
		return 0, toFullLength
	}
	return rate, runShort
}

// stepAboveLowerBound is the next short trial above the lower bound lo, below hiEff: a step sized by the
// width at lo (a step of it is a bracket narrow enough wherever the answer lies above), doubled for each
// of expand passes in a row, at most halfway to hiEff.
func (s *state) stepAboveLowerBound(lo, hiEff float64, hiM *Measurement, expand int) float64 {
	wLo := s.width(lo)
	step := wLo * math.Pow(2, float64(expand))
	mid := (lo + hiEff) / 2
	rate := math.Min(lo+step, mid)
	if hiM != nil {
		// A failure's forwarding rate is a good guess when it lies inside the bounds.
		if est := forwardingRate(hiM); est > lo+wLo && est < rate {
			rate = est
		}
	}
	if rate > s.ceiling {
		rate = s.ceiling
	}
	return rate
}

// fullLengthSteps is what phase 2 carries from one full-length trial to the next.
type fullLengthSteps struct {
	misses   int          // full-length trials that failed or that the tester spoiled: the step down doubles
	climb    int          // full-length passes in a row above the lower bound: the step up doubles
	spoiled  bool         // the last full-length trial was spoiled: the tester's limit may be far below, halve
	lastFail *Measurement // the last full-length trial that lost (not spoiled)
	triedTop bool         // the first full-length trial went to the short trials' upper bound
	// triedShortLower: the first full-length decision went to the short trials' lower bound, above a lower
	// bound the goal already had
	triedShortLower bool
	// onForwarding: the last step down went at or under the forwarding rate of the trial that lost above
	// it (to that rate, or a step of its own size further down: the step down goes above it only where
	// that rate is under half the resolution)
	onForwarding bool
	// forwardingMisses counts the full-length trials at or under a lost trial's forwarding rate that lost
	// again: every full-length loss after the first before a pass. A DUT without a queue forwards at a
	// loss about what it keeps up with and passes there; it loses again when its capacity moved (noise)
	// or a queue hid all but a little of the excess.
	forwardingMisses int
	// forwardingIgnored: the forwarding rates misled twice and no short trial lost near above, so a deep
	// queue, not noise, is the likely cause: the search halves, as Binary, and no longer climbs from a
	// pass under a loss's forwarding rate
	forwardingIgnored bool
}

// fullLengthBrackets are the bounds phase 2 steers by: loS and hi the short trials' (bounds), loV and hiG
// the goal's (goalBounds).
type fullLengthBrackets struct {
	loS, hi, loV, hiG float64
}

// fullLengthPhase is phase 2: full-length trials from the candidate down until one passes, then bisect to
// the width. A validation the tester spoiled lowers the ceiling as a failure lowers the upper bound.
func (s *state) fullLengthPhase(ctx context.Context, tol float64) (float64, *Measurement, error) {
	var steps fullLengthSteps
	for {
		if s.ceiling < s.p.Resolution/2 {
			return 0, nil, nil // the tester spoiled every rate it could be asked for
		}
		var b fullLengthBrackets
		var loVM *Measurement
		b.loS, _, b.hi, _ = s.bounds(tol, s.p.SearchTrial)
		b.loV, loVM, b.hiG = s.goalBounds(tol)
		hiEff := math.Min(b.hiG, s.ceiling+eps)
		if b.loV >= 0 && hiEff-b.loV <= s.width(hiEff)+eps {
			return b.loV, loVM, nil
		}
		rate, ok := s.nextFullLengthRate(tol, b, &steps)
		if !ok {
			return 0, nil, nil
		}
		m, c, err := s.decide(ctx, tol, rate)
		if err != nil {
			return s.finishErr(tol, err)
		}
		steps.spoiled = m.TesterLimited
		if !m.TesterLimited && !m.Passes(tol) {
			steps.lastFail = m
		}
		switch {
		case m.TesterLimited || c == UpperBound:
			steps.misses++
			steps.climb = 0
			if c == UpperBound && steps.onForwarding {
				steps.forwardingMisses++
			}
		case c == LowerBound && b.loV >= 0 && rate > b.loV:
			steps.climb++
		}
		steps.onForwarding = false
	}
}

// nextFullLengthRate is the rate of the next full-length trial; !ok: the search ends, no rate passed.
func (s *state) nextFullLengthRate(tol float64, b fullLengthBrackets, steps *fullLengthSteps) (rate float64, ok bool) {
	fullLengthBounds := s.goal(tol).FullLengthBounds
	switch {
	case !fullLengthBounds && b.loV >= 0 && b.loS > b.loV+s.width(b.loS) && steps.misses == 0 && !steps.triedShortLower:
		// the goal has a lower bound before its own full-length trials (another goal's loads decided it:
		// the NDR's for the PDR), well below what its short trials passed: decide there first, as when it
		// had none, rather than climb to it from below in steps of the width (the cold-start model: six
		// loads of 21 s each where one or two decide)
		steps.triedShortLower = true
		return math.Min(b.loS, s.ceiling), true
	case b.loV >= 0:
		return s.bisectAboveLowerBound(tol, b, steps), true
	case b.loS >= 0 && steps.misses == 0:
		// the first full-length trial goes to the short trials' upper bound, not their lower one: the
		// lowest short failure is the least of several noisy draws, and a search that only climbs
		// from below the noise until a trial fails answers low by a part of it; from there the answer
		// is found by stepping down when it fails (as it does on a steady DUT) or up when it passes
		rate = math.Min(b.loS, s.ceiling)
		if b.hi <= s.ceiling && b.hi-b.loS <= s.width(b.hi)+eps && !steps.triedTop && fullLengthBounds {
			rate, steps.triedTop = b.hi, true
		}
		return rate, true
	case b.loS >= 0 && steps.misses == 1 && steps.triedTop && s.fullTrialsAt(b.loS) == 0:
		// the top lost at full length: validate the short-trial candidate, or lower when the top's
		// forwarding rate says so
		rate = math.Min(s.belowForwarding(steps.lastFail, s.width(b.loS), b.loS), s.ceiling)
		steps.onForwarding = atOrUnderForwardingOf(steps.lastFail, rate)
		return rate, true
	case fullLengthBounds && b.loS < 0 && steps.misses == 0 && b.hi < math.Min(b.hiG, s.ceiling+eps):
		// no short trial passed, and their losses bound nothing: a full-length trial at the lowest of them
		// decides whether the DUT loses there too (then the search steps down from it, or at the lowest
		// rate it tries finds no rate) or the short trials misled (then it climbs from that pass)
		return b.hi, true
	default:
		return s.stepDown(tol, fullLengthBounds, b, steps)
	}
}

// bisectAboveLowerBound is the next full-length trial above the goal's lower bound b.loV: halfway to the
// lowest rate above it that lost (or the ceiling); when they are a goal width apart that rate is only a
// candidate upper bound, and its trials decide it.
func (s *state) bisectAboveLowerBound(tol float64, b fullLengthBrackets, steps *fullLengthSteps) float64 {
	top := math.Min(s.candidateAbove(b.loV, tol), s.ceiling+eps)
	if s.goal(tol).FullLengthBounds && b.loS < 0 {
		// no short trial passed, yet a full-length one did: the short trials misled at every rate
		// they tried, and bisecting up to each rate one lost at would take longer than Binary
		top = math.Min(b.hiG, s.ceiling+eps)
	}
	rate := (b.loV + top) / 2
	w := s.width(top)
	switch {
	case top-b.loV <= w+eps:
		rate = math.Min(top, s.ceiling)
	case top-b.loV > 2*w+eps && !steps.forwardingIgnored && s.underForwarding(b.loV, top, tol, w):
		// the answer is likely close above the lower bound (a full-length pass just under the
		// forwarding rate of a failure, or above every short trial that lost nearby), not halfway to
		// a failure far away: climb in steps that double
		rate = math.Min(rate, b.loV+s.width(b.loV)*math.Pow(2, float64(steps.climb)))
	}
	return rate
}

// underForwarding says whether the lower bound lo lies just under (within two goal widths w of) the
// forwarding rate of the trial that lost at top, the lowest loss above it: the DUT forwarded there about
// what it keeps up with, so the answer is likely close above lo. Otherwise (lo was a step of its own size
// below the loss, or a queue made the loss's forwarding rate say little) it may lie anywhere between them.
func (s *state) underForwarding(lo, top, tol, w float64) bool {
	for i := range s.r.History {
		m := &s.r.History[i]
		if m.TesterLimited || m.Aborted != "" || m.Passes(tol) || math.Abs(m.RatePercent-top) > eps {
			continue
		}
		if forwardingRate(m)-lo <= 2*w+eps {
			return true
		}
	}
	return false
}

// shortTrialsLostNear says whether a short search trial lost more than tol at a rate above every short
// pass and up to limit: the short trials' own bracket lies below limit. A short loss under a short pass is
// the DUT's noise, not the edge of its queue. Under any goal: it asks what the short trials showed, not
// what they decide.
func (s *state) shortTrialsLostNear(limit, tol float64) bool {
	g := s.goal(tol)
	short := func(m *Measurement) bool {
		return !m.TesterLimited && m.Aborted == "" && m.Purpose == PurposeSearch && !g.full(*m)
	}
	highestPass := math.Inf(-1)
	for i := range s.r.History {
		if m := &s.r.History[i]; short(m) && m.Passes(tol) {
			highestPass = max(highestPass, m.RatePercent)
		}
	}
	for i := range s.r.History {
		if m := &s.r.History[i]; short(m) && !m.Passes(tol) && m.RatePercent > highestPass+eps && m.RatePercent <= limit+eps {
			return true
		}
	}
	return false
}

// forwardingRate is the rate the DUT forwarded in trial m: what it was offered less what it lost.
func forwardingRate(m *Measurement) float64 {
	return m.RatePercent * (1 - m.LossPercent/100)
}

// atOrUnderForwardingOf says whether rate lies at or under the forwarding rate of the lost trial: a loss
// there says that rate misled.
func atOrUnderForwardingOf(lost *Measurement, rate float64) bool {
	return lost != nil && rate <= forwardingRate(lost)+eps
}

// stepDown is the next full-length trial while none has passed: a step under the upper bound, doubling
// after two misses (halving when the tester spoiled the last one), and under the forwarding rate of the
// last full-length trial that lost; !ok: the search ends, no rate passed.
func (s *state) stepDown(tol float64, fullLengthBounds bool, b fullLengthBrackets, steps *fullLengthSteps) (rate float64, ok bool) {
	res := s.p.Resolution
	top := math.Min(b.hi, s.ceiling)
	if fullLengthBounds {
		// only a full-length failure is an upper bound: a short one below it steered the trials so far
		// and decides nothing, least of all that no rate passed
		top = math.Min(b.hiG, s.ceiling)
		if b.hiG <= res+eps {
			return 0, false // a full-length trial at the lowest rate the search tries lost
		}
	}
	if b.loS >= 0 {
		top = math.Min(top, b.loS+s.width(b.loS))
	}
	w := s.width(top)
	step := w
	if steps.misses >= 2 {
		step = w * math.Pow(2, float64(steps.misses-1))
		if step > math.Sqrt(top*w) {
			// steps that double from the width find an answer d below in about 2·log2(d/w) trials, halving
			// in log2(top/w): past √(top·w) below, halving is the cheaper way on
			step = math.Max(step, top/2)
		}
	}
	if steps.forwardingMisses >= 2 && !s.shortTrialsLostNear(top+math.Sqrt(top*w), tol) {
		// the lost trials' forwarding rates misled twice, and no short trial lost near above (a queue
		// let them through, or there were none): nothing says where below the DUT keeps up, so halve, as
		// Binary does with no lower bound. Where short trials lost near above, the queue is as shallow as
		// that bracket and the answer likely a few doubling steps down (at a loss of 0.3 %, halving there
		// took 10.9-11.0 full-length trials on average where doubling takes 6.0 and 8.1:
		// TestAQueueAsDeepAsTheShortBracket)
		steps.forwardingIgnored = true
	}
	lastFail := steps.lastFail
	if steps.forwardingIgnored {
		step = math.Max(step, top/2)
		lastFail = nil
	}
	if steps.spoiled {
		step = math.Max(step, top/2)
	}
	rate = s.belowForwarding(lastFail, w, top-step)
	if rate <= eps {
		if top > res/2 {
			rate = top / 2
		} else {
			return 0, false
		}
	}
	steps.onForwarding = atOrUnderForwardingOf(lastFail, rate)
	return rate, true
}

// decide runs a full-length trial at rate, and repeats it while the goal needs more than one trial there
// to decide the rate (a duration sum beyond one trial, an exceed ratio): the last trial and what the
// trials at the rate make it.
func (s *state) decide(ctx context.Context, tol, rate float64) (*Measurement, Class, error) {
	m, err := s.measure(ctx, rate, s.p.ValidationTrial, PurposeValidation)
	if err != nil {
		return nil, Undecided, err
	}
	g := s.goal(tol)
	c, _ := g.Classify(s.at(round(rate)))
	for !m.TesterLimited && c == Undecided {
		if m, err = s.measure(ctx, rate, s.p.ValidationTrial, PurposeValidation); err != nil {
			return nil, Undecided, err
		}
		c, _ = g.Classify(s.at(round(rate)))
	}
	return m, c, nil
}

// belowForwarding is rate, or a little (an eighth of the goal width w) under the forwarding rate of the
// full-length trial that lost when that is lower: such a trial forwarded at about the DUT's full-length
// rate, and a step that stops above it only fails again (a buffer made the short trials pass too high).
func (s *state) belowForwarding(lost *Measurement, w, rate float64) float64 {
	if lost == nil {
		return rate
	}
	if est := forwardingRate(lost) - w/8; est > s.p.Resolution/2 && est < rate {
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
