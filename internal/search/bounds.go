package search

import (
	"math"
	"time"
)

// Pass says whether a loss meets a tolerance.
func Pass(lossPercent, tolerance float64) bool { return lossPercent <= tolerance+eps }

// Passes says whether the trial kept within the loss tolerance and within the latency bound.
func (m Measurement) Passes(tolerance float64) bool {
	return !m.OverLatency && Pass(m.LossPercent, tolerance)
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
		if !m.Passes(tol) && (m.RatePercent < hi || (m.RatePercent == hi && m.Duration > hiM.Duration)) {
			hi, hiM = m.RatePercent, m
		}
	}
	for i := range s.r.History {
		m := &s.r.History[i]
		if m.TesterLimited || m.Aborted != "" || m.Duration < minDur || !m.Passes(tol) {
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
		if m.TesterLimited || m.Aborted != "" || m.Passes(tol) || m.RatePercent <= lo || m.RatePercent >= top {
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
		if m.TesterLimited || m.Aborted != "" || m.Passes(s.p.LossTolerance) || m.RatePercent <= ndr {
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
		if m.TesterLimited || m.Aborted != "" || m.Purpose != PurposeSearch || g.full(*m) || m.Passes(tol) || m.RatePercent > rate+eps {
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
		if !m.TesterLimited && m.Aborted == "" && m.RatePercent <= limit+eps && !m.Passes(s.p.LossTolerance) {
			return true
		}
	}
	return false
}
