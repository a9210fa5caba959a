package rfc2544

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/engine/sim"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/results"
)

// A run's cost should never surprise the user: before it starts the plan states how long it is expected to
// take, and at every trial the estimate of what is left is made again from what the run has measured.
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
// beyond their phases (on a loaded host far more than the trialOverhead assumed before); and each step
// done says how far the model was off for its kind (its trials against the model's at the NDR it found),
// which scales the steps of that kind to come. Where the DUT decides (how lucky its searches are, how long
// the frame loss curve is, how the bursts scatter) or the tester does (how often it spoils a trial), the
// estimate states the range too: a single figure cannot hold there, and must not pretend to.

// trialOverhead is the wall time around a trial besides its phases (defining it, starting it, fetching its
// counters, writing its record) that the estimate assumes until the run has measured its own.
const trialOverhead = 150 * time.Millisecond

// The model DUT of a search: until the run has measured how much the DUT's capacity varies from trial to
// trial, it may vary as a hardware DUT's (hardly) or as software's on shared cores (by a fiftieth) does; the
// estimate of a step not yet under way stands on stepDraws draws of the model's search over the NDRs the
// run may find and those noises, that of the search under way on restDraws draws from where it stands;
// the least and the most draw are the range.
var priorNoises = []float64{0.0003, 0.02}

const (
	stepDraws = 24
	restDraws = 24
)

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
		parts = append(parts, fmt.Sprintf("%s %s (%d trials)", t, roundDuration(per[t].time), per[t].trials))
	}
	return fmt.Sprintf("about %s%s: %s", roundDuration(e.Total), e.uncertainty(e.Total, e.Low, e.High), strings.Join(parts, ", "))
}

// uncertainty is " (low to high: the DUT decides ...)" for an expected time t, "" when the range is within
// an eighth of it.
func (e Estimate) uncertainty(t, low, high time.Duration) string {
	if len(e.decides) == 0 || (high <= t+t/8 && low >= t-t/8) {
		return ""
	}
	var dut []string
	tester := ""
	for _, d := range e.decides {
		if d == testerDecides {
			tester = "the tester decides how often it spoils a trial"
		} else {
			dut = append(dut, d)
		}
	}
	who := tester
	if len(dut) > 0 {
		who = "the DUT decides " + joinList(dut)
		if tester != "" {
			who += "; " + tester
		}
	}
	return fmt.Sprintf(" (%s to %s: %s)", roundDuration(low), roundDuration(high), who)
}

// testerDecides is what the tester, not the DUT, decides of a step's length.
const testerDecides = "tester"

func roundDuration(d time.Duration) time.Duration {
	if d >= time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}

// stepRef names a step of the plan.
type stepRef struct {
	test v1alpha1.TestKind
	size int
}

// steps are the plan's steps in the order they run.
func (r *Runner) steps() []stepRef {
	var out []stepRef
	for _, t := range r.plan.Tests {
		if t == v1alpha1.TestImixThroughput {
			out = append(out, stepRef{t, 0})
			continue
		}
		for _, size := range r.plan.FrameSizes {
			out = append(out, stepRef{t, size})
		}
	}
	return out
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

// exactly is a cost the plan decides.
func exactly(c cost) modelled { return modelled{mean: c, low: c, high: c} }

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
	refs := r.steps()
	models := make([]modelled, len(refs))
	for i, s := range refs {
		models[i] = r.modelStep(s.test, s.size)
	}
	corr := r.corrections(refs, models)
	for i, s := range refs {
		se := StepEstimate{Test: s.test, FrameSize: s.size}
		if t := r.est.tally(i); i < r.stepsDone && t != nil {
			// done: what it took
			se.Trials, se.Time, se.Low, se.High = t.trials, t.wall, t.wall, t.wall
		} else {
			m := corr[kindOf(s.test)].corrected(models[i])
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

// PlannedProgress is the progress of a run not yet started: the plan's estimate, before anything of the
// DUT is known. The operator states it while a test waits for its testbed or its pods; the runner then
// reports its own, from the same model, and updates it as trials complete.
func PlannedProgress(p *plan.Plan) v1alpha1.Progress {
	if p.CalibrationRepetitions > 0 {
		// the tester pod runs the calibration's own plan (plan.AsCalibration), not the test's
		q := *p
		q.AsCalibration(p.CalibrationRepetitions)
		p = &q
	}
	r := New(p, nil, nil, Options{})
	e := r.Estimate()
	secs := int64(math.Ceil(e.Total.Seconds()))
	return v1alpha1.Progress{StepsTotal: int32(r.countSteps()), EstimatedTotalSeconds: secs, EstimatedSecondsLeft: secs,
		Summary: fmt.Sprintf("expected to take about %s%s", roundDuration(e.Total), e.uncertainty(e.Total, e.Low, e.High))}
}

// phasesOf is the wall time of a trial's phases: warm-up, traffic, drain (at least backToBackTrial after
// a burst) and the DUT's rest.
func (r *Runner) phasesOf(d time.Duration, burst bool) time.Duration {
	ds := r.plan.Durations
	if burst {
		return ds.WarmUp + max(ds.Drain, ds.BackToBackTrial) + ds.DUTRest
	}
	return ds.WarmUp + d + ds.Drain + ds.DUTRest
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
func (r *Runner) corrections(refs []stepRef, models []modelled) map[kind]correction {
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
		k := kindOf(refs[i].test)
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
		return cost{n, time.Duration(n * float64(r.phasesOf(d, false)))}
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
				for _, d := range r.searchModel(t, size, modelDUT{ndr: ndr, noise: noise, spoils: r.spoilsOfDone().key()}, seeds) {
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
		reps := float64(max(1, p.Latency.Repetitions))
		spoiled := r.spoilsOfDone().share(r.latencyFPS(size))
		mean := one(reps*r.tries(spoiled), ds.LatencyTrial)
		if spoiled == 0 {
			return exactly(mean)
		}
		return ranged(mean, one(reps, ds.LatencyTrial), one(reps*float64(1+p.Validity.InvalidTrialRetries), ds.LatencyTrial),
			testerDecides)
	case v1alpha1.TestFrameLoss:
		step := p.FrameLoss.StepPercent
		if step <= 0 || step > 10 {
			step = 10
		}
		most := int(math.Ceil(p.Throughput.MaxRatePercent/step - 1e-9))
		least := min(most, 2)
		// once the NDR is known, the curve ends two loss-free steps below it (sooner when steps above it lose
		// nothing: the DUT decides)
		if ndr, ok := r.lowestNDR(size); ok {
			most = min(most, int(math.Ceil((p.Throughput.MaxRatePercent-ndr)/step-1e-9))+2)
			least = min(most, max(2, most-2))
		}
		f := r.tries(r.spoilsOfDone().share(p.Throughput.MaxRatePercent / 100 * r.lineFPS(float64(size))))
		mean := one(float64(max(1, most))*f, ds.ValidationTrial)
		return ranged(mean, one(float64(max(1, least)), ds.ValidationTrial), mean, "how many steps the frame loss curves take")
	case v1alpha1.TestBackToBack:
		burst := func(n int) cost { return cost{float64(n), time.Duration(n) * r.phasesOf(0, true)} }
		var mean, low, high cost
		b := p.BackToBack
		res := max(int64(1), b.Resolution)
		// the first search: maxFrames, then a bisection of [0, maxFrames]
		blind := 1 + bisections(b.MaxFrames, res)
		for _, lane := range r.lanes() {
			if r.atLineRate(size, lane) != "" {
				continue
			}
			later := max(1, b.Repetitions) - 1
			scatter := r.burstScatter(size, lane[0])
			mean = mean.plus(burst(blind + later*laterBurstTrials(scatter, res)))
			low = low.plus(burst(blind + later*laterBurstTrials(0, res)))
			high = high.plus(burst(blind + later*laterBurstTrials(max(2*scatter, assumedBurstScatter*res), res)))
		}
		return ranged(mean, low, high, "how many bursts the back-to-back searches take")
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

// latencyFPS is the rate of a size's latency trials in frames per second a direction: at the NDR found
// (the lowest of the directions), or before it is known at the one the model expects.
func (r *Runner) latencyFPS(size int) float64 {
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
	if f := r.plan.Latency.PercentOfNDR; f > 0 {
		rate *= f / 100
	}
	return rate / 100 * r.lineFPS(float64(size))
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

// assumedNDRs are where the model puts a size's NDR, percent of line rate, each as likely: the NDR measured
// there; else carried from the nearest size measured by how NDRs grow with the frame size, NDR ∝
// (size+20)^exponent, for exponents from 0 (a DUT limited in bits per second) to 1 (one limited in frames per
// second, which no DUT beats: bigger frames never pass in more frames per second), or to the exponent the
// sizes measured below maxRate show once two are; else, before any, spread over the rates up to maxRate and
// above it.
func (r *Runner) assumedNDRs(t v1alpha1.TestKind, size int) []float64 {
	tp := r.plan.Throughput
	mean := float64(size)
	if t == v1alpha1.TestImixThroughput && r.plan.Imix != nil {
		mean = r.plan.Imix.AverageFrameSize
	} else if ndr, ok := r.lowestNDR(size); ok {
		return []float64{r.modelNDR(ndr)}
	}
	type point struct{ x, y float64 } // ln(size+20), ln(NDR)
	var below, all []point
	for _, s := range r.plan.FrameSizes {
		ndr, ok := r.lowestNDR(s)
		if !ok || s == size || r.testerLimitedAt(s) {
			continue // the tester's limit says nothing of where the DUT's NDR is, but that it is higher
		}
		pt := point{math.Log(float64(s) + 20), math.Log(r.modelNDR(ndr))}
		all = append(all, pt)
		if ndr < tp.MaxRatePercent-tp.ResolutionPercent {
			below = append(below, pt)
		}
	}
	var out []float64
	if len(all) == 0 {
		// anywhere up to maxRate, or above it (every trial passes there)
		for _, f := range []float64{0.1, 0.3, 0.5, 0.7, 0.9, 1.5} {
			out = append(out, f*tp.MaxRatePercent)
		}
		return out
	}
	most := 1.0
	if len(below) >= 2 {
		var mx, my float64
		for _, p := range below {
			mx, my = mx+p.x/float64(len(below)), my+p.y/float64(len(below))
		}
		var sxy, sxx float64
		for _, p := range below {
			sxy += (p.x - mx) * (p.y - my)
			sxx += (p.x - mx) * (p.x - mx)
		}
		if sxx > 0 {
			most = math.Min(math.Max(sxy/sxx, 0), 1)
		}
	}
	x := math.Log(mean + 20)
	nearest := all[0]
	for _, p := range all {
		if math.Abs(p.x-x) < math.Abs(nearest.x-x) {
			nearest = p
		}
	}
	for _, f := range []float64{0, 0.25, 0.5, 0.75, 1} {
		out = append(out, math.Exp(nearest.y+f*most*(x-nearest.x)))
	}
	return out
}

// testerLimitedAt says whether a size's NDR is the tester's limit in some direction.
func (r *Runner) testerLimitedAt(size int) bool {
	for k, v := range r.ndr {
		if k.size == size && v.testerLimited {
			return true
		}
	}
	return false
}

// modelNDR is where the model puts a measured NDR: a search that passed at maxRate says only that the DUT
// forwards more, and the model DUT then forwards half as much again, so that its searches pass there too.
func (r *Runner) modelNDR(ndr float64) float64 {
	tp := r.plan.Throughput
	if ndr >= tp.MaxRatePercent-tp.ResolutionPercent {
		return 1.5 * tp.MaxRatePercent
	}
	return math.Max(ndr, tp.ResolutionPercent/2)
}

// modelSink marks a runner that is the estimate's model of a search: it does not estimate itself.
type modelSink struct{ NopSink }

// modelDUT is the model DUT a search is run on: where it forwards, how much that varies from trial to
// trial, and how its tester spoils trials (the spoils' key).
type modelDUT struct {
	ndr, noise float64
	spoils     string
}

type modelKey struct {
	shape string
	test  v1alpha1.TestKind
	size  int
	dut   modelDUT
	seeds int
}

// searchModel is what one repetition of a size's throughput (or the IMIX) search costs in each of the
// model's draws: the plan's own search, lanes, joint validation and PDR, run on the simulated engine with a
// model DUT (the formula's cost, should the model not run it), its tester spoiling trials as this run's
// did in the steps done. The draws are kept for the process (the operator states the plan's estimate at
// every pass over a waiting test).
func (r *Runner) searchModel(t v1alpha1.TestKind, size int, dut modelDUT, seeds int) []cost {
	round := func(v float64) float64 { return math.Round(v*1e4) / 1e4 }
	dut = modelDUT{round(dut.ndr), round(dut.noise), dut.spoils}
	if t == v1alpha1.TestThroughput && len(r.plan.FrameSizes) > 0 && dut.spoils == "" {
		size = r.plan.FrameSizes[0] // without spoils, a rate in percent costs the same at every size
	}
	k := modelKey{r.searchShape(), t, size, dut, seeds}
	modelsMu.Lock()
	draws, ok := models[k]
	modelsMu.Unlock()
	if ok {
		return draws
	}
	if draws, ok = r.searchRun(t, size, 1, dut, r.spoilsOfDone(), nil, seeds); !ok {
		draws = []cost{r.searchFormula()}
	}
	modelsMu.Lock()
	defer modelsMu.Unlock()
	if len(models) >= maxModels {
		clear(models)
	}
	models[k] = draws
	return draws
}

// models are the draws of the model searches run so far, by plan shape, test, size and model DUT.
var (
	modelsMu sync.Mutex
	models   = map[modelKey][]cost{}
)

// maxModels bounds the draws kept: a run keeps a few tens (NDRs per size, sizes, what it learns).
const maxModels = 4096

// searchShape is what of the plan and options a model search depends on, as text.
func (r *Runner) searchShape() string {
	if r.est.shape != "" {
		return r.est.shape
	}
	p := r.plan
	b, _ := json.Marshal(struct {
		Throughput plan.Throughput
		Durations  plan.Durations
		Direction  v1alpha1.Direction
		LineRate   int64
		Validity   plan.Validity
		Imix       *plan.Imix
		MaxTrials  int
		Joined     bool
	}{p.Throughput, p.Durations, p.Traffic.Direction, p.Traffic.LineRateBps, p.Validity, p.Imix, r.opt.MaxTrialsPerSearch, r.opt.JoinedPorts})
	r.est.shape = string(b)
	return r.est.shape
}

// searchRun runs a size's throughput search (or the IMIX one), reps repetitions, on the model DUT over
// seeds draws, its first trials answered with the records of replay (a trial's records each), and
// returns what the trials after those cost in each draw; false when the model could not run it or its
// trials did not follow the records.
func (r *Runner) searchRun(t v1alpha1.TestKind, size, reps int, dut modelDUT, spoils spoilModel, replay [][]results.Trial, seeds int) ([]cost, bool) {
	q := *r.plan
	q.Tests, q.FrameSizes, q.Calibration = []v1alpha1.TestKind{t}, []int{size}, nil
	q.Throughput.Repetitions = reps
	q.Ports = slices.Clone(q.Ports)
	// the model's tester spoils a trial by falling behind: the limits see it
	q.Validity.MaxTxLag = time.Millisecond
	mean := float64(size)
	if t == v1alpha1.TestImixThroughput {
		if q.Imix == nil {
			return nil, false // the run refuses it (runTests)
		}
		mean = q.Imix.AverageFrameSize
	}
	var draws []cost
	for seed := range seeds {
		d := sim.DUT{LineRateBps: float64(q.Traffic.LineRateBps), Noise: dut.noise, Seed: uint64(seed),
			CapacityFPS: dut.ndr / 100 * float64(q.Traffic.LineRateBps) / ((mean + 20) * 8)}
		eng := &replayEngine{Engine: sim.New(d), trials: replay, limits: limitsOf(q.Validity), spoils: spoils,
			rng: rand.New(rand.NewPCG(uint64(seed), 0x7370))}
		mr := New(&q, eng, modelSink{}, Options{Sleep: func(context.Context, time.Duration) error { return nil },
			MaxTrialsPerSearch: r.opt.MaxTrialsPerSearch, JoinedPorts: r.opt.JoinedPorts})
		var err error
		if t == v1alpha1.TestImixThroughput {
			err = mr.imix(context.Background())
		} else {
			err = mr.throughput(context.Background(), size)
		}
		var c cost
		for _, tc := range eng.Log {
			c = c.plus(cost{1, r.phasesOf(tc.Duration, tc.Burst > 0)})
		}
		if err != nil || eng.replayed < len(replay) || (c.trials == 0 && len(replay) == 0) {
			return nil, false
		}
		draws = append(draws, c)
	}
	return draws, true
}

// spoilModel is how often the tester spoiled trials, by the frames per second it had to send: a tester
// short of CPU spoils the trials that ask most of it, one on a loaded host some of every kind. Each entry
// is a paced trial record: log2 of its frames per second, and whether the tester spoiled it.
type spoilModel []spoilEntry

type spoilEntry struct {
	log2FPS float64
	spoiled bool
}

// spoilsOf is the spoil model of the paced trials of recs. A search whose answer is the tester's limit
// found that limit a resolution above its answer (it spoiled every trial above, however far above they
// were tried): that counts as trials spoiled there too.
func (r *Runner) spoilsOf(recs []results.Trial) spoilModel {
	var m spoilModel
	for _, rec := range recs {
		if rec.Burst == 0 && rec.TargetFPS > 0 {
			m = append(m, spoilEntry{math.Log2(rec.TargetFPS), rec.TesterLimited})
		}
	}
	for k, v := range r.ndr {
		if v.testerLimited && v.percent > 0 {
			limit := math.Log2((v.percent + r.plan.Throughput.ResolutionPercent) / 100 * r.lineFPS(float64(k.size)))
			for range max(1, r.plan.Validity.InvalidTrialRetries+1) {
				m = append(m, spoilEntry{limit, true})
			}
		}
	}
	return m
}

// share is the share of trials at fps the tester spoils: a tester that cannot keep up at a rate cannot at
// any higher one, so the share at a rate is fitted to grow with it (the isotonic fit of the shares by
// quarter octave), and taken from the nearest quarter octave fitted at or below fps (the lowest above it
// when none is below).
func (m spoilModel) share(fps float64) float64 {
	type block struct {
		from            int // the first quarter octave of the block
		spoiled, trials float64
	}
	bins := m.quarterOctaves()
	var blocks []block
	for _, b := range slices.Sorted(maps.Keys(bins)) {
		blocks = append(blocks, block{b, float64(bins[b][0]), float64(bins[b][1])})
		// pool adjacent blocks while a lower rate spoils more than a higher one
		for n := len(blocks); n > 1 && blocks[n-2].spoiled/blocks[n-2].trials > blocks[n-1].spoiled/blocks[n-1].trials; n-- {
			blocks[n-2].spoiled += blocks[n-1].spoiled
			blocks[n-2].trials += blocks[n-1].trials
			blocks = blocks[:n-1]
		}
	}
	if len(blocks) == 0 {
		return 0
	}
	at := blocks[0]
	x := int(math.Floor(4 * math.Log2(math.Max(fps, 1))))
	for _, bl := range blocks {
		if bl.from <= x {
			at = bl
		}
	}
	return at.spoiled / at.trials
}

// quarterOctaves are the trials by quarter octave of their rate: spoiled, all.
func (m spoilModel) quarterOctaves() map[int][2]int {
	bins := map[int][2]int{}
	for _, e := range m {
		b := int(math.Floor(4 * e.log2FPS))
		c := bins[b]
		c[1]++
		if e.spoiled {
			c[0]++
		}
		bins[b] = c
	}
	return bins
}

// key names the model for the draws' cache ("": it spoils nothing): its trials by quarter octave.
func (m spoilModel) key() string {
	if !slices.ContainsFunc(m, func(e spoilEntry) bool { return e.spoiled }) {
		return ""
	}
	bins := m.quarterOctaves()
	var k strings.Builder
	for _, b := range slices.Sorted(maps.Keys(bins)) {
		fmt.Fprintf(&k, "%d:%d/%d ", b, bins[b][0], bins[b][1])
	}
	return k.String()
}

// spoilsOfDone is the spoil model of the steps done.
func (r *Runner) spoilsOfDone() spoilModel { return r.spoilsOf(r.trials[:r.est.doneRecords]) }

// replayEngine answers a model run's first trials with what the run measured in them, and the trials after
// those with the model DUT's.
type replayEngine struct {
	*sim.Engine
	trials   [][]results.Trial
	limits   engine.Limits
	replayed int
	// spoils spoils the model's trials as the run's tester did, drawn from rng
	spoils spoilModel
	rng    *rand.Rand
}

func (e *replayEngine) RunTrial(ctx context.Context, cfg engine.TrialConfig, progress func(engine.Progress)) (*engine.TrialResult, error) {
	if e.replayed < len(e.trials) {
		res, ok := replayed(cfg, e.trials[e.replayed], e.limits)
		if !ok {
			// the model asked for another trial than the run ran: what follows is not this run's
			return nil, errors.New("the model's trial is not the run's")
		}
		e.replayed++
		return res, nil
	}
	res, err := e.Engine.RunTrial(ctx, cfg, progress)
	if err != nil || cfg.Burst > 0 {
		return res, err
	}
	busiest := 0.0
	for _, fps := range cfg.RatesFPS {
		busiest = max(busiest, fps)
	}
	if e.rng.Float64() < e.spoils.share(busiest) {
		for i := range res.Streams {
			res.Streams[i].TxMaxLagNs = int64(e.limits.MaxTxLag) + 1 // it fell behind: the runner's rule spoils it
		}
	}
	return res, nil
}

// replayed is a trial's result as its records tell it, for the trial cfg (false: cfg is another trial).
func replayed(cfg engine.TrialConfig, recs []results.Trial, lim engine.Limits) (*engine.TrialResult, bool) {
	if len(recs) != len(cfg.Streams) || len(recs) == 0 {
		return nil, false
	}
	res := &engine.TrialResult{State: engine.StateDone, DurationNs: int64(recs[0].DurationS * 1e9)}
	for i, rec := range recs {
		if cfg.Burst != rec.Burst || (cfg.Burst == 0 && math.Abs(cfg.RatesFPS[i]-rec.TargetFPS) > 1e-6*max(1, rec.TargetFPS)) {
			return nil, false
		}
		sr := engine.StreamResult{ID: cfg.Streams[i], TargetFPS: rec.TargetFPS, AchievedFPS: rec.AchievedFPS,
			ScheduledFrames: max(rec.TxFrames, 1), TxFrames: rec.TxFrames, RxFrames: rec.TxFrames - rec.Lost}
		if rec.TesterLimited {
			sr.TxMaxLagNs = int64(lim.MaxTxLag) + 1 // a fault the runner's rule reads as the tester's
		}
		res.Streams = append(res.Streams, sr)
		if rec.Aborted != "" {
			res.State, res.Reason = engine.StateAborted, rec.Aborted
		}
	}
	return res, true
}

// searchRecords are the records of the trials of a step's search, by trial: from the step's first record,
// each trial as many as it had directions.
func (r *Runner) searchRecords(first int, dirs []int) [][]results.Trial {
	var out [][]results.Trial
	at := first
	for _, n := range dirs {
		if at+n > len(r.trials) {
			break
		}
		out = append(out, r.trials[at:at+n])
		at += n
	}
	return out
}

// dutFit is what the trials of a search say of the DUT at a size in a direction: the rate it forwards on
// average (percent of line rate) and how much that varies from trial to trial (relative standard
// deviation).
type dutFit struct {
	capacity, noise float64
}

// fitDUT fits the model DUT to the valid paced trials of recs, by size and direction: a trial that lost
// frames forwarded what the DUT's capacity was then, one that lost none offered no more than it (a
// censored draw; taking the losses alone would read the DUT low and steady, since a trial near the
// capacity loses only where the draw was low). It is the maximum likelihood of a normal capacity over a
// grid; a group without a loss says nothing of the capacity and is left out.
func fitDUT(recs []results.Trial) []dutFit {
	type group struct{ lost, passed []float64 }
	groups := map[string]*group{}
	var order []string
	for _, rec := range recs {
		if rec.Burst > 0 || rec.TesterLimited || rec.Aborted != "" || rec.OfferedPercent <= 0 ||
			(rec.Test != v1alpha1.TestThroughput && rec.Test != v1alpha1.TestImixThroughput) {
			continue
		}
		k := fmt.Sprintf("%d %s", rec.FrameSize, rec.Direction)
		if groups[k] == nil {
			groups[k] = &group{}
			order = append(order, k)
		}
		if rec.Lost > 0 {
			groups[k].lost = append(groups[k].lost, rec.OfferedPercent*(1-rec.LossPercent/100))
		} else {
			groups[k].passed = append(groups[k].passed, rec.OfferedPercent)
		}
	}
	var out []dutFit
	for _, k := range order {
		g := groups[k]
		if len(g.lost) == 0 {
			continue
		}
		lo, hi := slices.Min(g.lost), slices.Max(g.lost)
		if len(g.passed) > 0 {
			hi = math.Max(hi, slices.Max(g.passed))
		}
		best, fit := math.Inf(-1), dutFit{}
		for _, noise := range fitNoises {
			for i := 0; i <= 200; i++ {
				mu := lo*0.9 + (hi*1.1-lo*0.9)*float64(i)/200
				sd := noise * mu
				ll := 0.0
				for _, f := range g.lost {
					z := (f - mu) / sd
					ll += -z*z/2 - math.Log(sd)
				}
				for _, x := range g.passed {
					ll += math.Log(math.Max(0.5*math.Erfc((x-mu)/sd/math.Sqrt2), 1e-300))
				}
				if ll > best {
					best, fit = ll, dutFit{capacity: mu, noise: noise}
				}
			}
		}
		out = append(out, fit)
	}
	return out
}

// fitNoises are the noises fitDUT tries: from a DUT that hardly varies to one whose capacity varies by a
// tenth, and more, from trial to trial.
var fitNoises = []float64{0.0003, 0.001, 0.002, 0.004, 0.007, 0.01, 0.015, 0.02, 0.03, 0.045, 0.07, 0.1, 0.15}

// learnedNoise is how much the DUT's forwarding varied from trial to trial in the searches of recs: the
// median over the sizes and directions that lost frames at least twice; false when none did.
func learnedNoise(recs []results.Trial) (float64, bool) {
	var noises []float64
	lossy := map[string]int{}
	for _, rec := range recs {
		if rec.Lost > 0 && !rec.TesterLimited && rec.Burst == 0 {
			lossy[fmt.Sprintf("%d %s", rec.FrameSize, rec.Direction)]++
		}
	}
	for _, f := range fitDUT(recs) {
		noises = append(noises, f.noise)
	}
	enough := false
	for _, n := range lossy {
		enough = enough || n >= 2
	}
	if len(noises) == 0 || !enough {
		return 0, false
	}
	slices.Sort(noises)
	return noises[len(noises)/2], true
}

// modelNoises are the noises of the model DUT, each as likely: the searches' of the steps done, else
// priorNoises.
func (r *Runner) modelNoises() []float64 {
	if r.est.noiseOf != r.est.doneRecords+1 {
		r.est.noises = priorNoises
		if n, ok := learnedNoise(r.trials[:r.est.doneRecords]); ok {
			r.est.noises = []float64{n}
		}
		r.est.noiseOf = r.est.doneRecords + 1
	}
	return r.est.noises
}

// searchFormula counts a search's trials without the model (should the simulation refuse the plan): short
// trials to the width, the candidate and a step of validation, and the pair confirmed together.
func (r *Runner) searchFormula() cost {
	p := r.plan
	tp := p.Throughput
	ds := p.Durations
	width := tp.ResolutionPercent
	if tp.Goal != nil && tp.Goal.WidthPercent > 0 {
		width = tp.Goal.WidthPercent / 100 * max(tp.MaxRatePercent/2, tp.ResolutionPercent)
	}
	steps := float64(int(math.Ceil(math.Log2(math.Max(2, tp.MaxRatePercent/width)))))
	searches := 1.0
	if tp.PDRLossTolerancePercent != nil {
		searches = 2
	}
	var c cost
	add := func(n float64, d time.Duration) {
		c = c.plus(cost{n, time.Duration(n * float64(r.phasesOf(d, false)))})
	}
	switch {
	case tp.Method == v1alpha1.SearchBinary:
		add(steps*searches, ds.ValidationTrial)
	case tp.Goal != nil:
		perRate := math.Ceil(tp.Goal.DurationSum.Seconds() * (1 - tp.Goal.ExceedRatioPercent/100) / tp.Goal.FinalTrialDuration.Seconds())
		add(steps/2+1, min(ds.SearchTrial, tp.Goal.FinalTrialDuration))
		add(2*max(1, perRate)*searches, tp.Goal.FinalTrialDuration)
	default:
		add(steps/2+1, ds.SearchTrial)
		add(2*searches, ds.ValidationTrial)
	}
	if p.Traffic.Direction == v1alpha1.Bidirectional {
		add(searches, ds.ValidationTrial)
	}
	return c
}

// assumedBurstScatter is the range of the back-to-back answers over the repetitions, in resolutions, that
// the estimate assumes before any is known: a DUT whose answers agree takes 3 trials a repetition, one
// whose answers scatter over tens of resolutions 8 to 10; this sits between, so the estimate is within a
// factor of two of either.
const assumedBurstScatter = 8

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
	return assumedBurstScatter * res
}

func answerRange(v []int64) int64 {
	return slices.Max(v) - slices.Min(v)
}

// laterBurstTrials is what searchBurst takes in a repetition after the first, when the earlier answers
// range over scatter frames and this one's lies in their bracket: a trial at each end (the shorter passes,
// the longer fails), then a bisection of the bracket, the range and a margin either side. An answer
// outside the bracket takes more: the DUT decides that, and the model does not guess it.
func laterBurstTrials(scatter, res int64) int {
	margin := max(res, scatter/2)
	return 2 + bisections(scatter+2*margin, res)
}

// bisections is how many halvings take a bracket of width frames to res or less.
func bisections(width, res int64) int {
	n := 0
	for ; width > res; n++ {
		width = (width + 1) / 2
	}
	return n
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
	// noises are the model DUT's noises as of the first noiseOf-1 records (noiseOf 0: not yet)
	noises  []float64
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
		return trialOverhead
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
	refs := r.steps()
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
func (r *Runner) restOfStep(ref stepRef, m modelled, stepElapsed, overhead time.Duration) (draws []time.Duration, low, high time.Duration) {
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

// restOfSearch runs the search under way on from where it stands, on the model: the trials it has done
// answered with what they measured (the search's own code reaches the state it is in), the rest by the
// model DUT at the NDR its losses show so far, as noisy as the DUT's forwarding has been. It returns the
// cost of each draw's trials from the one under way on; false when the step is no search or the model
// could not follow it.
func (r *Runner) restOfSearch(ref stepRef) ([]cost, bool) {
	if kindOf(ref.test) != kind(v1alpha1.TestThroughput) {
		return nil, false
	}
	t := r.est.tally(r.stepsDone)
	done := t.trials - 1
	if r.est.restStep != r.stepsDone+1 {
		r.est.restStep, r.est.rest = r.stepsDone+1, map[int][]cost{}
	}
	if draws, ok := r.est.rest[done]; ok {
		return draws, draws != nil
	}
	replay := r.searchRecords(t.firstRecord, t.dirs[:done])
	if len(replay) < done {
		return nil, false
	}
	var recs []results.Trial
	for _, tr := range replay {
		recs = append(recs, tr...)
	}
	// where the DUT forwards: as its trials so far say (the directions' mean), else as the model assumed,
	// above every rate that passed
	ndr := r.assumedNDRs(ref.test, ref.size)
	at := ndr[len(ndr)/2]
	if fits := fitDUT(recs); len(fits) > 0 {
		at = 0
		for _, f := range fits {
			at += f.capacity / float64(len(fits))
		}
	} else {
		for _, rec := range recs {
			if rec.Pass {
				at = math.Max(at, r.modelNDR(rec.OfferedPercent))
			}
		}
	}
	// as noisy as the DUT's forwarding has been so far (before it has lost frames enough to say, the
	// assumptions), the tester spoiling trials as it has so far
	noises := r.modelNoises()
	if n, ok := learnedNoise(r.trials[:t.firstRecord+len(recs)]); ok {
		noises = []float64{n}
	}
	spoils := r.spoilsOf(r.trials[:t.firstRecord+len(recs)])
	reps := max(1, r.plan.Throughput.Repetitions)
	if ref.test == v1alpha1.TestImixThroughput {
		reps = 1
	}
	var draws []cost
	for _, noise := range noises {
		d, ok := r.searchRun(ref.test, ref.size, reps, modelDUT{ndr: at, noise: noise}, spoils, replay, restDraws/len(noises))
		if !ok {
			draws = nil
			break
		}
		draws = append(draws, d...)
	}
	r.est.rest[done] = draws
	return draws, draws != nil
}

// String is the time left as progress says it: "about 3m20s left (2m50s to 4m40s: the DUT decides ...)".
func (l timeLeft) String() string {
	return fmt.Sprintf("about %s left%s", roundDuration(l.expected), l.uncertainty())
}

// total is the time left as the whole of a run: "about 3m20s (2m50s to 4m40s: the DUT decides ...)".
func (l timeLeft) total() string {
	return fmt.Sprintf("about %s%s", roundDuration(l.expected), l.uncertainty())
}

func (l timeLeft) uncertainty() string {
	return Estimate{decides: l.decides}.uncertainty(l.expected, l.low, l.high)
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
