package rfc2544

import (
	"math"
	"math/rand/v2"
	"testing"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/results"
)

// The model DUT's fit reads a queue where short trials pass above what long ones hold (the demo's
// gateways), and none where the DUT only varies from trial to trial: a noisy DUT's passes and losses are
// not a queue.
func TestTheFitReadsAQueueFromShortAndLongTrials(t *testing.T) {
	// a trial of secs at rate (percent of line rate) through a DUT forwarding capacity·(1+noise draw) with a
	// queue of queueS seconds at its capacity
	trial := func(rate, secs, capacity, queueS float64) results.Trial {
		held := capacity * (secs + queueS) // what it forwards, in percent·seconds
		lost := math.Max(0, rate*secs-held)
		return results.Trial{Test: v1alpha1.TestThroughput, FrameSize: 64, Direction: "west->east", DurationS: secs,
			OfferedPercent: rate, Lost: int64(math.Round(lost * 1000)), LossPercent: 100 * lost / (rate * secs)}
	}
	for _, tc := range []struct {
		name      string
		queueS    float64
		noise     float64
		wantQueue [2]float64 // the least and most the fit may read
	}{
		{"a third of a second of queue, steady", 0.33, 0, [2]float64{0.3, 0.4}},
		{"a third of a second of queue, noisy", 0.33, 0.02, [2]float64{0.2, 0.6}},
		{"no queue, noisy", 0, 0.03, [2]float64{0, 0.02}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 9))
			var recs []results.Trial
			// a search's path: 1 s trials stepping down from above, then 5 s validations stepping down
			for _, r := range []struct{ rate, secs float64 }{{1.6, 1}, {1.4, 1}, {1.3, 1}, {1.2, 1}, {1.25, 1}, {1.25, 5}, {1.1, 5}, {1.05, 5}, {1.0, 5}, {0.98, 5}, {0.96, 5}} {
				c := 1.0 * (1 + tc.noise*rng.NormFloat64())
				recs = append(recs, trial(r.rate, r.secs, c, tc.queueS))
			}
			fits := fitDUT(recs)
			if len(fits) != 1 {
				t.Fatalf("fits %+v", fits)
			}
			f := fits[0]
			if f.queueS < tc.wantQueue[0] || f.queueS > tc.wantQueue[1] || math.Abs(f.capacity-1) > 0.06 {
				t.Errorf("fit %+v, want a queue of %.2f-%.2f s at a capacity of 1%%", f, tc.wantQueue[0], tc.wantQueue[1])
			}
		})
	}
}
