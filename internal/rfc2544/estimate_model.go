package rfc2544

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/engine/sim"
	"linerate.dev/linerate/internal/estimate"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/results"
)

// The estimate's model runs: the runner's own search code, run on the simulated engine with a model DUT,
// its first trials answered with what the run measured (estimate.go says why).

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

// modelSink marks a runner that is the estimate's model of a search: it does not estimate itself.
type modelSink struct{ NopSink }

// modelDUT is the model DUT a search is run on: where it forwards, how much that varies from trial to
// trial, how long its queue lets it take more (seconds at the capacity), and how its tester spoils trials
// (the spoils' key).
type modelDUT struct {
	ndr, noise, queueS float64
	spoils             string
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
	dut = modelDUT{round(dut.ndr), round(dut.noise), round(dut.queueS), dut.spoils}
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
		n, phases := estimate.Search(r.plan)
		draws = []cost{{n, phases}}
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
		d.BufferFrames = int64(dut.queueS * d.CapacityFPS)
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
			c = c.plus(cost{1, estimate.Phases(r.plan.Durations, tc.Duration, tc.Burst > 0)})
		}
		if err != nil || eng.replayed < len(replay) || (c.trials == 0 && len(replay) == 0) {
			return nil, false
		}
		draws = append(draws, c)
	}
	return draws, true
}

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
		// the engine reports a stream's target to the thousandth of a frame a second (control_report.c): a
		// sparse probe at 1 % of an NDR of 11,594.48 frames/s is recorded as 115.945
		if cfg.Burst != rec.Burst || (cfg.Burst == 0 && math.Abs(cfg.RatesFPS[i]-rec.TargetFPS) > max(1e-6*rec.TargetFPS, 0.0005+1e-9)) {
			return nil, false
		}
		sr := engine.StreamResult{ID: cfg.Streams[i], TargetFPS: rec.TargetFPS, AchievedFPS: rec.AchievedFPS,
			ScheduledFrames: max(rec.TxFrames, 1), TxFrames: rec.TxFrames, RxFrames: rec.TxFrames - rec.Lost}
		if rec.TesterLimited {
			sr.TxMaxLagNs = int64(lim.MaxTxLag) + 1 // a fault the runner's rule reads as the tester's
		}
		if l := rec.Latency; l != nil {
			// a latency bound (throughput.maxLatency) judges the trial by it as the run did
			sr.Latency = &engine.Latency{Valid: l.Valid, Reason: l.Reason, Count: l.Frames, MinNs: l.MinNs, MeanNs: l.MeanNs,
				P50Ns: l.P50Ns, P90Ns: l.P90Ns, P99Ns: l.P99Ns, P999Ns: l.P999Ns, P9999Ns: l.P9999Ns, MaxNs: l.MaxNs,
				ResolutionNs: l.ResolutionNs, ClockBoundNs: l.ClockOffsetBoundNs}
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

// restOfSearch runs the search under way on from where it stands, on the model: the trials it has done
// answered with what they measured (the search's own code reaches the state it is in), the rest by the
// model DUT at the NDR its losses show so far, as noisy as the DUT's forwarding has been. It returns the
// cost of each draw's trials from the one under way on; false when the step is no search or the model
// could not follow it.
func (r *Runner) restOfSearch(ref plan.Step) ([]cost, bool) {
	if kindOf(ref.Test) != kind(v1alpha1.TestThroughput) {
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
	ndr := r.assumedNDRs(ref.Test, ref.FrameSize)
	at, queue := ndr[len(ndr)/2], r.modelQueue()
	if fits := fitDUT(recs); len(fits) > 0 {
		at, queue = 0, 0
		for _, f := range fits {
			at += f.capacity / float64(len(fits))
			queue += f.queueS / float64(len(fits))
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
	if ref.Test == v1alpha1.TestImixThroughput {
		reps = 1
	}
	var draws []cost
	for _, noise := range noises {
		d, ok := r.searchRun(ref.Test, ref.FrameSize, reps, modelDUT{ndr: at, noise: noise, queueS: queue}, spoils, replay, restDraws/len(noises))
		if !ok {
			draws = nil
			break
		}
		draws = append(draws, d...)
	}
	r.est.rest[done] = draws
	return draws, draws != nil
}
