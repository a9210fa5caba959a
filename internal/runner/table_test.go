package runner

import (
	"strings"
	"testing"

	"linerate.dev/linerate/api/v1alpha1"
)

// The console table shows a timeline row's outages, and says when the tester spoiled too many bins.
func TestTableShowsTimelineOutages(t *testing.T) {
	res := &v1alpha1.Results{Timeline: []v1alpha1.TimelineResult{
		{FrameSize: 128, Direction: "west->east", Rate: v1alpha1.Rate{FramesPerSecond: 2000}, Seconds: "16", LostFrames: 33,
			LossPercent: "0.103", Outages: 4, LongestOutageMilliseconds: "8", TotalOutageMilliseconds: "16.5", Bins: 160,
			Longest: []v1alpha1.OutageRecord{{Start: "2026-11-28T05:11:36.573646466Z", Frames: 16, Milliseconds: "8"}}},
		{FrameSize: 128, Direction: "east->west", Rate: v1alpha1.Rate{FramesPerSecond: 2000}, Seconds: "16", LossPercent: "0",
			Bins: 160, TesterBins: 9, TesterLimited: true},
	}}
	var b strings.Builder
	PrintTable(&b, res, "0")
	out := b.String()
	for _, want := range []string{"Timeline", "west->east", "2026-11-28T05:11:36.573646466Z: 16 frames, 8 ms", "9 of 160 (the tester spoiled too many bins"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// The console table says what of a row's trial at the NDR arrived in fragments.
func TestTableSaysWhatArrivedInFragments(t *testing.T) {
	res := &v1alpha1.Results{Throughput: []v1alpha1.ThroughputResult{{FrameSize: 1518, Direction: "west->east",
		NDR:        v1alpha1.Rate{FramesPerSecond: 1000},
		Fragmented: &v1alpha1.FragmentCounts{Frames: 1000, Percent: "100", Whole: 800, Fragments: 1800}}}}
	var b strings.Builder
	PrintTable(&b, res, "0")
	if want := "fragmented: 1000 frames (100%), 800 whole, 1800 fragments"; !strings.Contains(b.String(), want) {
		t.Errorf("table lacks %q:\n%s", want, b.String())
	}
}

// The console table says what the DUT's CPU paid at a row's NDR, and whether its CPU was the limit.
func TestTableSaysWhatTheDUTsCPUPaid(t *testing.T) {
	res := &v1alpha1.Results{Throughput: []v1alpha1.ThroughputResult{{FrameSize: 128, Direction: "west->east",
		NDR:    v1alpha1.Rate{FramesPerSecond: 5243},
		DUTCPU: &v1alpha1.DUTCPUCost{CoresBusy: "0.101", CoresAllowed: "0.1", Saturated: true, MicrosecondsPerThousandFrames: "22190", MicrosecondsPerKilobyte: "173"}}},
		Diagnosis: &v1alpha1.Diagnosis{Direction: "west->east", Bound: "Mixed", Explanation: "a fit", DUTCPU: "the DUT's CPU was saturated at the NDR of every size"}}
	var b strings.Builder
	PrintTable(&b, res, "0")
	for _, want := range []string{"DUT CPU: 0.101 cores of 0.1 (saturated), 22190 µs per 1000 frames, 173 µs per kB", "DUT CPU: the DUT's CPU was saturated at the NDR of every size"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}
