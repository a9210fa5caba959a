package search

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
)

// run searches the NDR with find and then, when Params ask for it, the PDR, and ends the search on the
// first error.

// NoRateMetNote begins the note of a search that ended on its own with no rate meeting the tolerance: a
// search that ended otherwise (undetermined, or refused by its caller) drops it.
const NoRateMetNote = "no rate down to"

func (s *state) run(ctx context.Context, find func(ctx context.Context, tol float64) (float64, *Measurement, error)) (*Result, error) {
	ndr, ndrM, err := find(ctx, s.p.LossTolerance)
	s.setNDR(ndr, ndrM)
	if err != nil {
		return s.r, s.stop(err, "NDR")
	}
	if s.r.Found && s.p.LossTolerance > 0 {
		s.r.NDRConditional = s.goal(s.p.LossTolerance).ConditionalThroughput(ndr, s.at(ndr))
	}
	if s.p.PDRLossTolerance != nil {
		pdr, pdrM, err := find(ctx, *s.p.PDRLossTolerance)
		if pdrM != nil {
			s.r.PDR, s.r.PDRTrial = &pdr, pdrM
			if *s.p.PDRLossTolerance > 0 {
				s.r.PDRConditional = s.goal(*s.p.PDRLossTolerance).ConditionalThroughput(pdr, s.at(pdr))
			}
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
		s.r.PDR, s.r.PDRTrial, s.r.PDRConditional = nil, nil, 0
		s.r.Notes = appendOnce(s.r.Notes, "the PDR is undetermined: "+why)
		return nil
	}
	s.r.Undetermined = why
	// the notes of a search that ended on its own (no rate met the tolerance) do not hold for this one
	kept := s.r.Notes[:0]
	for _, n := range s.r.Notes {
		if !strings.HasPrefix(n, NoRateMetNote) {
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
		s.r.Notes = appendOnce(s.r.Notes, fmt.Sprintf(NoRateMetNote+" %.2f%% of line rate met the loss tolerance", s.p.Resolution))
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
