package rfc2544

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/search"
)

// detail is what a search measurement carries: the per-direction results of its trial.
type detail struct {
	dirs []dirResult
}

type laneReq struct {
	lane    int
	rate    float64
	d       time.Duration
	purpose string
	reply   chan laneReply
}

type laneReply struct {
	m   search.Measurement
	err error
}

// searchLanes runs one search per lane in lock step: each trial carries the current rate of every lane
// still searching (a lane that has finished keeps sending at its result as background load), and lasts
// as long as the longest trial any lane asked for — a longer trial is never more lenient.
func (r *Runner) searchLanes(ctx context.Context, test v1alpha1.TestKind, size, rep int) ([]*search.Result, error) {
	lanes := r.plan.Lanes()
	tp := r.plan.Throughput
	params := search.Params{MaxRate: tp.MaxRatePercent, Resolution: tp.ResolutionPercent, LossTolerance: tp.LossTolerancePercent,
		PDRLossTolerance: tp.PDRLossTolerancePercent, SearchTrial: r.plan.Durations.SearchTrial,
		ValidationTrial: r.plan.Durations.ValidationTrial, MaxTrials: r.opt.MaxTrialsPerSearch,
		InvalidRetries: r.plan.Validity.InvalidTrialRetries}
	if params.InvalidRetries == 0 {
		params.InvalidRetries = -1 // the plan asked for none
	}
	if g := tp.Goal; g != nil {
		width := fmt.Sprintf("the goal width is the resolution, %s%% of line rate (absolute)", FormatPct(tp.ResolutionPercent))
		if g.WidthPercent > 0 {
			width = fmt.Sprintf("the goal width is %s%% of the upper bound, relative ((upper - lower) / upper)", FormatPct(g.WidthPercent))
		}
		share := "so a trial at the NDR may have lost frames; the loss given is the loss at that share (the conditional throughput's)"
		if g.ExceedRatioPercent == 0 {
			share = "so no full-length trial at the NDR lost more than the tolerance"
		}
		r.note(fmt.Sprintf("throughput was searched with the %s goal (RFC 9971): a rate is the answer when its %s trials kept within the loss tolerance for all but %s%% of %s, %s; %s; the results are comparable only with runs of the same goal",
			g.Preset, g.FinalTrialDuration, FormatPct(g.ExceedRatioPercent), g.DurationSum, share, width))
		// full-length is the goal's final trial duration; its loss ratio is the tolerance searched
		params.Goal = r.searchGoal()
		params.ValidationTrial = g.FinalTrialDuration
	}
	algo := search.Multistage
	if tp.Method == v1alpha1.SearchBinary {
		algo = search.Binary
	}

	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	reqs := make(chan laneReq)
	type done struct {
		lane int
		res  *search.Result
		err  error
	}
	dones := make(chan done, len(lanes))
	var wg sync.WaitGroup
	for i := range lanes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			measure := func(ctx context.Context, rate float64, d time.Duration, purpose string) (search.Measurement, error) {
				rq := laneReq{lane: i, rate: rate, d: d, purpose: purpose, reply: make(chan laneReply, 1)}
				select {
				case reqs <- rq:
				case <-ctx.Done():
					return search.Measurement{}, ctx.Err()
				}
				select {
				case rp := <-rq.reply:
					return rp.m, rp.err
				case <-ctx.Done():
					return search.Measurement{}, ctx.Err()
				}
			}
			res, err := algo(sctx, params, measure)
			dones <- done{i, res, err}
		}()
	}
	defer wg.Wait()

	out := make([]*search.Result, len(lanes))
	finished := make([]bool, len(lanes))
	var firstErr error
	active := len(lanes)
	pending := map[int]laneReq{}
	refusedIn := map[int]time.Duration{} // the lanes refused whole, with the trial that showed it
	for active > 0 {
		// Collect a request (or the end) of every active lane.
		for len(pending) < active {
			select {
			case rq := <-reqs:
				pending[rq.lane] = rq
			case d := <-dones:
				out[d.lane], finished[d.lane] = d.res, true
				active--
				if spent, ok := refusedIn[d.lane]; ok && d.res != nil {
					// the trial that showed the refusal is the search's, which its error kept from counting
					d.res.Trials++
					d.res.TrialTime += spent
				}
				if d.err != nil && firstErr == nil && !errors.Is(d.err, errRefused) {
					firstErr = d.err
				}
			case <-ctx.Done():
				return out, ctx.Err()
			}
		}
		if len(pending) == 0 {
			break
		}
		if firstErr != nil && !errors.Is(firstErr, search.ErrAborted) {
			for _, rq := range pending {
				rq.reply <- laneReply{err: firstErr}
			}
			pending = map[int]laneReq{}
			continue
		}
		// a lane the path MTU finder already refused runs no trial: its search ends before its first
		if known := r.refusedByFinder(size, lanes, pending); len(known) > 0 {
			for _, l := range known {
				pending[l].reply <- laneReply{err: errRefused}
				delete(pending, l)
			}
			continue
		}
		ts := trialSpec{test: test, size: size, rep: rep, tol: tp.LossTolerancePercent}
		laneOf := map[int]int{}
		for l, dirs := range lanes {
			rate, purpose := 0.0, ""
			if rq, ok := pending[l]; ok {
				rate, purpose = rq.rate, rq.purpose
				ts.duration = max(ts.duration, rq.d)
			} else if finished[l] && out[l] != nil && out[l].Found && out[l].NDR > 0 {
				rate, purpose = out[l].NDR, "background"
			} else {
				continue
			}
			for _, d := range dirs {
				ts.dirs = append(ts.dirs, d)
				ts.rates = append(ts.rates, rate)
				ts.purposes = append(ts.purposes, purpose)
				laneOf[d] = l
			}
		}
		drs, aborted, err := r.trial(ctx, ts)
		var refused map[int]refusal
		if err == nil {
			refused, err = r.refusedLanes(ctx, test, size, drs, laneOf, pending)
		}
		// a stall the refused lanes explain (nothing else came back empty) cut the other lanes' trial short:
		// theirs runs again without them
		rerun := aborted == engine.ReasonDUTStalled && len(refused) > 0 && onlyRefusedEmpty(drs, laneOf, refused)
		for l, rq := range pending {
			if err != nil {
				rq.reply <- laneReply{err: err}
				continue
			}
			if why, ok := refused[l]; ok {
				for _, d := range lanes[l] {
					r.refusedTooBig[key{size, d}] = why
				}
				refusedIn[l] = ts.duration
				for _, dr := range drs {
					if laneOf[dr.dir] == l {
						refusedIn[l] = time.Duration(dr.rec.DurationS * float64(time.Second))
					}
				}
				rq.reply <- laneReply{err: errRefused}
				delete(pending, l)
				continue
			}
			if rerun {
				continue
			}
			m := search.Measurement{Duration: ts.duration, Aborted: aborted}
			var det detail
			for _, dr := range drs {
				if laneOf[dr.dir] != l {
					continue
				}
				det.dirs = append(det.dirs, dr)
				m.Duration = time.Duration(dr.rec.DurationS * float64(time.Second))
				// One verdict per lane: the worst direction decides.
				if dr.rec.LossPercent > m.LossPercent {
					m.LossPercent = dr.rec.LossPercent
				}
				m.OverLatency = m.OverLatency || dr.rec.OverLatency
				if dr.rec.TesterLimited {
					ach := 100 * dr.stream.AchievedFPS / r.lineFPS(r.streams[r.plan.Directions()[dr.dir].TX].mean)
					if !m.TesterLimited || ach < m.AchievedPercent {
						m.AchievedPercent = ach
					}
					m.TesterLimited = true
				}
			}
			m.Detail = det
			rq.reply <- laneReply{m: m}
		}
		if !rerun {
			pending = map[int]laneReq{}
		}
	}
	if firstErr != nil && errors.Is(firstErr, search.ErrAborted) {
		return out, fmt.Errorf("%w: %v", ErrDUTStalled, firstErr)
	}
	return out, firstErr
}

// errRefused ends the search of a lane whose every frame the DUT refused as too big for its MTU, or
// fragmented where the spec counts fragmented frames as lost: the size does not fit there, at any rate.
var errRefused = errors.New("the DUT refused every frame of the size (too big for its MTU, or fragmented)")

// refusal is why a direction's frames of a size never cross: the DUT refused them as too big (MTU, from
// its ICMP; 0: it named none), in that direction or, for a lane whose directions share one verdict, in
// another of the lane (by: its name).
type refusal struct {
	mtu int64
	by  string
	// finder: the path MTU finder of the run found the direction carries no frame this large (its row
	// says whether the DUT said so); no trial of the size was run
	finder bool
	// fragmented: the DUT fragments frames of the size (the finder found it, or a trial's every frame that
	// crossed came in fragments), which the spec counts as lost
	fragmented bool
	// sent and errors: the frames of the size the refusing trial sent in the direction, and the DUT's ICMP
	// errors that came back for them (a router that rate-limits its ICMP sends fewer than it refused)
	sent, errors int64
}

// refusedLanes are the lanes searching in a trial (pending) of which a direction the DUT refused whole: its
// ICMP said the frames were too big and none crossed, and a probe at the path MTU finder's low rate, which
// the tester did not spoil, confirms that none cross (an MTU does not depend on the rate; a DUT overloaded at
// the trial's rate is not refusing the size; a router that rate-limits its ICMP may send none for the
// probe); or, with fragments counted as lost, every frame that crossed came in fragments (an IMIX's smallest
// size's among them). A lane whose directions share one verdict fails with any of them.
func (r *Runner) refusedLanes(ctx context.Context, test v1alpha1.TestKind, size int, drs []dirResult, laneOf map[int]int, pending map[int]laneReq) (map[int]refusal, error) {
	dirs := r.plan.Directions()
	out := map[int]refusal{}
	for _, dr := range drs {
		l := laneOf[dr.dir]
		if _, searching := pending[l]; !searching {
			continue
		}
		if _, done := out[l]; done {
			continue
		}
		if r.plan.Traffic.FragmentedLost && dr.rec.Fragmented > 0 && dr.rec.RxFrames-dr.rec.Duplicates <= dr.rec.Fragmented &&
			(size > 0 || smallestCrossed(dr.stream, r.plan.Imix.Cycle)) {
			// every frame that crossed came in fragments, which the spec counts as lost: a hop's MTU is
			// smaller, at any rate (a fragment is the DUT's answer, whatever the tester's part). An IMIX only
			// when frames of its smallest size crossed too, each of them in fragments: had they all been
			// lost, the mix's sizes that fit would be unknown.
			out[l] = refusal{by: dirs[dr.dir].Name, fragmented: true, sent: dr.rec.TxFrames}
			continue
		}
		if dr.rec.TooBig == 0 || dr.rec.RxFrames > 0 {
			continue
		}
		if size == 0 {
			// an IMIX is refused whole only where the MTU the DUT's ICMP named is below its every size (a size
			// that fits shows the others as the mix's loss); no probe: the ICMP's MTU decides each size
			if mtu := dr.rec.PathMTU; mtu > 0 && int64(slices.Min(r.plan.Imix.Cycle)-plan.FrameOverhead(r.plan.Traffic.VLAN != 0)) > mtu {
				out[l] = refusal{mtu: mtu, by: dirs[dr.dir].Name, sent: dr.rec.TxFrames, errors: dr.rec.TooBig}
			}
			continue
		}
		p, err := r.probePathMTU(ctx, test, dr.dir, size)
		if err != nil {
			return nil, err
		}
		if p.spoiled != "" || p.crossed > 0 {
			continue // not confirmed: the trial counts as it measured
		}
		mtu := dr.rec.PathMTU
		if p.mtu > 0 && (mtu == 0 || p.mtu < mtu) {
			mtu = p.mtu
		}
		out[l] = refusal{mtu: mtu, by: dirs[dr.dir].Name, sent: dr.rec.TxFrames, errors: dr.rec.TooBig}
	}
	return out, nil
}

// refusedByFinder are the searching lanes (pending) of which a direction cannot carry frames of size by the
// path MTU finder of this run (a determined row, not "at least"), marked refused: a DUT that drops larger
// frames silently would only stall their trials. A lane an earlier repetition found refused is, too.
func (r *Runner) refusedByFinder(size int, lanes [][]int, pending map[int]laneReq) []int {
	if size == 0 {
		return nil
	}
	dirs := r.plan.Directions()
	var out []int
	for l := range pending {
		if _, before := r.refusedTooBig[key{size, lanes[l][0]}]; before {
			out = append(out, l)
			continue
		}
		for _, d := range lanes[l] {
			row := r.pathMTURow(dirs[d].Name)
			// (a DUT that fragments what does not fit carries larger frames, in pieces: they are measured,
			// unless such frames count as lost)
			fragmentsMeasured := row != nil && row.Fragmented && !r.plan.Traffic.FragmentedLost
			if row == nil || row.Undetermined != "" || row.AtLeast || fragmentsMeasured || row.LargestFrame <= 0 || size <= int(row.LargestFrame) {
				continue
			}
			for _, other := range lanes[l] {
				r.refusedTooBig[key{size, other}] = refusal{mtu: int64(row.MTU), by: dirs[d].Name, finder: true, fragmented: row.Fragmented}
			}
			out = append(out, l)
			break
		}
	}
	return out
}

// pathMTURow is the path MTU finder's row of a direction in this run (nil: none).
func (r *Runner) pathMTURow(dir string) *v1alpha1.PathMTUResult {
	for i := range r.res.PathMTU {
		if r.res.PathMTU[i].Direction == dir {
			return &r.res.PathMTU[i]
		}
	}
	return nil
}

// onlyRefusedEmpty says whether every direction of a trial that received nothing is in a refused lane: a
// stall then is the refusal's, not the DUT's stopping.
func onlyRefusedEmpty(drs []dirResult, laneOf map[int]int, refused map[int]refusal) bool {
	for _, dr := range drs {
		if _, ok := refused[laneOf[dr.dir]]; dr.rec.RxFrames == 0 && !ok {
			return false
		}
	}
	return true
}

// refusedText is what a row of direction dir says of a size the DUT refused (its refused field).
func refusedText(why refusal, dir string) string {
	text := "too big for the path MTU (the DUT's ICMP named none)"
	switch {
	case why.finder && why.fragmented:
		text = fmt.Sprintf("fragmented by the DUT above the path MTU %d the path MTU finder found, and counted as lost (spec.traffic.fragmentedFrames)", why.mtu)
	case why.fragmented:
		text = "fragmented by the DUT, and counted as lost (spec.traffic.fragmentedFrames)"
	case why.finder:
		text = fmt.Sprintf("too big for the path MTU %d the path MTU finder found", why.mtu)
	case why.mtu > 0:
		text = fmt.Sprintf("too big for the path MTU %d (the DUT's ICMP)", why.mtu)
	}
	if why.by != dir {
		text = fmt.Sprintf("%s, in %s, whose verdict this direction shares", text, why.by)
	}
	return text
}

// smallestCrossed tells whether frames of the mix's smallest size arrived in the stream's trial (its size
// class counts a frame that came in fragments by its first fragment).
func smallestCrossed(st *engine.StreamResult, cycle []int) bool {
	if st == nil || len(cycle) == 0 {
		return false
	}
	smallest := slices.Min(cycle)
	for _, c := range st.Classes {
		if c.Size == smallest {
			return c.RxFrames > 0
		}
	}
	return false
}

// confirmed confirms a Bidirectional pair (joint.go) and books its trials to every direction's row. A
// search that ended in an error leaves its pair unconfirmed: undetermined, never reported as confirmed.
func (r *Runner) confirmed(ctx context.Context, test v1alpha1.TestKind, size, rep int, res []*search.Result, searchErr error) error {
	if searchErr != nil {
		if r.plan.Traffic.Direction == v1alpha1.Bidirectional && len(res) > 1 {
			for _, sr := range res {
				if sr != nil && sr.Found && sr.Undetermined == "" {
					sr.Undetermined = fmt.Sprintf("the run stopped before the pair was confirmed together (%v)", searchErr)
				}
			}
		}
		return searchErr
	}
	n, spent, err := r.confirmBidirectional(ctx, test, size, rep, res)
	lanes := r.plan.Lanes()
	for l, sr := range res {
		// a lane refused whole sends nothing in the pair's trials
		if _, refused := r.refusedTooBig[key{size, lanes[l][0]}]; sr != nil && !refused {
			sr.Trials += n
			sr.TrialTime += spent
		}
	}
	return err
}

func detailOf(m *search.Measurement, dir int) *dirResult {
	if m == nil {
		return nil
	}
	det, ok := m.Detail.(detail)
	if !ok {
		return nil
	}
	for i := range det.dirs {
		if det.dirs[i].dir == dir {
			return &det.dirs[i]
		}
	}
	return nil
}

// throughput runs the throughput search at one frame size, repeated as the plan asks.
func (r *Runner) throughput(ctx context.Context, size int) error {
	if err := r.defineStreams(ctx, []int{size}); err != nil {
		return err
	}
	reps := max(1, r.plan.Throughput.Repetitions)
	lanes := r.plan.Lanes()
	dirs := r.plan.Directions()
	accs := make([]repetitionsAcc, len(dirs))
	var runErr error
	for rep := 1; rep <= reps; rep++ {
		res, err := r.searchLanes(ctx, v1alpha1.TestThroughput, size, rep)
		err = r.confirmed(ctx, v1alpha1.TestThroughput, size, rep, res, err)
		for l, sr := range res {
			if sr == nil {
				continue
			}
			for _, n := range r.laneNotes(size, lanes[l], sr) {
				r.note(fmt.Sprintf("throughput %d B %s: %s", size, laneName(dirs, lanes[l]), n))
			}
			for _, d := range lanes[l] {
				accs[d].add(sr, rep, reps, r.lineFPS(float64(size)))
			}
		}
		if err != nil {
			runErr = err
			break
		}
	}
	for d := range dirs {
		a := &accs[d]
		if a.best == nil || (runErr != nil && !a.best.Found) {
			continue
		}
		best := a.best
		tr := v1alpha1.ThroughputResult{FrameSize: int32(size), Direction: dirs[d].Name,
			NDR: r.rate(best.NDR, float64(size)), LossPercent: "0", Trials: int32(a.trials),
			TrialSeconds: fmt.Sprintf("%.0f", a.seconds), TesterLimited: a.limited, Undetermined: a.undetermined}
		if sl := best.ShortLoss; sl != nil && best.Found && sl.RatePercent <= best.NDR+1e-9 {
			tr.ShortTrialLossPercent = FormatPct(sl.RatePercent)
		}
		if !a.limited && a.undetermined == "" {
			tr.BoundBy = r.boundBy(best.AboveNDR)
		}
		why, refused := r.refusedTooBig[key{size, d}]
		switch {
		case refused:
			// the loss that decides the row: every frame of the refused direction (a bound pair's other
			// direction shares that verdict; the finder's probes lost every frame of the size)
			tr.NDR, tr.LossPercent, tr.Refused = r.rate(0, float64(size)), "100", refusedText(why, dirs[d].Name)
			counts := ""
			switch {
			case why.sent > 0 && why.by == dirs[d].Name && why.fragmented:
				counts = fmt.Sprintf(" (%d frames sent in the trial, every one that crossed in fragments)", why.sent)
			case why.sent > 0 && why.by == dirs[d].Name:
				counts = fmt.Sprintf(" (%d frames sent in the trial, %d ICMP errors back)", why.sent, why.errors)
			}
			switch {
			case why.fragmented && why.finder:
				r.note(fmt.Sprintf("throughput %d B %s: the DUT fragments frames of this size (the path MTU finder's answer), and spec.traffic.fragmentedFrames counts them as lost: the NDR is 0, at any rate", size, dirs[d].Name))
			case why.fragmented:
				r.note(fmt.Sprintf("throughput %d B %s: refused as %s%s: the NDR is 0, at any rate (the search stopped at the trial that showed it; the path MTU finder gives the largest size that crosses whole)", size, dirs[d].Name, tr.Refused, counts))
			default:
				r.note(fmt.Sprintf("throughput %d B %s: no frame crossed the DUT, which refused every one%s as %s: the NDR is 0, at any rate", size, dirs[d].Name, counts, tr.Refused))
			}
		case a.undetermined != "":
			given := "the rate given is the highest a full-length trial passed at, a lower bound"
			if !best.Found || a.notFound {
				tr.NDR = r.rate(0, float64(size))
				given = "no rate is given"
			}
			r.note(fmt.Sprintf("throughput %d B %s: the NDR is undetermined (%s); %s", size, dirs[d].Name, a.undetermined, given))
		case !best.Found || a.notFound:
			tr.NDR = r.rate(0, float64(size))
			r.note(fmt.Sprintf("throughput %d B %s: no rate met the loss tolerance of %s%%", size, dirs[d].Name, FormatLoss(r.plan.Throughput.LossTolerancePercent)))
		}
		if dr := detailOf(best.NDRTrial, d); dr != nil && best.Found {
			tr.LossPercent = FormatLoss(dr.rec.LossPercent)
			tr.Latency = dr.rec.Latency
			tr.Fragmented = fragmentCounts(&dr.rec)
			tr.DUTCPU = dutCPUCost(dr.rec.DUTCPU)
		}
		if best.PDR != nil {
			pdr := r.rate(*best.PDR, float64(size))
			tr.PDR = &pdr
			if best.PDRConditional > 0 {
				c := r.rate(best.PDRConditional, float64(size))
				tr.PDRConditional = &c
			}
		}
		if best.NDRConditional > 0 && best.Found && !a.notFound && a.undetermined == "" {
			c := r.rate(best.NDRConditional, float64(size))
			tr.NDRConditional = &c
		}
		if reps > 1 && !refused {
			tr.Spread = r.ndrSpread(size, dirs[d].Name, a)
		}
		// an undetermined NDR is a lower bound: latency and back-to-back are not measured at it
		r.ndr[key{size, d}] = ndrInfo{percent: best.NDR, found: best.Found && !a.notFound && a.undetermined == "",
			testerLimited: best.TesterLimited}
		r.res.Throughput = append(r.res.Throughput, tr)
	}
	searched := false // (a size refused in every direction ran its one trial, not one per repetition)
	for d := range dirs {
		if _, refused := r.refusedTooBig[key{size, d}]; !refused {
			searched = true
		}
	}
	if reps > 1 && searched {
		r.note(fmt.Sprintf("throughput was searched %d times per size; the NDR reported is the lowest of the repetitions (validated in every one), the spread gives mean and range", reps))
	}
	return runErr
}

// fragmentCounts are what a trial record says arrived in fragments; nil when nothing did.
func fragmentCounts(rec *results.Trial) *v1alpha1.FragmentCounts {
	if rec.Fragmented == 0 && rec.FragmentsUnmatched == 0 {
		return nil
	}
	pct := "0"
	if received := rec.RxFrames - rec.Duplicates; received > 0 && rec.Fragmented > 0 {
		p := float64(rec.Fragmented) / float64(received) * 100
		pct = FormatPct(p)
		switch {
		case rec.Fragmented >= received:
			pct = "100"
		case pct == "100":
			pct = "99.999" // some crossed whole, unfragmented: never all
		case pct == "0":
			pct = plan.FormatPercent(p) // some did: never none
		}
	}
	return &v1alpha1.FragmentCounts{Frames: rec.Fragmented, Percent: pct, Whole: rec.FragmentedWhole,
		Fragments: rec.Fragments, Unmatched: rec.FragmentsUnmatched}
}

// laneNotes are a lane's search notes worth saying: a lane refused whole ended its search at the trial that
// showed it, so "no rate down to the resolution met the tolerance" is not its story (its row's refused is).
func (r *Runner) laneNotes(size int, lane []int, sr *search.Result) []string {
	if _, refused := r.refusedTooBig[key{size, lane[0]}]; !refused {
		return sr.Notes
	}
	var out []string
	for _, n := range sr.Notes {
		if !strings.HasPrefix(n, search.NoRateMetNote) {
			out = append(out, n)
		}
	}
	return out
}

// repetitionsAcc gathers a direction's throughput searches over the repetitions at one size.
type repetitionsAcc struct {
	best     *search.Result // the repetition with the lowest NDR
	ndrFPS   []float64      // the NDRs of the repetitions that determined one
	trials   int
	seconds  float64
	limited  bool
	notFound bool
	// noAnswer counts the repetitions that left the NDR undetermined (or that the tester spoiled down to
	// nothing); none counts those that found no rate passing, which is a measurement: an NDR below the
	// resolution, counted as 0 in the spread
	noAnswer, none int
	// undetermined: why a repetition's search did not determine the NDR
	undetermined string
}

func (a *repetitionsAcc) add(sr *search.Result, rep, reps int, lineFPS float64) {
	a.trials += sr.Trials
	a.seconds += sr.TrialTime.Seconds()
	a.limited = a.limited || sr.TesterLimited
	if sr.Undetermined != "" && a.undetermined == "" {
		a.undetermined = sr.Undetermined
		if reps > 1 {
			a.undetermined = fmt.Sprintf("repetition %d: %s", rep, sr.Undetermined)
		}
	}
	if !sr.Found {
		a.notFound = true
	}
	if a.best == nil || !sr.Found || (a.best.Found && sr.NDR < a.best.NDR) {
		a.best = sr
	}
	// a lower bound (undetermined, or the tester the limit before anything passed) is no measurement of
	// the NDR: in the spread it would read as a DUT that varies
	if sr.Undetermined != "" || (!sr.Found && sr.TesterLimited) {
		a.noAnswer++
		return
	}
	if !sr.Found {
		a.none++ // no rate passed down to the resolution, shown by full-length trials
		a.ndrFPS = append(a.ndrFPS, 0)
		return
	}
	a.ndrFPS = append(a.ndrFPS, sr.NDR/100*lineFPS)
}

// ndrSpread is the spread of the repetitions that determined an NDR (nil when none did); the row's notes
// say how many gave no answer.
func (r *Runner) ndrSpread(size int, dir string, a *repetitionsAcc) *v1alpha1.Spread {
	total := a.noAnswer + len(a.ndrFPS)
	if a.none > 0 {
		r.note(fmt.Sprintf("throughput %d B %s: in %d of %d repetitions no rate passed (counted as 0 in the spread)", size, dir, a.none, total))
	}
	if a.noAnswer > 0 && len(a.ndrFPS) > 0 {
		r.note(fmt.Sprintf("throughput %d B %s: %d of %d repetitions left the NDR undetermined (a lower bound) or the tester was the limit; the spread summarises the %d that measured it",
			size, dir, a.noAnswer, total, len(a.ndrFPS)))
	}
	if a.noAnswer > 0 && len(a.ndrFPS) == 0 {
		r.note(fmt.Sprintf("throughput %d B %s: no repetition measured the NDR (undetermined, or the tester was the limit): no spread is given", size, dir))
	}
	if len(a.ndrFPS) == 0 {
		return nil
	}
	sp := spread(a.ndrFPS)
	return &sp
}

func laneName(dirs []plan.Direction, lane []int) string {
	s := ""
	for i, d := range lane {
		if i > 0 {
			s += "+"
		}
		s += dirs[d].Name
	}
	return s
}

// boundBy is what the failed trial above the NDR (above: its lane's, whose directions share one verdict)
// exceeded under a latency bound: "latency" when it kept within the loss tolerance, else "loss"; "" without
// a bound or such a trial.
func (r *Runner) boundBy(above *search.Measurement) string {
	if r.plan.Throughput.MaxLatency == nil || above == nil {
		return ""
	}
	if above.OverLatency && search.Pass(above.LossPercent, r.plan.Throughput.LossTolerancePercent) {
		return "latency"
	}
	return "loss"
}

// imix runs the throughput search with the plan's IMIX schedule.
func (r *Runner) imix(ctx context.Context) error {
	im := r.plan.Imix
	if err := r.defineStreams(ctx, im.Cycle); err != nil {
		return err
	}
	lanes := r.plan.Lanes()
	dirs := r.plan.Directions()
	res, err := r.searchLanes(ctx, v1alpha1.TestImixThroughput, 0, 0)
	err = r.confirmed(ctx, v1alpha1.TestImixThroughput, 0, 0, res, err)
	for l, sr := range res {
		if sr == nil {
			continue
		}
		for _, n := range r.laneNotes(0, lanes[l], sr) {
			r.note(fmt.Sprintf("IMIX %s: %s", laneName(dirs, lanes[l]), n))
		}
		if err != nil && !sr.Found {
			continue
		}
		for _, d := range lanes[l] {
			mean := r.streams[dirs[d].TX].mean
			ir := v1alpha1.ImixResult{Direction: dirs[d].Name, AverageFrameSize: fmt.Sprintf("%.2f", im.AverageFrameSize),
				NDR: r.rate(sr.NDR, mean), LossPercent: "0", Trials: int32(sr.Trials), TesterLimited: sr.TesterLimited,
				Undetermined: sr.Undetermined}
			if refusal, refused := r.refusedTooBig[key{0, d}]; refused {
				ir.NDR, ir.LossPercent, ir.Refused = r.rate(0, mean), "100", refusedText(refusal, dirs[d].Name)
				why := ""
				switch {
				case refusal.by != dirs[d].Name:
				case refusal.fragmented:
					why = fmt.Sprintf(" (every frame of the mix that crossed the DUT came in fragments, its smallest size, %d B, too: %d frames sent in the trial)", slices.Min(im.Cycle), refusal.sent)
				default:
					why = fmt.Sprintf(" (no frame of the mix crossed the DUT: its smallest, %d B, is too big)", slices.Min(im.Cycle))
				}
				r.note(fmt.Sprintf("IMIX %s: refused as %s%s: the NDR is 0, at any rate", dirs[d].Name, ir.Refused, why))
				r.res.Imix = append(r.res.Imix, ir)
				continue
			}
			if dr := detailOf(sr.NDRTrial, d); dr != nil && sr.Found {
				ir.LossPercent = FormatLoss(dr.rec.LossPercent)
				ir.Classes = r.classResults(dr.stream, dirs[d].Name)
				ir.Latency = dr.rec.Latency
			}
			if dr := detailOf(sr.AboveNDR, d); dr != nil {
				ir.ClassesAboveNDR = r.classResults(dr.stream, dirs[d].Name)
			}
			switch {
			case sr.Undetermined != "":
				r.note(fmt.Sprintf("IMIX %s: the NDR is undetermined (%s); the rate given is a lower bound", dirs[d].Name, sr.Undetermined))
			case !sr.Found:
				r.note(fmt.Sprintf("IMIX %s: no rate met the loss tolerance", dirs[d].Name))
			}
			r.res.Imix = append(r.res.Imix, ir)
		}
	}
	return err
}

// classResults are an IMIX trial's counts per frame size; none where frames arrived in fragments that count
// as lost (incomplete, or fragmentedFrames Lost): the engine counts a fragmented frame by its first fragment,
// per stream, so a size's own loss would leave those out.
func (r *Runner) classResults(sr *engine.StreamResult, dir string) []v1alpha1.ImixClassResult {
	if sr.Fragmented > sr.FragmentedWhole || (sr.FragmentedAreLost && sr.Fragmented > 0) {
		r.note(fmt.Sprintf("IMIX %s: no loss per frame size is given: frames the DUT fragmented count as lost, and the tester counts them per stream, not per size", dir))
		return nil
	}
	var out []v1alpha1.ImixClassResult
	for _, c := range sr.Classes {
		out = append(out, v1alpha1.ImixClassResult{FrameSize: int32(c.Size), TxFrames: c.TxFrames, RxFrames: c.RxFrames,
			LossPercent: FormatLoss(engine.LossPercent(c.Lost(), c.TxFrames))})
	}
	return out
}
