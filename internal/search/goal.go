package search

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Goal is what a search must establish, in the terms of RFC 9971 (MLRsearch): a load is a lower bound of
// the result once the trials at it show the DUT keeps its loss at most LossRatio for all but ExceedRatio
// of DurationSum, and an upper bound once they show it does not. The RFC 2544 throughput is the goal
// with FinalTrialDuration = DurationSum = the full trial length and ExceedRatio 0: one full-length trial
// without loss makes a lower bound, any trial with loss an upper bound.
type Goal struct {
	// FinalTrialDuration is the length a trial must have to count as full-length.
	FinalTrialDuration time.Duration
	// DurationSum is how much trial time at one load is enough to decide it.
	DurationSum time.Duration
	// LossRatio is the loss (a fraction of frames) above which a trial is high-loss.
	LossRatio float64
	// ExceedRatio is the share of DurationSum that may be high-loss at a lower bound.
	ExceedRatio float64
	// Width is RFC 9971's goal width, a fraction of the upper bound: the search is done once its lower
	// bound L and upper bound U satisfy (U − L) / U ≤ Width. 0: the absolute Params.Resolution instead (RFC
	// 2544's bisection to a step in percent of line rate). See WidthAt for its floor.
	Width float64
	// FullLengthBounds: RFC 2544's own reading, where throughput is what full-length trials show. A
	// full-length trial (or any trial that is not a short search trial) that lost makes the load an upper
	// bound, one that passed a lower bound; a short search trial only steers the search, and a load where
	// one lost is decided by a full-length trial run there (the evidence plain RFC 2544 bisection books
	// for every rate, which never runs short trials). Counting every short loss as an upper bound (RFC
	// 9971 at exceed ratio 0) takes the lowest of many noisy draws near the answer: on a DUT whose capacity
	// varies from trial to trial the answer sinks with every trial the search places there. Requiring two
	// full-length passes where a short trial lost was measured too: it brings back most of that bias
	// (make bench-search, noise 2 %: −0.43 % of line rate against −0.26 %). The result names the conflict
	// (Result.ShortLoss).
	FullLengthBounds bool
}

// Strict is the RFC 2544 goal for a full-length trial of d and a loss tolerance in percent.
func Strict(d time.Duration, lossTolerancePercent float64) Goal {
	return Goal{FinalTrialDuration: d, DurationSum: d, LossRatio: lossTolerancePercent / 100, FullLengthBounds: true}
}

// WidthAt is how far apart, in percent of line rate, a lower bound and an upper bound at upper may be once
// the search is done: Width of upper under a relative goal width, resolution otherwise. A relative width
// never narrows below Width of resolution: resolution stays the lowest rate the search tries (RFC 9971's
// min load; "no rate down to the resolution met the tolerance"), so the finest bracket the goal asks for is
// its width there, and a DUT whose NDR lies near that floor costs at most log2(maxRate / (Width ×
// resolution)) halvings (15 at 100 %, 0.5 % and 0.5 %), with the trial cap behind it (undetermined).
func (g Goal) WidthAt(upper, resolution float64) float64 {
	if g.Width <= 0 {
		return resolution
	}
	return g.Width * max(upper, resolution)
}

// durationSlack is how much shorter than asked a trial the engine measured may be and still count at its
// asked length: the engine reports the time it measured, rounded through its clock.
const durationSlack = time.Millisecond

// full says whether a trial counts as full-length.
func (g Goal) full(m Measurement) bool { return m.Duration+durationSlack >= g.FinalTrialDuration }

// TrialsToDecide is how many final-length trials at most decide a load: the duration sum in trials.
func (g Goal) TrialsToDecide() int {
	if g.FinalTrialDuration <= 0 {
		return 1
	}
	return max(1, int(math.Ceil(float64(g.DurationSum)/float64(g.FinalTrialDuration)-1e-9)))
}

// Class is what the trials at one load say of it.
type Class int

// The classes of a load.
const (
	Undecided Class = iota
	LowerBound
	UpperBound
)

func (c Class) String() string {
	return [...]string{"undecided", "lower bound", "upper bound"}[c]
}

// LoadStats are the sums RFC 9971 classifies a load by: full-length and short trial time, high-loss and
// low-loss, and the exceed ratios they give.
type LoadStats struct {
	FullHigh, FullLow, ShortHigh, ShortLow time.Duration
	// EffectiveHigh is the high-loss time that counts: full-length high-loss time, and the short high-loss
	// time that short low-loss time does not balance.
	EffectiveHigh time.Duration
	// Whole is the time the exceed ratios are shares of: the full-length and effective time, at least
	// DurationSum.
	Whole time.Duration
	// Optimistic assumes the time still missing to DurationSum low-loss, Pessimistic high-loss.
	Optimistic, Pessimistic float64
}

// Classify says what the valid trials (not spoiled by the tester, not aborted) say of their load.
func (g Goal) Classify(trials []Measurement) (Class, LoadStats) {
	if g.FullLengthBounds {
		return g.classifyFullLength(trials)
	}
	var st LoadStats
	for _, m := range trials {
		if m.TesterLimited || m.Aborted != "" {
			continue
		}
		high := m.OverLatency || m.LossPercent/100 > g.LossRatio+eps/100
		full := g.full(m)
		d := m.Duration
		if full {
			d = max(d, g.FinalTrialDuration) // a trial the clock measured a hair short counts at its length
		}
		switch {
		case full && high:
			st.FullHigh += d
		case full:
			st.FullLow += d
		case high:
			st.ShortHigh += m.Duration
		default:
			st.ShortLow += m.Duration
		}
	}
	// Short trials never make a load a lower bound on their own: short low-loss time only balances short
	// high-loss time, in the proportion the exceed ratio allows.
	balancing := time.Duration(0)
	if g.ExceedRatio > 0 {
		balancing = time.Duration(float64(st.ShortLow) * g.ExceedRatio / (1 - g.ExceedRatio))
	}
	st.EffectiveHigh = st.FullHigh + max(0, st.ShortHigh-balancing)
	full := st.FullLow + st.EffectiveHigh
	st.Whole = max(full, g.DurationSum)
	missing := st.Whole - full
	if st.Whole > 0 {
		st.Optimistic = float64(st.EffectiveHigh) / float64(st.Whole)
		st.Pessimistic = float64(st.EffectiveHigh+missing) / float64(st.Whole)
	}
	switch {
	case st.Optimistic > g.ExceedRatio+1e-12:
		return UpperBound, st
	case st.Pessimistic <= g.ExceedRatio+1e-12:
		return LowerBound, st
	}
	return Undecided, st
}

// classifyFullLength is Classify under FullLengthBounds (see there), at exceed ratio 0: a lower bound
// needs the duration sum in full-length passes and no loss. The exceed ratios are 0 or 1.
func (g Goal) classifyFullLength(trials []Measurement) (Class, LoadStats) {
	var st LoadStats
	passes := 0
	for _, m := range trials {
		if m.TesterLimited || m.Aborted != "" {
			continue
		}
		high := m.OverLatency || m.LossPercent/100 > g.LossRatio+eps/100
		switch {
		case !g.full(m) && m.Purpose == PurposeSearch && high:
			st.ShortHigh += m.Duration
		case !g.full(m) && m.Purpose == PurposeSearch:
			st.ShortLow += m.Duration
		case high: // a validation the clock measured short still lost: fail closed
			st.FullHigh += max(m.Duration, g.FinalTrialDuration)
		case g.full(m):
			st.FullLow += max(m.Duration, g.FinalTrialDuration)
			passes++
		}
	}
	st.EffectiveHigh = st.FullHigh
	st.Whole = max(st.FullLow+st.FullHigh, g.DurationSum)
	switch {
	case st.FullHigh > 0:
		st.Optimistic, st.Pessimistic = 1, 1
		return UpperBound, st
	case passes > 0 && st.FullLow >= g.DurationSum:
		return LowerBound, st
	}
	st.Pessimistic = 1
	return Undecided, st
}

// QuantileTrial is the index in trials of the full-length trial whose loss is the load's loss at the
// exceed-ratio quantile: the trials sorted by loss, the first whose time, with the trials before it, covers
// the share of the duration sum that must keep within the goal (false when the full-length time does not).
func (g Goal) QuantileTrial(trials []Measurement) (int, bool) {
	var full []int
	var sum time.Duration
	for i, m := range trials {
		if !m.TesterLimited && m.Aborted == "" && g.full(m) {
			full = append(full, i)
			sum += max(m.Duration, g.FinalTrialDuration)
		}
	}
	slices.SortStableFunc(full, func(a, b int) int { return cmp.Compare(trials[a].LossPercent, trials[b].LossPercent) })
	remaining := float64(max(g.DurationSum, sum)) * (1 - g.ExceedRatio)
	for _, i := range full {
		remaining -= float64(max(trials[i].Duration, g.FinalTrialDuration))
		if remaining <= 0 {
			return i, true
		}
	}
	return -1, false
}

// ConditionalThroughput is RFC 9971's forwarding rate at a lower bound, in percent of line rate: the load
// reduced by the loss of its quantile trial (0 when there is none).
func (g Goal) ConditionalThroughput(load float64, trials []Measurement) float64 {
	i, ok := g.QuantileTrial(trials)
	if !ok {
		return 0
	}
	return load * (1 - trials[i].LossPercent/100)
}
