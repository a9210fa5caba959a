package plan

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"linerate.dev/linerate/api/v1alpha1"
)

// A minThroughput above what traffic.lineRate carries at a measured size is refused before any trial,
// naming the field and the most the line carries there; one at that most (as a line-rate result reports
// it, rounded) or below is planned. 1G at 128 B: 844,594.59 frames/s, 864.86 Mbit/s L2.
func TestAnExpectationTheLineCannotCarryIsRefused(t *testing.T) {
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	for _, c := range []struct {
		name   string
		tests  []v1alpha1.TestKind
		expect v1alpha1.ThroughputExpectation
		want   string // "" when planned
	}{
		{"100G L2 on 1G (the e2e's impossible expectation)", nil, v1alpha1.ThroughputExpectation{FrameSize: 128, L2BitsPerSecond: q("100G")},
			"spec.expectations.minThroughput[0].l2BitsPerSecond: 100.000 Gbit/s is more than the 864.86 Mbit/s L2 that traffic.lineRate 1.000 Gbit/s carries at 128 B"},
		{"frames/s of a line-rate result, rounded up", nil, v1alpha1.ThroughputExpectation{FrameSize: 128, FramesPerSecond: q("844595")}, ""},
		{"frames/s one frame more than that", nil, v1alpha1.ThroughputExpectation{FrameSize: 128, FramesPerSecond: q("844597")}, ".framesPerSecond: 844597 is more than the 844595 frames/s"},
		{"L2 of a line-rate result", nil, v1alpha1.ThroughputExpectation{FrameSize: 128, L2BitsPerSecond: q("864865280")}, ""},
		{"L1 at the line rate", nil, v1alpha1.ThroughputExpectation{L1BitsPerSecond: q("1G")}, ""},
		{"L1 above it, every size", nil, v1alpha1.ThroughputExpectation{L1BitsPerSecond: q("1.1G")}, ".l1BitsPerSecond: 1.100 Gbit/s is more than the 1.000 Gbit/s L1"},
		{"every size: the largest frames carry the most L2", nil, v1alpha1.ThroughputExpectation{L2BitsPerSecond: q("900M")}, "carries at 128 B"},
		{"a size not planned is not checked", nil, v1alpha1.ThroughputExpectation{FrameSize: 64, L2BitsPerSecond: q("100G")}, ""},
		{"IMIX mean", []v1alpha1.TestKind{v1alpha1.TestImixThroughput}, v1alpha1.ThroughputExpectation{L2BitsPerSecond: q("990M")},
			"carries at the IMIX's mean of"},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := v1alpha1.TrafficTestSpec{Tests: []v1alpha1.TestKind{"throughput"}, FrameSizes: []int32{128, 1518},
				Traffic:      v1alpha1.TrafficParams{LineRate: "1G"},
				Expectations: &v1alpha1.Expectations{MinThroughput: []v1alpha1.ThroughputExpectation{c.expect}}}
			if c.tests != nil {
				spec.Tests, spec.FrameSizes = c.tests, nil
				spec.Imix = &v1alpha1.ImixSource{Entries: []v1alpha1.ImixEntry{{FrameSize: 64, Weight: 7}, {FrameSize: 1518, Weight: 1}}}
			}
			p, err := Resolve(testWith(spec), nil)
			if err != nil {
				t.Fatal(err)
			}
			err = p.UnreachableExpectation()
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("err %v, want one saying %q", err, c.want)
			}
		})
	}
}

// How precisely a search places its answer: the resolution, or the goal's relative width of the rate (of
// the resolution below it).
func TestPrecisionIsTheResolutionOrTheWidthOfTheRate(t *testing.T) {
	for _, c := range []struct {
		width, rate, want float64
	}{
		{0, 40, 0.5},       // no width: the resolution
		{0.5, 40, 0.2},     // 0.5 % of 40 % of line rate
		{0.5, 100, 0.5},    // 0.5 % of line rate
		{0.5, 0.2, 0.0025}, // below the resolution: 0.5 % of it
	} {
		tp := Throughput{ResolutionPercent: 0.5}
		if c.width > 0 {
			tp.Goal = &Goal{WidthPercent: c.width}
		}
		if got := tp.PrecisionPercent(c.rate); got < c.want-1e-12 || got > c.want+1e-12 {
			t.Errorf("width %g at %g%%: %g, want %g", c.width, c.rate, got, c.want)
		}
	}
}

// Availability is judged by the second: a minAvailability on bins that do not divide one is refused before
// any trial, naming both fields; on bins that do, it is planned.
func TestAnAvailabilityBoundNeedsBinsThatDivideASecond(t *testing.T) {
	for _, c := range []struct {
		bin  time.Duration
		want string
	}{
		{100 * time.Millisecond, ""},
		{time.Second, ""},
		{300 * time.Millisecond, "spec.expectations.timeline.minAvailability: availability is judged by the second, and spec.timeline.bin 300ms does not divide one"},
		{2 * time.Second, "spec.timeline.bin 2s does not divide one"},
	} {
		spec := v1alpha1.TrafficTestSpec{Tests: []v1alpha1.TestKind{v1alpha1.TestTimeline}, FrameSizes: []int32{128},
			Timeline:     v1alpha1.TimelineParams{Bin: metav1.Duration{Duration: c.bin}},
			Expectations: &v1alpha1.Expectations{Timeline: &v1alpha1.TimelineExpectation{MinAvailability: "99.9"}}}
		p, err := Resolve(testWith(spec), nil)
		if err != nil {
			t.Fatal(err)
		}
		err = p.UnreachableExpectation()
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("bin %s: %v, want %q", c.bin, err, c.want)
		}
	}
}
