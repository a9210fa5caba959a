package rfc2544

import (
	"context"
	"fmt"
	"strings"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/expectations"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/search"
)

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
	// timeline, when set, keeps the trial's timeline (timeline.go): no stall ends it, since outages are
	// what it measures; watch reads the engine's timeline during the trial (final: once it has ended,
	// before the records are made), and attach adds what it read to a direction's record.
	timeline *engine.TimelineConfig
	watch    func(final bool) error
	attach   func(dir int, rec *results.Trial)
	// live, when set, says what the trial found so far, in the progress summary; liveRows the same as
	// figures (the timeline's, for Prometheus)
	live     func() string
	liveRows func() []v1alpha1.TimelineProgress
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
	// the DUT's rest ends only when nothing has arrived from it for dutRest (RFC 2544: it settles between
	// trials); a healthy DUT went quiet in the drain, and the rest slept after the last trial covers it
	cfg := engine.TrialConfig{Duration: ts.duration, WarmUp: p.Durations.WarmUp, Drain: p.Durations.Drain,
		Burst: ts.burst, Stall: r.opt.Stall, Quiet: min(p.Durations.DUTRest, maxQuiet), QuietMax: quietMax}
	if ts.burst > 0 {
		cfg.Duration, cfg.Stall = 0, 0
		cfg.Drain = max(p.Durations.Drain, p.Durations.BackToBackTrial)
	}
	if ts.timeline != nil {
		// the last frames get their settle time to arrive, as every other frame did
		cfg.Timeline, cfg.Stall = ts.timeline, 0
		cfg.Drain = max(cfg.Drain, ts.timeline.Settle+100*time.Millisecond)
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

	var watchErr error
	cpu := &cpuSampler{meter: r.opt.DUTCPU}
	if r.opt.DUTCPU != nil && ts.burst == 0 && ts.timeline == nil {
		// a paced trial of a bounded length (a timeline's hours would be millions of samples)
		cfg.OnStart = cpu.start
	}
	res, err := r.eng.RunTrial(ctx, cfg, func(pr engine.Progress) {
		if ts.watch != nil && watchErr == nil {
			watchErr = ts.watch(false)
		}
		r.emitProgress(ts, &pr)
	})
	// the DUT's CPU time ends here, the trial drained (the timeline read below is the tester's)
	cost := r.trialDUTCPU(cpu, ts, res)
	if err != nil {
		return nil, "", err
	}
	if ts.watch != nil {
		if watchErr == nil {
			watchErr = ts.watch(true)
		}
		if watchErr != nil {
			return nil, "", watchErr
		}
	}
	now := r.opt.Now()
	var out []dirResult
	for i, d := range ts.dirs {
		id := dirs[d].TX
		sr := res.Stream(id)
		if sr == nil {
			return nil, "", fmt.Errorf("engine result has no stream %d", id)
		}
		sr.FragmentedAreLost = p.Traffic.FragmentedLost
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
		if cost != nil {
			c := *cost
			rec.DUTCPU = &c
		}
		if sr.RxQueues > 1 {
			// a queue's gaps hold the other queues' flows, and distances are in one lane's numbers: early
			// and the longest distances say nothing there (PROTOCOL.md)
			rec.Early, rec.MaxEarly, rec.MaxLate, rec.RxQueues = 0, 0, 0, sr.RxQueues
		}
		// Fail closed: a trial the tester spoiled is invalid, neither a pass nor a fail of the DUT.
		lim := limitsOf(p.Validity)
		rec.TesterFaults = res.TesterFaults([]int{id}, lim)
		if pc := res.Port(dirs[d].RX); pc != nil && pc.RxFragmentsUnmatched > 0 {
			rec.FragmentsUnmatched = pc.RxFragmentsUnmatched
			name := r.plan.Ports[dirs[d].RX].Name
			if q := r.rxQueues(dirs[d].RX); q > 1 && sr.Fragmented > sr.FragmentedWhole {
				// a port of several RX queues may hash a datagram's fragments apart: the frames not whole
				// may be the tester's, and a trial that cannot tell is neither a pass nor a fail
				rec.TesterFaults = append(rec.TesterFaults, fmt.Sprintf("%d fragments came to port %s whose first fragment never did, on a port of %d RX queues whose hash may have sent them apart from their first: its %d frames not whole may be the tester's (one RX queue tells them apart)",
					pc.RxFragmentsUnmatched, name, q, sr.Fragmented-sr.FragmentedWhole))
			} else {
				// one RX queue gathers every fragment: a first that never came is the DUT's loss
				r.note(fmt.Sprintf("fragments came to port %s whose first fragment never did (the trial records: fragmentsUnmatched): the DUT lost their first fragments, and their frames count as lost (dataplane/PROTOCOL.md, Fragments)", name))
			}
		}
		bounded := r.latencyBounded(ts)
		// the loss a bounded trial is judged by last: the PDR's tolerance when one is searched
		judged := ts.tol
		if pdr := p.Throughput.PDRLossTolerancePercent; bounded && pdr != nil {
			judged = max(judged, *pdr)
		}
		if pauses := res.WorkerPauses(lim); len(pauses) > 0 {
			if ts.test == v1alpha1.TestLatency || (bounded && search.Pass(rec.LossPercent, judged)) {
				// its latency is what is judged: frames that waited in the tester spoil it
				rec.TesterFaults = append(rec.TesterFaults, pauses...)
			} else if rec.Latency != nil {
				// the loss counts stand (a pause that dropped frames is a fault above); the latency does not
				rec.Latency = nil
				sr.Latency = nil
				r.note("the latency of trials in which a tester worker paused longer than spec.tester.validity.maxWorkerGap is not reported: frames waited in the tester")
			}
		}
		if bounded {
			var unknown string
			rec.OverLatency, unknown = overLatency(p.Throughput.MaxLatency, sr.Latency)
			stat := p.Throughput.MaxLatency.Statistic()
			need := expectations.PercentileFrames(stat)
			if l := sr.Latency; l != nil && l.Valid && !r.fewBoundNoted && len(rec.TesterFaults) == 0 && search.Pass(rec.LossPercent, judged) && l.Count < need {
				r.fewBoundNoted = true
				r.note(fmt.Sprintf("some trials of the search timestamped fewer frames than the %s of spec.throughput.maxLatency needs (%d; the first: %d): the bound judged their largest latency, which is their %s by nearest rank: one frame decides it; longer trials (spec.durations) judge the percentile itself",
					stat, need, l.Count, stat))
			}
			if unknown != "" && search.Pass(rec.LossPercent, judged) {
				// a trial whose loss passes is judged by its latency too: unknown, it cannot be judged
				rec.TesterFaults = append(rec.TesterFaults, "the latency the bound judges was not measured: "+unknown)
			}
		}
		r.noteRest(res, &rec, dirs[d].RX, dirs[d].Name)
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
		if sr.RxTooBig > 0 {
			// the errors quoting this direction's own frames (a port's count would include another
			// stream's sent from the same port)
			rec.TooBig, rec.PathMTU = sr.RxTooBig, sr.TooBigMTU
			r.note(tooBigNote(ts.size, dirs[d].Name, sr.TooBigMTU, p.Traffic.VLAN != 0))
		}
		if sr.Fragmented > 0 {
			rec.Fragmented, rec.FragmentedWhole, rec.Fragments = sr.Fragmented, sr.FragmentedWhole, sr.Fragments
			r.note(fragmentedNote(ts.size, dirs[d].Name, p.Traffic.FragmentedLost))
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
		rec.Pass = rec.Aborted == "" && !rec.TesterLimited && rec.LossPercent <= ts.tol+1e-9 && !rec.OverLatency
		if ts.attach != nil {
			ts.attach(d, &rec)
		}
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

// latencyBounded says whether the trial is judged by the throughput's latency bound too: a paced trial
// of a throughput search (or of its confirmation) under spec.throughput.maxLatency.
func (r *Runner) latencyBounded(ts trialSpec) bool {
	return r.plan.Throughput.MaxLatency != nil && ts.burst == 0 &&
		(ts.test == v1alpha1.TestThroughput || ts.test == v1alpha1.TestImixThroughput)
}

// overLatency says whether a trial's latency exceeds the bound, or why it is unknown.
func overLatency(b *plan.LatencyBound, l *engine.Latency) (over bool, unknown string) {
	switch {
	case l == nil:
		return false, "no latency was reported"
	case !l.Valid:
		if l.Reason != "" {
			return false, l.Reason
		}
		return false, "no frame was received"
	}
	stat := b.Statistic()
	if _, ok := expectations.Quantile(stat); !ok && stat != "max" {
		return false, fmt.Sprintf("the bound's percentile %g is not one the engine reports", b.Percentile)
	}
	at := expectations.Statistic(*latencySummary(l), stat)
	if l.Count < expectations.PercentileFrames(stat) {
		// too few frames for the percentile (the record leaves it out): of fewer than 1/(1-p) frames the
		// p-th percentile by nearest rank is the largest latency seen, and the bound judges that, as the
		// engine's own figure did before percentiles were left out (repeating the trial would give the
		// same few frames). One frame decides it: a DUT's rare slow frame, or a tester's delay shorter
		// than spec.tester.validity.maxWorkerGap, the same as for the percentile of enough frames.
		at = l.MaxNs
	}
	// within the bound only with the percentile's resolution and the clocks' offset added
	return time.Duration(at+l.ResolutionNs+l.ClockBoundNs) > b.Bound, ""
}

// quietMax is the longest a trial waits for the DUT to stop forwarding an earlier one; maxQuiet the
// longest quiet the engine waits for (a longer dutRest was slept after the trial before in full anyway).
const (
	quietMax = 10 * time.Second
	maxQuiet = 10 * time.Minute
)

// noteRest records how the DUT rested before the trial (its rest lengthened while it still forwarded an
// earlier trial; frames of earlier trials that arrived on port rx all the same) and says so once.
func (r *Runner) noteRest(res *engine.TrialResult, rec *results.Trial, rx int, dir string) {
	rest := r.plan.Durations.DUTRest
	if w := time.Duration(res.QuietWaitNs); w >= time.Millisecond {
		rec.RestExtendedS = w.Seconds()
		if !r.restNoted {
			r.restNoted = true
			r.note(fmt.Sprintf("the DUT was still forwarding frames of an earlier trial when the next one was due (the first: %.1f s more before trial %d): each trial waited until nothing had arrived from the DUT for spec.durations.dutRest (%s), up to %s more (the trial records give how long: restExtendedS); a DUT that queues this deeply delays frames by about as much at the loads before",
				w.Seconds(), rec.Seq, rest, quietMax))
		}
	}
	for _, pc := range res.Ports {
		if pc.ID == rx {
			rec.Stale = pc.RxStale
		}
	}
	if rec.Stale > 0 && !r.staleNoted {
		r.staleNoted = true
		why := "it began when the DUT had been quiet for spec.durations.dutRest"
		switch {
		case res.QuietMissed:
			why = fmt.Sprintf("the DUT was still forwarding after %s of waiting", quietMax)
		case rest == 0:
			why = "spec.durations.dutRest is 0: the DUT was not rested"
		}
		r.note(fmt.Sprintf("frames of an earlier trial arrived during a later one (the first: %d frames in trial %d, %s; %s): the trial's frames waited behind them, so its loss and latency include that backlog (the trial records give how many: stale)",
			rec.Stale, rec.Seq, dir, why))
	}
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

// tooBigNote says that a hop refused a size's frames for its MTU (the ICMP errors that came back: the
// frames carry DF), and, where the errors named the MTU, the largest frame that crosses whole.
// fragmentedNote says that the DUT fragmented frames sent with DF clear, and what they counted as.
func fragmentedNote(size int, dir string, lost bool) string {
	what := "IMIX frames"
	if size > 0 {
		what = fmt.Sprintf("frames of %d B", size)
	}
	counted := "a frame every fragment of which arrived counts as received (spec.traffic.fragmentedFrames Received), one missing a fragment as lost"
	if lost {
		counted = "each counts as lost (spec.traffic.fragmentedFrames Lost)"
	}
	return fmt.Sprintf("the DUT fragmented %s %s (they leave with DF clear: spec.traffic.dontFragment false): the trial records count the frames that arrived in fragments, those whole and the fragments (fragmented, fragmentedWhole, fragments); %s",
		what, dir, counted)
}

func tooBigNote(size int, dir string, mtu int64, vlan bool) string {
	what := "IMIX frames"
	if size > 0 {
		what = fmt.Sprintf("frames of %d B", size)
	}
	n := fmt.Sprintf("the DUT refused %s %s as too big for its MTU and said so by ICMP (the trial records count the errors: tooBig); such frames are dropped, not forwarded, and count as lost",
		what, dir)
	if mtu > 0 {
		overhead := int64(14 + 4) // Ethernet header and FCS around the IP packet an MTU limits
		if vlan {
			overhead += 4
		}
		n += fmt.Sprintf(": path MTU %d, so the largest frame that crosses it whole is %d B", mtu, mtu+overhead)
	}
	return n
}
