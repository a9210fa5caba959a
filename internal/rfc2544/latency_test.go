package rfc2544_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/engine/sim"
	"linerate.dev/linerate/internal/expectations"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/rfc2544"
)

// unsyncedLatencyTrials is a tester whose clocks disagree in some latency trials: the engine refuses
// their latency (Valid false) although every frame arrived.
type unsyncedLatencyTrials struct {
	*sim.Engine
	latencyTrial time.Duration
	refuse       map[int]bool // latency trials (1-based) whose latency the engine refuses
	omit         map[int]bool // latency trials (1-based) the engine returns no latency for at all
	seen         int
}

func (u *unsyncedLatencyTrials) RunTrial(ctx context.Context, cfg engine.TrialConfig, progress func(engine.Progress)) (*engine.TrialResult, error) {
	res, err := u.Engine.RunTrial(ctx, cfg, progress)
	if err != nil || cfg.Duration != u.latencyTrial || cfg.Burst > 0 {
		return res, err
	}
	u.seen++
	for i := range res.Streams {
		switch {
		case u.refuse[u.seen]:
			res.Streams[i].Latency = &engine.Latency{Valid: false, Clock: "unsynchronised"}
		case u.omit[u.seen]:
			res.Streams[i].Latency = nil
		}
	}
	return res, err
}

// RFC 8219's summary counts every repetition: the valid ones it summarises and the invalid ones, those the
// engine could not measure (clocks apart, no frame, no latency returned at all) as much as those that lost
// frames.
func TestRepetitionsTheEngineCouldNotMeasureCountAsInvalid(t *testing.T) {
	p := planFor(t, v1alpha1.TestThroughput, v1alpha1.TestLatency)
	p.FrameSizes = []int{64}
	p.Latency.Repetitions = 4
	e := &unsyncedLatencyTrials{Engine: sim.New(sim.DUT{CapacityFPS: 3e6}), latencyTrial: p.Durations.LatencyTrial,
		refuse: map[int]bool{2: true}, omit: map[int]bool{4: true}}
	res, err := rfc2544.New(p, e, nil, rfc2544.Options{Sleep: e.Sleep}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Latency) != 1 {
		t.Fatalf("latency rows %+v", res.Latency)
	}
	row := res.Latency[0]
	if e.seen != 4 || len(row.Repetitions) != 4 || row.Repetitions[1].Valid || row.Repetitions[3].Valid {
		t.Fatalf("%d latency trials, repetitions %+v", e.seen, row.Repetitions)
	}
	if s := row.RFC8219; s == nil || s.Repetitions != 2 || s.Invalid != 2 {
		t.Errorf("RFC 8219 summary %+v, want 2 valid and 2 invalid of 4", s)
	}
}

// Twenty repetitions of which two the engine could not measure leave an RFC 8219 summary over 18: the run
// says it is over fewer than the 20 the RFC asks for; twenty valid ones say nothing.
func TestASummaryOverFewerThanTwentyValidRepetitionsSaysSo(t *testing.T) {
	for _, refused := range []map[int]bool{{3: true, 11: true}, {}} {
		p := planFor(t, v1alpha1.TestThroughput, v1alpha1.TestLatency)
		p.FrameSizes = []int{64}
		p.Latency.Repetitions = 20
		e := &unsyncedLatencyTrials{Engine: sim.New(sim.DUT{CapacityFPS: 3e6}), latencyTrial: p.Durations.LatencyTrial, refuse: refused}
		res, err := rfc2544.New(p, e, nil, rfc2544.Options{Sleep: e.Sleep}).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		said := strings.Contains(strings.Join(res.Notes, "\n"), "the RFC 8219 summary is over 18 valid repetitions of 20, fewer than the 20 it asks for")
		if said != (len(refused) > 0) {
			t.Errorf("%d refused: said %v; notes %q", len(refused), said, res.Notes)
		}
	}
}

// lossyLatencyTrials is a DUT that drops frames in chosen latency trials (1-based) although it carried the
// same rate loss-free in the throughput search: its capacity wanders from trial to trial.
type lossyLatencyTrials struct {
	*sim.Engine
	latencyTrial time.Duration
	lose         map[int]bool
	seen         int
}

func (l *lossyLatencyTrials) RunTrial(ctx context.Context, cfg engine.TrialConfig, progress func(engine.Progress)) (*engine.TrialResult, error) {
	res, err := l.Engine.RunTrial(ctx, cfg, progress)
	if err != nil || cfg.Duration != l.latencyTrial || cfg.Burst > 0 {
		return res, err
	}
	l.seen++
	if l.lose[l.seen] {
		for i := range res.Streams {
			res.Streams[i].RxFrames -= 13
		}
	}
	return res, err
}

// A latency repetition that the DUT made lossy at its NDR is run again, up to the validity's retries: a
// loss-free run measures the latency, and the note says which repetitions were run again. One that loses
// in every run is invalid.
func TestALossyLatencyRepetitionIsRunAgainThenInvalid(t *testing.T) {
	for _, c := range []struct {
		name       string
		lose       map[int]bool
		trials     int
		valid      bool
		wantNote   string
		wantNoNote string
	}{
		{"lossy once", map[int]bool{1: true}, 2, true, "latency 64 B at the NDR: repetitions 1 lost more than the loss tolerance of 0% and were run again", "are invalid and left out"},
		{"lossy every time", map[int]bool{1: true, 2: true, 3: true}, 3, false, "are invalid and left out", ""},
		{"never lossy", nil, 1, true, "", "run again"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := planFor(t, v1alpha1.TestThroughput, v1alpha1.TestLatency)
			p.FrameSizes = []int{64}
			p.Latency.Repetitions = 1
			p.Validity.InvalidTrialRetries = 2
			e := &lossyLatencyTrials{Engine: sim.New(sim.DUT{CapacityFPS: 3e6}), latencyTrial: p.Durations.LatencyTrial, lose: c.lose}
			res, err := rfc2544.New(p, e, nil, rfc2544.Options{Sleep: e.Sleep}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if e.seen != c.trials {
				t.Errorf("%d latency trials, want %d", e.seen, c.trials)
			}
			if len(res.Latency) != 1 || res.Latency[0].Aggregate.Valid != c.valid {
				t.Fatalf("latency rows %+v, want valid %v", res.Latency, c.valid)
			}
			// one repetition, as planned; a valid one says in which run it was measured, after how many lossy ones
			row := res.Latency[0]
			if len(row.Repetitions) != 1 {
				t.Fatalf("%d repetitions in the row, want 1", len(row.Repetitions))
			}
			if c.valid && c.trials > 1 && !strings.Contains(row.Repetitions[0].Reason, fmt.Sprintf("measured in run %d", c.trials)) {
				t.Errorf("repetition %+v does not say it was measured in run %d", row.Repetitions[0], c.trials)
			}
			notes := strings.Join(res.Notes, "\n")
			if c.wantNote != "" && !strings.Contains(notes, c.wantNote) {
				t.Errorf("notes %q lack %q", notes, c.wantNote)
			}
			if c.wantNoNote != "" && strings.Contains(notes, c.wantNoNote) {
				t.Errorf("notes %q say %q", notes, c.wantNoNote)
			}
		})
	}
}

// Latency against load (CSIT's curve): a row per load and direction, at the load's share of the NDR the
// run measured (the sparse probe at 1 % of it, raised to give RFC 8219's 500 frames, at most 1,000
// frames/s), each load with its own
// repetitions; a maxLatency judges the NDR's row alone, and every load is a planned row.
func TestLatencyAgainstLoadIsARowPerLoadAtItsShareOfTheNDR(t *testing.T) {
	p := planFor(t, v1alpha1.TestThroughput, v1alpha1.TestLatency)
	p.FrameSizes = []int{64}
	p.Latency.Repetitions = 2
	p.Latency.PercentOfNDR = []float64{0, 10, 50, 90, 100}
	e := sim.New(sim.DUT{CapacityFPS: 3e6, LatencyNs: 20000})
	res, err := rfc2544.New(p, e, nil, rfc2544.Options{Sleep: e.Sleep}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Throughput) != 1 || len(res.Latency) != 5 {
		t.Fatalf("throughput %+v, latency rows %+v", res.Throughput, res.Latency)
	}
	ndr := float64(res.Throughput[0].NDR.FramesPerSecond)
	for i, want := range []struct {
		load string
		fps  float64
	}{{"0", min(max(ndr/100, min(500/p.Durations.LatencyTrial.Seconds(), ndr/10)), 1000)}, {"10", ndr / 10}, {"50", ndr / 2}, {"90", ndr * 0.9}, {"100", ndr}} {
		l := res.Latency[i]
		if string(l.PercentOfNDR) != want.load || math.Abs(float64(l.Rate.FramesPerSecond)-want.fps) > 1 {
			t.Errorf("row %d: load %q at %d frames/s, want %s%% of the NDR of %.0f: %.0f", i, l.PercentOfNDR, l.Rate.FramesPerSecond, want.load, ndr, want.fps)
		}
		if !l.Aggregate.Valid || len(l.Repetitions) != 2 || l.RFC8219 == nil || l.RFC8219.Repetitions != 2 {
			t.Errorf("row %d (load %s): %+v", i, l.PercentOfNDR, l)
		}
		// the simulated DUT queues: its latency grows with the load
		if i > 0 && l.Aggregate.P99Ns < res.Latency[i-1].Aggregate.P99Ns {
			t.Errorf("p99 %d ns at %s%% is below %d ns at %s%%", l.Aggregate.P99Ns, l.PercentOfNDR, res.Latency[i-1].Aggregate.P99Ns, res.Latency[i-1].PercentOfNDR)
		}
	}
	if missing := expectations.Missing(res, p.Rows()); len(missing) != 0 {
		t.Errorf("rows missing: %v", missing)
	}
	// a bound between the curve's 90 % point and the NDR's fails the NDR's row and no other
	ninety, atNDR := res.Latency[3].Aggregate.P99Ns, res.Latency[4].Aggregate.P99Ns
	if ninety >= atNDR {
		t.Fatalf("the simulated queue gave p99 %d ns at 90%% and %d at the NDR", ninety, atNDR)
	}
	bound := &metav1.Duration{Duration: time.Duration((ninety + atNDR) / 2)}
	verdict, why := expectations.Evaluate(&v1alpha1.Expectations{MaxLatency: []v1alpha1.LatencyExpectation{{Max: *bound}}}, res, p.Rows())
	if verdict != v1alpha1.VerdictFailed || len(why) != 1 || !strings.Contains(why[0], "64 B") {
		t.Errorf("verdict %s %q, want Failed by the NDR's row alone", verdict, why)
	}
	// without the NDR among the loads, a maxLatency has nothing it bounds: undecided, never passed
	p.Latency.PercentOfNDR = []float64{0, 50}
	res, err = rfc2544.New(p, e, nil, rfc2544.Options{Sleep: e.Sleep}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	bound.Duration = time.Hour
	if verdict, why := expectations.Evaluate(&v1alpha1.Expectations{MaxLatency: []v1alpha1.LatencyExpectation{{Max: *bound}}}, res, p.Rows()); verdict == v1alpha1.VerdictPassed {
		t.Errorf("verdict %s %q with no latency measured at the NDR", verdict, why)
	}
}

// A search under a latency bound on a percentile its trials are too short to support (p99.99 of 1 s trials
// of a few thousand frames) judges each trial's largest latency, its p99.99 by nearest rank: it finds the
// rate where that crosses the bound, bound by latency. Judging such trials unknown once made every one the
// tester's and the row collapsed to no rate (reviewed against e85c22d).
func TestALatencyBoundOnAPercentileTooFineForItsTrials(t *testing.T) {
	p := planFor(t, v1alpha1.TestThroughput)
	p.FrameSizes = []int{1518}
	p.Durations.ValidationTrial = time.Second
	p.Throughput.ResolutionPercent = 0.005 // 41 frames/s of 1518 B at 10 GbE
	p.Throughput.MaxLatency = &plan.LatencyBound{Bound: 50 * time.Microsecond, Percentile: 99.99}
	res, _, _, err := run(t, p, sim.DUT{CapacityFPS: 8000, LatencyNs: 10000})
	if err != nil {
		t.Fatal(err)
	}
	row := res.Throughput[0]
	// the sim's largest latency (2.5 times its mean) reaches 50 µs at 94 % of its capacity: 7,520 frames/s
	fps := float64(row.NDR.FramesPerSecond)
	if row.TesterLimited || row.BoundBy != "latency" || fps < 7000 || fps > 7600 {
		t.Errorf("NDR %.0f frames/s, bound by %q, tester-limited %v; want about 7,520, by latency: %+v", fps, row.BoundBy, row.TesterLimited, res.Notes)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "the bound judged their largest latency") {
		t.Errorf("no note says the bound judged the largest latency: %q", res.Notes)
	}
}
