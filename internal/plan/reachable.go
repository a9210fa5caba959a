package plan

import (
	"fmt"
	"strconv"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/units"
)

// UnreachableExpectation names the first minThroughput that asks more than traffic.lineRate carries at a
// frame size the plan measures it at (or the IMIX's mean): no DUT could meet it, and a run would spend the
// testbed only to say so. It is asked before a run starts, not of a plan resolved again for a run under
// way or finished (expectations may change then, and the verdict judges them). Frames of S bytes (FCS
// included) take S + 20 bytes of the line (preamble, start delimiter, inter-frame gap). The slack (a
// millionth and one unit) lets through a figure copied from a line-rate result, whose rates are rounded.
// It also refuses a timeline's minAvailability on bins that do not divide a second (availability is
// counted in whole seconds): the run could never judge it.
func (p *Plan) UnreachableExpectation() error {
	if p.Expectations == nil {
		return nil
	}
	if e := p.Expectations.Timeline; e != nil && e.MinAvailability != "" && p.Timeline != nil {
		// availability is counted in whole seconds of bins
		if bin := p.Timeline.Bin; bin > time.Second || time.Second%bin != 0 {
			return fmt.Errorf("spec.expectations.timeline.minAvailability: availability is judged by the second, and spec.timeline.bin %s does not divide one: give a bin such as 100ms or 1s", bin)
		}
	}
	if p.Traffic.LineRateBps <= 0 {
		return nil
	}
	line := float64(p.Traffic.LineRateBps)
	over := func(want, most float64) bool { return want > most*(1+1e-6)+1 }
	for i, e := range p.Expectations.MinThroughput {
		type at struct {
			name  string
			bytes float64
		}
		var sizes []at
		if p.Has(v1alpha1.TestThroughput) {
			for _, f := range p.FrameSizes {
				if e.FrameSize == 0 || int(e.FrameSize) == f {
					sizes = append(sizes, at{fmt.Sprintf("%d B", f), float64(f)})
				}
			}
		}
		if e.FrameSize == 0 && p.Has(v1alpha1.TestImixThroughput) && p.Imix != nil && p.Imix.AverageFrameSize > 0 {
			sizes = append(sizes, at{fmt.Sprintf("the IMIX's mean of %.2f B", p.Imix.AverageFrameSize), p.Imix.AverageFrameSize})
		}
		field := fmt.Sprintf("spec.expectations.minThroughput[%d]", i)
		for _, s := range sizes {
			fps := line / ((s.bytes + 20) * 8)
			var what string
			switch {
			case e.L2BitsPerSecond != nil && over(float64(e.L2BitsPerSecond.Value()), fps*s.bytes*8):
				what = fmt.Sprintf(".l2BitsPerSecond: %s is more than the %s L2", units.FormatBits(e.L2BitsPerSecond.Value()), units.FormatBits(int64(fps*s.bytes*8)))
			case e.L1BitsPerSecond != nil && over(float64(e.L1BitsPerSecond.Value()), line):
				what = fmt.Sprintf(".l1BitsPerSecond: %s is more than the %s L1", units.FormatBits(e.L1BitsPerSecond.Value()), units.FormatBits(p.Traffic.LineRateBps))
			case e.FramesPerSecond != nil && over(float64(e.FramesPerSecond.Value()), fps):
				what = fmt.Sprintf(".framesPerSecond: %d is more than the %s frames/s", e.FramesPerSecond.Value(), strconv.FormatFloat(fps, 'f', 0, 64))
			default:
				continue
			}
			return fmt.Errorf("%s%s that traffic.lineRate %s carries at %s: no DUT can meet it; lower the expectation or raise traffic.lineRate",
				field, what, units.FormatBits(p.Traffic.LineRateBps), s.name)
		}
	}
	return nil
}
