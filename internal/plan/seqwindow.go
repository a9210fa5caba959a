package plan

import (
	"math"
	"slices"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
)

// SeqWindow is what each received stream's sequence window must hold so that every frame of the longest
// trial is classified (in order, reordered, duplicate), never "beyond the window": the frames of that
// trial with its warm-up, drain and a second of slack at line rate with the smallest frame (64 B + 20 B
// on the wire). Bits is the engine's --window-bits (a power of two at least that large, 16..40; 0 when
// the line rate is unknown); Frames is what the window holds resident at most, a bit per frame.
func (p *Plan) SeqWindow() (bits int, frames int64) {
	if p.Traffic.LineRateBps <= 0 {
		return 0, 0
	}
	d := p.Durations
	var longest time.Duration
	// a run of timeline trials alone runs no search (the others all run throughput or its trials)
	if !slices.Equal(p.Tests, []v1alpha1.TestKind{v1alpha1.TestTimeline}) {
		longest = max(d.SearchTrial, d.ValidationTrial)
	}
	if p.Has(v1alpha1.TestLatency) {
		longest = max(longest, d.LatencyTrial)
	}
	if p.Has(v1alpha1.TestBackToBack) {
		longest = max(longest, d.BackToBackTrial)
	}
	seconds := 0.0
	if longest > 0 {
		seconds = (longest + d.WarmUp + d.Drain + time.Second).Seconds()
	}
	// a timeline trial's windows span its settle time, not its duration (its collector reads them behind
	// the receivers): a day at line rate needs no more than a second does
	seconds = max(seconds, p.timelineWindowSeconds())
	frames = int64(math.Ceil(float64(p.Traffic.LineRateBps) / (84 * 8) * seconds))
	bits = 16
	for bits < 40 && int64(1)<<bits < frames {
		bits++
	}
	return bits, frames
}
