package rfc2544_test

import (
	"context"
	"testing"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine/sim"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/rfc2544"
)

// progressLog keeps the estimate of every progress report with the simulated time it was made at. The
// simulation reports live progress while it holds its lock, so the time is the clock as of the last trial
// record or rest.
type progressLog struct {
	recorder
	e    *sim.Engine
	now  time.Duration
	at   []time.Duration
	left []time.Duration
}

func (p *progressLog) OnTrial(tr results.Trial) {
	p.recorder.OnTrial(tr)
	p.now = p.e.Clock()
}

func (p *progressLog) sleep(ctx context.Context, d time.Duration) error {
	err := p.e.Sleep(ctx, d)
	p.now = p.e.Clock()
	return err
}

func (p *progressLog) OnProgress(pg v1alpha1.Progress) {
	p.at = append(p.at, p.now)
	p.left = append(p.left, time.Duration(pg.EstimatedSecondsLeft)*time.Second)
}

// The estimate a run states before it starts is near what it then takes, and the estimate of what is
// left, updated as trials complete, comes nearer the truth. The runs are simulated (their
// clock is the trials' phases and the DUT's rests): the model's per-trial control overhead is added to it.
func TestTheRunStatesItsCostBeforehand(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*plan.Plan)
		dut    sim.DUT
	}{
		{name: "throughput and latency, three sizes", dut: sim.DUT{CapacityFPS: 3e6, Noise: 0.01},
			change: func(p *plan.Plan) { p.Tests = []v1alpha1.TestKind{v1alpha1.TestThroughput, v1alpha1.TestLatency} }},
		{name: "binary search, bidirectional", dut: sim.DUT{CapacityFPS: 2e6},
			change: func(p *plan.Plan) {
				p.Throughput.Method = v1alpha1.SearchBinary
				p.Traffic.Direction = v1alpha1.Bidirectional
			}},
		// FD.io CSIT's goal: 1 s trials until 21 s decide a rate, a relative goal width of 0.5 %, at a low
		// NDR (2 % of line rate at 64 B), where the width asks for more trials than the resolution would
		{name: "CSIT goal with its width", dut: sim.DUT{CapacityFPS: 3e5},
			change: func(p *plan.Plan) {
				p.FrameSizes = []int{64}
				p.Throughput.Goal = &plan.Goal{Preset: v1alpha1.GoalCSIT, FinalTrialDuration: time.Second, DurationSum: 21 * time.Second,
					ExceedRatioPercent: 50, WidthPercent: 0.5}
			}},
		// the new user's run of issue 13: every test, a shaped DUT with a buffer, 1-2 s trials
		{name: "every test through a shaper", dut: sim.DUT{CapacityL2Bps: 2e9, BufferFrames: 4000},
			change: func(p *plan.Plan) {
				p.Tests = []v1alpha1.TestKind{v1alpha1.TestThroughput, v1alpha1.TestLatency, v1alpha1.TestFrameLoss, v1alpha1.TestBackToBack}
				p.FrameSizes = []int{128, 512, 1024}
				p.Durations.SearchTrial, p.Durations.ValidationTrial, p.Durations.LatencyTrial = time.Second, 2*time.Second, 2*time.Second
				p.BackToBack.Repetitions = 50
				p.BackToBack.Resolution = 16
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := planFor(t, v1alpha1.TestThroughput)
			tc.change(p)
			e := sim.New(tc.dut)
			base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			log := &progressLog{e: e}
			r := rfc2544.New(p, e, log, rfc2544.Options{Sleep: log.sleep, Now: func() time.Time { return base.Add(log.now) }})
			before := r.Estimate()
			if _, err := r.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			truth := e.Clock() + time.Duration(e.Trials())*150*time.Millisecond
			ratio := before.Total.Seconds() / truth.Seconds()
			t.Logf("estimated %s; took %s in %d trials: ratio %.2f", before, truth.Round(time.Second), e.Trials(), ratio)
			// before the run nothing of the DUT is known: within a factor of two
			if ratio < 0.5 || ratio > 2 {
				t.Errorf("estimated %s before the run, it took %s (%d trials)", before.Total, truth, e.Trials())
			}
			// in the second half the estimate knows the NDRs: elapsed + left is within a half of the truth
			for i := range log.at {
				got := (log.at[i] + log.left[i]).Seconds() / truth.Seconds()
				if log.at[i] > truth/2 && (got < 0.67 || got > 1.5) {
					t.Errorf("at %s the run expected %s more, %.2f of the truth", log.at[i], log.left[i], got)
					break
				}
			}
		})
	}
}

// The back-to-back estimate counts the trials the searches take: a blind search from maxFrames, then
// for every later repetition the two ends of the bracket the earlier answers place and the bisection
// inside it, which widens as the answers scatter. Before the run the scatter is unknown, so the estimate
// holds to within a factor of two of a steady DUT's and a scattered one's; once the answers are in, it
// rests on their scatter and comes within a quarter.
func TestBackToBackEstimateCountsTheSearchTrials(t *testing.T) {
	scattered := sim.DUT{CapacityFPS: 3e6, BufferFrames: 40000, Noise: 0.05, Seed: 5}
	for _, tc := range []struct {
		name       string
		dut        sim.DUT
		resolution int64
	}{
		{name: "steady burst", dut: sim.DUT{CapacityFPS: 3e6, BufferFrames: 4000}, resolution: 100},
		{name: "scattered burst", dut: scattered, resolution: 100},
		{name: "scattered, fine resolution", dut: scattered, resolution: 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := planFor(t, v1alpha1.TestBackToBack)
			p.FrameSizes = []int{64}
			p.BackToBack.Repetitions = 20
			p.BackToBack.Resolution = tc.resolution
			e := sim.New(tc.dut)
			r := rfc2544.New(p, e, nil, rfc2544.Options{Sleep: e.Sleep})
			before := backToBackTrials(r.Estimate())
			res, err := r.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			after := backToBackTrials(r.Estimate())
			took := 0
			for _, tr := range e.Log {
				if tr.Burst > 0 {
					took++
				}
			}
			t.Logf("estimated %d trials before, %d after; took %d; bursts %+v", before, after, took, res.BackToBack[0].Spread)
			if ratio := float64(before) / float64(took); ratio < 0.5 || ratio > 2 {
				t.Errorf("estimated %d back-to-back trials before the run, it took %d", before, took)
			}
			if ratio := float64(after) / float64(took); ratio < 0.8 || ratio > 1.25 {
				t.Errorf("estimated %d back-to-back trials from the answers, the run took %d", after, took)
			}
		})
	}
}

func backToBackTrials(e rfc2544.Estimate) int {
	n := 0
	for _, s := range e.Steps {
		if s.Test == v1alpha1.TestBackToBack {
			n += s.Trials
		}
	}
	return n
}
