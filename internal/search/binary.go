package search

import (
	"context"
	"math"
)

// Binary is the plain RFC 2544 binary search with full-length trials, run once for the NDR and once
// more, from scratch, for the PDR.
func Binary(ctx context.Context, p Params, m Measure) (*Result, error) {
	s, err := newState(p, m, false)
	if err != nil {
		return nil, err
	}
	return s.run(ctx, s.binary)
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
		case m.Passes(tol):
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
