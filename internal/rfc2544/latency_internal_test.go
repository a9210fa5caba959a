package rfc2544

import (
	"testing"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine"
)

// RFC 8219 §7.2's summary, computed by hand: medians over the valid repetitions of their typical (p50)
// and worst-case (p99.9) latencies, nearest-rank 1st and 99th percentiles of those as the spread.
func TestRFC8219SummaryByHand(t *testing.T) {
	rep := func(p50, p999, pdv int64) v1alpha1.LatencySummary {
		return v1alpha1.LatencySummary{Valid: true, P50Ns: p50, P999Ns: p999, PDVNs: pdv}
	}
	lossy := v1alpha1.LatencySummary{Valid: false, Reason: "lost 2% of its frames"}
	for _, tc := range []struct {
		name    string
		reps    []v1alpha1.LatencySummary
		invalid int
		want    *v1alpha1.LatencyRepetitions
	}{
		{name: "odd count, an invalid one left out",
			reps:    []v1alpha1.LatencySummary{rep(100, 1000, 900), rep(300, 900, 600), lossy, rep(200, 5000, 4800), rep(500, 1100, 600), rep(400, 1200, 800)},
			invalid: 1,
			// typical sorted 100 200 300 400 500, worst 900 1000 1100 1200 5000, pdv 600 600 800 900 4800
			want: &v1alpha1.LatencyRepetitions{Repetitions: 5, Invalid: 1, TypicalNs: 300, TypicalP1Ns: 100, TypicalP99Ns: 500,
				WorstCaseNs: 1100, WorstCaseP1Ns: 900, WorstCaseP99Ns: 5000, PDVNs: 800}},
		{name: "even count: the mean of the middle two",
			reps: []v1alpha1.LatencySummary{rep(40, 400, 1), rep(10, 100, 2), rep(30, 301, 3), rep(20, 200, 4)},
			want: &v1alpha1.LatencyRepetitions{Repetitions: 4, TypicalNs: 25, TypicalP1Ns: 10, TypicalP99Ns: 40,
				WorstCaseNs: 251, WorstCaseP1Ns: 100, WorstCaseP99Ns: 400, PDVNs: 3}},
		{name: "none valid", reps: []v1alpha1.LatencySummary{lossy, lossy}, invalid: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := rfc8219Summary(tc.reps, tc.invalid)
			switch {
			case tc.want == nil && got != nil:
				t.Errorf("want no summary, got %+v", got)
			case tc.want != nil && (got == nil || *got != *tc.want):
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	// 100 repetitions 1..100: the 1st percentile is the 1st value, the 99th the 99th
	var many []v1alpha1.LatencySummary
	for i := int64(1); i <= 100; i++ {
		many = append(many, rep(i, 10*i, 0))
	}
	if s := rfc8219Summary(many, 0); s.TypicalP1Ns != 1 || s.TypicalP99Ns != 99 || s.WorstCaseP99Ns != 990 || s.TypicalNs != 51 {
		t.Errorf("100 repetitions: %+v", s)
	}
}

// Repetitions merged: a percentile is the middle of its engine bucket, as the engine reports one trial's, and
// the summary states how far that may be from the sample (half the widest reported bucket).
func TestMergedPercentilesAreBucketMiddles(t *testing.T) {
	// 1024 buckets a power of two: 50.3 ms falls in the bucket [50,298,880, 50,331,647], 32,768 ns wide
	rep := func(n int64) *engine.Latency {
		return &engine.Latency{Valid: true, Count: n, MinNs: 50_300_000, MeanNs: 50_310_000, MaxNs: 50_320_000, HistSub: 1024,
			Hist: [][2]int64{{50_331_647, n}}}
	}
	got := mergeLatency([]*engine.Latency{rep(600), rep(400)})
	if got.P50Ns != 50_298_880+32767/2 || got.ResolutionNs != 16384 {
		t.Errorf("p50 %d resolution %d, want the bucket's middle 50,315,263 within 16,384 ns", got.P50Ns, got.ResolutionNs)
	}
	// exact buckets (the simulated engine states none): the value itself, no resolution to state
	exact := &engine.Latency{Valid: true, Count: 10, MinNs: 900, MeanNs: 950, MaxNs: 1000, Hist: [][2]int64{{950, 10}}}
	if got := mergeLatency([]*engine.Latency{exact}); got.P50Ns != 950 || got.ResolutionNs != 0 {
		t.Errorf("exact: p50 %d resolution %d", got.P50Ns, got.ResolutionNs)
	}
}
