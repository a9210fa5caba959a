package rfc2544

import (
	"strings"
	"testing"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/plan"
)

// RFC 8219 §7.2's summary, computed by hand: medians over the valid repetitions of their typical (p50)
// and worst-case (p99.9) latencies, nearest-rank 1st and 99th percentiles of those as the spread.
func TestRFC8219SummaryByHand(t *testing.T) {
	rep := func(p50, p999, pdv int64) v1alpha1.LatencySummary {
		return v1alpha1.LatencySummary{Valid: true, Frames: 1000, P50Ns: p50, P999Ns: p999, PDVNs: pdv}
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
		{name: "a repetition of one frame has no median, one of 999 no worst case: neither is one of 0",
			reps: []v1alpha1.LatencySummary{rep(100, 1000, 900), {Valid: true, Frames: 1, MinNs: 70, MaxNs: 70},
				{Valid: true, Frames: 999, P50Ns: 300}, rep(200, 3000, 2900)},
			// typical 100 200 300, worst 1000 3000, pdv 900 2900
			want: &v1alpha1.LatencyRepetitions{Repetitions: 3, TypicalNs: 200, TypicalP1Ns: 100, TypicalP99Ns: 300,
				WorstCaseNs: 2000, WorstCaseP1Ns: 1000, WorstCaseP99Ns: 3000, PDVNs: 1900}},
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

// A repetition of fewer frames than a percentile needs (1/(1-p)) leaves it out, not reports the largest
// latency under its name; the PDV goes with p99.9, the RFC 8219 worst case is over the repetitions that
// have one, and the row says what was left out where a repetition had fewer than RFC 8219's 500 frames.
func TestPercentilesTooFewFramesSupportAreLeftOut(t *testing.T) {
	eng := func(n int64) *engine.Latency {
		return &engine.Latency{Valid: true, Count: n, MinNs: 1000, MeanNs: 2000, P50Ns: 2000, P90Ns: 3000, P99Ns: 4000, P999Ns: 5000, P9999Ns: 6000, MaxNs: 7000, PDVNs: 4000}
	}
	for _, tc := range []struct {
		frames                          int64
		p50, p90, p99, p999, p9999, pdv int64
	}{
		{1, 0, 0, 0, 0, 0, 0},
		{99, 2000, 3000, 0, 0, 0, 0},
		{500, 2000, 3000, 4000, 0, 0, 0},
		{1000, 2000, 3000, 4000, 5000, 0, 4000},
		{10000, 2000, 3000, 4000, 5000, 6000, 4000},
	} {
		s := latencySummary(eng(tc.frames))
		if s.P50Ns != tc.p50 || s.P90Ns != tc.p90 || s.P99Ns != tc.p99 || s.P999Ns != tc.p999 || s.P9999Ns != tc.p9999 || s.PDVNs != tc.pdv || s.MaxNs != 7000 || s.MinNs != 1000 {
			t.Errorf("%d frames: %+v", tc.frames, s)
		}
	}
	// merged: 3 repetitions of 400 frames support p99.9 together (1,200), not p99.99
	hist := func(n int64) *engine.Latency {
		return &engine.Latency{Valid: true, Count: n, MinNs: 100, MeanNs: 500, MaxNs: 900, Hist: [][2]int64{{500, n}}}
	}
	m := mergeLatency([]*engine.Latency{hist(400), hist(400), hist(400)})
	if m.P999Ns == 0 || m.P9999Ns != 0 || m.PDVNs != m.P999Ns-m.MinNs {
		t.Errorf("1,200 merged frames: %+v", m)
	}
	if m := mergeLatency([]*engine.Latency{hist(50)}); m.P99Ns != 0 || m.P90Ns == 0 || m.PDVNs != 0 {
		t.Errorf("50 frames: %+v", m)
	}
	// 1,000 frames, one slow: p99.9 is the 999th, not the slow one (0.999 as a literal, as the engine has it)
	tail := &engine.Latency{Valid: true, Count: 1000, MinNs: 1000, MeanNs: 1100, MaxNs: 100000, Hist: [][2]int64{{1000, 999}, {100000, 1}}}
	if m := mergeLatency([]*engine.Latency{tail}); m.P999Ns != 1000 {
		t.Errorf("p99.9 of 999 frames at 1 µs and one at 100 µs: %d ns", m.P999Ns)
	}
	few, enough := *latencySummary(eng(300)), *latencySummary(eng(2000))
	sum := rfc8219Summary([]v1alpha1.LatencySummary{few, enough, few}, 0)
	if sum.Repetitions != 3 || sum.WorstCaseNs != 5000 || sum.PDVNs != 4000 {
		t.Errorf("the worst case of the one repetition that has one: %+v", sum)
	}
	if sum := rfc8219Summary([]v1alpha1.LatencySummary{few}, 0); sum.WorstCaseNs != 0 || sum.PDVNs != 0 || sum.TypicalNs != 2000 {
		t.Errorf("no repetition has a worst case: %+v", sum)
	}
	for _, tc := range []struct {
		reps []v1alpha1.LatencySummary
		want string
	}{
		{[]v1alpha1.LatencySummary{enough, few}, "a repetition timestamped 300 frames, fewer than the 500 RFC 8219 asks for"},
		{[]v1alpha1.LatencySummary{enough}, ""},
		{[]v1alpha1.LatencySummary{enough, *latencySummary(eng(700))}, "a repetition timestamped 700 frames, enough for RFC 8219 (500), too few for its worst case (p99.9 needs 1000)"},
		{[]v1alpha1.LatencySummary{{Valid: false, Frames: 3}}, ""},
	} {
		if got := fewFramesNote(tc.reps); !strings.HasPrefix(got, tc.want) || (tc.want == "") != (got == "") {
			t.Errorf("note %q, want %q", got, tc.want)
		}
	}
	if got := fewFramesNote([]v1alpha1.LatencySummary{few}); !strings.Contains(got, "(p99.9 and p99.99)") {
		t.Errorf("note %q names no left-out percentiles", got)
	}
}

// A latency bound judges the percentile where the trial's frames support it; below 1/(1-p) frames the
// sample's percentile by nearest rank is its largest latency, and the bound judges that: a trial too short
// for its percentile is neither the tester's (repeating it gives the same few frames, and the search
// would collapse below the rate) nor passed unseen.
func TestALatencyBoundJudgesOnlyAPercentileTheFramesSupport(t *testing.T) {
	bound := &plan.LatencyBound{Bound: 100 * time.Microsecond, Percentile: 99}
	lat := func(frames, p99, maxNs int64) *engine.Latency {
		return &engine.Latency{Valid: true, Count: frames, P99Ns: p99, MaxNs: maxNs, ResolutionNs: 100}
	}
	for _, tc := range []struct {
		name    string
		l       *engine.Latency
		over    bool
		unknown string
	}{
		{"enough frames, p99 within", lat(1000, 50_000, 900_000), false, ""},
		{"enough frames, p99 above", lat(1000, 150_000, 900_000), true, ""},
		{"the resolution tips it over", lat(1000, 99_950, 900_000), true, ""},
		{"50 frames, the largest within", lat(50, 0, 90_000), false, ""},
		{"50 frames, the largest above", lat(50, 0, 120_000), true, ""},
		{"50 frames, the largest within but for the resolution", lat(50, 0, 99_950), true, ""},
		{"no latency", nil, false, "no latency was reported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			over, unknown := overLatency(bound, tc.l)
			if over != tc.over || !strings.HasPrefix(unknown, tc.unknown) || (tc.unknown == "") != (unknown == "") {
				t.Errorf("overLatency = %v, %q; want %v, %q", over, unknown, tc.over, tc.unknown)
			}
		})
	}
}

// Every percentile a bound may name is judged on its own figure from the frames it needs on, and on the
// largest latency below that; a percentile the engine does not report is no judgement at all.
func TestALatencyBoundJudgesEachPercentileByItsOwnFigure(t *testing.T) {
	// a distinct figure in every field: a wrong mapping judges the wrong one
	lat := func(frames int64) *engine.Latency {
		return &engine.Latency{Valid: true, Count: frames, MinNs: 1_000, MeanNs: 2_000, P50Ns: 10_000, P90Ns: 20_000,
			P99Ns: 30_000, P999Ns: 40_000, P9999Ns: 50_000, MaxNs: 60_000}
	}
	for _, tc := range []struct {
		percentile float64
		stat       v1alpha1.Statistic
		figure     int64 // with the frames the percentile needs
		need       int64
	}{
		{50, "p50", 10_000, 2}, {90, "p90", 20_000, 10}, {99, "p99", 30_000, 100},
		{99.9, "p99.9", 40_000, 1000}, {99.99, "p99.99", 50_000, 10000}, {100, "max", 60_000, 1},
	} {
		if got := (plan.LatencyBound{Percentile: tc.percentile}).Statistic(); got != tc.stat {
			t.Errorf("percentile %g is the statistic %q, want %q", tc.percentile, got, tc.stat)
		}
		for _, frames := range []int64{tc.need - 1, tc.need} {
			if frames < 1 {
				continue
			}
			judged := tc.figure
			if frames < tc.need {
				judged = 60_000 // the largest latency
			}
			under := &plan.LatencyBound{Bound: time.Duration(judged), Percentile: tc.percentile}
			over := &plan.LatencyBound{Bound: time.Duration(judged - 1), Percentile: tc.percentile}
			if o, u := overLatency(under, lat(frames)); o || u != "" {
				t.Errorf("%s of %d frames, bound at its figure %d ns: over %v %q", tc.stat, frames, judged, o, u)
			}
			if o, u := overLatency(over, lat(frames)); !o || u != "" {
				t.Errorf("%s of %d frames, bound 1 ns under its figure %d ns: over %v %q", tc.stat, frames, judged, o, u)
			}
		}
	}
	if o, u := overLatency(&plan.LatencyBound{Bound: time.Second, Percentile: 95}, lat(1000)); o || u == "" {
		t.Errorf("a percentile the engine does not report: over %v, unknown %q", o, u)
	}
}
