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

// A run's cost should never surprise the user: before it starts the plan states how long it is expected to
// take (the operator's, counted from the plan alone: internal/estimate; then this runner's own, as it sets
// up), and at every trial the estimate of what is left is made again from what the run has measured.
//
// A step's cost is its trials, each of them its phases (warm-up, traffic, drain, the DUT's rest) and the
// control round trips around it. The trials are counted as the plan's own code runs them:
//
//   - A throughput (or IMIX) search, with its lanes in lock step, the joint validation of a Bidirectional
//     pair, the PDR, the repetitions and the trials the tester spoiled and the search repeated, is the
//     runner's own code run on the simulated engine with a model DUT, over many draws: its NDR where the
//     run expects this size's (measured sizes place it; before any, anywhere up to maxRate or above), its
//     capacity varying from trial to trial as the DUT's has (before it has shown it, as a hardware DUT's or
//     as software's on shared cores), its tester spoiling trials as this run's has.
//   - The search under way is run on from where it stands: the model's runner is answered with what the
//     run's trials measured (so the search's own code reaches the state it is in, its bracket, its joint
//     step-downs), and the rest is drawn on the model DUT fitted to those trials.
//   - Latency repetitions, frame loss steps and back-to-back bursts are counted from the plan and the NDRs,
//     each trial repeated as often as the tester spoiled trials at its rate so far.
//
// What the run has measured corrects the model: the time around a trial is what the trials so far took
// beyond their phases (on a loaded host far more than the estimate.TrialOverhead assumed before); and each
// step done says how far the model was off for its kind (its trials against the model's at the NDR it
// found), which scales the steps of that kind to come. Where the DUT decides (how lucky its searches are,
// how long the frame loss curve is, how the bursts scatter) or the tester does (how often it spoils a
// trial), the estimate states the range too: a single figure cannot hold there, and must not pretend to.
//
// Here: the estimate, step by step, and its corrections. The model's runs on a simulated DUT are in
// estimate_model.go, what it fits to the trials (the DUT's capacity and noise, where NDRs lie across sizes,
// how often the tester spoils a trial) in estimate_fits.go, and the time left of a run under way in
// timeleft.go.

// StepEstimate is the expected cost of one step: one test at one frame size (0: IMIX).
type StepEstimate struct {
	Test      v1alpha1.TestKind
	FrameSize int
	Trials    int
	Time      time.Duration
	// Low and High are the least and most the step may take where the DUT decides (both Time where the
	// plan alone does); Decides names what decides it ("" then).
	Low, High time.Duration
	Decides   string
}

// Estimate is the expected cost of a run, step by step in the order they run.
type Estimate struct {
	Steps     []StepEstimate
	Total     time.Duration
	Low, High time.Duration
	decides   []string
}

// String summarises an estimate per test: "about 12m30s (9m to 17m: ...): throughput 3m (60 trials), ...".
func (e Estimate) String() string {
	type sum struct {
		trials int
		time   time.Duration
	}
	var order []v1alpha1.TestKind
	per := map[v1alpha1.TestKind]*sum{}
	for _, s := range e.Steps {
		if per[s.Test] == nil {
			per[s.Test] = &sum{}
			order = append(order, s.Test)
		}
		per[s.Test].trials += s.Trials
		per[s.Test].time += s.Time
	}
	var parts []string
	for _, t := range order {
		parts = append(parts, fmt.Sprintf("%s %s (%d trials)", t, estimate.Round(per[t].time), per[t].trials))
	}
	return fmt.Sprintf("about %s%s: %s", estimate.Round(e.Total), estimate.Range(e.Total, e.Low, e.High, e.decides), strings.Join(parts, ", "))
}

// cost is what trials take: how many, and their phases (warm-up, traffic, drain, rest) without the time
// around them.
type cost struct {
	trials float64
	phases time.Duration
}

func (c cost) plus(o cost) cost { return cost{c.trials + o.trials, c.phases + o.phases} }

func (c cost) times(f float64) cost {
	return cost{c.trials * f, time.Duration(float64(c.phases) * f)}
}

// at is the wall time of c with overhead around every trial.
func (c cost) at(overhead time.Duration) time.Duration {
	return c.phases + time.Duration(c.trials*float64(overhead))
}

// modelled is a step's cost as the model counts it: the expected cost, the least and the most it may take,
// and what decides between them; for a search, also the model's draws, each as likely.
type modelled struct {
	mean, low, high cost
	draws           []cost
	decides         string
}

// ranged is a cost the DUT decides between low and high.
func ranged(mean, low, high cost, decides string) modelled {
	return modelled{mean: mean, low: low, high: high, decides: decides}
}

// sampled is the model of draws, each as likely.
func sampled(draws []cost, decides string) modelled {
	m := modelled{draws: draws, decides: decides}
	for i, d := range draws {
		m.mean = m.mean.plus(d.times(1 / float64(len(draws))))
		if i == 0 || d.phases < m.low.phases {
			m.low = d
		}
		if d.phases > m.high.phases {
			m.high = d
		}
	}
	return m
}

// corrected is m as the steps of its kind done so far correct it: scaled by how far the model was off
// for them, its range at least as wide as theirs scattered.
func (c correction) corrected(m modelled) modelled {
	if c.steps == 0 {
		return m
	}
	out := modelled{mean: c.apply(m.mean), low: c.apply(m.low), high: c.apply(m.high), decides: m.decides}
	for _, d := range m.draws {
		out.draws = append(out.draws, c.apply(d))
	}
	if l := out.mean.times(c.least); l.phases < out.low.phases {
		out.low = l
	}
	if h := out.mean.times(c.most); h.phases > out.high.phases {
		out.high = h
	}
	return out
}

// Estimate is the expected cost of the whole plan from what is known now (before the run: the plan alone).
func (r *Runner) Estimate() Estimate {
	e, _ := r.estimate()
	return e
}

// estimate is Estimate with the corrected model of every step.
func (r *Runner) estimate() (Estimate, []modelled) {
	var e Estimate
	if _, ok := r.sink.(modelSink); ok {
		return e, nil // a model run of the estimate's: nothing reads its estimate
	}
	overhead := r.est.overhead()
	refs := r.plan.Steps()
	models := make([]modelled, len(refs))
	for i, s := range refs {
		models[i] = r.modelStep(s.Test, s.FrameSize)
	}
	corr := r.corrections(refs, models)
	for i, s := range refs {
		se := StepEstimate{Test: s.Test, FrameSize: s.FrameSize}
		if t := r.est.tally(i); i < r.stepsDone && t != nil {
			// done: what it took
			se.Trials, se.Time, se.Low, se.High = t.trials, t.wall, t.wall, t.wall
		} else {
			m := corr[kindOf(s.Test)].corrected(models[i])
			models[i] = m
			se.Trials = int(math.Round(m.mean.trials))
			se.Time, se.Low, se.High = m.mean.at(overhead), m.low.at(overhead), m.high.at(overhead)
			se.Decides = m.decides
		}
		e.Steps = append(e.Steps, se)
	}
	for _, s := range e.Steps {
		e.Total += s.Time
		e.Low += s.Low
		e.High += s.High
	}
	e.decides = decidesOf(e.Steps)
	return e, models
}

// decidesOf names what the DUT decides of the steps, once each, in the order they run.
func decidesOf(steps []StepEstimate) []string {
	var out []string
	for _, s := range steps {
		if s.Decides != "" && s.High > s.Low && !slices.Contains(out, s.Decides) {
			out = append(out, s.Decides)
		}
	}
	return out
}

// kind groups the steps whose trials one correction fits: the searches (throughput and IMIX) and each
// other test.
type kind v1alpha1.TestKind

func kindOf(t v1alpha1.TestKind) kind {
	if t == v1alpha1.TestImixThroughput {
		return kind(v1alpha1.TestThroughput)
	}
	return kind(t)
}

// correction is how far the model was off for the steps of a kind done so far: the trials and phases they
// took over those the model counts for them now, and the least and most of the steps' own ratios.
type correction struct {
	trials, phases float64
	least, most    float64
	steps          int
}

func (c correction) apply(m cost) cost {
	if c.steps == 0 {
		return m
	}
	return cost{m.trials * c.trials, time.Duration(float64(m.phases) * c.phases)}
}

// corrections compares the steps done (this runner's: a resumed run's earlier steps were not timed here)
// with the model of them, which knows their NDRs now.
func (r *Runner) corrections(refs []plan.Step, models []modelled) map[kind]correction {
	type acc struct {
		actual, model cost
		ratios        []float64
	}
	per := map[kind]*acc{}
	for i := 0; i < r.stepsDone && i < len(refs); i++ {
		t := r.est.tally(i)
		if t == nil || models[i].mean.trials <= 0 {
			continue
		}
		k := kindOf(refs[i].Test)
		if per[k] == nil {
			per[k] = &acc{}
		}
		a := per[k]
		a.actual = a.actual.plus(cost{float64(t.trials), t.phases})
		a.model = a.model.plus(models[i].mean)
		a.ratios = append(a.ratios, float64(t.phases)/float64(max(models[i].mean.phases, 1)))
	}
	out := map[kind]correction{}
	for k, a := range per {
		// the model counts as one step more that took what it said: the overhead, the DUT's noise and the
		// tester's spoils are learned on their own, and one step's luck is no rule for the next
		said := a.model.times(1 / float64(len(a.ratios))) // a step as the model has it
		actual, model := a.actual.plus(said), a.model.plus(said)
		c := correction{trials: actual.trials / model.trials, phases: float64(actual.phases) / float64(max(model.phases, 1)),
			steps: len(a.ratios)}
		c.least, c.most = slices.Min(a.ratios)/c.phases, slices.Max(a.ratios)/c.phases
		out[k] = c
	}
	return out
}

// modelStep counts a step's trials from the plan and what the run knows now.
func (r *Runner) modelStep(t v1alpha1.TestKind, size int) modelled {
	p := r.plan
	ds := p.Durations
	one := func(n float64, d time.Duration) cost {
		return cost{n, time.Duration(n * float64(estimate.Phases(ds, d, false)))}
	}
	switch t {
	case v1alpha1.TestThroughput, v1alpha1.TestImixThroughput:
		reps := float64(max(1, p.Throughput.Repetitions))
		if t == v1alpha1.TestImixThroughput {
			reps = 1
		}
		decides := "how many trials the throughput searches take"
		if t == v1alpha1.TestImixThroughput {
			decides = "how many trials the IMIX search takes"
		}
		// the NDRs the run may find here, each as likely, and the model's draws at each
		var draws []cost
		ndrs, noises := r.assumedNDRs(t, size), r.modelNoises()
		seeds := max(2, (stepDraws+len(ndrs)*len(noises)-1)/(len(ndrs)*len(noises)))
		for _, ndr := range ndrs {
			for _, noise := range noises {
				for _, d := range r.searchModel(t, size, modelDUT{ndr: ndr, noise: noise, queueS: r.modelQueue(), spoils: r.spoilsOfDone().key()}, seeds) {
					draws = append(draws, d.times(reps))
				}
			}
		}
		return sampled(draws, decides)
	case v1alpha1.TestLatency:
		if !r.latencyMeasured(size) {
			return modelled{} // no NDR at this size: latency is skipped
		}
		// the tester spoils latency trials as it did trials of their rate (the NDR's, or the one expected)
		// and the DUT may lose frames in a run at its NDR, which is run again as often (latency.go)
		reps := float64(max(1, p.Latency.Repetitions))
		runs := float64(1 + p.Validity.InvalidTrialRetries)
		var mean, low, high cost
		decides := estimate.LatencyDecides
		for _, load := range p.Latency.PercentOfNDR {
			if r.resumedLatency[latencyLoad{size, plan.LoadPercent(load)}] {
				continue // measured before a suspension: the resumed step passes over it
			}
			spoiled := r.spoilsOfDone().share(r.latencyFPS(size, load))
			mean = mean.plus(one(reps*r.tries(spoiled), ds.LatencyTrial))
			low = low.plus(one(reps, ds.LatencyTrial))
			if spoiled == 0 {
				high = high.plus(one(reps*runs, ds.LatencyTrial))
				continue
			}
			high = high.plus(one(reps*runs*runs, ds.LatencyTrial))
			decides = estimate.TesterDecides
		}
		if decides == estimate.LatencyDecides {
			low = mean
		}
		return ranged(mean, low, high, decides)
	case v1alpha1.TestFrameLoss:
		ndr, known := r.lowestNDR(size)
		most, least := estimate.FrameLossSteps(p, ndr, known)
		f := r.tries(r.spoilsOfDone().share(p.Throughput.MaxRatePercent / 100 * r.lineFPS(float64(size))))
		mean := one(float64(max(1, most))*f, ds.ValidationTrial)
		return ranged(mean, one(float64(max(1, least)), ds.ValidationTrial), mean, estimate.FrameLossDecides)
	case v1alpha1.TestBackToBack:
		burst := func(n int) cost { return cost{float64(n), time.Duration(n) * estimate.Phases(ds, 0, true)} }
		var mean, low, high cost
		b := p.BackToBack
		res := max(int64(1), b.Resolution)
		for _, lane := range p.Lanes() {
			if r.atLineRate(size, lane) != "" {
				continue
			}
			scatter := r.burstScatter(size, lane[0])
			mean = mean.plus(burst(estimate.BurstTrials(b, scatter)))
			low = low.plus(burst(estimate.BurstTrials(b, 0)))
			high = high.plus(burst(estimate.BurstTrials(b, max(2*scatter, estimate.AssumedBurstScatter*res))))
		}
		return ranged(mean, low, high, estimate.BackToBackDecides)
	case v1alpha1.TestPathMTU:
		if p.PathMTU == nil {
			return modelled{}
		}
		most, least := estimate.PathMTUProbes(p)
		return ranged(one(float64(most), p.PathMTU.Trial), one(float64(least), p.PathMTU.Trial), one(float64(most), p.PathMTU.Trial), estimate.PathMTUDecides)
	case v1alpha1.TestTimeline:
		if p.Timeline == nil {
			return modelled{}
		}
		mean := one(1, p.Timeline.Duration)
		return ranged(mean, mean, mean, "")
	}
	return modelled{}
}

// latencyMeasured says whether latency is measured at a size: unless the throughput test found no NDR
// there in any direction (before it has run, the run expects one).
func (r *Runner) latencyMeasured(size int) bool {
	known := false
	for k, v := range r.ndr {
		if k.size == size {
			known = true
			if v.found && v.percent > 0 {
				return true
			}
		}
	}
	return !known
}

// latencyFPS is the rate of a size's latency trials at a load (percent of the NDR) in frames per second a
// direction: of the NDR found (the lowest of the directions), or before it is known of the one the model
// expects.
func (r *Runner) latencyFPS(size int, load float64) float64 {
	rate := math.Inf(1)
	for k, v := range r.ndr {
		if k.size == size && v.found && v.percent > 0 {
			rate = math.Min(rate, v.percent)
		}
	}
	if math.IsInf(rate, 1) {
		ndrs := r.assumedNDRs(v1alpha1.TestThroughput, size)
		rate = ndrs[len(ndrs)/2]
	}
	line := r.lineFPS(float64(size))
	return plan.LatencyLoadPercent(rate, load, line, r.plan.Durations.LatencyTrial.Seconds()) / 100 * line
}

// tries is how many trials a trial takes when the tester spoils a share of them and a spoiled one is
// repeated up to the plan's invalidTrialRetries times.
func (r *Runner) tries(spoiled float64) float64 {
	n, p := 0.0, 1.0
	for range r.plan.Validity.InvalidTrialRetries + 1 {
		n += p
		p *= spoiled
	}
	return n
}

// burstScatter is the range of a lane's back-to-back answers at a size, as far as the run knows it: the
// answers there once two are in, else the widest scatter at another size in resolutions, else the
// assumption.
func (r *Runner) burstScatter(size, dir int) int64 {
	res := max(int64(1), r.plan.BackToBack.Resolution)
	if known := r.bursts[key{size, dir}]; len(known) > 1 {
		return answerRange(known)
	}
	widest, seen := int64(0), false
	for _, known := range r.bursts {
		if len(known) > 1 {
			widest, seen = max(widest, answerRange(known)), true
		}
	}
	if seen {
		return widest
	}
	return estimate.AssumedBurstScatter * res
}

func answerRange(v []int64) int64 {
	return slices.Max(v) - slices.Min(v)
}

// lowestNDR is the lowest NDR measured at a size over the directions (false when none is known yet).
func (r *Runner) lowestNDR(size int) (float64, bool) {
	low, ok := 0.0, false
	for k, v := range r.ndr {
		if k.size == size && (!ok || v.percent < low) {
			low, ok = v.percent, true
		}
	}
	return low, ok
}
