package plan

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"linerate.dev/linerate/api/v1alpha1"
)

// Timeline is the timeline test: one load held for Duration at FrameSize, every frame judged Settle after
// it was due, counted in bins of Bin, runs of at least OutageMinFrames losses reported as outages. The
// load is one of PercentOfLineRate, FramesPerSecond (per direction) and PercentOfNDR (of the throughput
// the same run measures at FrameSize in that direction).
type Timeline struct {
	Duration                time.Duration `json:"duration"`
	PercentOfLineRate       float64       `json:"percentOfLineRate,omitempty"`
	FramesPerSecond         float64       `json:"framesPerSecond,omitempty"`
	PercentOfNDR            float64       `json:"percentOfNDR,omitempty"`
	FrameSize               int           `json:"frameSize"`
	Bin                     time.Duration `json:"bin"`
	Settle                  time.Duration `json:"settle"`
	OutageMinFrames         int64         `json:"outageMinFrames"`
	MaxTesterSpoiledPercent float64       `json:"maxTesterSpoiledPercent"`
}

// timelineMargin is what the engine's sequence windows hold beyond a timeline's settle time (the
// collector's margin, dataplane/src/timeline.c): they must span both at the line rate.
const timelineMargin = time.Second

func (p *Plan) resolveTimeline(s *v1alpha1.TimelineParams) error {
	if !p.Has(v1alpha1.TestTimeline) {
		return nil
	}
	t := Timeline{
		Duration:        orDefault(s.Duration.Duration, 60*time.Second),
		FramesPerSecond: float64(s.FramesPerSecond),
		FrameSize:       int(s.FrameSize),
		Bin:             orDefault(s.Bin.Duration, 100*time.Millisecond),
		Settle:          orDefault(s.Settle.Duration, 200*time.Millisecond),
		OutageMinFrames: orDefault(s.OutageMinFrames, 2),
	}
	var err error
	if t.PercentOfNDR, err = Percent("spec.timeline.percentOfNDR", s.PercentOfNDR, 0); err != nil {
		return err
	}
	def := 50.0
	if s.PercentOfNDR != "" || s.FramesPerSecond > 0 || s.L2BitsPerSecond != nil || s.L1BitsPerSecond != nil {
		def = 0
	}
	if t.PercentOfLineRate, err = Percent("spec.timeline.percentOfLineRate", s.PercentOfLineRate, def); err != nil {
		return err
	}
	given := 0
	for _, v := range []bool{t.PercentOfLineRate > 0, t.FramesPerSecond > 0, t.PercentOfNDR > 0,
		s.L2BitsPerSecond != nil, s.L1BitsPerSecond != nil} {
		if v {
			given++
		}
	}
	if given != 1 {
		return fmt.Errorf("spec.timeline: give the load one way, above 0: percentOfLineRate, framesPerSecond, l2BitsPerSecond, l1BitsPerSecond or percentOfNDR")
	}
	if t.MaxTesterSpoiledPercent, err = Percent("spec.timeline.maxTesterSpoiled", s.MaxTesterSpoiled, 1); err != nil {
		return err
	}
	switch {
	case t.Duration < time.Second || t.Duration > 720*time.Hour:
		return fmt.Errorf("spec.timeline.duration: %s is not from 1s to 720h", t.Duration)
	case t.Bin < 10*time.Millisecond || t.Bin > 10*time.Second || t.Bin%time.Millisecond != 0:
		return fmt.Errorf("spec.timeline.bin: %s is not whole milliseconds from 10ms to 10s", t.Bin)
	case t.Settle < 10*time.Millisecond || t.Settle > time.Minute:
		return fmt.Errorf("spec.timeline.settle: %s is not from 10ms to 60s", t.Settle)
	case t.OutageMinFrames < 2:
		return fmt.Errorf("spec.timeline.outageMinFrames: %d is below 2 (a single lost frame is scattered loss)", t.OutageMinFrames)
	}
	if t.FrameSize == 0 {
		if len(p.FrameSizes) == 0 {
			return fmt.Errorf("spec.timeline.frameSize: give one (the run has no frame sizes to take the first of)")
		}
		t.FrameSize = p.FrameSizes[0]
	}
	if err := t.bitsToFrames(s, p.Traffic.LineRateBps); err != nil {
		return err
	}
	if t.PercentOfNDR > 0 && !slices.Contains(p.FrameSizes, t.FrameSize) {
		return fmt.Errorf("spec.timeline.frameSize: %d B is not among the run's frame sizes, whose throughput percentOfNDR takes", t.FrameSize)
	}
	// a sender lane numbers its frames in 44 bits (dataplane: LR_LANE_SHIFT): the engine refuses a trial
	// that would run past them, said here first, naming the field (the fastest load: one lane)
	if fps := t.maxFPS(p.Traffic.LineRateBps); fps*t.Duration.Seconds() >= float64(uint64(1)<<44) {
		return fmt.Errorf("spec.timeline.duration: %s at up to %.0f frames/s numbers more than 2^44 frames on one sender lane: shorten it, or lower the load", t.Duration, fps)
	}
	if t.PercentOfNDR > 0 && !p.Has(v1alpha1.TestThroughput) {
		// the NDR it is a share of is measured in the same run, as latency's is
		p.Tests = append([]v1alpha1.TestKind{v1alpha1.TestThroughput}, p.Tests...)
	}
	p.Timeline = &t
	return nil
}

// checkTimelineSettle refuses a settle time no longer than the worker gap the tester is allowed. The
// engine judges a frame settle after it was due and sees a receiver's pause that is still going on only
// once it is longer than that gap (dataplane/PROTOCOL.md, the timeline): with settle no longer, the frames
// waiting in a paused receiver's ring would be judged lost, and booked against the DUT, before the pause
// is seen.
// Both are compared as the engine gets them: whole milliseconds, rounded up.
func (p *Plan) checkTimelineSettle() error {
	ceilMs := func(d time.Duration) time.Duration { return (d + time.Millisecond - 1).Truncate(time.Millisecond) }
	if t := p.Timeline; t != nil && p.Validity.MaxWorkerGap > 0 && ceilMs(t.Settle) <= ceilMs(p.Validity.MaxWorkerGap) {
		return fmt.Errorf("spec.timeline.settle: %s is not longer than spec.tester.validity.maxWorkerGap (%s) in the engine's whole milliseconds: the engine sees a pause of its receiver only past that gap, and would judge the frames waiting for it lost, the DUT's; give a settle longer than the gap and the DUT's latency together",
			t.Settle, p.Validity.MaxWorkerGap)
	}
	return nil
}

// bitsToFrames turns a load in bits per second into frames per second at the timeline's frame size; a
// load given in frames or bits must fit the line rate (a share of line rate or NDR does by its bounds).
func (t *Timeline) bitsToFrames(s *v1alpha1.TimelineParams, lineBps int64) error {
	field := "spec.timeline.framesPerSecond"
	for _, b := range []struct {
		name     string
		q        *resource.Quantity
		overhead int
	}{{"spec.timeline.l2BitsPerSecond", s.L2BitsPerSecond, 0}, {"spec.timeline.l1BitsPerSecond", s.L1BitsPerSecond, 20}} {
		if b.q == nil {
			continue
		}
		field = b.name
		bps := b.q.AsApproximateFloat64()
		if bps <= 0 {
			return fmt.Errorf("%s: %s is no load: give one above 0", b.name, b.q.String())
		}
		t.FramesPerSecond = bps / (float64(t.FrameSize+b.overhead) * 8)
		if t.FramesPerSecond < 1 {
			return fmt.Errorf("%s: %s is less than a frame of %d B a second", b.name, b.q.String(), t.FrameSize)
		}
	}
	// the slack (a millionth and one frame) lets through a rate copied from a line-rate result, rounded
	if line := float64(lineBps) / (float64(t.FrameSize+20) * 8); t.FramesPerSecond > 0 && lineBps > 0 && t.FramesPerSecond > line*(1+1e-6)+1 {
		return fmt.Errorf("%s: %.0f frames/s of %d B is more than the line rate (%.0f frames/s at %s)", field,
			t.FramesPerSecond, t.FrameSize, line, strconv.FormatInt(lineBps, 10)+" bit/s")
	}
	return nil
}

// timelineWindowSeconds is what a timeline trial needs its sequence windows to span: its settle time and
// the collector's margin, however long the trial (0 without a timeline).
func (p *Plan) timelineWindowSeconds() float64 {
	if p.Timeline == nil {
		return 0
	}
	// the engine keeps an eighth of each window clear of the receiver's edge
	return (p.Timeline.Settle + timelineMargin).Seconds() * 8 / 7
}

// maxFPS is the fastest the timeline's load can be at its frame size: as given, or the share of line rate
// (of the NDR: at most the line rate).
func (t *Timeline) maxFPS(lineBps int64) float64 {
	if t.FramesPerSecond > 0 {
		return t.FramesPerSecond
	}
	line := float64(lineBps) / (float64(t.FrameSize+20) * 8)
	if t.PercentOfLineRate > 0 {
		return line * t.PercentOfLineRate / 100
	}
	return line * t.PercentOfNDR / 100
}

// AvailabilityPercent renders available over all seconds in percent, rounded down to a thousandth: a
// day with one unavailable second is 99.998 %, never 100.
func AvailabilityPercent(available, seconds int64) string {
	return strconv.FormatFloat(math.Floor(float64(available)*100000/float64(seconds))/1000, 'f', -1, 64)
}
