package runner_test

import (
	"fmt"
	"testing"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/testenv"
)

// Y.1564 availability through the real CLI and engine: the router drops everything for about 12.3 s, lets
// traffic through for about 11.5 s, then drops again for about 7.7 s. Unavailable time begins with ten
// severely errored seconds in a row and ends with ten that are not, so the first hold is unavailable
// time, every second of it that lost more than half its frames, and the second hold, nine seconds at
// most, is none. Which seconds lost more than half is worked out from the frames nft held (each hold's
// own counter), not from the seconds the test slept.
func TestTimelineAvailabilityBeginsWithTenSeverelyErroredSecondsInARow(t *testing.T) {
	eng := need(t)
	tns, rns := router(t, "av")
	holdTable(t, rns, "longhold", "shorthold")
	const fps = 1000
	const seconds = 40
	tt := routedTest("availability", []v1alpha1.TestKind{v1alpha1.TestTimeline}, []int32{128}, "1", "1", func(tt *v1alpha1.TrafficTest) {
		tt.Spec.Timeline = v1alpha1.TimelineParams{Duration: dur(seconds * time.Second), FramesPerSecond: fps,
			Bin: dur(100 * time.Millisecond)}
		tt.Spec.Tester.Validity = v1alpha1.TrialValidity{MaxTxLag: dur(20 * time.Millisecond), MaxWorkerGap: dur(20 * time.Millisecond)}
	})
	done := make(chan cliOut, 1)
	go func() { done <- runCLI(t, eng, tns, tt) }()
	waitForwarded(t, rns, fps)
	hold := func(counter string, d time.Duration) {
		nft(t, rns, fmt.Sprintf("add rule inet lrt lrfwd ip daddr 198.19.1.0/24 counter name %q drop\n", counter))
		time.Sleep(d)
		nft(t, rns, "delete rule inet lrt lrfwd handle "+lastRuleHandle(t, rns)+"\n")
	}
	time.Sleep(700 * time.Millisecond)
	hold("longhold", 12300*time.Millisecond)
	time.Sleep(11500 * time.Millisecond)
	hold("shorthold", 7700*time.Millisecond)
	o := <-done
	defer logTrialsIfFailed(t, o)
	if o.Error != "" || len(o.Results.Timeline) != 1 {
		t.Fatalf("run: %q timeline %+v", o.Error, o.Results.Timeline)
	}
	row := o.Results.Timeline[0]
	if row.TesterLimited || row.TesterLostFrames > 0 {
		testenv.SkipForLoad(t, "the tester spoiled %d of %d bins (%d frames lost in them)", row.TesterBins, row.Bins, row.TesterLostFrames)
	}
	long, short := nftCounter(t, rns, "longhold"), nftCounter(t, rns, "shorthold")
	if row.Outages != 2 || len(row.Longest) != 2 || row.Longest[0].Frames != long || row.Longest[1].Frames != short ||
		row.ScatteredFrames != 0 {
		t.Fatalf("outages %+v, scattered %d: want two, of the %d and %d frames nft held", row.Longest, row.ScatteredFrames, long, short)
	}
	// the seconds that lost more than half their frames, from where each hold's frames were due
	lostIn := make([]int64, seconds)
	for _, o := range row.Longest {
		for f := o.FirstFrame; f < o.FirstFrame+o.Frames; f++ {
			lostIn[f/fps]++
		}
	}
	severe := func(from, to int64) (first, n int64) {
		first = -1
		for s := from / fps; s <= (to-1)/fps; s++ {
			if 2*lostIn[s] > fps {
				if first < 0 {
					first = s
				}
				n++
			}
		}
		return first, n
	}
	longFirst, longSES := severe(row.Longest[0].FirstFrame, row.Longest[0].FirstFrame+long)
	shortFirst, shortSES := severe(row.Longest[1].FirstFrame, row.Longest[1].FirstFrame+short)
	// the plan: ten or more in a row, then ten clear seconds or more, then fewer than ten, all in the run
	if longSES < 10 || shortSES >= 10 || shortFirst-(longFirst+longSES) < 10 {
		testenv.SkipForLoad(t, "the holds came out as %d severe seconds from second %d and %d from second %d (this host's sleeps "+
			"overran): not the layout this test judges", longSES, longFirst, shortSES, shortFirst)
	}
	if row.SeverelyErroredSeconds != longSES+shortSES {
		t.Errorf("severely errored seconds %d, want %d + %d", row.SeverelyErroredSeconds, longSES, shortSES)
	}
	if row.UnavailableSeconds != longSES || row.UnavailableSecondsAtMost != 0 {
		t.Errorf("unavailable seconds %d (at most %d), want the long hold's %d severe seconds and nothing undecided",
			row.UnavailableSeconds, row.UnavailableSecondsAtMost, longSES)
	}
	want := fmt.Sprint(float64((seconds-longSES)*100000/seconds) / 1000)
	if row.AvailabilityPercent != want {
		t.Errorf("availability %s %%, want %s %% (%d of %d s unavailable)", row.AvailabilityPercent, want, longSES, seconds)
	}
}
