package rfc2544

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/estimate"
	"linerate.dev/linerate/internal/plan"
)

// The time left of a run under way: what it has measured of its own cost, and the rest of the step under
// way, run on from where it stands.

// estimateState is what the run has measured of its own cost, and the model's counts so far.
type estimateState struct {
	firstStart time.Time     // when the first trial of this runner started
	lastStart  time.Time     // when the trial under way started
	lastStep   int           // its step
	lastPhases time.Duration // its phases
	started    int           // trials started
	phasesDone time.Duration // the phases of the trials before the one under way
	steps      map[int]*stepTally
	// doneRecords counts the trial records of the steps before the one under way
	doneRecords int
	// rest is the model's run of the step under way from where it stands, by the trials it has done
	rest     map[int][]cost
	restStep int
	// noises are the model DUT's noises, and queueS its queue, as of the first noiseOf-1 records (noiseOf 0:
	// not yet)
	noises  []float64
	queueS  float64
	noiseOf int
	shape   string // searchShape
}

// stepTally is what a step's trials took: how many, their phases, and the wall time from its first trial's
// start to the start of the trial after its last.
type stepTally struct {
	trials int
	phases time.Duration
	wall   time.Duration
	// firstRecord is the index of its first trial record; dirs the directions of each of its trials
	firstRecord int
	dirs        []int
}

// trialStarted books a trial that starts now at step step, in directions directions, with phases of that
// length; records is how many trial records the run has written before it.
func (s *estimateState) trialStarted(now time.Time, step, directions int, phases time.Duration, records int) {
	if s.steps == nil {
		s.steps = map[int]*stepTally{}
	}
	if s.started == 0 {
		s.firstStart = now
	} else {
		s.steps[s.lastStep].wall += now.Sub(s.lastStart)
		s.phasesDone += s.lastPhases
	}
	if s.steps[step] == nil {
		s.steps[step] = &stepTally{firstRecord: records}
		s.doneRecords = records
	}
	t := s.steps[step]
	t.trials++
	t.phases += phases
	t.dirs = append(t.dirs, directions)
	s.started++
	s.lastStart, s.lastStep, s.lastPhases = now, step, phases
}

func (s *estimateState) tally(step int) *stepTally { return s.steps[step] }

// overhead is the wall time around a trial besides its phases: what the trials so far took beyond their
// phases, or the assumption before two have started.
func (s *estimateState) overhead() time.Duration {
	if s.started < 2 {
		return estimate.TrialOverhead
	}
	return max(0, (s.lastStart.Sub(s.firstStart)-s.phasesDone)/time.Duration(s.started-1))
}

// timeLeft is the expected wall time left and its range: the steps not yet done, from what is known now,
// and of the step under way what it is expected to take beyond what it took so far.
type timeLeft struct {
	expected, low, high time.Duration
	decides             []string
}

// remaining is the wall time left, stepElapsed into the step under way. Where the model has draws of the
// step under way, the estimate is the one least off relative to the time that will be left (the median of
// the draws weighted by the inverse of each one's time left): what is left runs long when the DUT is
// unlucky, and the mean of such a skewed spread would say too much where the DUT is lucky.
func (r *Runner) remaining(stepElapsed time.Duration) timeLeft {
	e, models := r.estimate()
	overhead := r.est.overhead()
	refs := r.plan.Steps()
	var future timeLeft
	var rest []StepEstimate
	var current []time.Duration
	var low, high time.Duration
	for i, s := range e.Steps {
		switch {
		case i < r.stepsDone:
			continue
		case i == r.stepsDone:
			current, low, high = r.restOfStep(refs[i], models[i], stepElapsed, overhead)
		default:
			future.expected, future.low, future.high = future.expected+s.Time, future.low+s.Low, future.high+s.High
		}
		rest = append(rest, s)
	}
	left := timeLeft{expected: future.expected + leastOff(current, future.expected), low: future.low + low, high: future.high + high,
		decides: decidesOf(rest)}
	return left
}

// leastOff is the rest of a step, drawn as draws (each as likely), that is least off relative to the time
// that will be left, the rest plus then: the median of the draws weighted by the inverse of their time left.
func leastOff(draws []time.Duration, then time.Duration) time.Duration {
	if len(draws) == 0 {
		return 0
	}
	sorted := slices.Clone(draws)
	slices.Sort(sorted)
	var total float64
	for _, d := range sorted {
		total += 1 / math.Max((d+then).Seconds(), 1e-3)
	}
	var seen float64
	for _, d := range sorted {
		seen += 1 / math.Max((d+then).Seconds(), 1e-3)
		if seen >= total/2 {
			return d
		}
	}
	return sorted[len(sorted)-1]
}

// restOfStep is what the step under way may take from now: a search run on from where it stands
// (restOfSearch) in each of the model's draws; before its first trial the model's draws of the whole step;
// another step what its expected cost has not yet spent. Each at least the rest of the trial under way,
// with the least and the most.
func (r *Runner) restOfStep(ref plan.Step, m modelled, stepElapsed, overhead time.Duration) (draws []time.Duration, low, high time.Duration) {
	t := r.est.tally(r.stepsDone)
	if t == nil {
		// no trial yet: the whole step, less the time spent setting it up
		for _, d := range m.draws {
			draws = append(draws, max(d.at(overhead)-stepElapsed, 0))
		}
		if len(draws) == 0 {
			draws = []time.Duration{max(m.mean.at(overhead)-stepElapsed, 0)}
		}
		return draws, max(m.low.at(overhead)-stepElapsed, 0), max(m.high.at(overhead)-stepElapsed, 0)
	}
	into := max(r.opt.Now().Sub(r.est.lastStart), 0)
	trial := max(r.est.lastPhases+overhead-into, 0) // the rest of the trial under way
	if searched, ok := r.restOfSearch(ref); ok {
		low, high = time.Duration(math.MaxInt64), 0
		for _, d := range searched {
			rest := max(d.at(overhead)-into, trial)
			draws = append(draws, rest)
			low, high = min(low, rest), max(high, rest)
		}
		return draws, low, high
	}
	done := cost{float64(t.trials - 1), t.phases - r.est.lastPhases}
	rest := func(c cost) time.Duration {
		return max(cost{c.trials - done.trials, c.phases - done.phases}.at(overhead)-into, trial)
	}
	return []time.Duration{rest(m.mean)}, rest(m.low), rest(m.high)
}

// String is the time left as progress says it: "about 3m20s left (2m50s to 4m40s: the DUT decides ...)".
func (l timeLeft) String() string {
	return fmt.Sprintf("about %s left%s", estimate.Round(l.expected), l.uncertainty())
}

// total is the time left as the whole of a run: "about 3m20s (2m50s to 4m40s: the DUT decides ...)".
func (l timeLeft) total() string {
	return fmt.Sprintf("about %s%s", estimate.Round(l.expected), l.uncertainty())
}

func (l timeLeft) uncertainty() string {
	return estimate.Range(l.expected, l.low, l.high, l.decides)
}

// TimeLeft is what a progress report says of the time left, "about 3m20s left" with the range where the
// DUT decides it: the runner's own words from the summary, else its seconds.
func TimeLeft(p v1alpha1.Progress) string {
	s := p.Summary
	if i := strings.LastIndex(s, ", about "); i >= 0 {
		s = s[i+2:]
		if j := strings.Index(s, " left"); j >= 0 {
			end := j + len(" left")
			if strings.HasPrefix(s[end:], " (") {
				if k := strings.Index(s[end:], ")"); k >= 0 {
					end += k + 1
				}
			}
			return s[:end]
		}
	}
	return fmt.Sprintf("about %s left", time.Duration(p.EstimatedSecondsLeft)*time.Second)
}
