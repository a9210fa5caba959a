// Package rfc2544 runs the RFC 2544 benchmarks of a resolved plan on an engine: throughput (NDR/PDR) per
// frame size and direction, latency at the NDR, the frame loss curve, back-to-back bursts and IMIX
// throughput, with repetitions, a bottleneck diagnosis and the penalty against a baseline.
//
// Every trial becomes a results.Trial; trials, progress and the result tables go to a Sink, so the CLI can
// print them and the in-pod runner can write them to the results ConfigMap.
package rfc2544

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/calibration"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/expectations"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/results"
)

// ErrDUTStalled says a trial was aborted because nothing came back from the DUT.
var ErrDUTStalled = errors.New("DUT stalled")

// Options tune a run.
type Options struct {
	// Sleep waits for the DUT rest between trials; default time.Sleep honouring ctx.
	Sleep func(context.Context, time.Duration) error
	// Now is the clock of the trial records; default time.Now.
	Now func() time.Time
	// Baseline is the result of the baseline test, for the penalty table.
	Baseline *v1alpha1.Results
	// Stall aborts a trial when nothing arrives for this long (default 2 s).
	Stall time.Duration
	// Notes are added to the results (e.g. that the engine is simulated).
	Notes []string
	// MaxTrialsPerSearch caps each throughput search (default 60).
	MaxTrialsPerSearch int
	// ResolveTimeout bounds next-hop resolution per port (default 3 s).
	ResolveTimeout time.Duration
	// LinkWait is how long a port's link may take to come up before the run is refused (default 10 s).
	LinkWait time.Duration
	// PlanHash names the plan (plan.Hash) in checkpoints.
	PlanHash string
	// Resume is the checkpoint of an earlier runner of this run: the steps it completed are not measured
	// again. Ignored when it belongs to another plan.
	Resume *results.Checkpoint
	// LastSeq is the sequence number of the last trial record already written; this run's go on from it.
	LastSeq int
	// JoinedPorts says the ports are joined to each other with no DUT between them (a calibration): each
	// port sends to the other's MAC, nothing is resolved.
	JoinedPorts bool
	// DUTCPU reads the DUT's CPU time through every paced trial (spec.dut.cpu); nil: not read.
	DUTCPU CPUMeter
}

// Runner runs one plan.
type Runner struct {
	plan *plan.Plan
	eng  engine.Engine
	sink Sink
	opt  Options

	res        *v1alpha1.Results
	seq        int
	trialNo    int
	stepsDone  int
	stepsTotal int
	progress   v1alpha1.Progress
	streams    [2]streamDef
	ndr        map[key]ndrInfo
	// refusedTooBig are the sizes and directions the DUT refused whole as too big for its MTU while their
	// throughput was searched, with the MTU its ICMP named (0: none)
	refusedTooBig map[key]refusal
	// bursts are the back-to-back answers so far, by size and the lane's first direction: the estimate
	// of the repetitions left rests on their scatter
	bursts     map[key][]int64
	trials     []results.Trial
	faultNoted bool
	// cpuNoted, cpuWentBackNoted: the notes that the DUT's CPU time could not be read, or went back, are
	// given once
	cpuNoted, cpuWentBackNoted bool
	// fewBoundNoted: the note that a latency bound judged trials too short for its percentile is given once
	fewBoundNoted bool
	// restNoted, staleNoted: the notes on a DUT still forwarding an earlier trial are given once
	restNoted, staleNoted bool
	// skipSteps are the steps still to pass over because a checkpoint says they are done; resumes counts
	// the resumptions of this run.
	skipSteps int
	resumes   int
	// resumedLatency are the latency loads a checkpoint held measured (size and load): a resumed latency
	// step measures only the others, and the estimate counts only those
	resumedLatency map[latencyLoad]bool
	// stepStart is when the step under way began; planned the whole run's estimate at its start
	stepStart time.Time
	planned   time.Duration
	// est is what the trials so far took, which the estimate learns from (timeleft.go)
	est estimateState
}

type key struct {
	size int
	dir  int
}

type ndrInfo struct {
	percent float64
	found   bool
	// testerLimited: the NDR is the tester's limit, the DUT may forward more (even line rate)
	testerLimited bool
}

// New makes a runner.
func New(p *plan.Plan, e engine.Engine, sink Sink, opt Options) *Runner {
	if sink == nil {
		sink = NopSink{}
	}
	if opt.Sleep == nil {
		opt.Sleep = func(ctx context.Context, d time.Duration) error {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Stall == 0 {
		opt.Stall = 2 * time.Second
	}
	if opt.LinkWait == 0 {
		opt.LinkWait = 10 * time.Second
	}
	if opt.ResolveTimeout == 0 {
		opt.ResolveTimeout = 3 * time.Second
	}
	r := &Runner{plan: p, eng: e, sink: sink, opt: opt, ndr: map[key]ndrInfo{}, refusedTooBig: map[key]refusal{}, bursts: map[key][]int64{}}
	dut := p.DUT
	r.res = &v1alpha1.Results{DUT: &dut, LineRateBitsPerSecond: p.Traffic.LineRateBps}
	r.res.Notes = append(r.res.Notes, opt.Notes...)
	return r
}

// Results are the result tables so far.
func (r *Runner) Results() *v1alpha1.Results { return r.res }

// Trials are the trial records so far.
func (r *Runner) Trials() []results.Trial { return r.trials }

// Run sets the ports up and runs every test of the plan in RFC 2544 order. On error (DUT stalled,
// engine failure, cancellation) the results measured so far are returned with it.
func (r *Runner) Run(ctx context.Context) (*v1alpha1.Results, error) {
	p := r.plan
	if len(p.Ports) != 2 {
		return r.res, fmt.Errorf("plan has %d ports, need 2", len(p.Ports))
	}
	r.stepsTotal = len(p.Steps())
	r.seq = r.opt.LastSeq
	if cp := r.opt.Resume; cp != nil {
		r.resume(cp)
	}
	// what this runner expects to take (after a resumption: what is left), in the status before setup
	r.stepStart = r.opt.Now()
	planned := r.remaining(0)
	r.planned = planned.expected
	start := r.progress
	start.StepsTotal, start.StepsDone = int32(r.stepsTotal), int32(r.stepsDone)
	start.EstimatedTotalSeconds = int64(math.Ceil(r.planned.Seconds()))
	start.EstimatedSecondsLeft = start.EstimatedTotalSeconds
	start.Summary = "setting up; expected to take " + planned.total()
	t := metaTime(r.opt.Now())
	start.UpdateTime = &t
	r.sink.OnProgress(start)
	if err := r.setup(ctx); err != nil {
		return r.res, err
	}
	err := r.runTests(ctx)
	if err != nil && errors.Is(err, ErrDUTStalled) {
		r.note(fmt.Sprintf("the DUT stalled (nothing came back for %s) during %s: the run was aborted; results measured before are kept", r.opt.Stall, r.where()))
		// the DUT's own ICMP may say why nothing came back: the frames of a direction of the last trial
		// did not fit
		for i := len(r.trials) - 1; i >= 0 && r.trials[i].Time.Equal(r.trials[len(r.trials)-1].Time); i-- {
			if last := r.trials[i]; last.TooBig > 0 {
				why := "it refused the frames as too big (ICMP)"
				if last.PathMTU > 0 {
					why = fmt.Sprintf("it refused the frames as too big (ICMP: path MTU %d)", last.PathMTU)
				}
				err = fmt.Errorf("%w; %s %s", err, last.Direction, why)
				break
			}
		}
	}
	r.applyCalibration()
	r.res.Diagnosis = nil
	if d := Diagnose(r.res, p); d != nil {
		r.res.Diagnosis = d
	}
	if r.opt.Baseline != nil {
		r.res.Penalty = expectations.Penalty(r.res, r.opt.Baseline)
	}
	r.sink.OnResults(r.res)
	return r.res, err
}

func (r *Runner) where() string {
	s := string(r.progress.Test)
	if r.progress.FrameSize > 0 {
		s += fmt.Sprintf(" at %d B", r.progress.FrameSize)
	}
	if r.progress.Direction != "" {
		s += " " + r.progress.Direction
	}
	return s
}

func (r *Runner) runTests(ctx context.Context) error {
	p := r.plan
	if _, ok := r.eng.(engine.Timeliner); p.Has(v1alpha1.TestTimeline) && !ok {
		// said before any step runs, not after hours of throughput
		return fmt.Errorf("spec.tests: timeline needs one engine to send and receive each stream; this tester's ports are on two nodes (spec.ports[].node), whose engines split each stream")
	}
	for _, t := range p.Tests {
		var err error
		switch t {
		case v1alpha1.TestThroughput:
			err = r.forSizes(ctx, t, r.throughput)
		case v1alpha1.TestLatency:
			err = r.forSizes(ctx, t, r.latency)
		case v1alpha1.TestFrameLoss:
			err = r.forSizes(ctx, t, r.frameLoss)
		case v1alpha1.TestBackToBack:
			err = r.forSizes(ctx, t, r.backToBack)
		case v1alpha1.TestTimeline:
			if p.Timeline == nil {
				err = fmt.Errorf("plan: timeline without its parameters")
			} else if !r.skipStep() {
				r.progress = v1alpha1.Progress{Test: t, FrameSize: int32(p.Timeline.FrameSize)}
				r.stepStart = r.opt.Now()
				if err = r.timeline(ctx); err == nil {
					r.stepDone()
				}
			}
		case v1alpha1.TestPathMTU:
			if p.PathMTU == nil {
				err = fmt.Errorf("plan: pathMTU without its parameters")
			} else if !r.skipStep() {
				r.progress = v1alpha1.Progress{Test: t}
				r.stepStart = r.opt.Now()
				if err = r.pathMTU(ctx); err == nil {
					r.stepDone()
				}
			}
		case v1alpha1.TestImixThroughput:
			if p.Imix == nil {
				err = fmt.Errorf("plan: imixThroughput without an imix")
			} else if !r.skipStep() {
				r.progress = v1alpha1.Progress{Test: t}
				r.stepStart = r.opt.Now()
				// a step that ended in an error is not done: no checkpoint may pass over it on resume
				if err = r.imix(ctx); err == nil {
					r.stepDone()
				}
			}
		}
		if err != nil {
			return err
		}
	}
	// Latency, frame loss and back-to-back need the NDR; the plan asks throughput to be run with them.
	return nil
}

func (r *Runner) forSizes(ctx context.Context, t v1alpha1.TestKind, f func(context.Context, int) error) error {
	for _, size := range r.plan.FrameSizes {
		if r.skipStep() {
			continue
		}
		r.progress = v1alpha1.Progress{Test: t, FrameSize: int32(size)}
		r.stepStart = r.opt.Now()
		if why := r.refusedWhole(size); why != "" && t != v1alpha1.TestThroughput {
			// no frame of the size crosses: every trial would stall
			r.note(fmt.Sprintf("%s %d B was not run: the DUT refused every frame of that size as %s", t, size, why))
			r.stepDone()
			continue
		}
		if err := f(ctx, size); err != nil {
			return err
		}
		r.stepDone()
	}
	return nil
}

// applyCalibration states each row's margin to the tester's calibrated ceiling and hands the rows within
// it to the tester, before anything (a penalty, a verdict, the status) reads them. Preflight refused a
// calibration of another tester or traffic.
func (r *Runner) applyCalibration() {
	c := r.plan.Calibration
	if c == nil {
		return
	}
	for _, n := range calibration.Apply(r.res, c, r.plan.CeilingMarginPercent, r.plan.Throughput.PrecisionPercent) {
		r.note(n)
	}
}

// refusedAt says why no frame of a size crosses the DUT in direction d, as its throughput row says (rows
// come back with a resumed run's results too); "" when the direction carried it.
func (r *Runner) refusedAt(size, d int) string {
	name := r.plan.Directions()[d].Name
	for _, tr := range r.res.Throughput {
		if int(tr.FrameSize) == size && tr.Direction == name {
			return tr.Refused
		}
	}
	return ""
}

// refusedWhole says why no frame of a size crosses the DUT in any direction; "" when some direction carried
// it.
func (r *Runner) refusedWhole(size int) string {
	why := ""
	for d := range r.plan.Directions() {
		if why = r.refusedAt(size, d); why == "" {
			return ""
		}
	}
	return why
}

func (r *Runner) note(n string) {
	for _, x := range r.res.Notes {
		if x == n {
			return
		}
	}
	r.res.Notes = append(r.res.Notes, n)
}
