package rfc2544

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/results"
)

// longestListed is how many of a direction's outages its result row lists, longest first.
const longestListed = 20

// timeline holds one load for the plan's duration in every direction at once and finds every outage
// (dataplane's timeline: every frame judged Settle after it was due). Fail closed: a bin the tester
// spoiled is never the DUT's, an outage in such a bin is the tester's, and a row whose bins the tester
// spoiled beyond timeline.maxTesterSpoiled is no statement about the DUT. It is one trial, never repeated:
// an outage a soak test found happened, and a repeat would be another test.
func (r *Runner) timeline(ctx context.Context) error {
	p := r.plan
	tl := p.Timeline
	size := tl.FrameSize
	te, ok := r.eng.(engine.Timeliner)
	if !ok {
		return fmt.Errorf("timeline: this tester's engine keeps no timeline (the ports of a testbed on two nodes split each stream over two engines; a timeline needs one engine to send and receive it)")
	}
	if err := r.defineStreams(ctx, []int{size}); err != nil {
		return err
	}
	dirs := p.Directions()
	ts := trialSpec{test: v1alpha1.TestTimeline, size: size, duration: tl.Duration}
	for d := range dirs {
		rate := tl.PercentOfLineRate
		switch {
		case tl.FramesPerSecond > 0:
			rate = tl.FramesPerSecond / r.lineFPS(float64(size)) * 100
		case tl.PercentOfNDR > 0:
			info, found := r.ndr[key{size, d}]
			if !found || !info.found || info.percent <= 0 {
				r.note(fmt.Sprintf("timeline %d B %s: skipped, no throughput (NDR) was found at this size to take %s%% of", size, dirs[d].Name, FormatPct(tl.PercentOfNDR)))
				continue
			}
			rate = info.percent * tl.PercentOfNDR / 100
		}
		ts.dirs = append(ts.dirs, d)
		ts.rates = append(ts.rates, rate)
		ts.purposes = append(ts.purposes, "timeline")
	}
	if len(ts.dirs) == 0 {
		return nil
	}
	lim := limitsOf(p.Validity)
	ts.timeline = &engine.TimelineConfig{Bin: tl.Bin, Settle: tl.Settle, OutageFrames: tl.OutageMinFrames,
		TesterLag: lim.MaxTxLag, TesterGap: lim.MaxWorkerGap}
	offset, clocked := r.engineClockOffset(ctx)
	if !clocked {
		r.note("timeline: the tester's clock could not be read against this host's, so outages carry no UTC time; their frame positions and lengths stand")
	}
	w := newTimelineWatch(dirs, ts.dirs, tl.Bin, offset)
	w.clocked = clocked
	ts.watch = func(bool) error {
		t, err := te.Timeline(ctx, w.nextBin(), w.nextOutage())
		if err != nil {
			return fmt.Errorf("timeline: reading the engine's timeline: %w", err)
		}
		w.add(t)
		return nil
	}
	ts.live = w.summary
	names, fps := make([]string, len(ts.dirs)), make([]float64, len(ts.dirs))
	for i, d := range ts.dirs {
		names[i], fps[i] = dirs[d].Name, ts.rates[i]*r.lineFPS(float64(size))/100
	}
	ts.liveRows = func() []v1alpha1.TimelineProgress { return w.progress(size, names, fps, tl.MaxTesterSpoiledPercent) }
	ts.attach = func(d int, rec *results.Trial) { rec.Timeline = w.record(d) }
	r.progress.OfferedRate = FormatPct(ts.rates[0])
	drs, aborted, err := r.trial(ctx, ts)
	if err != nil {
		return err
	}
	for i, dr := range drs {
		row := w.row(dr.dir, tl.MaxTesterSpoiledPercent)
		row.FrameSize, row.Direction = int32(size), dirs[dr.dir].Name
		row.Rate = r.rate(ts.rates[i], float64(size))
		row.TxFrames = dr.rec.TxFrames
		if aborted != "" {
			row.TesterLimited, row.CutShort = true, true
			r.note(fmt.Sprintf("timeline %d B %s: the trial was cut short (%s): what it found is kept, the row is no statement about the DUT", size, row.Direction, aborted))
		}
		if row.TesterLimited && aborted == "" {
			r.note(fmt.Sprintf("timeline %d B %s: the tester spoiled %d of %d bins (%s), more than timeline.maxTesterSpoiled (%s%%): the row is no statement about the DUT; the trial record lists those bins",
				size, row.Direction, row.TesterBins, row.Bins, w.why(dr.dir), FormatPct(tl.MaxTesterSpoiledPercent)))
		}
		if row.LateAfterSettle > 0 {
			r.note(fmt.Sprintf("timeline %d B %s: %d frames arrived later than timeline.settle (%s) after they were due: they are lost in their bins (a DUT that holds frames that long is not forwarding them in time)", size, row.Direction, row.LateAfterSettle, tl.Settle))
		}
		r.res.Timeline = append(r.res.Timeline, row)
	}
	return nil
}

// engineClockOffset is what turns the engine's timestamps into UTC: the wall clock minus the engine's
// clock, read once (to within half a control round trip; the two clocks may drift apart over a long run);
// false for an engine whose clock cannot be read.
func (r *Runner) engineClockOffset(ctx context.Context) (int64, bool) {
	c, ok := r.eng.(engine.Clock)
	if !ok {
		return 0, false
	}
	before := time.Now()
	t, err := c.Time(ctx)
	if err != nil {
		return 0, false
	}
	mid := before.Add(time.Since(before) / 2)
	return mid.UnixNano() - t.Ns, true
}

// timelineWatch gathers one timeline trial's bins and outages as the engine gives them, per direction.
type timelineWatch struct {
	binMs    int64
	offsetNs int64
	clocked  bool
	byStream map[int]*dirTimeline // by stream id (a direction's TX port)
	order    []int                // the directions of the trial
	streamOf map[int]int          // direction -> stream id
}

type dirTimeline struct {
	rec          results.Timeline
	nextBin      int64
	nextOutage   int64
	bins, tester int64
	sent, lost   int64
	testerLost   int64 // frames lost in the tester's bins: outages of the DUT's may hide there
	// the DUT's outages: counted, and the longest kept (at most longestListed)
	outages, outageFrames, outageNs int64
	longest                         []engine.Outage
	testerOutages                   int64
	outagesMissed                   int64 // dropped by the engine before the runner read them
	flags                           int
	late                            int64
	// the second being summed for severely errored seconds, and its counts
	second, secSent, secLost int64
	secTester                bool
	secTesterLost            int64
	ses                      int64
	// what arrived of the frames due in the last whole second closed (-1: the tester spoiled it, or none)
	lastSecondReceived int64
	lastOutageNs       int64 // the DUT's latest outage's length
	// Y.1564 availability over the seconds: what the DUT's seconds prove (a second the tester spoiled is
	// no severely errored second), and what it would be if each spoiled second that lost more than half
	// its frames were one
	proven, worst availability
}

func newTimelineWatch(dirs []plan.Direction, used []int, bin time.Duration, offsetNs int64) *timelineWatch {
	w := &timelineWatch{binMs: bin.Milliseconds(), offsetNs: offsetNs, byStream: map[int]*dirTimeline{},
		order: used, streamOf: map[int]int{}}
	for _, d := range used {
		w.streamOf[d] = dirs[d].TX
		w.byStream[dirs[d].TX] = &dirTimeline{second: -1, lastSecondReceived: -1}
	}
	return w
}

// nextBin and nextOutage are where the next read starts: the least any direction still needs.
func (w *timelineWatch) nextBin() int64 {
	n := int64(math.MaxInt64)
	for _, dt := range w.byStream {
		n = min(n, dt.nextBin)
	}
	return n
}

func (w *timelineWatch) nextOutage() int64 {
	n := int64(math.MaxInt64)
	for _, dt := range w.byStream {
		n = min(n, dt.nextOutage)
	}
	return n
}

func (w *timelineWatch) add(t *engine.Timeline) {
	for _, st := range t.Streams {
		dt := w.byStream[st.ID]
		if dt == nil {
			continue
		}
		dt.rec.StartNs, dt.rec.BinMs, dt.rec.RateFPS = t.StartNs+w.offsetNs, t.BinMs, st.RateFPS
		if st.FirstBin > dt.nextBin {
			// the engine dropped bins before they were read: they are nobody's, so the tester's, and
			// their seconds could have lost every frame
			dt.rec.MissedBins += st.FirstBin - dt.nextBin
			perBin := int64(math.Ceil(st.RateFPS * float64(w.binMs) / 1000))
			for ; dt.nextBin < st.FirstBin; dt.nextBin++ {
				dt.addMissedBin(dt.nextBin, perBin, w.binMs)
			}
		}
		for _, b := range st.Bins {
			if b.Index != dt.nextBin {
				continue // read before (another direction asked from further back)
			}
			dt.nextBin++
			dt.addBin(b, w.binMs)
		}
		for _, o := range st.Outages {
			if o.N != dt.nextOutage {
				continue
			}
			dt.nextOutage++
			if o.Tester {
				dt.testerOutages++
			} else {
				dt.addOutage(o)
			}
			if len(dt.rec.Outages) < results.MaxRecordedOutages {
				dt.rec.Outages = append(dt.rec.Outages, results.Outage{First: o.First, Frames: o.Frames,
					StartNs: o.StartNs + w.offsetNs, Open: o.Open, Tester: o.Tester})
			} else {
				dt.rec.OutagesLeftOut++
			}
		}
		if st.FirstOutage > dt.nextOutage {
			dt.outagesMissed += st.FirstOutage - dt.nextOutage
			dt.rec.OutagesLeftOut += st.FirstOutage - dt.nextOutage
			dt.nextOutage = st.FirstOutage
		}
		dt.late = st.LateAfterSettle
	}
}

// addOutage counts one of the DUT's outages and keeps it if it is among the longest.
func (dt *dirTimeline) addOutage(o engine.Outage) {
	dt.outages++
	dt.outageFrames += o.Frames
	dt.outageNs += o.LengthNs
	dt.lastOutageNs = o.LengthNs // the engine numbers outages in order: the last read is the latest
	i, _ := slices.BinarySearchFunc(dt.longest, o, func(a, b engine.Outage) int {
		if a.Frames != b.Frames {
			return int(b.Frames - a.Frames)
		}
		return int(a.First - b.First)
	})
	if i < longestListed {
		dt.longest = slices.Insert(dt.longest, i, o)
		if len(dt.longest) > longestListed {
			dt.longest = dt.longest[:longestListed]
		}
	}
}

// addMissedBin counts a bin nobody judged: the tester's, its frames (about perBin) unknown, so lost in
// the worst case of its second.
func (dt *dirTimeline) addMissedBin(index, perBin, binMs int64) {
	dt.bins++
	dt.tester++
	dt.toSecond(index, binMs)
	dt.secSent += perBin
	dt.secTester = true
	dt.secTesterLost += perBin
}

// toSecond closes the second summed so far when bin index lies in another.
func (dt *dirTimeline) toSecond(index, binMs int64) {
	if binMs > 1000 || 1000%binMs != 0 {
		dt.second = -2 // bins that do not divide a second: no severely errored seconds
	}
	if sec := index * binMs / 1000; dt.second != -2 && sec != dt.second {
		dt.closeSecond()
		dt.second = sec
	}
}

func (dt *dirTimeline) addBin(b engine.TimelineBin, binMs int64) {
	dt.bins++
	if b.Flags != 0 || b.Lost > 0 {
		if len(dt.rec.Marked) < results.MaxMarkedBins {
			dt.rec.Marked = append(dt.rec.Marked, [4]int64{b.Index, b.Sent, b.Received, int64(b.Flags)})
		} else {
			dt.rec.MarkedLeftOut++
		}
	}
	dt.toSecond(b.Index, binMs)
	dt.secSent += b.Sent
	if b.Flags != 0 {
		dt.tester++
		dt.flags |= b.Flags
		dt.secTester = true
		dt.testerLost += b.Lost
		dt.secTesterLost += b.Lost
		return
	}
	dt.sent += b.Sent
	dt.lost += b.Lost
	dt.secLost += b.Lost
}

// closeSecond counts the second summed so far as severely errored (more than half its frames lost),
// unless the tester spoiled any of it; then it is one only in the worst case, if what was lost in the
// tester's bins was the DUT's.
func (dt *dirTimeline) closeSecond() {
	if dt.second >= 0 && dt.second != -2 {
		proven := !dt.secTester && dt.secSent > 0 && 2*dt.secLost > dt.secSent
		if proven {
			dt.ses++
		}
		dt.proven.second(proven)
		dt.worst.second(dt.secSent > 0 && 2*(dt.secLost+dt.secTesterLost) > dt.secSent)
		dt.lastSecondReceived = -1
		if !dt.secTester {
			dt.lastSecondReceived = dt.secSent - dt.secLost
		}
	}
	if dt.second != -2 {
		dt.secSent, dt.secLost, dt.secTester, dt.secTesterLost = 0, 0, false, 0
	}
}

// availability is ITU-T Y.1564's (as Y.1563's): unavailable time begins with ten consecutive severely
// errored seconds, which are part of it, and ends with ten consecutive seconds that are not, which are not.
type availability struct {
	seconds, unavailable int64
	down                 bool  // in unavailable time
	run                  int64 // consecutive seconds that would change the state
}

const availabilityRun = 10

func (a *availability) second(severe bool) {
	a.seconds++
	switch {
	case !a.down && severe:
		if a.run++; a.run == availabilityRun {
			a.down, a.unavailable, a.run = true, a.unavailable+availabilityRun, 0
		}
	case !a.down:
		a.run = 0
	case severe: // unavailable, and so were the clear seconds since the last severe one
		a.unavailable += 1 + a.run
		a.run = 0
	default:
		if a.run++; a.run == availabilityRun {
			a.down, a.run = false, 0
		}
	}
}

// unavailableSeconds counts the seconds so far whose state is settled. The run still open at the end is
// not: fewer than ten clear seconds in unavailable time may or may not end it, fewer than ten severe
// seconds may or may not begin it. atMost counts them as unavailable, the least does not.
func (a availability) unavailableSeconds(atMost bool) int64 {
	if atMost {
		return a.unavailable + a.run
	}
	return a.unavailable
}

func (w *timelineWatch) record(d int) *results.Timeline {
	dt := w.byStream[w.streamOf[d]]
	if dt == nil {
		return nil
	}
	rec := dt.rec
	rec.Bins = dt.bins
	return &rec
}

// why names what spoiled a direction's bins.
func (w *timelineWatch) why(d int) string {
	dt := w.byStream[w.streamOf[d]]
	names := engine.BinFlagNames(dt.flags)
	if dt.rec.MissedBins > 0 {
		names = append(names, fmt.Sprintf("%d bins the runner read too late", dt.rec.MissedBins))
	}
	return joinList(names)
}

func (w *timelineWatch) summary() string {
	s := ""
	for _, d := range w.order {
		dt := w.byStream[w.streamOf[d]]
		longest := int64(0)
		if len(dt.longest) > 0 {
			longest = dt.longest[0].LengthNs
		}
		s += fmt.Sprintf("; %d s judged, %d outages (longest %s ms), %d frames lost", dt.bins*w.binMs/1000,
			dt.outages, msString(longest), dt.lost)
	}
	return strings.TrimPrefix(s, "; ")
}

// progress is each direction's figures so far (fps: the load of each, in the order of the directions
// watched), for the status and Prometheus while the trial runs.
func (w *timelineWatch) progress(size int, names []string, fps []float64, maxSpoiledPercent float64) []v1alpha1.TimelineProgress {
	var out []v1alpha1.TimelineProgress
	for i, d := range w.order {
		dt := w.byStream[w.streamOf[d]]
		p := v1alpha1.TimelineProgress{FrameSize: int32(size), Direction: names[i], OfferedFramesPerSecond: int64(math.Round(fps[i])),
			Seconds: strconv.FormatFloat(float64(dt.bins*w.binMs)/1000, 'f', -1, 64), LostFrames: dt.lost, Outages: dt.outages,
			Bins: dt.bins, TesterBins: dt.tester, TesterLostFrames: dt.testerLost,
			// as the row will say at the end: outages or bins the engine dropped unread, or more bins the
			// tester's than allowed, and the DUT's figures so far are no count
			TesterLimited: dt.outagesMissed > 0 || dt.rec.MissedBins > 0 || float64(dt.tester)*100 > maxSpoiledPercent*float64(dt.bins)}
		if dt.lastSecondReceived >= 0 {
			received := dt.lastSecondReceived
			p.ReceivedFramesPerSecond = &received
		}
		if dt.outages > 0 {
			p.LastOutageMilliseconds = msString(dt.lastOutageNs)
		}
		out = append(out, p)
	}
	return out
}

// row is a direction's result (frame size, direction, rate and frames sent are the caller's).
func (w *timelineWatch) row(d int, maxSpoiledPercent float64) v1alpha1.TimelineResult {
	dt := w.byStream[w.streamOf[d]]
	dt.closeSecond()
	if dt.second >= 0 {
		dt.second = -1 // closed: a second call adds no second
	}
	row := v1alpha1.TimelineResult{BinMilliseconds: int32(w.binMs), Bins: dt.bins, TesterBins: dt.tester,
		LostFrames: dt.lost, Outages: dt.outages, OutageFrames: dt.outageFrames, TesterOutages: dt.testerOutages,
		TesterLostFrames: dt.testerLost, SeverelyErroredSeconds: dt.ses, LateAfterSettle: dt.late,
		Seconds: strconv.FormatFloat(float64(dt.bins*w.binMs)/1000, 'f', -1, 64)}
	if dt.rec.StartNs > 0 && w.clocked {
		t := metav1.NewTime(time.Unix(0, dt.rec.StartNs).UTC())
		row.StartTime = &t
	}
	if dt.sent > 0 {
		row.LossPercent = FormatLoss(float64(dt.lost) / float64(dt.sent) * 100)
	} else {
		row.LossPercent = "0"
	}
	row.ScatteredFrames = max(0, dt.lost-dt.outageFrames)
	if dt.proven.seconds > 0 {
		row.UnavailableSeconds = dt.proven.unavailableSeconds(false)
		row.AvailabilityPercent = plan.AvailabilityPercent(dt.proven.seconds-row.UnavailableSeconds, dt.proven.seconds)
		row.AvailabilitySeconds = dt.proven.seconds
		if worst := dt.worst.unavailableSeconds(true); worst > row.UnavailableSeconds {
			row.UnavailableSecondsAtMost = worst
		}
	}
	if len(dt.longest) > 0 {
		row.LongestOutageMilliseconds = msString(dt.longest[0].LengthNs)
		row.TotalOutageMilliseconds = msString(dt.outageNs)
	}
	for _, o := range dt.longest {
		start := ""
		if w.clocked {
			start = time.Unix(0, o.StartNs+w.offsetNs).UTC().Format(time.RFC3339Nano)
		}
		row.Longest = append(row.Longest, v1alpha1.OutageRecord{Start: start, Frames: o.Frames,
			Milliseconds: msString(o.LengthNs), FirstFrame: o.First, Open: o.Open})
	}
	// outages or bins the engine dropped before they were read are nobody's count (what those bins lost
	// is unknown): the row decides nothing, as its live figures said (progress)
	row.TesterLimited = dt.bins == 0 || dt.outagesMissed > 0 || dt.rec.MissedBins > 0 ||
		float64(dt.tester)*100 > maxSpoiledPercent*float64(dt.bins)
	return row
}

// msString renders nanoseconds as milliseconds with up to three decimals.
func msString(ns int64) string {
	return strconv.FormatFloat(math.Round(float64(ns)/1e3)/1e3, 'f', -1, 64)
}
