package rfc2544

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/results"
)

// What the estimate's model fits to the run's trials: the DUT's capacity and how much it varies from trial
// to trial, where the NDRs of sizes not yet measured lie, and how often the tester spoils a trial at a rate.

// dutFit is what the trials of a search say of the DUT at a size in a direction: the rate it forwards on
// average (percent of line rate), how much that varies from trial to trial (relative standard deviation),
// and how long its queue lets it take more than that (seconds at the capacity: a DUT that queues in its
// sockets passes a short trial well above what a long one holds).
type dutFit struct {
	capacity, noise, queueS float64
}

// fitDUT fits the model DUT to the valid paced trials of recs, by size and direction: a trial that lost
// frames forwarded what the DUT's capacity was then, over its duration, plus what its queue held; one that
// lost none offered no more than that (a censored draw; taking the losses alone would read the DUT low and
// steady, since a trial near the capacity loses only where the draw was low). It is the maximum likelihood
// of a normal capacity and a queue over a grid; a queue must earn its place (a better likelihood by more
// than queuePenalty), and a group without a loss says nothing of the capacity and is left out.
func fitDUT(recs []results.Trial) []dutFit {
	type sample struct{ rate, seconds float64 }
	type group struct{ lost, passed []sample }
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
		secs := math.Max(rec.DurationS, 1e-3)
		if rec.Lost > 0 {
			groups[k].lost = append(groups[k].lost, sample{rec.OfferedPercent * (1 - rec.LossPercent/100), secs})
		} else {
			groups[k].passed = append(groups[k].passed, sample{rec.OfferedPercent, secs})
		}
	}
	var out []dutFit
	for _, k := range order {
		g := groups[k]
		if len(g.lost) == 0 {
			continue
		}
		// the capacity a trial says with a queue of q seconds at capacity c: what it forwarded (or offered)
		// less the queue's share of its duration, c·q/T, so c = x/(1+q/T)
		at := func(x sample, q float64) float64 { return x.rate / (1 + q/x.seconds) }
		best, fit := math.Inf(-1), dutFit{}
		for _, q := range fitQueues {
			var lost, passed []float64
			for _, x := range g.lost {
				lost = append(lost, at(x, q))
			}
			for _, x := range g.passed {
				passed = append(passed, at(x, q))
			}
			lo, hi := slices.Min(lost), slices.Max(lost)
			if len(passed) > 0 {
				hi = math.Max(hi, slices.Max(passed))
			}
			penalty := 0.0
			if q > 0 {
				penalty = queuePenalty
			}
			for _, noise := range fitNoises {
				for i := 0; i <= 200; i++ {
					mu := lo*0.9 + (hi*1.1-lo*0.9)*float64(i)/200
					sd := noise * mu
					ll := -penalty
					for _, f := range lost {
						z := (f - mu) / sd
						ll += -z*z/2 - math.Log(sd)
					}
					for _, x := range passed {
						ll += math.Log(math.Max(0.5*math.Erfc((x-mu)/sd/math.Sqrt2), 1e-300))
					}
					if ll > best {
						best, fit = ll, dutFit{capacity: mu, noise: noise, queueS: q}
					}
				}
			}
		}
		out = append(out, fit)
	}
	return out
}

// fitQueues are the queues fitDUT tries, in seconds at the capacity: none, to one that holds a few seconds'
// worth (a userspace gateway's socket buffers at a few thousand frames per second).
var fitQueues = []float64{0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.6, 0.8, 1.2, 2}

// queuePenalty is the log-likelihood a queue must gain before the fit takes one (a second parameter;
// Akaike's criterion asks 1, twice that keeps noise from reading as a queue).
const queuePenalty = 2.0

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

// learnedQueue is how long the DUT's queue let it take more than its capacity in the searches of recs
// (seconds at the capacity): the median over the sizes and directions fitted, 0 where none was.
func learnedQueue(recs []results.Trial) float64 {
	var qs []float64
	for _, f := range fitDUT(recs) {
		qs = append(qs, f.queueS)
	}
	if len(qs) == 0 {
		return 0
	}
	slices.Sort(qs)
	return qs[len(qs)/2]
}

// modelNoises are the noises of the model DUT, each as likely: the searches' of the steps done, else
// priorNoises.
func (r *Runner) modelNoises() []float64 {
	r.learnDone()
	return r.est.noises
}

// modelQueue is the model DUT's queue, in seconds at its capacity: the searches' of the steps done, else
// none.
func (r *Runner) modelQueue() float64 {
	r.learnDone()
	return r.est.queueS
}

// learnDone fits the model DUT's noise and queue to the records of the steps done, once per step.
func (r *Runner) learnDone() {
	if r.est.noiseOf == r.est.doneRecords+1 {
		return
	}
	done := r.trials[:r.est.doneRecords]
	r.est.noises = priorNoises
	if n, ok := learnedNoise(done); ok {
		r.est.noises = []float64{n}
	}
	r.est.queueS = learnedQueue(done)
	r.est.noiseOf = r.est.doneRecords + 1
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
