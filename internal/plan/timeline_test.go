package plan

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"linerate.dev/linerate/api/v1alpha1"
)

func TestResolveTimeline(t *testing.T) {
	d := func(x time.Duration) metav1.Duration { return metav1.Duration{Duration: x} }
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	cases := []struct {
		name   string
		tests  []v1alpha1.TestKind
		tl     v1alpha1.TimelineParams
		want   Timeline
		tests2 []v1alpha1.TestKind // the tests the plan runs
		err    string
	}{
		{name: "defaults", tests: []v1alpha1.TestKind{v1alpha1.TestTimeline},
			want:   Timeline{Duration: time.Minute, PercentOfLineRate: 50, FrameSize: 64, Bin: 100 * time.Millisecond, Settle: 200 * time.Millisecond, OutageMinFrames: 2, MaxTesterSpoiledPercent: 1},
			tests2: []v1alpha1.TestKind{v1alpha1.TestTimeline}},
		{name: "frames per second at a size", tests: []v1alpha1.TestKind{v1alpha1.TestTimeline},
			tl:     v1alpha1.TimelineParams{FramesPerSecond: 12000, FrameSize: 1418, Duration: d(6 * time.Hour), Bin: d(10 * time.Millisecond), OutageMinFrames: 5, MaxTesterSpoiled: "0"},
			want:   Timeline{Duration: 6 * time.Hour, FramesPerSecond: 12000, FrameSize: 1418, Bin: 10 * time.Millisecond, Settle: 200 * time.Millisecond, OutageMinFrames: 5},
			tests2: []v1alpha1.TestKind{v1alpha1.TestTimeline}},
		{name: "a share of the NDR runs throughput", tests: []v1alpha1.TestKind{v1alpha1.TestTimeline},
			tl:     v1alpha1.TimelineParams{PercentOfNDR: "90", FrameSize: 512},
			want:   Timeline{Duration: time.Minute, PercentOfNDR: 90, FrameSize: 512, Bin: 100 * time.Millisecond, Settle: 200 * time.Millisecond, OutageMinFrames: 2, MaxTesterSpoiledPercent: 1},
			tests2: []v1alpha1.TestKind{v1alpha1.TestThroughput, v1alpha1.TestTimeline}},
		{name: "two loads", tests: []v1alpha1.TestKind{v1alpha1.TestTimeline},
			tl: v1alpha1.TimelineParams{PercentOfNDR: "90", FramesPerSecond: 10}, err: "spec.timeline: give the load one way"},
		{name: "a share of an NDR not measured", tests: []v1alpha1.TestKind{v1alpha1.TestTimeline},
			tl: v1alpha1.TimelineParams{PercentOfNDR: "90", FrameSize: 100}, err: "spec.timeline.frameSize: 100 B is not among"},
		{name: "a month at line rate outnumbers a lane", tests: []v1alpha1.TestKind{v1alpha1.TestTimeline},
			tl: v1alpha1.TimelineParams{PercentOfLineRate: "100", Duration: d(720 * time.Hour)}, err: "spec.timeline.duration: 720h0m0s at up to 14880952 frames/s"},
		{name: "bits per second of the frames' bytes", tests: []v1alpha1.TestKind{v1alpha1.TestTimeline},
			tl:     v1alpha1.TimelineParams{L2BitsPerSecond: q("2G"), FrameSize: 512},
			want:   Timeline{Duration: time.Minute, FramesPerSecond: 2e9 / (512 * 8), FrameSize: 512, Bin: 100 * time.Millisecond, Settle: 200 * time.Millisecond, OutageMinFrames: 2, MaxTesterSpoiledPercent: 1},
			tests2: []v1alpha1.TestKind{v1alpha1.TestTimeline}},
		{name: "bits per second on the line", tests: []v1alpha1.TestKind{v1alpha1.TestTimeline},
			tl:     v1alpha1.TimelineParams{L1BitsPerSecond: q("10G")},
			want:   Timeline{Duration: time.Minute, FramesPerSecond: 1e10 / (84 * 8), FrameSize: 64, Bin: 100 * time.Millisecond, Settle: 200 * time.Millisecond, OutageMinFrames: 2, MaxTesterSpoiledPercent: 1},
			tests2: []v1alpha1.TestKind{v1alpha1.TestTimeline}},
		{name: "more bits than the line carries", tests: []v1alpha1.TestKind{v1alpha1.TestTimeline},
			tl: v1alpha1.TimelineParams{L2BitsPerSecond: q("9G"), FrameSize: 64}, err: "spec.timeline.l2BitsPerSecond: 17578125 frames/s of 64 B is more than the line rate (14880952 frames/s"},
		{name: "more frames than the line carries", tests: []v1alpha1.TestKind{v1alpha1.TestTimeline},
			tl: v1alpha1.TimelineParams{FramesPerSecond: 900000, FrameSize: 1418}, err: "spec.timeline.framesPerSecond: 900000 frames/s of 1418 B is more than the line rate"},
		{name: "a line-rate result's rounded frames", tests: []v1alpha1.TestKind{v1alpha1.TestTimeline},
			tl:     v1alpha1.TimelineParams{FramesPerSecond: 812744, FrameSize: 1518},
			want:   Timeline{Duration: time.Minute, FramesPerSecond: 812744, FrameSize: 1518, Bin: 100 * time.Millisecond, Settle: 200 * time.Millisecond, OutageMinFrames: 2, MaxTesterSpoiledPercent: 1},
			tests2: []v1alpha1.TestKind{v1alpha1.TestTimeline}},
		{name: "bits for less than a frame a second", tests: []v1alpha1.TestKind{v1alpha1.TestTimeline},
			tl: v1alpha1.TimelineParams{L1BitsPerSecond: q("100")}, err: "spec.timeline.l1BitsPerSecond: 100 is less than a frame of 64 B a second"},
		{name: "no bits", tests: []v1alpha1.TestKind{v1alpha1.TestTimeline},
			tl: v1alpha1.TimelineParams{L1BitsPerSecond: q("0")}, err: "spec.timeline.l1BitsPerSecond: 0 is no load"},
		{name: "bits and frames", tests: []v1alpha1.TestKind{v1alpha1.TestTimeline},
			tl: v1alpha1.TimelineParams{L1BitsPerSecond: q("1G"), FramesPerSecond: 10}, err: "spec.timeline: give the load one way"},
		{name: "bins of 5 ms", tests: []v1alpha1.TestKind{v1alpha1.TestTimeline},
			tl: v1alpha1.TimelineParams{Bin: d(5 * time.Millisecond)}, err: "spec.timeline.bin"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Resolve(testWith(v1alpha1.TrafficTestSpec{Tests: c.tests, FrameSizes: []int32{64, 512, 1418}, Timeline: c.tl}), nil)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *p.Timeline != c.want || !slices.Equal(p.Tests, c.tests2) {
				t.Errorf("timeline %+v tests %v, want %+v %v", *p.Timeline, p.Tests, c.want, c.tests2)
			}
			if s := p.Steps(); s[len(s)-1] != (Step{v1alpha1.TestTimeline, c.want.FrameSize}) {
				t.Errorf("steps %v: the timeline is one step at its size, last", s)
			}
		})
	}
}

// A timeline's sequence windows span its settle time: a day costs the engine no more memory than a minute.
func TestSeqWindowOfATimelineDoesNotGrowWithItsDuration(t *testing.T) {
	bits := func(dur time.Duration) int {
		p, err := Resolve(testWith(v1alpha1.TrafficTestSpec{Tests: []v1alpha1.TestKind{v1alpha1.TestTimeline},
			FrameSizes: []int32{64}, Timeline: v1alpha1.TimelineParams{Duration: metav1.Duration{Duration: dur}}}), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := p.SeqWindow()
		return b
	}
	// the README's figure: 2^25 bits, 4 MiB a receive queue, for a day of 64 B frames at 10 GbE
	if m, day := bits(time.Minute), bits(24*time.Hour); m != day || day != 25 {
		t.Errorf("window bits %d for a minute, %d for a day: want 25 for both (4 MiB, as README.md says)", m, day)
	}
}

// A settle time the receiver's allowed pause outlasts is refused, naming both fields; one longer is not.
func TestTimelineSettleMustOutlastTheWorkerGap(t *testing.T) {
	for _, c := range []struct {
		settle, gap time.Duration
		err         string
	}{
		{settle: 20 * time.Millisecond, gap: 20 * time.Millisecond, err: "spec.timeline.settle: 20ms is not longer than spec.tester.validity.maxWorkerGap (20ms)"},
		{settle: 20 * time.Millisecond, gap: 50 * time.Millisecond, err: "spec.timeline.settle: 20ms is not longer than spec.tester.validity.maxWorkerGap (50ms)"},
		{settle: 20 * time.Millisecond, gap: 19 * time.Millisecond},
		// the engine gets both rounded up to 21 ms
		{settle: 20500 * time.Microsecond, gap: 20100 * time.Microsecond, err: "spec.timeline.settle: 20.5ms is not longer than spec.tester.validity.maxWorkerGap (20.1ms)"},
		{settle: 200 * time.Millisecond, gap: time.Millisecond},
	} {
		tt := testWith(v1alpha1.TrafficTestSpec{Tests: []v1alpha1.TestKind{v1alpha1.TestTimeline}, FrameSizes: []int32{64},
			Timeline: v1alpha1.TimelineParams{Settle: metav1.Duration{Duration: c.settle}}})
		tt.Spec.Tester.Validity.MaxWorkerGap = metav1.Duration{Duration: c.gap}
		_, err := Resolve(tt, nil)
		if (c.err == "" && err != nil) || (c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err))) {
			t.Errorf("settle %s, gap %s: error %v, want %q", c.settle, c.gap, err, c.err)
		}
	}
}
