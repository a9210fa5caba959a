package rfc2544

import (
	"testing"
	"time"

	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/plan"
)

// What the runner makes of the engine's timeline reads: bins read twice are counted once, bins the engine
// dropped unread are the tester's, the tester's bins keep their loss apart, severely errored seconds count
// whole seconds of the DUT's bins only, and the longest outages are kept longest first.
func TestTimelineWatchAccounting(t *testing.T) {
	dirs := []plan.Direction{{Name: "west->east", TX: 0, RX: 1}}
	bin := func(i, sent, rx int64, flags int) engine.TimelineBin {
		return engine.TimelineBin{Index: i, Sent: sent, Received: rx, Lost: sent - rx, Flags: flags}
	}
	out := func(n, first, frames int64, tester bool) engine.Outage {
		return engine.Outage{N: n, First: first, Frames: frames, LengthNs: frames * 1e6, Tester: tester}
	}
	w := newTimelineWatch(dirs, []int{0}, 100*time.Millisecond, 0)
	w.clocked = true
	read := func(firstBin int64, bins []engine.TimelineBin, firstOutage int64, outages []engine.Outage) {
		w.add(&engine.Timeline{BinMs: 100, StartNs: 1, Streams: []engine.TimelineStream{{ID: 0, RateFPS: 1000,
			FirstBin: firstBin, Bins: bins, FirstOutage: firstOutage, Outages: outages}}})
	}
	// second 0: ten DUT bins, six of them lose more than half: severely errored
	var s0 []engine.TimelineBin
	for i := int64(0); i < 10; i++ {
		rx := int64(100)
		if i < 6 {
			rx = 0
		}
		s0 = append(s0, bin(i, 100, rx, 0))
	}
	read(0, s0, 0, []engine.Outage{out(0, 0, 600, false)})
	// the same bins again (another direction asked from further back) change nothing
	read(0, s0[5:], 0, []engine.Outage{out(0, 0, 600, false)})
	// second 1: one of the tester's bins that lost 40 frames, the rest clean: no SES (the tester's second)
	s1 := []engine.TimelineBin{bin(10, 100, 60, engine.BinLag)}
	for i := int64(11); i < 20; i++ {
		s1 = append(s1, bin(i, 100, 100, 0))
	}
	read(10, s1, 1, []engine.Outage{out(1, 1000, 40, true), out(2, 1500, 3, false)})
	// the engine dropped bins 20..24 before they were read; then one more outage, longer than the second
	read(25, []engine.TimelineBin{bin(25, 100, 90, 0)}, 3, []engine.Outage{out(3, 2500, 10, false)})

	row := w.row(0, 1)
	if row.Bins != 26 || row.TesterBins != 6 || row.TesterLostFrames != 40 {
		t.Errorf("bins %d, tester %d (5 missed + 1 lag), tester lost %d: want 26, 6, 40", row.Bins, row.TesterBins, row.TesterLostFrames)
	}
	if row.LostFrames != 610 || row.Outages != 3 || row.OutageFrames != 613 || row.TesterOutages != 1 {
		t.Errorf("lost %d, outages %d of %d frames, tester outages %d: want 610, 3, 613, 1", row.LostFrames, row.Outages, row.OutageFrames, row.TesterOutages)
	}
	if row.SeverelyErroredSeconds != 1 {
		t.Errorf("%d severely errored seconds, want 1 (second 0; second 1 holds a tester bin)", row.SeverelyErroredSeconds)
	}
	if len(row.Longest) != 3 || row.Longest[0].Frames != 600 || row.Longest[1].Frames != 10 || row.Longest[2].Frames != 3 {
		t.Errorf("longest %+v: want 600, 10, 3 frames", row.Longest)
	}
	if !row.TesterLimited {
		t.Errorf("6 of 26 bins the tester's, limit 1 %%: want testerLimited")
	}
	rec := w.record(0)
	if rec.MissedBins != 5 || len(rec.Outages) != 4 || len(rec.Marked) != 8 {
		t.Errorf("record: missed %d, outages %d, marked %d: want 5, 4 (the tester's too), 8 (6 lossy, 1 lag, 1 lossy)", rec.MissedBins, len(rec.Outages), len(rec.Marked))
	}
}
