package rfc2544_test

import (
	"context"
	"strings"
	"testing"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine/sim"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/rfc2544"
)

// checkpointer is a sink that keeps checkpoints, as the results ConfigMap does.
type checkpointer struct {
	recorder
	checkpoints []results.Checkpoint
}

func (c *checkpointer) OnCheckpoint(cp results.Checkpoint) { c.checkpoints = append(c.checkpoints, cp) }

// A runner given the checkpoint taken after the throughput steps measures only what follows, from the
// NDRs the checkpoint holds; a checkpoint of another plan is not trusted.
func TestResumeFromACheckpoint(t *testing.T) {
	p := planFor(t, v1alpha1.TestThroughput, v1alpha1.TestLatency)
	dut := sim.DUT{CapacityFPS: 2.5e6, Seed: 3}
	full := &checkpointer{}
	e := sim.New(dut)
	whole, err := rfc2544.New(p, e, full, rfc2544.Options{Sleep: e.Sleep, PlanHash: "plan-a"}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(full.checkpoints) != 6 || full.results != 2 {
		t.Fatalf("%d checkpoints and %d result writes for 6 steps, want a checkpoint per step, the preflight record and the final tables", len(full.checkpoints), full.results)
	}
	afterThroughput := full.checkpoints[2]
	if afterThroughput.StepsDone != 3 || len(afterThroughput.NDR) != 3 || len(afterThroughput.Results.Throughput) != 3 {
		t.Fatalf("checkpoint after the throughput steps: %+v", afterThroughput)
	}
	const lastSeq = 1000 // records of the interrupted step beyond the checkpoint's
	for _, tc := range []struct {
		name     string
		planHash string
		measured []v1alpha1.TestKind
		note     string
	}{
		{"same plan", "plan-a", []v1alpha1.TestKind{v1alpha1.TestLatency}, "the 3 of 6 steps complete then were not measured again"},
		{"plan changed while suspended", "plan-b", []v1alpha1.TestKind{v1alpha1.TestThroughput, v1alpha1.TestLatency}, "checkpoint of another plan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &checkpointer{}
			e := sim.New(dut)
			cp := afterThroughput
			res, err := rfc2544.New(p, e, rec, rfc2544.Options{Sleep: e.Sleep, PlanHash: tc.planHash, Resume: &cp, LastSeq: lastSeq}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var kinds []v1alpha1.TestKind
			for i, tr := range rec.trials {
				if tr.Seq != lastSeq+i+1 {
					t.Fatalf("trial %d has seq %d, want %d: numbering must go on from the records", i, tr.Seq, lastSeq+i+1)
				}
				if len(kinds) == 0 || kinds[len(kinds)-1] != tr.Test {
					kinds = append(kinds, tr.Test)
				}
			}
			if strings.Join(kindNames(kinds), ",") != strings.Join(kindNames(tc.measured), ",") {
				t.Errorf("measured %v, want %v", kinds, tc.measured)
			}
			if len(res.Throughput) != 3 || len(res.Latency) != 3 {
				t.Fatalf("tables: %d throughput, %d latency rows", len(res.Throughput), len(res.Latency))
			}
			for i := range res.Latency {
				if res.Latency[i].Rate != whole.Latency[i].Rate {
					t.Errorf("latency %d B at %+v, the uninterrupted run at %+v", res.Latency[i].FrameSize, res.Latency[i].Rate, whole.Latency[i].Rate)
				}
			}
			if !strings.Contains(strings.Join(res.Notes, "\n"), tc.note) {
				t.Errorf("no note %q in %q", tc.note, res.Notes)
			}
			if last := rec.checkpoints[len(rec.checkpoints)-1]; last.StepsDone != 6 || last.PlanHash != tc.planHash {
				t.Errorf("last checkpoint %+v", last)
			}
		})
	}
}

func kindNames(k []v1alpha1.TestKind) []string {
	out := make([]string, len(k))
	for i, x := range k {
		out[i] = string(x)
	}
	return out
}

// cancelling is a checkpointing sink that stops the run at its first trial of the given test.
type cancelling struct {
	checkpointer
	at     v1alpha1.TestKind
	cancel context.CancelFunc
}

func (c *cancelling) OnTrial(tr results.Trial) {
	c.checkpointer.OnTrial(tr)
	if tr.Test == c.at {
		c.cancel()
	}
}

// A step that ends in an error (here: the run is stopped during it) leaves no checkpoint that counts it
// done, whichever test it is: a resumed run measures it again.
func TestAnInterruptedStepIsNotCheckpointed(t *testing.T) {
	for _, at := range []v1alpha1.TestKind{v1alpha1.TestThroughput, v1alpha1.TestImixThroughput} {
		t.Run(string(at), func(t *testing.T) {
			p := planFor(t, v1alpha1.TestThroughput, v1alpha1.TestImixThroughput)
			p.Imix = &plan.Imix{Cycle: []int{64, 570, 64, 1518}, AverageFrameSize: 554}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sink := &cancelling{at: at, cancel: cancel}
			e := sim.New(sim.DUT{CapacityFPS: 2.5e6})
			_, err := rfc2544.New(p, e, sink, rfc2544.Options{Sleep: e.Sleep, PlanHash: "h"}).Run(ctx)
			if err == nil {
				t.Fatal("the run was not stopped")
			}
			done := 0
			if n := len(sink.checkpoints); n > 0 {
				done = sink.checkpoints[n-1].StepsDone
			}
			want := 0
			if at == v1alpha1.TestImixThroughput {
				want = 3 // the three throughput steps, not the IMIX step under way
			}
			if done != want {
				t.Errorf("last checkpoint counts %d steps done, want %d", done, want)
			}
		})
	}
}

// A run resumed after its throughput step still knows that step's NDR was the tester's limit: its
// back-to-back buffer time is not corrected by it, and its note says the DUT may be at line rate. A
// checkpoint written before the NDR carried that flag still says it in its throughput rows.
func TestAResumedRunKnowsItsThroughputWasTheTestersLimit(t *testing.T) {
	p := planFor(t, v1alpha1.TestThroughput, v1alpha1.TestBackToBack)
	p.FrameSizes = []int{1518}
	p.BackToBack.MaxFrames = 2000
	dut := sim.DUT{TesterMaxFPS: 0.992 * 10e9 / ((1518 + 20) * 8)}
	full := &checkpointer{}
	e := sim.New(dut)
	if _, err := rfc2544.New(p, e, full, rfc2544.Options{Sleep: e.Sleep, PlanHash: "plan-a"}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	afterThroughput := full.checkpoints[0]
	if afterThroughput.StepsDone != 1 || len(afterThroughput.NDR) != 1 || afterThroughput.NDR[0].TesterLimited == nil || !*afterThroughput.NDR[0].TesterLimited {
		t.Fatalf("checkpoint after the throughput step: %+v", afterThroughput)
	}
	for _, tc := range []struct {
		name   string
		oldNDR bool
	}{{"checkpoint with the flag", false}, {"checkpoint from before the flag", true}} {
		t.Run(tc.name, func(t *testing.T) {
			cp := afterThroughput
			cp.Results = afterThroughput.Results.DeepCopy()
			cp.NDR = append([]results.NDRPoint(nil), afterThroughput.NDR...)
			if tc.oldNDR {
				cp.NDR[0].TesterLimited = nil
			}
			e := sim.New(dut)
			res, err := rfc2544.New(p, e, &checkpointer{}, rfc2544.Options{Sleep: e.Sleep, PlanHash: "plan-a", Resume: &cp}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(res.BackToBack) != 1 || res.BackToBack[0].CorrectedBufferSeconds != "" || !res.BackToBack[0].Saturated {
				t.Errorf("b2b after resuming: %+v, want saturated with no corrected buffer time", res.BackToBack)
			}
			if !strings.Contains(strings.Join(res.Notes, "\n"), "the DUT may forward at line rate") {
				t.Errorf("no note that the DUT may be at line rate: %q", res.Notes)
			}
		})
	}
}

// A latency step checkpoints after each of its loads: a run resumed from such a checkpoint measures only
// the loads not complete then, and ends with the rows the uninterrupted run has. The trial records name
// each trial's load.
func TestALatencyStepResumesAtItsFirstLoadNotComplete(t *testing.T) {
	p, dut, full, whole := latencyStepRun(t)
	purposes := map[string]int{}
	for _, tr := range full.trials {
		if tr.Test == v1alpha1.TestLatency {
			purposes[tr.Purpose]++
		}
	}
	if purposes["latency at the sparse probe"] != 3 || purposes["latency at 50% of the NDR"] != 3 || purposes["latency at the NDR"] != 3 {
		t.Errorf("latency trials by purpose: %v", purposes)
	}
	// throughput done, then the latency step's checkpoints after the probe and after 50 %, then the step's
	if len(full.checkpoints) != 4 || full.checkpoints[1].StepsDone != 1 || len(full.checkpoints[1].Results.Latency) != 1 ||
		full.checkpoints[2].StepsDone != 1 || len(full.checkpoints[2].Results.Latency) != 2 {
		t.Fatalf("checkpoints: %d, %+v", len(full.checkpoints), full.checkpoints)
	}
	cp := full.checkpoints[2]
	rec := &checkpointer{}
	e := sim.New(dut)
	res, err := rfc2544.New(p, e, rec, rfc2544.Options{Sleep: e.Sleep, PlanHash: "h", Resume: &cp, LastSeq: 500}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range rec.trials {
		if tr.Purpose != "latency at the NDR" {
			t.Errorf("the resumed run measured %s %q again", tr.Test, tr.Purpose)
		}
	}
	if len(rec.trials) != 3 || len(res.Latency) != 3 {
		t.Fatalf("%d trials, %d latency rows", len(rec.trials), len(res.Latency))
	}
	for i := range res.Latency {
		if res.Latency[i].PercentOfNDR != whole.Latency[i].PercentOfNDR || res.Latency[i].Rate != whole.Latency[i].Rate {
			t.Errorf("row %d: %s at %+v, the uninterrupted run %s at %+v", i, res.Latency[i].PercentOfNDR, res.Latency[i].Rate,
				whole.Latency[i].PercentOfNDR, whole.Latency[i].Rate)
		}
	}
}

// progressKeeper keeps the progress reports besides the checkpoints.
type progressKeeper struct {
	checkpointer
	reports []v1alpha1.Progress
}

func (p *progressKeeper) OnProgress(pr v1alpha1.Progress) { p.reports = append(p.reports, pr) }

// A run resumed within its latency step expects to take what is left of it: the loads the checkpoint held
// measured are not counted again (the estimate once counted every load of the step and said so for the
// whole of the resumed run).
func TestAResumedLatencyStepIsEstimatedForTheLoadsLeft(t *testing.T) {
	p, dut, full, _ := latencyStepRun(t)
	expected := func(cp results.Checkpoint) int64 {
		keep := &progressKeeper{}
		e := sim.New(dut)
		if _, err := rfc2544.New(p, e, keep, rfc2544.Options{Sleep: e.Sleep, PlanHash: "h", Resume: &cp, LastSeq: 500}).Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(keep.reports) == 0 {
			t.Fatal("no progress report")
		}
		return keep.reports[0].EstimatedTotalSeconds
	}
	threeLoads, oneLoad := expected(full.checkpoints[0]), expected(full.checkpoints[2])
	if threeLoads <= 0 || float64(oneLoad) > 0.5*float64(threeLoads) {
		t.Errorf("a resumed run with one load of three left expects %d s, one with all three %d s", oneLoad, threeLoads)
	}
}

// latencyStepRun runs throughput and latency at 64 B, latency at three loads, on a simulated DUT: the plan,
// the DUT, the checkpoints and trials, and the results.
func latencyStepRun(t *testing.T) (*plan.Plan, sim.DUT, *checkpointer, *v1alpha1.Results) {
	t.Helper()
	p := planFor(t, v1alpha1.TestThroughput, v1alpha1.TestLatency)
	p.FrameSizes = []int{64}
	p.Latency.PercentOfNDR = []float64{0, 50, 100}
	dut := sim.DUT{CapacityFPS: 2.5e6, Seed: 5}
	full := &checkpointer{}
	e := sim.New(dut)
	whole, err := rfc2544.New(p, e, full, rfc2544.Options{Sleep: e.Sleep, PlanHash: "h"}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return p, dut, full, whole
}
