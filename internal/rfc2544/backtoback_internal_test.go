package rfc2544

import (
	"math"
	"testing"
)

// Every repetition's answer stands on its own trials (a pass at it and a failure at most a resolution
// longer, both in that repetition), lands within the resolution of that repetition's truth, and a
// repetition after the first costs a handful of trials rather than a blind search from maxFrames.
func TestBurstSearchesAreIndependentAndCheap(t *testing.T) {
	const maxFrames, res = 100000, 16
	for _, tc := range []struct {
		name   string
		truths []int64 // the DUT's burst capacity in each repetition
		// sat: the answer is maxFrames
		sat bool
	}{
		{name: "steady", truths: []int64{5000, 5000, 5000, 5000, 5000}},
		{name: "noisy", truths: []int64{5000, 5300, 4700, 5100, 4900, 5200}},
		{name: "a step down the bracket misses", truths: []int64{5000, 5000, 1200, 1300}},
		{name: "a step up the bracket misses", truths: []int64{800, 800, 9000, 9100}},
		{name: "nothing passes", truths: []int64{5, 5}},
		{name: "saturated", truths: []int64{maxFrames + 5, maxFrames + 5}, sat: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var earlier []int64
			for rep, truth := range tc.truths {
				passed, failed := int64(-1), int64(math.MaxInt64)
				trials := 0
				got, err := searchBurst(func(n int64) (bool, error) {
					trials++
					if n <= truth {
						passed = max(passed, n)
						return true, nil
					}
					failed = min(failed, n)
					return false, nil
				}, earlier, maxFrames, res)
				if err != nil {
					t.Fatal(err)
				}
				want := min(truth, maxFrames)
				if got > want || got < want-res {
					t.Errorf("repetition %d: %d frames, truth %d", rep+1, got, truth)
				}
				if got > 0 && passed != got {
					t.Errorf("repetition %d: answer %d, but this repetition's longest pass was %d", rep+1, got, passed)
				}
				if got < maxFrames && (failed == math.MaxInt64 || failed-got > res) {
					t.Errorf("repetition %d: answer %d, but this repetition's shortest failure was %d (resolution %d)", rep+1, got, failed, res)
				}
				if (got == maxFrames) != tc.sat {
					t.Errorf("repetition %d: saturated %v", rep+1, got == maxFrames)
				}
				// a blind search from maxFrames takes 1 + log2(maxFrames/res) ≈ 14 trials
				if rep > 0 && tc.name == "steady" && trials > 4 {
					t.Errorf("repetition %d took %d trials with the earlier answers as a bracket", rep+1, trials)
				}
				if trials > 2*14+2 {
					t.Errorf("repetition %d took %d trials", rep+1, trials)
				}
				earlier = append(earlier, got)
			}
		})
	}
}
