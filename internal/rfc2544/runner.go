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
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/calibration"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/expectations"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/results"
)

// Sink receives what the run measures.
type Sink interface {
	// OnTrial is called once per direction of every trial.
	OnTrial(results.Trial)
	// OnProgress is called at every trial start and with live counters during trials.
	OnProgress(v1alpha1.Progress)
	// OnResults is called with the result tables after every completed step.
	OnResults(*v1alpha1.Results)
}

// Checkpointer is a Sink that keeps checkpoints: after every complete step it gets one (with the result
// tables) instead of OnResults, so that a suspended run can go on from there.
type Checkpointer interface {
	OnCheckpoint(results.Checkpoint)
}

// NopSink discards everything.
type NopSink struct{}

func (NopSink) OnTrial(results.Trial)        {}
func (NopSink) OnProgress(v1alpha1.Progress) {}
func (NopSink) OnResults(*v1alpha1.Results)  {}

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
	// bursts are the back-to-back answers so far, by size and the lane's first direction: the estimate
	// of the repetitions left rests on their scatter
	bursts     map[key][]int64
	trials     []results.Trial
	faultNoted bool
	// skipSteps are the steps still to pass over because a checkpoint says they are done; resumes counts
	// the resumptions of this run.
	skipSteps int
	resumes   int
	// stepStart is when the step under way began; planned the whole run's estimate at its start
	stepStart time.Time
	planned   time.Duration
	// est is what the trials so far took, which the estimate learns from (estimate.go)
	est estimateState
}

type streamDef struct {
	sizes []int
	mean  float64
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
	r := &Runner{plan: p, eng: e, sink: sink, opt: opt, ndr: map[key]ndrInfo{}, bursts: map[key][]int64{}}
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
	r.stepsTotal = r.countSteps()
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

func (r *Runner) countSteps() int {
	n := 0
	for _, t := range r.plan.Tests {
		if t == v1alpha1.TestImixThroughput {
			n++
		} else {
			n += len(r.plan.FrameSizes)
		}
	}
	return n
}

func (r *Runner) runTests(ctx context.Context) error {
	p := r.plan
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
		if err := f(ctx, size); err != nil {
			return err
		}
		r.stepDone()
	}
	return nil
}

func (r *Runner) stepDone() {
	r.applyCalibration()
	r.stepsDone++
	r.progress.StepsDone = int32(r.stepsDone)
	if c, ok := r.sink.(Checkpointer); ok {
		c.OnCheckpoint(r.checkpoint())
		return
	}
	r.sink.OnResults(r.res)
}

// skipStep passes over a step a checkpoint says is done.
func (r *Runner) skipStep() bool {
	if r.skipSteps == 0 {
		return false
	}
	r.skipSteps--
	return true
}

// checkpoint is where the run stands after a complete step.
func (r *Runner) checkpoint() results.Checkpoint {
	cp := results.Checkpoint{PlanHash: r.opt.PlanHash, StepsDone: r.stepsDone, LastSeq: r.seq,
		Results: r.res.DeepCopy(), Resumes: r.resumes}
	for k, v := range r.ndr {
		cp.NDR = append(cp.NDR, results.NDRPoint{FrameSize: k.size, Direction: k.dir, Percent: v.percent, Found: v.found,
			TesterLimited: &v.testerLimited})
	}
	slices.SortFunc(cp.NDR, func(a, b results.NDRPoint) int {
		if a.FrameSize != b.FrameSize {
			return a.FrameSize - b.FrameSize
		}
		return a.Direction - b.Direction
	})
	return cp
}

// resume takes up a checkpoint of an earlier runner of the same plan: its tables and NDRs stand, its
// complete steps are passed over, and the notes say what was kept and what was measured again.
func (r *Runner) resume(cp *results.Checkpoint) {
	if cp.PlanHash != r.opt.PlanHash || cp.Results == nil || cp.StepsDone > r.stepsTotal {
		r.note(fmt.Sprintf("the results ConfigMap held a checkpoint of another plan (spec changed while suspended): the run started from the beginning; the earlier trial records (seq 1-%d) are kept", r.opt.LastSeq))
		r.sink.OnResults(r.res) // the old plan's tables are not this run's
		return
	}
	r.res = cp.Results.DeepCopy()
	rowLimited := map[key]bool{} // a checkpoint written before NDRPoint had the flag says it in its rows
	for _, t := range r.res.Throughput {
		for d, dir := range r.plan.Directions() {
			if dir.Name == t.Direction {
				rowLimited[key{int(t.FrameSize), d}] = t.TesterLimited
			}
		}
	}
	for _, n := range cp.NDR {
		k := key{n.FrameSize, n.Direction}
		limited := rowLimited[k]
		if n.TesterLimited != nil {
			limited = *n.TesterLimited
		}
		r.ndr[k] = ndrInfo{percent: n.Percent, found: n.Found, testerLimited: limited}
	}
	r.stepsDone, r.skipSteps, r.resumes = cp.StepsDone, cp.StepsDone, cp.Resumes+1
	r.progress.StepsDone = int32(r.stepsDone)
	msg := fmt.Sprintf("resumed after a suspension (resumption %d): the %d of %d steps complete then were not measured again", r.resumes, cp.StepsDone, r.stepsTotal)
	if r.opt.LastSeq > cp.LastSeq {
		msg += fmt.Sprintf("; the step under way then was measured again from its start, its earlier trials (seq %d-%d) are kept in the records but count for nothing", cp.LastSeq+1, r.opt.LastSeq)
	}
	r.note(msg)
	r.sink.OnResults(r.res)
}

// saturationNote says what kept the tester from offering the rate a trial asked for on its TX port tx: the
// port (its TX queue was full: the link carries less than the plan's line rate) or the tester's CPU.
func (r *Runner) saturationNote(res *engine.TrialResult, tx int) string {
	for _, pc := range res.Ports {
		if pc.ID == tx && pc.TxFull > 0 {
			return fmt.Sprintf("in trials marked tester-limited the tester's port %s was full (its TX queue took bursts only in part): the link carries less than spec.traffic.lineRate says; set lineRate to the link's real speed", r.portName(tx))
		}
	}
	return "in trials marked tester-limited the tester's CPU was the limit (its port was never full): give the tester dedicated, faster CPUs (spec.tester.cpus) or lower the rate"
}

func (r *Runner) portName(id int) string {
	if id >= 0 && id < len(r.plan.Ports) {
		return r.plan.Ports[id].Name
	}
	return fmt.Sprint(id)
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

func (r *Runner) note(n string) {
	for _, x := range r.res.Notes {
		if x == n {
			return
		}
	}
	r.res.Notes = append(r.res.Notes, n)
}

// sends says whether port i sends test frames in this plan.
func (r *Runner) sends(i int) bool {
	return slices.ContainsFunc(r.plan.Directions(), func(d plan.Direction) bool { return d.TX == i })
}

// uncheckedChecksums names the checksums of the test frames that port i receives and does not verify
// (rxChecksums: the engine's list, "ipv4,udp"), "" when it verifies them all or receives nothing.
func (r *Runner) uncheckedChecksums(i int, rxChecksums string) string {
	if !slices.ContainsFunc(r.plan.Directions(), func(d plan.Direction) bool { return d.RX == i }) {
		return ""
	}
	checked := strings.Split(rxChecksums, ",")
	var missing []string
	if r.plan.Traffic.IPVersion != 6 && !slices.Contains(checked, "ipv4") {
		missing = append(missing, "IPv4 header")
	}
	if !slices.Contains(checked, "udp") {
		missing = append(missing, "UDP")
	}
	return strings.Join(missing, " and ")
}

// setup addresses the ports, records and checks them (preflight.go), and resolves their next hops.
func (r *Runner) setup(ctx context.Context) error {
	if err := r.preflight(ctx); err != nil {
		return err
	}
	for i, port := range r.plan.Ports {
		if port.PeerMAC != "" {
			continue
		}
		var err error
		for attempt := 0; attempt < 3; attempt++ {
			if _, err = r.eng.Resolve(ctx, i, r.opt.ResolveTimeout); err == nil {
				break
			}
		}
		if err != nil {
			return fmt.Errorf("port %s: resolving gateway %s: %w", port.Name, port.Gateway, err)
		}
	}
	return nil
}

func hostAddr(prefix string) string {
	if p, err := netip.ParsePrefix(prefix); err == nil {
		return p.Addr().String()
	}
	return prefix
}

var varyNames = map[string]string{"srcPort": "sport", "dstPort": "dport", "srcIP": "src", "dstIP": "dst"}

// defineStreams (re)defines the stream of every direction with a size schedule.
func (r *Runner) defineStreams(ctx context.Context, sizes []int) error {
	p := r.plan
	for _, d := range p.Directions() {
		id := d.TX
		if equalInts(r.streams[id].sizes, sizes) {
			continue
		}
		cfg := engine.StreamConfig{ID: id, TX: d.TX, RX: d.RX, L3: "ipv4",
			Src: hostAddr(p.Ports[d.TX].Address), Dst: hostAddr(p.Ports[d.RX].Address),
			SPort: p.Traffic.SrcPort, DPort: p.Traffic.DstPort, Flows: p.Traffic.Flows, DSCP: p.Traffic.DSCP,
			Payload: strings.ToLower(p.Traffic.Payload), Sizes: sizes}
		if p.Traffic.IPVersion == 6 {
			cfg.L3 = "ipv6"
		}
		for _, v := range p.Traffic.Vary {
			if n, ok := varyNames[v]; ok {
				cfg.Vary = append(cfg.Vary, n)
			}
		}
		info, err := r.eng.Stream(ctx, cfg)
		if err != nil {
			return fmt.Errorf("stream %s: %w", d.Name, err)
		}
		mean := info.MeanFrame
		if mean <= 0 {
			mean = meanOf(sizes)
		}
		r.streams[id] = streamDef{sizes: append([]int(nil), sizes...), mean: mean}
	}
	return nil
}

func meanOf(v []int) float64 {
	s := 0
	for _, x := range v {
		s += x
	}
	return float64(s) / float64(len(v))
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// lineFPS is the line rate in frames/s at a mean frame size.
func (r *Runner) lineFPS(mean float64) float64 {
	return float64(r.plan.Traffic.LineRateBps) / ((mean + 20) * 8)
}

// trialSpec describes one trial over one or more directions.
type trialSpec struct {
	test     v1alpha1.TestKind
	size     int // 0 for IMIX
	rep      int
	dirs     []int     // directions (index into plan.Directions())
	rates    []float64 // percent of line rate per direction
	purposes []string  // per direction
	duration time.Duration
	burst    int64
	tol      float64
}

// validTrial runs a trial and repeats it while the tester spoiled it (in any direction), at most the plan's
// invalidTrialRetries times. spoiled says the last run was still the tester's: its numbers are not the DUT's.
func (r *Runner) validTrial(ctx context.Context, ts trialSpec) (drs []dirResult, aborted string, spoiled bool, err error) {
	for i := 0; ; i++ {
		drs, aborted, err = r.trial(ctx, ts)
		if err != nil || aborted != "" {
			return drs, aborted, false, err
		}
		spoiled = false
		for _, dr := range drs {
			spoiled = spoiled || dr.rec.TesterLimited
		}
		if !spoiled || i >= r.plan.Validity.InvalidTrialRetries {
			return drs, aborted, spoiled, nil
		}
	}
}

// spoiledBy names what spoiled a trial, from its first direction's record.
func spoiledBy(drs []dirResult) string {
	for _, dr := range drs {
		if len(dr.rec.TesterFaults) > 0 {
			return dr.rec.TesterFaults[0]
		}
		if dr.rec.TesterLimited {
			return fmt.Sprintf("the tester sent %d frames at %.0f frames/s, short of the %.0f asked", dr.rec.TxFrames, dr.rec.AchievedFPS, dr.rec.TargetFPS)
		}
	}
	return ""
}

type dirResult struct {
	dir    int
	rec    results.Trial
	stream *engine.StreamResult
}

// trial runs one trial and records it. It returns the per-direction results and the abort reason.
func (r *Runner) trial(ctx context.Context, ts trialSpec) ([]dirResult, string, error) {
	p := r.plan
	dirs := p.Directions()
	cfg := engine.TrialConfig{Duration: ts.duration, WarmUp: p.Durations.WarmUp, Drain: p.Durations.Drain,
		Burst: ts.burst, Stall: r.opt.Stall}
	if ts.burst > 0 {
		cfg.Duration, cfg.Stall = 0, 0
		cfg.Drain = max(p.Durations.Drain, p.Durations.BackToBackTrial)
	}
	var names []string
	for i, d := range ts.dirs {
		id := dirs[d].TX
		cfg.Streams = append(cfg.Streams, id)
		cfg.RatesFPS = append(cfg.RatesFPS, ts.rates[i]/100*r.lineFPS(r.streams[id].mean))
		names = append(names, dirs[d].Name)
	}
	r.trialNo++
	r.progress.Trial = int32(r.trialNo)
	r.progress.Direction = strings.Join(names, ",")
	if ts.burst > 0 {
		r.progress.OfferedRate = "100"
	} else {
		r.progress.OfferedRate = FormatPct(ts.rates[0])
	}
	r.progress.StepsTotal = int32(r.stepsTotal)
	r.progress.StepsDone = int32(r.stepsDone)
	r.emitProgress(ts, nil)

	res, err := r.eng.RunTrial(ctx, cfg, func(pr engine.Progress) { r.emitProgress(ts, &pr) })
	if err != nil {
		return nil, "", err
	}
	now := r.opt.Now()
	var out []dirResult
	for i, d := range ts.dirs {
		id := dirs[d].TX
		sr := res.Stream(id)
		if sr == nil {
			return nil, "", fmt.Errorf("engine result has no stream %d", id)
		}
		r.seq++
		dur := time.Duration(res.DurationNs)
		if dur == 0 {
			dur = ts.duration
		}
		rec := results.Trial{Seq: r.seq, Time: now, Test: ts.test, FrameSize: ts.size, Direction: dirs[d].Name,
			Purpose: ts.purposes[i], Repetition: ts.rep, DurationS: dur.Seconds(),
			TargetFPS: sr.TargetFPS, AchievedFPS: sr.AchievedFPS, TxFrames: sr.TxFrames, RxFrames: sr.RxFrames,
			Lost: sr.Lost(), Duplicates: sr.Duplicates, Reordered: sr.Reordered, Early: sr.Early, MaxLate: sr.MaxLate,
			MaxEarly: sr.MaxEarly, Corrupted: sr.Corrupted, LossPercent: sr.LossPercent(),
			Latency: latencySummary(sr.Latency)}
		rec.Workers = workersOf(res.Workers)
		if sr.RxQueues > 1 {
			// a queue's gaps hold the other queues' flows, and distances are in one lane's numbers: early
			// and the longest distances say nothing there (PROTOCOL.md)
			rec.Early, rec.MaxEarly, rec.MaxLate, rec.RxQueues = 0, 0, 0, sr.RxQueues
		}
		// Fail closed: a trial the tester spoiled is invalid, neither a pass nor a fail of the DUT.
		lim := limitsOf(p.Validity)
		rec.TesterFaults = res.TesterFaults([]int{id}, lim)
		if pauses := res.WorkerPauses(lim); len(pauses) > 0 {
			if ts.test == v1alpha1.TestLatency {
				rec.TesterFaults = append(rec.TesterFaults, pauses...)
			} else if rec.Latency != nil {
				// the loss counts stand (a pause that dropped frames is a fault above); the latency does not
				rec.Latency = nil
				sr.Latency = nil
				r.note("the latency of trials in which a tester worker paused longer than spec.tester.validity.maxWorkerGap is not reported: frames waited in the tester")
			}
		}
		// one rule decides: the limits of spec.tester.validity (the engine's own saturated flag only says
		// why, in the note)
		rec.TesterLimited = len(rec.TesterFaults) > 0
		if rec.TesterLimited && sr.Saturated {
			r.note(r.saturationNote(res, dirs[d].TX))
		}
		if len(rec.TesterFaults) > 0 && !r.faultNoted {
			r.faultNoted = true
			r.note("trials the tester spoiled are invalid, counted neither for nor against the DUT, and repeated; their records list why (testerFaults). The first: " + rec.TesterFaults[0])
		}
		if sr.Corrupted > 0 {
			r.note("the DUT corrupted frames: some arrived with a bad IPv4 header or UDP checksum and were not counted as received, so they show as loss (the trial records give how many: corrupt)")
		}
		if ts.burst > 0 {
			rec.Burst = ts.burst
		} else {
			rec.OfferedPercent = ts.rates[i]
		}
		if res.Aborted() {
			rec.Aborted = res.Reason
			if rec.Aborted == "" {
				rec.Aborted = engine.ReasonAborted
			}
		}
		rec.Pass = rec.Aborted == "" && !rec.TesterLimited && rec.LossPercent <= ts.tol+1e-9
		r.trials = append(r.trials, rec)
		r.sink.OnTrial(rec)
		out = append(out, dirResult{dir: d, rec: rec, stream: sr})
	}
	// Frames of sender lanes the receiving engine keeps no state for are a set-up fault that repeats in
	// every trial (the trials above are invalid for it): the run ends here rather than search downwards
	// for a ceiling that is the set-up's.
	for _, o := range out {
		if o.stream.UnknownLane > 0 {
			return out, "", fmt.Errorf("tester set-up: %d frames of the %s direction came from sender lanes its receiving engine keeps no state for (it was told fewer lanes than the sender sends on): no trial of this run can be counted",
				o.stream.UnknownLane, dirs[o.dir].Name)
		}
	}
	aborted := ""
	if res.Aborted() {
		aborted = res.Reason
		if aborted == "" {
			aborted = engine.ReasonAborted
		}
		if aborted == engine.ReasonDUTStalled {
			return out, aborted, nil
		}
	}
	if d := p.Durations.DUTRest; d > 0 {
		if err := r.opt.Sleep(ctx, d); err != nil {
			return out, aborted, err
		}
	}
	return out, aborted, nil
}

func (r *Runner) emitProgress(ts trialSpec, pr *engine.Progress) {
	pg := r.progress
	now := r.opt.Now()
	t := metaTime(now)
	pg.UpdateTime = &t
	what := string(ts.test)
	if ts.size > 0 {
		what += fmt.Sprintf(" %dB", ts.size)
	}
	purpose := ""
	if len(ts.purposes) > 0 {
		purpose = ts.purposes[0]
	}
	if ts.burst > 0 {
		pg.Summary = fmt.Sprintf("%s %s: trial %d, burst of %d frames (step %d/%d)", what, pg.Direction, pg.Trial, ts.burst, r.stepsDone+1, r.stepsTotal)
	} else {
		pg.Summary = fmt.Sprintf("%s %s: trial %d at %s%% (%s, %s) (step %d/%d)", what, pg.Direction, pg.Trial, pg.OfferedRate, purpose,
			ts.duration, r.stepsDone+1, r.stepsTotal)
	}
	if pr == nil {
		r.est.trialStarted(now, r.stepsDone, len(ts.dirs), r.phasesOf(ts.duration, ts.burst > 0), len(r.trials))
	}
	left := r.remaining(now.Sub(r.stepStart))
	pg.EstimatedSecondsLeft = int64(math.Ceil(left.expected.Seconds()))
	pg.EstimatedTotalSeconds = int64(math.Ceil(r.planned.Seconds()))
	pg.Summary += ", " + left.String()
	if pr != nil {
		var tx, rx int64
		for _, s := range pr.Streams {
			tx += s.TxFrames
			rx += s.RxFrames
		}
		pg.Summary += fmt.Sprintf(" %s %.0fs tx=%d rx=%d", pr.State, pr.Elapsed.Seconds(), tx, rx)
	}
	r.sink.OnProgress(pg)
}

// FormatPct renders a percentage of line rate with up to three decimals.
func FormatPct(v float64) string {
	s := strconv.FormatFloat(v, 'f', 3, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// FormatLoss renders a loss percentage.
func FormatLoss(v float64) string { return plan.FormatPercent(v) }

// limitsOf are the engine's health limits of a plan, defaults filled.
func limitsOf(v plan.Validity) engine.Limits {
	return engine.Limits{MaxTxLag: v.MaxTxLag, MaxWorkerGap: v.MaxWorkerGap, MaxShortfall: v.MaxShortfallPercent / 100}.WithDefaults()
}

// workersOf is the engine's workers record as a trial record keeps it: which worker served which queue
// pairs, what each carried, and how long it paused.
func workersOf(ws []engine.WorkerHealth) []results.Worker {
	var out []results.Worker
	for _, w := range ws {
		rw := results.Worker{Lcore: w.Lcore, MaxGapUs: w.MaxGapNs / 1000}
		for _, q := range w.Queues {
			rw.Queues = append(rw.Queues, results.Queue{Port: q.Port, Queue: q.Queue, Rx: q.RxFrames, Tx: q.TxFrames})
		}
		if len(w.Queues) == 0 { // an engine older than queues: its ports whole
			for _, p := range w.Ports {
				rw.Queues = append(rw.Queues, results.Queue{Port: p})
			}
		}
		out = append(out, rw)
	}
	return out
}
