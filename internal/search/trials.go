package search

import (
	"context"
	"fmt"
	"math"
	"time"
)

// state is one search under way: its Params, the result its trials build and the tester's ceiling.
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

// newState is a search's state before its first trial, its Params with their defaults. goalWidth: the
// search stops at the goal's relative width (Goal.Width) rather than the resolution.
func newState(p Params, m Measure, goalWidth bool) (*state, error) {
	if err := p.defaults(); err != nil {
		return nil, err
	}
	s := &state{p: p, m: m, r: &Result{}, ceiling: p.MaxRate, ceilingNote: -1}
	if goalWidth && p.Goal != nil {
		s.rel = p.Goal.Width
	}
	return s, nil
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
