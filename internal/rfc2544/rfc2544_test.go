package rfc2544_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/engine/sim"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/rfc2544"
)

func sec(n float64) metav1.Duration {
	return metav1.Duration{Duration: time.Duration(n * float64(time.Second))}
}

// planFor resolves the plan of a 10G test at 64, 512 and 1518 B with the given tests, as the operator would.
func planFor(t *testing.T, tests ...v1alpha1.TestKind) *plan.Plan {
	t.Helper()
	tt := v1alpha1.TrafficTest{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: "ns"}, Spec: v1alpha1.TrafficTestSpec{
		Tests:      tests,
		FrameSizes: []int32{64, 512, 1518},
		Durations: v1alpha1.Durations{SearchTrial: sec(1), ValidationTrial: sec(60), LatencyTrial: sec(10), WarmUp: sec(1),
			Drain: sec(2), DUTRest: sec(1)},
		Throughput: v1alpha1.ThroughputParams{LossTolerance: "0", Resolution: "0.5", Method: v1alpha1.SearchMultistage},
		Latency:    v1alpha1.LatencyParams{Repetitions: 3},
		BackToBack: v1alpha1.BackToBackParams{MaxFrames: 100000, Resolution: 100, Repetitions: 3},
		Traffic:    v1alpha1.TrafficParams{Direction: v1alpha1.Unidirectional, LineRate: "10G"},
		Ports:      []v1alpha1.PortSpec{{Name: "west", Network: "w", Resource: "r"}, {Name: "east", Network: "e", Resource: "r"}},
	}}
	p, err := plan.Resolve(&tt, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type recorder struct {
	trials   []results.Trial
	progress int
	results  int
}

func (r *recorder) OnTrial(t results.Trial)      { r.trials = append(r.trials, t) }
func (r *recorder) OnProgress(v1alpha1.Progress) { r.progress++ }
func (r *recorder) OnResults(*v1alpha1.Results)  { r.results++ }

// throughputAt64 runs the throughput test at 64 B, in one direction or both, against a simulated DUT.
func throughputAt64(t *testing.T, dut sim.DUT, bidir bool) (*plan.Plan, *v1alpha1.Results, *recorder) {
	t.Helper()
	p := planFor(t, v1alpha1.TestThroughput)
	p.FrameSizes = []int{64}
	if bidir {
		p.Traffic.Direction = v1alpha1.Bidirectional
	}
	res, rec, _, err := run(t, p, dut)
	if err != nil {
		t.Fatal(err)
	}
	return p, res, rec
}

// frameLossAt64 runs the frame-loss test at 64 B in one direction against a simulated DUT: one curve.
func frameLossAt64(t *testing.T, dut sim.DUT) (*plan.Plan, *v1alpha1.Results, *recorder) {
	t.Helper()
	p := planFor(t, v1alpha1.TestFrameLoss)
	p.FrameSizes = []int{64}
	res, rec, _, err := run(t, p, dut)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.FrameLoss) != 1 {
		t.Fatalf("frame loss: %+v", res.FrameLoss)
	}
	return p, res, rec
}

func run(t *testing.T, p *plan.Plan, dut sim.DUT) (*v1alpha1.Results, *recorder, *sim.Engine, error) {
	t.Helper()
	e := sim.New(dut)
	rec := &recorder{}
	r := rfc2544.New(p, e, rec, rfc2544.Options{Sleep: e.Sleep})
	res, err := r.Run(context.Background())
	return res, rec, e, err
}

func pct(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }

func TestThroughputWithinResolutionOfTheTruth(t *testing.T) {
	p := planFor(t, v1alpha1.TestThroughput)
	dut := sim.DUT{CapacityFPS: 2.5e6, Noise: 0.002, Seed: 7}
	res, rec, e, err := run(t, p, dut)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Throughput) != 3 {
		t.Fatalf("want one row per size, got %+v", res.Throughput)
	}
	for _, row := range res.Throughput {
		truth := e.DUT.CapacityPercent(float64(row.FrameSize))
		got := pct(row.NDR.PercentOfLineRate)
		// noise of 0.2 % of the capacity widens the band by a little
		if got > truth*1.01 || got < truth-p.Throughput.ResolutionPercent-truth*0.01 {
			t.Errorf("%d B: NDR %.3f%% (truth %.3f%%, resolution %g)", row.FrameSize, got, truth, p.Throughput.ResolutionPercent)
		}
		if row.Trials > 30 {
			t.Errorf("%d B: %d trials is not a bounded search", row.FrameSize, row.Trials)
		}
		wantL2 := float64(row.NDR.FramesPerSecond) * float64(row.FrameSize) * 8
		if math.Abs(float64(row.NDR.L2BitsPerSecond)-wantL2) > 8*float64(row.FrameSize) {
			t.Errorf("%d B: L2 %d does not match %d frames/s", row.FrameSize, row.NDR.L2BitsPerSecond, row.NDR.FramesPerSecond)
		}
	}
	if len(rec.trials) == 0 || rec.results == 0 || rec.progress == 0 {
		t.Fatalf("the sink saw %d trials, %d results, %d progress reports", len(rec.trials), rec.results, rec.progress)
	}
	for i, tr := range rec.trials {
		if tr.Seq != i+1 {
			t.Fatalf("trial records must be numbered in order: %d at %d", tr.Seq, i)
		}
	}
	// Never an NDR above a failed validation (or any failed trial at least as long).
	for _, row := range res.Throughput {
		ndr := pct(row.NDR.PercentOfLineRate)
		for _, tr := range rec.trials {
			if tr.FrameSize == int(row.FrameSize) && !tr.Pass && !tr.TesterLimited && tr.DurationS >= 60 && tr.OfferedPercent <= ndr+1e-9 {
				t.Errorf("%d B: NDR %.3f%% is at or above a failed full-length trial at %.3f%%", row.FrameSize, ndr, tr.OfferedPercent)
			}
		}
	}
}

func TestDiagnosisTellsFramesFromBits(t *testing.T) {
	p := planFor(t, v1alpha1.TestThroughput)
	res, _, _, err := run(t, p, sim.DUT{CapacityFPS: 1e6})
	if err != nil {
		t.Fatal(err)
	}
	if res.Diagnosis == nil || res.Diagnosis.Bound != rfc2544.BoundFrames {
		t.Errorf("a 1 Mframes/s DUT is frames/s-bound: %+v", res.Diagnosis)
	}
	res, _, _, err = run(t, p, sim.DUT{CapacityL2Bps: 2e9})
	if err != nil {
		t.Fatal(err)
	}
	if res.Diagnosis == nil || res.Diagnosis.Bound != rfc2544.BoundBits {
		t.Errorf("a 2 Gbit/s DUT is bit/s-bound: %+v", res.Diagnosis)
	}
}

func TestLatencyRepeatedAtTheNDR(t *testing.T) {
	p := planFor(t, v1alpha1.TestThroughput, v1alpha1.TestLatency)
	p.FrameSizes = []int{64}
	res, rec, _, err := run(t, p, sim.DUT{CapacityFPS: 3e6})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Latency) != 1 || len(res.Latency[0].Repetitions) != 3 || !res.Latency[0].Aggregate.Valid {
		t.Fatalf("latency: %+v", res.Latency)
	}
	l := res.Latency[0]
	if l.Rate.FramesPerSecond != res.Throughput[0].NDR.FramesPerSecond {
		t.Errorf("latency ran at %d frames/s, the NDR is %d", l.Rate.FramesPerSecond, res.Throughput[0].NDR.FramesPerSecond)
	}
	a := l.Aggregate
	if a.MinNs > a.P50Ns || a.P50Ns > a.P99Ns || a.P99Ns > a.MaxNs || a.Frames <= 0 {
		t.Errorf("aggregate not ordered: %+v", a)
	}
	n := 0
	for _, tr := range rec.trials {
		if tr.Test == v1alpha1.TestLatency {
			n++
			if tr.DurationS != 10 {
				t.Errorf("latency trial of %g s, the plan says 10 s", tr.DurationS)
			}
		}
	}
	if n != 3 {
		t.Errorf("%d latency trials, want 3", n)
	}
}

func TestFrameLossStopsAfterTwoLossFreeSteps(t *testing.T) {
	// 55 % of line rate at 64 B
	_, res, _ := frameLossAt64(t, sim.DUT{CapacityFPS: 0.55 * 10e9 / (84 * 8)})
	var rates []string
	for _, pt := range res.FrameLoss[0].Points {
		rates = append(rates, pt.PercentOfLineRate)
	}
	want := []string{"100", "90", "80", "70", "60", "50", "40"}
	if len(rates) != len(want) {
		t.Fatalf("steps %v, want %v", rates, want)
	}
	for i := range want {
		if rates[i] != want[i] {
			t.Fatalf("steps %v, want %v", rates, want)
		}
	}
	// at 100 % offered, a 55 % DUT loses 45 %
	if l := pct(res.FrameLoss[0].Points[0].LossPercent); math.Abs(l-45) > 0.5 {
		t.Errorf("loss at 100%%: %g%%", l)
	}
}

// The tester is named the limit exactly where it spoiled the trials: a tester that falls 5 ms behind its
// schedule above 60 % of line rate (a preempted worker, deterministic here) limits a DUT that forwards
// line rate, and the row says so; in front of a DUT that forwards 40 %, the same tester is never reached,
// and the row is the DUT's, to the resolution. No trial the tester spoiled counts for or against the DUT.
func TestTheTesterIsTheLimitOnlyWhereItSpoiledTrials(t *testing.T) {
	line := 10e9 / (84 * 8)
	for _, c := range []struct {
		name    string
		dut     sim.DUT
		bidir   bool
		limited bool
		ndr     float64 // percent of line rate: the truth (the DUT's, or the tester's when limited)
	}{
		{"a DUT faster than the tester", sim.DUT{TesterLagAbovePercent: 60}, false, true, 60},
		{"a DUT slower than the tester", sim.DUT{TesterLagAbovePercent: 60, CapacityFPS: 0.4 * line}, false, false, 40},
		// both directions at once: the pair is confirmed together at the DUT's NDRs, which the tester keeps
		// clean, and only a tester that spoiled trials limits a pair
		{"both directions, a DUT faster than the tester", sim.DUT{TesterLagAbovePercent: 60}, true, true, 60},
		{"both directions, a DUT slower than the tester", sim.DUT{TesterLagAbovePercent: 60, CapacityFPS: 0.4 * line}, true, false, 40},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, res, rec := throughputAt64(t, c.dut, c.bidir)
			if want := map[bool]int{false: 1, true: 2}[c.bidir]; len(res.Throughput) != want {
				t.Fatalf("throughput %+v", res.Throughput)
			}
			for _, row := range res.Throughput {
				got := pct(row.NDR.PercentOfLineRate)
				// the tester's limit is found as the DUT's is, to the resolution, below a ceiling that may
				// sit half a resolution under the lowest rate it spoiled
				if row.TesterLimited != c.limited || row.Undetermined != "" || got > c.ndr+1e-9 || got < c.ndr-1.5*p.Throughput.ResolutionPercent {
					t.Errorf("%s: NDR %.3f%% tester-limited %v (undetermined %q), want %.1f%% (resolution %g) tester-limited %v",
						row.Direction, got, row.TesterLimited, row.Undetermined, c.ndr, p.Throughput.ResolutionPercent, c.limited)
				}
			}
			spoiled := 0
			for _, tr := range rec.trials {
				if above := tr.OfferedPercent > 60+1e-9; tr.TesterLimited != above || (tr.TesterLimited && tr.Pass) {
					t.Errorf("trial %d at %.3f%%: tester-limited %v, pass %v", tr.Seq, tr.OfferedPercent, tr.TesterLimited, tr.Pass)
				}
				if tr.TesterLimited {
					spoiled++
				}
			}
			if c.limited && spoiled == 0 {
				t.Error("no trial was spoiled")
			}
		})
	}
}

// A frame-loss step the tester spoiled in every try is left out, and the notes say where: the curve is the
// DUT's from the first step the tester kept clean.
func TestFrameLossLeavesOutTheStepsTheTesterSpoiled(t *testing.T) {
	p, res, rec := frameLossAt64(t, sim.DUT{TesterLagAbovePercent: 75})
	var rates []string
	for _, pt := range res.FrameLoss[0].Points {
		rates = append(rates, pt.PercentOfLineRate)
		if pt.LossPercent != "0" || pt.RxFrames != pt.TxFrames {
			t.Errorf("point %+v of a DUT that forwards line rate", pt)
		}
	}
	// 100, 90 and 80 % spoiled; 70 and 60 % clean end the curve
	if fmt.Sprint(rates) != "[70 60]" {
		t.Errorf("steps %v, want [70 60]", rates)
	}
	for _, step := range []string{"100", "90", "80"} {
		if !contains(strings.Join(res.Notes, "\n"), "frame loss 64 B at "+step+"%: the tester spoiled the trial") {
			t.Errorf("no note on the step at %s%%: %q", step, res.Notes)
		}
	}
	if n := len(rec.trials); n != 3*(p.Validity.InvalidTrialRetries+1)+2 {
		t.Errorf("%d trials, want every spoiled step tried %d times and two clean ones", n, p.Validity.InvalidTrialRetries+1)
	}
}

func TestBackToBackFindsTheBuffer(t *testing.T) {
	p := planFor(t, v1alpha1.TestBackToBack)
	p.FrameSizes = []int{64}
	dut := sim.DUT{CapacityFPS: 0.5 * 10e9 / (84 * 8), BufferFrames: 5000}
	res, _, e, err := run(t, p, dut)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.BackToBack) != 1 {
		t.Fatalf("b2b: %+v", res.BackToBack)
	}
	truth := e.DUT.BurstCapacity(64)
	got := res.BackToBack[0].Frames
	if got > truth || got < truth-p.BackToBack.Resolution {
		t.Errorf("back-to-back %d frames, truth %d, resolution %d", got, truth, p.BackToBack.Resolution)
	}
	// the simulated DUT holds the same burst every time: the spread says so, to the frame
	if sp := res.BackToBack[0].Spread; sp.Repetitions != 3 || sp.StdDev != 0 || sp.Min != got || sp.Max != got || sp.Mean != got {
		t.Errorf("spread %+v of a burst of %d every time", sp, got)
	}
	if res.BackToBack[0].Saturated {
		t.Error("a buffer of 5000 frames marked saturated")
	}
}

// A DUT whose buffer holds every burst the plan may send (backToBack.maxFrames) is marked saturated: the
// burst given is the plan's limit, a lower bound of the DUT's, and a note says so.
func TestBackToBackBeyondTheLongestBurstIsSaturated(t *testing.T) {
	p := planFor(t, v1alpha1.TestBackToBack)
	p.FrameSizes = []int{64}
	p.BackToBack.MaxFrames = 2000
	res, _, _, err := run(t, p, sim.DUT{CapacityFPS: 0.5 * 10e9 / (84 * 8), BufferFrames: 50000})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.BackToBack) != 1 || !res.BackToBack[0].Saturated || res.BackToBack[0].Frames != 2000 {
		t.Fatalf("b2b: %+v", res.BackToBack)
	}
	if !contains(strings.Join(res.Notes, "\n"), "the DUT forwarded the longest burst tried (2000 frames)") {
		t.Errorf("no note on the saturated burst: %q", res.Notes)
	}
}

// A DUT that forwards line rate, measured by a tester that cannot hold line rate for a full trial: the
// throughput is the tester's limit, so nothing shows the DUT is short of line rate, and nothing shows it is
// not. Its bursts are searched (each is short enough for the tester), and the row that follows is a lower
// bound whose note says the DUT may forward at line rate, where RFC 9004 has no back-to-back figure: a
// larger maxFrames would not find a limit.
func TestBackToBackBelowATesterLimitedThroughputSaysTheDUTMayBeAtLineRate(t *testing.T) {
	p := planFor(t, v1alpha1.TestThroughput, v1alpha1.TestBackToBack)
	p.FrameSizes = []int{1518}
	p.BackToBack.MaxFrames = 2000
	line := 10e9 / ((1518 + 20) * 8)
	res, _, _, err := run(t, p, sim.DUT{TesterMaxFPS: 0.992 * line})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Throughput) != 1 || !res.Throughput[0].TesterLimited {
		t.Fatalf("throughput: %+v, want the tester's limit", res.Throughput)
	}
	if len(res.BackToBack) != 1 {
		t.Fatalf("b2b: %+v", res.BackToBack)
	}
	// every burst was the tester's to send cleanly: the row is the DUT's lower bound, not the tester's; its
	// buffer time is not corrected by a throughput that was the tester's limit
	if row := res.BackToBack[0]; row.NotMeasurable != "" || !row.Saturated || row.Frames != 2000 || row.TesterLimited ||
		row.Spread.Repetitions != 3 || row.CorrectedBufferSeconds != "" {
		t.Errorf("b2b %+v: want the longest burst, saturated, with no corrected buffer time", row)
	}
	notes := strings.Join(res.Notes, "\n")
	if !contains(notes, "the DUT may forward at line rate") || contains(notes, "raise backToBack.maxFrames") {
		t.Errorf("the notes must say the DUT may be at line rate, not ask for a larger maxFrames: %q", res.Notes)
	}
}

func TestStalledDUTAbortsAndKeepsWhatWasMeasured(t *testing.T) {
	p := planFor(t, v1alpha1.TestThroughput)
	res, rec, _, err := run(t, p, sim.DUT{CapacityFPS: 2e6, StallAfterTrials: 6})
	if !errors.Is(err, rfc2544.ErrDUTStalled) {
		t.Fatalf("want ErrDUTStalled, got %v", err)
	}
	if len(rec.trials) < 6 {
		t.Fatalf("the trials before the stall must be kept: %d", len(rec.trials))
	}
	aborted := false
	for _, tr := range rec.trials {
		if tr.Aborted == "dut-stalled" {
			aborted = true
		}
	}
	if !aborted {
		t.Error("the aborted trial must be recorded with its reason")
	}
	if len(res.Throughput) == 0 {
		t.Error("sizes finished before the stall must keep their results")
	}
	found := false
	for _, n := range res.Notes {
		if len(n) > 0 && contains(n, "stalled") {
			found = true
		}
	}
	if !found {
		t.Errorf("the results must say the DUT stalled: %q", res.Notes)
	}
}

func TestSaturatedTesterIsNotBlamedOnTheDUT(t *testing.T) {
	// the DUT forwards line rate; the tester only reaches 40 %, held back by its CPU or by a port whose
	// link is slower than the plan's 10 GbE; the notes must say which (and which port)
	forty := 0.4 * 10e9 / (84 * 8)
	for _, c := range []struct {
		name       string
		dut        sim.DUT
		bidir      bool
		blame, not string
	}{
		{"cpu", sim.DUT{TesterMaxFPS: forty}, false, "CPU was the limit", "was full"},
		{"port", sim.DUT{TesterPortMaxFPS: forty}, false, "port west was full", "CPU was the limit"},
		// both directions, only east's link slow: the note names east, and west->east is not limited
		{"one port", sim.DUT{TesterPortMaxFPS: forty, TesterSlowPorts: []int{1}}, true, "port east was full", "port west was full"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, res, rec := throughputAt64(t, c.dut, c.bidir)
			for _, row := range res.Throughput {
				if want := !c.bidir || row.Direction == "east->west"; row.TesterLimited != want {
					t.Errorf("tester-limited must be %v: %+v", want, row)
				}
			}
			limited := 0
			for _, tr := range rec.trials {
				if tr.TesterLimited {
					limited++
					if tr.Pass {
						t.Errorf("a tester-limited trial must not count as a pass: %+v", tr)
					}
				}
			}
			if limited == 0 {
				t.Error("no trial was marked tester-limited")
			}
			has := func(s string) bool {
				return slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, s) })
			}
			if !has(c.blame) || has(c.not) {
				t.Errorf("the notes must say %q, not %q: %q", c.blame, c.not, res.Notes)
			}
		})
	}
}

func TestImixLossPerClass(t *testing.T) {
	p := planFor(t, v1alpha1.TestImixThroughput)
	p.Imix = &plan.Imix{Cycle: []int{64, 570, 64, 1518, 64, 570, 64, 64, 570, 64, 64, 570}, AverageFrameSize: 357.83}
	res, _, _, err := run(t, p, sim.DUT{CapacityL2Bps: 3e9})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Imix) != 1 || len(res.Imix[0].Classes) != 3 {
		t.Fatalf("imix: %+v", res.Imix)
	}
	for _, c := range res.Imix[0].Classes {
		if c.TxFrames == 0 || c.LossPercent != "0" {
			t.Errorf("class at the NDR: %+v", c)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// noChecksums is a tester whose ports do not verify checksums on receipt (as af_packet or memif).
type noChecksums struct{ *sim.Engine }

func (n noChecksums) Port(ctx context.Context, cfg engine.PortConfig) (*engine.PortInfo, error) {
	info, err := n.Engine.Port(ctx, cfg)
	if info != nil {
		info.RxChecksums = ""
	}
	return info, err
}

func TestCorruptedFramesAreLostAndNamed(t *testing.T) {
	// a DUT that corrupts 1 frame in 1000: every trial loses them, and says why
	p := planFor(t, v1alpha1.TestFrameLoss)
	p.FrameSizes = []int{64}
	res, rec, _, err := run(t, p, sim.DUT{CorruptEvery: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.trials) == 0 {
		t.Fatal("no trial")
	}
	for _, tr := range rec.trials {
		if tr.Corrupted == 0 || tr.Lost < tr.Corrupted || tr.Pass {
			t.Errorf("corrupted frames must be recorded and counted as lost: %+v", tr)
		}
	}
	has := func(notes []string, s string) bool {
		return slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, s) })
	}
	if !has(res.Notes, "the DUT corrupted frames") || has(res.Notes, "does not verify") {
		t.Errorf("the notes must name the corruption, and only it: %q", res.Notes)
	}

	// the same test on ports that cannot tell corrupted frames apart says so
	e := noChecksums{sim.New(sim.DUT{})}
	res, err = rfc2544.New(p, e, &recorder{}, rfc2544.Options{Sleep: e.Sleep}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// west only sends here: only east, which receives, matters
	if !has(res.Notes, "port east (simulated) does not verify IPv4 header and UDP checksums") || has(res.Notes, "port west") ||
		has(res.Notes, "the DUT corrupted") {
		t.Errorf("the notes must say the receiving port does not verify checksums: %q", res.Notes)
	}
}

// A stream whose flows arrived on several RX queues: a queue's gaps are the other queues' frames, so the
// records leave early out and say over how many queues the stream came; one queue keeps it.
func TestEarlyIsLeftOutWhenAStreamCameOnSeveralQueues(t *testing.T) {
	for _, queues := range []int{1, 2} {
		p := planFor(t, v1alpha1.TestThroughput)
		p.FrameSizes = []int{64}
		res, rec, _, err := run(t, p, sim.DUT{CapacityFPS: 2.5e6, DropEvery: 1000, RxQueues: queues})
		if err != nil {
			t.Fatal(err)
		}
		// and a port of two queues for one flow says that one of them (and its worker) receives nothing
		said := slices.ContainsFunc(res.Notes, func(n string) bool {
			return strings.Contains(n, "receives on 2 queues but each direction has 1 flow(s)")
		})
		if said != (queues > 1) {
			t.Errorf("%d queues, 1 flow: note said %v: %q", queues, said, res.Notes)
		}
		// and that reordering is counted within each of the sending port's lanes
		lanes := slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "sends each stream on 2 TX queues (lanes)") })
		if lanes != (queues > 1) {
			t.Errorf("%d TX queues: lanes note said %v: %q", queues, lanes, res.Notes)
		}
		if len(rec.trials) == 0 {
			t.Fatal("no trial recorded")
		}
		for _, tr := range rec.trials {
			if queues > 1 && (tr.Early != 0 || tr.MaxEarly != 0 || tr.MaxLate != 0 || tr.RxQueues != queues) {
				t.Fatalf("%d queues: trial %d early %d, max early %d, rxQueues %d: want no early, %d queues", queues, tr.Seq, tr.Early, tr.MaxEarly, tr.RxQueues, queues)
			}
			if queues == 1 && tr.RxQueues != 0 {
				t.Fatalf("one queue: trial %d says rxQueues %d", tr.Seq, tr.RxQueues)
			}
		}
	}
}

// Each trial record says which worker served which queue pairs and what each carried (the engine's
// workers record): here a worker per port, the TX port's queue sending what the stream sent and the RX
// port's receiving what it received.
func TestTrialRecordsSayWhichWorkerServedWhichQueues(t *testing.T) {
	p := planFor(t, v1alpha1.TestThroughput)
	p.FrameSizes = []int{64}
	p.Traffic.Direction = v1alpha1.Unidirectional
	_, rec, _, err := run(t, p, sim.DUT{CapacityFPS: 2.5e6})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range rec.trials {
		want := []results.Worker{{Lcore: 1, Queues: []results.Queue{{Port: 0, Tx: tr.TxFrames}}},
			{Lcore: 2, Queues: []results.Queue{{Port: 1, Rx: tr.RxFrames}}}}
		if !reflect.DeepEqual(tr.Workers, want) {
			t.Fatalf("trial %d: workers %+v, want %+v", tr.Seq, tr.Workers, want)
		}
	}
}

// Fragments whose first never came: on a port of one RX queue, where every fragment of a datagram comes to
// one table, the DUT lost the first (its loss, noted: a DUT that drops fragments must not make its trials the
// tester's); on a port of several, whose hash may send fragments apart from their first, the frames not whole
// may be the tester's, and such a trial is invalid.
func TestUnmatchedFragmentsAreTheDUTsOnOneQueueAndUndecidedOnSeveral(t *testing.T) {
	for _, queues := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d queues", queues), func(t *testing.T) {
			p := planFor(t, v1alpha1.TestThroughput)
			p.FrameSizes = []int{1518}
			p.Traffic.Fragmentable = true
			e := sim.New(sim.DUT{CapacityFPS: 2e6, PathMTU: 1400, FragmentsUnmatched: 3, RxQueues: queues})
			rec := &recorder{}
			res, err := rfc2544.New(p, e, rec, rfc2544.Options{Sleep: e.Sleep}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			dut := queues == 1
			if len(res.Throughput) != 1 || res.Throughput[0].TesterLimited == dut {
				t.Errorf("tester limited only where the queues may have split the fragments: %+v", res.Throughput)
			}
			if dut && res.Throughput[0].NDR.FramesPerSecond != 0 {
				t.Errorf("3 frames not whole in every trial, at any rate, are the DUT's loss: NDR 0: %+v", res.Throughput)
			}
			for _, tr := range rec.trials {
				if tr.TesterLimited == dut || tr.FragmentsUnmatched != 3 || tr.Fragmented-tr.FragmentedWhole != 3 {
					t.Errorf("every trial the DUT's (1 queue) or the tester's (2), its 3 unmatched fragments recorded: %+v", tr)
				}
			}
			if noted := strings.Contains(strings.Join(res.Notes, "\n"), "never did (the trial records: fragmentsUnmatched): the DUT lost"); noted != dut {
				t.Errorf("the notes say so where it is the DUT's: %q", res.Notes)
			}
		})
	}
}

// With the path MTU finder in the run and fragmented frames counting as lost, the sizes above the finder's
// answer are refused without a trial (as for a DUT that refuses them), saying why; an IMIX whose frames were
// fragmented gives no loss per size (the engine counts fragments per stream, not per size).
func TestFragmentedFramesTheSpecCountsAsLostAreRefusedByTheFinder(t *testing.T) {
	p := planFor(t, v1alpha1.TestPathMTU, v1alpha1.TestThroughput)
	p.FrameSizes = []int{64, 1518}
	p.Traffic.Fragmentable, p.Traffic.FragmentedLost = true, true
	e := sim.New(sim.DUT{CapacityFPS: 2e6, PathMTU: 1400})
	rec := &recorder{}
	res, err := rfc2544.New(p, e, rec, rfc2544.Options{Sleep: e.Sleep}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.PathMTU) != 1 || !res.PathMTU[0].Fragmented || res.PathMTU[0].LargestFrame != 1418 {
		t.Fatalf("finder: %+v", res.PathMTU)
	}
	for _, row := range res.Throughput {
		switch {
		case row.FrameSize == 1518 && (!strings.HasPrefix(row.Refused, "fragmented by the DUT above the path MTU 1400") || row.Trials != 0):
			t.Errorf("1518 B is refused by the finder's answer, no trial: %+v", row)
		case row.FrameSize == 64 && (row.Refused != "" || pct(row.NDR.PercentOfLineRate) <= 0):
			t.Errorf("64 B is measured: %+v", row)
		}
	}
	for _, tr := range rec.trials {
		if tr.Test == v1alpha1.TestThroughput && tr.FrameSize == 1518 {
			t.Errorf("no throughput trial at a refused size: %+v", tr)
		}
	}

	im := planFor(t, v1alpha1.TestImixThroughput)
	im.Traffic.Fragmentable = true
	im.Imix = &plan.Imix{Cycle: []int{64, 570, 64, 1518}, AverageFrameSize: 554}
	for _, lost := range []bool{false, true} {
		im.Traffic.FragmentedLost = lost
		e := sim.New(sim.DUT{CapacityFPS: 2e6, PathMTU: 1400})
		res, err := rfc2544.New(im, e, &recorder{}, rfc2544.Options{Sleep: e.Sleep}).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Imix) != 1 || (len(res.Imix[0].Classes) == 0) != lost {
			t.Errorf("lost=%v: classes given only when fragmented frames count as received (whole): %+v", lost, res.Imix)
		}
	}
}

// A size is refused as fragmented only where every frame of it that crossed came in fragments: a DUT that
// fragments half of them (the other half take a path whose MTU carries them whole) is searched, its NDR 0
// where fragmented frames count as lost at a loss tolerance of 0; and with repetitions a refused size runs
// its one trial, not one per repetition.
func TestASizeIsRefusedAsFragmentedOnlyWhenEveryFrameIs(t *testing.T) {
	p := planFor(t, v1alpha1.TestThroughput)
	p.FrameSizes = []int{1518}
	p.Traffic.Fragmentable, p.Traffic.FragmentedLost = true, true
	e := sim.New(sim.DUT{CapacityFPS: 2e6, PathMTU: 1400, FragmentedShare: 0.5})
	res, err := rfc2544.New(p, e, &recorder{}, rfc2544.Options{Sleep: e.Sleep}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Throughput) != 1 || res.Throughput[0].Refused != "" || res.Throughput[0].Trials < 2 || res.Throughput[0].NDR.FramesPerSecond != 0 {
		t.Errorf("half fragmented: searched, not refused, NDR 0: %+v", res.Throughput)
	}

	p.Throughput.Repetitions = 3
	e = sim.New(sim.DUT{CapacityFPS: 2e6, PathMTU: 1400})
	res, err = rfc2544.New(p, e, &recorder{}, rfc2544.Options{Sleep: e.Sleep}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Throughput) != 1 || res.Throughput[0].Refused == "" || res.Throughput[0].Trials != 1 {
		t.Errorf("every frame fragmented, 3 repetitions: refused by one trial: %+v", res.Throughput)
	}
}

// An IMIX every frame of which is too big for the DUT's MTU (its ICMP names the MTU) is a result, NDR 0 and
// why, from its first trial, not a stall that ends the run: the throughput test that follows still runs.
// An IMIX with a class that fits is measured as before (its refused classes are its loss).
func TestAnImixTheDUTRefusesWholeIsAResultNotAStall(t *testing.T) {
	im := planFor(t, v1alpha1.TestImixThroughput, v1alpha1.TestThroughput)
	im.FrameSizes = []int{64}
	im.Imix = &plan.Imix{Cycle: []int{1518, 1500, 1518}, AverageFrameSize: 1512}
	e := sim.New(sim.DUT{CapacityFPS: 2e6, PathMTU: 1400})
	rec := &recorder{}
	res, err := rfc2544.New(im, e, rec, rfc2544.Options{Sleep: e.Sleep}).Run(context.Background())
	if err != nil {
		t.Fatalf("a refused IMIX must not end the run: %v", err)
	}
	if len(res.Imix) != 1 || res.Imix[0].NDR.FramesPerSecond != 0 || res.Imix[0].LossPercent != "100" || res.Imix[0].Trials != 1 ||
		res.Imix[0].Refused != "too big for the path MTU 1400 (the DUT's ICMP)" {
		t.Errorf("the IMIX row: NDR 0, refused, by its first trial: %+v", res.Imix)
	}
	if len(res.Throughput) != 1 || pct(res.Throughput[0].NDR.PercentOfLineRate) <= 0 {
		t.Errorf("64 B is measured after it: %+v", res.Throughput)
	}
	if notes := strings.Join(res.Notes, "\n"); !strings.Contains(notes, "IMIX west->east: refused as too big for the path MTU 1400 (the DUT's ICMP) (no frame of the mix crossed the DUT: its smallest, 1500 B, is too big)") {
		t.Errorf("the notes say why: %q", res.Notes)
	}

	im.Imix = &plan.Imix{Cycle: []int{64, 1518}, AverageFrameSize: 791}
	e = sim.New(sim.DUT{CapacityFPS: 2e6, PathMTU: 1400})
	res, err = rfc2544.New(im, e, &recorder{}, rfc2544.Options{Sleep: e.Sleep}).Run(context.Background())
	if err != nil || len(res.Imix) != 1 || res.Imix[0].Refused != "" {
		t.Errorf("an IMIX with a class that fits is measured, not refused: %v %+v", err, res.Imix)
	}
}

// An IMIX every frame of which the DUT fragments (DF clear, every size above the path's MTU), with fragments
// counted as lost, is refused whole by its first trial, as a size is: an MTU does not depend on the rate, so
// no search down to the floor. Counted as received (the default), the same mix is measured; a mix whose
// smallest size fits is searched, its fragmented frames its loss. (A trial that lost every frame of the
// sizes that fit refuses nothing: TestSmallestCrossed; the simulated DUT spreads its loss over the sizes.)
func TestAnImixTheDUTFragmentsWholeIsRefusedWhenFragmentsAreLost(t *testing.T) {
	for _, c := range []struct {
		name        string
		cycle       []int
		capacityFPS float64
		lost        bool
		wantRefused bool
	}{
		{"every size fragmented, counted lost", []int{1518, 1500, 1518}, 2e6, true, true},
		{"every size fragmented, counted received", []int{1518, 1500, 1518}, 2e6, false, false},
		{"the smallest fits, counted lost", []int{64, 1518}, 2e6, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			im := planFor(t, v1alpha1.TestImixThroughput, v1alpha1.TestThroughput)
			im.FrameSizes = []int{64}
			im.Traffic.Fragmentable, im.Traffic.FragmentedLost = true, c.lost
			im.Imix = &plan.Imix{Cycle: c.cycle, AverageFrameSize: 1512}
			e := sim.New(sim.DUT{CapacityFPS: c.capacityFPS, PathMTU: 1400})
			res, err := rfc2544.New(im, e, &recorder{}, rfc2544.Options{Sleep: e.Sleep}).Run(context.Background())
			if err != nil {
				t.Fatalf("a fragmented IMIX must not end the run: %v", err)
			}
			if len(res.Imix) != 1 {
				t.Fatalf("one IMIX row: %+v", res.Imix)
			}
			row := res.Imix[0]
			refused := row.Refused == "fragmented by the DUT, and counted as lost (spec.traffic.fragmentedFrames)"
			if refused != c.wantRefused || (refused && (row.NDR.FramesPerSecond != 0 || row.LossPercent != "100" || row.Trials != 1)) {
				t.Errorf("refused %v, want %v (NDR 0, loss 100 %%, one trial when refused): %+v", refused, c.wantRefused, row)
			}
			if !c.wantRefused && (row.Refused != "" || row.Trials < 2) {
				t.Errorf("not refused, searched: %+v", row)
			}
			if !c.lost && pct(row.NDR.PercentOfLineRate) <= 0 {
				t.Errorf("fragments counted as received: the mix is measured: %+v", row)
			}
			note := "IMIX west->east: refused as fragmented by the DUT, and counted as lost (spec.traffic.fragmentedFrames) (every frame of the mix that crossed the DUT came in fragments, its smallest size, 1500 B, too: "
			if noted := strings.Contains(strings.Join(res.Notes, "\n"), note); noted != c.wantRefused {
				t.Errorf("the note %q is there only for a refused mix: %q", note, res.Notes)
			}
			if len(res.Throughput) != 1 || pct(res.Throughput[0].NDR.PercentOfLineRate) <= 0 {
				t.Errorf("64 B is measured after it: %+v", res.Throughput)
			}
		})
	}
}

// Frames that leave with DF clear through a path whose MTU is smaller are fragmented, not refused: the size
// is measured (no stall), its trial records count the frames that came in fragments, and what they count as
// is the spec's: received when whole (the default), or lost (fragmentedFrames Lost), which takes 1518 B's
// NDR to 0 from its first trial, refused as fragmented (an MTU does not depend on the rate: no search down
// to the floor), and leaves 64 B alone.
func TestFragmentedFramesCountAsTheSpecSays(t *testing.T) {
	for _, lost := range []bool{false, true} {
		t.Run(fmt.Sprintf("lost=%v", lost), func(t *testing.T) {
			p := planFor(t, v1alpha1.TestThroughput)
			p.FrameSizes = []int{64, 1518}
			p.Traffic.Fragmentable, p.Traffic.FragmentedLost = true, lost
			e := sim.New(sim.DUT{CapacityFPS: 2e6, PathMTU: 1400})
			rec := &recorder{}
			res, err := rfc2544.New(p, e, rec, rfc2544.Options{Sleep: e.Sleep}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, row := range res.Throughput {
				want := pct(row.NDR.PercentOfLineRate) > 0 && row.Refused == ""
				if row.FrameSize == 1518 && lost {
					want = row.NDR.FramesPerSecond == 0 && row.Trials == 1 && row.LossPercent == "100" &&
						row.Refused == "fragmented by the DUT, and counted as lost (spec.traffic.fragmentedFrames)"
				}
				if !want {
					t.Errorf("lost=%v: %+v", lost, row)
				}
			}
			if noted := strings.Contains(strings.Join(res.Notes, "\n"), "throughput 1518 B west->east: refused as fragmented by the DUT"); noted != lost {
				t.Errorf("lost=%v: the notes say the size was refused as fragmented only where it counts as lost: %q", lost, res.Notes)
			}
			var fragmented int64
			for _, tr := range rec.trials {
				if tr.FrameSize == 1518 {
					fragmented += tr.Fragmented
					if tr.RxFrames > 0 && (tr.Fragmented != tr.RxFrames || tr.Fragments != 2*tr.Fragmented) {
						t.Errorf("every 1518 B frame that arrived came in two fragments: %+v", tr)
					}
				} else if tr.Fragmented != 0 {
					t.Errorf("64 B is never fragmented: %+v", tr)
				}
			}
			notes := strings.Join(res.Notes, "\n")
			if fragmented == 0 || !strings.Contains(notes, "the DUT fragmented frames of 1518 B") {
				t.Errorf("the records count the fragmented frames (%d) and the notes say so: %q", fragmented, res.Notes)
			}
		})
	}
}

// A DUT whose path MTU is smaller than a frame size refuses those frames and says so by ICMP: that size
// and direction is a result (NDR 0, and why), found by its first trial, not a stall that ends the run; the
// trial records count the errors; the tests that follow skip a size no direction carries; and a stall the
// refusal causes cuts the other direction's trial short, which runs again, not against the DUT.
func TestFramesOverThePathMTUAreAResultNotAStall(t *testing.T) {
	for _, c := range []struct {
		name      string
		direction v1alpha1.Direction
		ports     []int  // the ports whose frames the MTU holds (none: all)
		stall     bool   // the search trial is longer than the stall check: the refusal stalls it
		want      string // the 1518 B rows refused, by direction
		skipped   bool   // the tests after throughput skip 1518 B: no direction carries it
	}{
		{name: "one direction", direction: v1alpha1.Unidirectional, want: "west->east", skipped: true},
		{name: "both directions", direction: v1alpha1.Bidirectional, want: "west->east east->west", skipped: true},
		{name: "one of two, stalled", direction: v1alpha1.Bidirectional, ports: []int{0}, stall: true, want: "west->east"},
		{name: "one of a bound pair", direction: v1alpha1.BidirectionalBound, ports: []int{1}, stall: true, want: "west->east east->west", skipped: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := planFor(t, v1alpha1.TestThroughput, v1alpha1.TestLatency, v1alpha1.TestFrameLoss, v1alpha1.TestBackToBack)
			p.Traffic.Direction = c.direction
			opt := rfc2544.Options{}
			if c.stall {
				p.Durations.SearchTrial = 5 * time.Second
				opt.Stall = time.Second
			}
			e := sim.New(sim.DUT{CapacityFPS: 2e6, PathMTU: 1400, PathMTUPorts: c.ports})
			rec := &recorder{}
			opt.Sleep = e.Sleep
			res, err := rfc2544.New(p, e, rec, opt).Run(context.Background())
			if err != nil {
				t.Fatalf("a size that does not fit is a result, not the end of the run: %v", err)
			}
			var refused []string
			for _, row := range res.Throughput {
				switch {
				case row.FrameSize == 1518 && row.Refused != "":
					refused = append(refused, row.Direction)
					// the loss that decides is the refused direction's (a bound pair's other direction shares it)
					if !strings.HasPrefix(row.Refused, "too big for the path MTU 1400 (the DUT's ICMP)") || row.NDR.FramesPerSecond != 0 ||
						row.LossPercent != "100" || row.Trials != 1 {
						t.Errorf("a refused row is NDR 0 after one trial, and says why: %+v", row)
					}
				case row.Refused != "" || pct(row.NDR.PercentOfLineRate) <= 0:
					t.Errorf("a size or direction that fits is measured: %+v", row)
				}
			}
			if strings.Join(refused, " ") != c.want {
				t.Errorf("refused rows %q, want %q", refused, c.want)
			}
			var tooBig, cutShort, probes int
			for _, tr := range rec.trials {
				if tr.TooBig > 0 {
					tooBig++
					if tr.FrameSize != 1518 || tr.PathMTU != 1400 || tr.RxFrames != 0 || tr.TooBig != tr.TxFrames {
						t.Errorf("a trial's refusals are its own size's and direction's: %+v", tr)
					}
				}
				if tr.Aborted != "" && tr.TooBig == 0 {
					cutShort++
				}
				if tr.Purpose == "probe" {
					probes++
				}
			}
			if tooBig == 0 || probes == 0 {
				t.Errorf("the trial records count the ICMP errors (%d), and a low-rate probe confirmed each refusal (%d)", tooBig, probes)
			}
			if c.stall != (cutShort > 0) {
				t.Errorf("%d trials cut short by the refusal's stall (want some only where it stalled)", cutShort)
			}
			notes := strings.Join(res.Notes, "\n")
			if !contains(notes, "the largest frame that crosses it whole is 1418 B") || !regexp.MustCompile(`no frame crossed the DUT, which refused every one( \(\d+ frames sent in the trial, \d+ ICMP errors back\))? as too big for the path MTU 1400 \(the DUT's ICMP\)`).MatchString(notes) {
				t.Errorf("the notes say which size was refused and the largest that fits: %q", res.Notes)
			}
			skipped := contains(notes, "latency 1518 B was not run: the DUT refused every frame of that size") &&
				contains(notes, "frameLoss 1518 B was not run") && contains(notes, "backToBack 1518 B was not run")
			if skipped != c.skipped {
				t.Errorf("the tests after throughput skip a size only where every direction refused it (skipped %v): %q", skipped, res.Notes)
			}
			for _, l := range res.Latency {
				if l.FrameSize == 1518 && slices.Contains(refused, l.Direction) {
					t.Errorf("latency where the size was refused: %+v", l)
				}
			}
			for _, f := range res.FrameLoss {
				if f.FrameSize == 1518 && slices.Contains(refused, f.Direction) {
					t.Errorf("a frame loss curve where the size was refused: %+v", f)
				}
			}
			for _, b := range res.BackToBack {
				if b.FrameSize == 1518 && slices.Contains(refused, b.Direction) != strings.Contains(b.NotMeasurable, "refused") {
					t.Errorf("back-to-back is not measurable exactly where the size was refused: %+v", b)
				}
			}
		})
	}
}

// A refusal stands on a low-rate probe the tester did not spoil: a high-rate trial the tester spoiled (it
// fell behind) still shows the refusal once the probe confirms it; where the tester spoiled every try of the
// probe, nothing is concluded, the stall is the DUT's as before (the run ends DUTStalled, measured results
// kept), and its message says what the DUT's ICMP said.
func TestARefusalStandsOnAProbeTheTesterDidNotSpoil(t *testing.T) {
	for _, c := range []struct {
		name    string
		lagOver float64 // the tester lags (spoils) every trial above this share of line rate, percent
		refused bool
	}{
		{name: "a spoiled trial, a clean probe", lagOver: 50, refused: true},
		{name: "a spoiled probe", lagOver: 0.01},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := planFor(t, v1alpha1.TestThroughput)
			p.FrameSizes = []int{1518}
			p.Durations.SearchTrial = 5 * time.Second
			e := sim.New(sim.DUT{CapacityFPS: 2e6, PathMTU: 1400, TesterLagAbovePercent: c.lagOver})
			rec := &recorder{}
			res, err := rfc2544.New(p, e, rec, rfc2544.Options{Sleep: e.Sleep, Stall: time.Second}).Run(context.Background())
			if c.refused {
				if err != nil || len(res.Throughput) != 1 || res.Throughput[0].Refused == "" {
					t.Fatalf("want the size refused, got %v %+v", err, res.Throughput)
				}
				return
			}
			if !errors.Is(err, rfc2544.ErrDUTStalled) || !contains(err.Error(), "west->east it refused the frames as too big (ICMP: path MTU 1400)") {
				t.Fatalf("want the DUT's stall, naming what its ICMP said, got %v; %+v", err, res.Throughput)
			}
			for _, row := range res.Throughput {
				if row.Refused != "" {
					t.Errorf("no refusal from a spoiled probe: %+v", row)
				}
			}
		})
	}
}

// A DUT that drops oversize frames silently cannot be told from a lossy one by a trial: with the path MTU
// finder in the run, the sizes above what it found are refused without a trial, and the run goes on.
func TestTheFindersAnswerRefusesLargerSizes(t *testing.T) {
	p := planFor(t, v1alpha1.TestPathMTU, v1alpha1.TestThroughput, v1alpha1.TestLatency)
	p.Traffic.Direction = v1alpha1.Bidirectional
	p.Durations.SearchTrial = 5 * time.Second
	e := sim.New(sim.DUT{CapacityFPS: 2e6, PathMTU: 1400, PathMTUSilent: true})
	rec := &recorder{}
	res, err := rfc2544.New(p, e, rec, rfc2544.Options{Sleep: e.Sleep, Stall: time.Second}).Run(context.Background())
	if err != nil {
		t.Fatalf("the finder's answer makes 1518 B a result: %v", err)
	}
	for _, row := range res.Throughput {
		if (row.FrameSize == 1518) != (row.Refused == "too big for the path MTU 1400 the path MTU finder found") {
			t.Errorf("1518 B refused by the finder's answer, the rest measured: %+v", row)
		}
		if row.FrameSize == 1518 && (row.Trials != 0 || row.NDR.FramesPerSecond != 0) {
			t.Errorf("no trial at a size the finder refused: %+v", row)
		}
	}
	for _, tr := range rec.trials {
		if tr.FrameSize == 1518 && tr.Test != v1alpha1.TestPathMTU {
			t.Errorf("a trial at a refused size: %+v", tr)
		}
	}
}
