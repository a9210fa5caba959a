package rfc2544

import (
	"testing"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
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

// Y.1564's availability, second by second: ten severely errored seconds in a row begin unavailable time
// (and are part of it), ten clear seconds in a row end it (and are not); fewer change nothing. The run
// still open at the end is unsettled: the least counts it as not changing the state, the most as
// unavailable.
func TestAvailabilityCountsTenSecondsInARow(t *testing.T) {
	for _, c := range []struct {
		name          string
		seconds       string // S severely errored, . clear
		least, atMost int64
	}{
		{"all clear", "....................", 0, 0},
		{"nine severe are not enough", ".SSSSSSSSS.SSSSSSSSS.", 0, 0},
		{"ten severe begin it", "..SSSSSSSSSS..........", 10, 10},
		{"clear seconds between severe ones stay unavailable", "SSSSSSSSSS.....S..........", 16, 16},
		{"nine clear do not end it", "SSSSSSSSSS.........S..........", 20, 20},
		{"open at the end: the clear seconds since are unsettled", "SSSSSSSSSS....", 10, 14},
		{"ten clear end it, the next severe ones start over", "SSSSSSSSSS..........SSSSS.", 10, 10},
		{"severe seconds at the end may begin it", "..........SSSSSSS", 0, 7},
		{"two periods", "SSSSSSSSSS..........SSSSSSSSSSSS", 22, 22},
	} {
		t.Run(c.name, func(t *testing.T) {
			var a availability
			for _, s := range c.seconds {
				a.second(s == 'S')
			}
			if least, most := a.unavailableSeconds(false), a.unavailableSeconds(true); least != c.least || most != c.atMost ||
				a.seconds != int64(len(c.seconds)) {
				t.Errorf("%s: %d to %d unavailable of %d seconds, want %d to %d of %d", c.seconds, least, most, a.seconds, c.least,
					c.atMost, len(c.seconds))
			}
		})
	}
}

// A second the tester spoiled is no severely errored second of the DUT's; if it lost more than half its
// frames in the tester's bins, it might have been one, and the availability says how bad it could be.
func TestAvailabilityOfTheTestersSecondsIsABoundNotACount(t *testing.T) {
	dirs := []plan.Direction{{Name: "west->east", TX: 0, RX: 1}}
	w := newTimelineWatch(dirs, []int{0}, 500*time.Millisecond, 0)
	var bins []engine.TimelineBin
	// 30 s of 500 ms bins: seconds 5..16 lose everything, second 9 in a bin the tester spoiled
	for i := int64(0); i < 60; i++ {
		b := engine.TimelineBin{Index: i, Sent: 500, Received: 500}
		if s := i / 2; s >= 5 && s <= 16 {
			b.Received, b.Lost = 0, 500
			if s == 9 {
				b.Flags = engine.BinPause
			}
		}
		bins = append(bins, b)
	}
	w.add(&engine.Timeline{BinMs: 500, Streams: []engine.TimelineStream{{ID: 0, RateFPS: 1000, Bins: bins}}})
	row := w.row(0, 100)
	// proven: seconds 5..8 (four) and 10..16 (seven): no ten in a row. Worst: 5..16, twelve.
	if row.SeverelyErroredSeconds != 11 || row.UnavailableSeconds != 0 || row.AvailabilityPercent != "100" ||
		row.UnavailableSecondsAtMost != 12 {
		t.Errorf("SES %d, unavailable %d (at most %d), availability %s: want 11, 0 (at most 12), 100",
			row.SeverelyErroredSeconds, row.UnavailableSeconds, row.UnavailableSecondsAtMost, row.AvailabilityPercent)
	}
}

// The live rows: the DUT's figures so far, the latest outage's length, and what arrived in the last whole
// second judged, which a second the tester spoiled leaves unsaid.
func TestTimelineProgressSaysWhatWasJudgedSoFar(t *testing.T) {
	dirs := []plan.Direction{{Name: "west->east", TX: 0, RX: 1}}
	w := newTimelineWatch(dirs, []int{0}, 500*time.Millisecond, 0)
	read := func(bins []engine.TimelineBin, outages []engine.Outage) {
		w.add(&engine.Timeline{BinMs: 500, Streams: []engine.TimelineStream{{ID: 0, RateFPS: 1000,
			FirstBin: w.nextBin(), Bins: bins, FirstOutage: w.nextOutage(), Outages: outages}}})
	}
	live := func() v1alpha1.TimelineProgress {
		return w.progress(128, []string{"west->east"}, []float64{1000}, 25)[0]
	}
	// second 0 clean, second 1 loses 30 frames in an outage; bin 4 opens second 2
	read([]engine.TimelineBin{{Index: 0, Sent: 500, Received: 500}, {Index: 1, Sent: 500, Received: 500},
		{Index: 2, Sent: 500, Received: 470, Lost: 30}, {Index: 3, Sent: 500, Received: 500}, {Index: 4, Sent: 500, Received: 500}},
		[]engine.Outage{{N: 0, First: 1100, Frames: 30, LengthNs: 30e6}})
	p := live()
	if p.Seconds != "2.5" || p.Outages != 1 || p.LostFrames != 30 || p.LastOutageMilliseconds != "30" || p.OfferedFramesPerSecond != 1000 ||
		p.ReceivedFramesPerSecond == nil || *p.ReceivedFramesPerSecond != 970 {
		t.Errorf("after 2.5 s: %+v (received %v), want 1 outage of 30 ms, 30 lost, 970 received in second 1", p, p.ReceivedFramesPerSecond)
	}
	// second 2 ends in a bin the tester spoiled, then a shorter outage in second 3
	read([]engine.TimelineBin{{Index: 5, Sent: 500, Received: 400, Lost: 100, Flags: engine.BinLag},
		{Index: 6, Sent: 500, Received: 495, Lost: 5}, {Index: 7, Sent: 500, Received: 500}, {Index: 8, Sent: 500, Received: 500}},
		[]engine.Outage{{N: 1, First: 2600, Frames: 100, LengthNs: 100e6, Tester: true}, {N: 2, First: 3100, Frames: 5, LengthNs: 5e6}})
	p = live()
	if p.Outages != 2 || p.LastOutageMilliseconds != "5" || p.TesterBins != 1 || p.TesterLostFrames != 100 || p.ReceivedFramesPerSecond == nil ||
		*p.ReceivedFramesPerSecond != 995 {
		t.Errorf("after 4.5 s: %+v, want 2 outages of the DUT's (the latest 5 ms), 1 tester bin, 995 received in second 3", p)
	}
	read([]engine.TimelineBin{{Index: 9, Sent: 500, Received: 500, Flags: engine.BinPause}, {Index: 10, Sent: 500, Received: 500}}, nil)
	if p = live(); p.ReceivedFramesPerSecond != nil || p.TesterLimited {
		t.Errorf("second 4 holds a tester bin: received %v, limited %v; want it unsaid, and 2 of 11 bins within 25 %%", p.ReceivedFramesPerSecond, p.TesterLimited)
	}
	// the engine dropped bins 11..14 unread: nobody's count, so the figures so far are no count
	w.add(&engine.Timeline{BinMs: 500, Streams: []engine.TimelineStream{{ID: 0, RateFPS: 1000, FirstBin: 15,
		Bins: []engine.TimelineBin{{Index: 15, Sent: 500, Received: 500}}, FirstOutage: w.nextOutage()}}})
	if p = live(); !p.TesterLimited || p.TesterBins != 6 {
		t.Errorf("after 4 bins dropped unread: limited %v, tester bins %d; want limited, 6", p.TesterLimited, p.TesterBins)
	}
}

// Bins the engine dropped before they were read are seconds nobody judged: they break no run of the DUT's
// severely errored seconds in the least it proves, and in the most they may all have been severe.
func TestAvailabilityAcrossBinsNobodyRead(t *testing.T) {
	dirs := []plan.Direction{{Name: "west->east", TX: 0, RX: 1}}
	w := newTimelineWatch(dirs, []int{0}, time.Second, 0)
	lost := func(from, to int64) (bins []engine.TimelineBin) {
		for i := from; i < to; i++ {
			bins = append(bins, engine.TimelineBin{Index: i, Sent: 1000, Lost: 1000})
		}
		return bins
	}
	// 6 severe seconds, 30 the engine dropped unread, 4 severe, 20 clear
	w.add(&engine.Timeline{BinMs: 1000, Streams: []engine.TimelineStream{{ID: 0, RateFPS: 1000, Bins: lost(0, 6)}}})
	tail := append(lost(36, 40), make([]engine.TimelineBin, 20)...)
	for i := range tail[4:] {
		tail[4+i] = engine.TimelineBin{Index: int64(40 + i), Sent: 1000, Received: 1000}
	}
	w.add(&engine.Timeline{BinMs: 1000, Streams: []engine.TimelineStream{{ID: 0, RateFPS: 1000, FirstBin: 36, Bins: tail}}})
	row := w.row(0, 100)
	if row.Bins != 60 || row.AvailabilitySeconds != 60 || row.UnavailableSeconds != 0 || row.UnavailableSecondsAtMost != 40 ||
		row.SeverelyErroredSeconds != 10 {
		t.Errorf("bins %d, seconds %d, unavailable %d to %d, SES %d: want 60, 60, 0 to 40, 10", row.Bins, row.AvailabilitySeconds,
			row.UnavailableSeconds, row.UnavailableSecondsAtMost, row.SeverelyErroredSeconds)
	}
	if !row.TesterLimited {
		t.Errorf("bins nobody read: what they lost is unknown, want testerLimited whatever maxTesterSpoiled")
	}
	if again := w.row(0, 100); again.AvailabilitySeconds != 60 {
		t.Errorf("a second row() counts %d seconds, want 60 again", again.AvailabilitySeconds)
	}
}
