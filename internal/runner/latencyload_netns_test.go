package runner_test

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
)

// TestLatencyAgainstLoadFollowsTheShapersQueue: latency at the sparse probe and at fractions of the NDR
// through a shaper (tbf at 16 Mbit/s, a 64 KiB bucket, a queue of two seconds) whose delay at each load
// is known. Below the rate nothing queues: the latency is the path's. Above it (loss alone finds an NDR
// well above the rate: the queue hides it, as the demo's gateways do) the queue grows by (λ/R − 1) every
// second, less what the bucket lets through at once, so the p-th percentile of a trial of T seconds
// waits (λ/R − 1)·p·T − bucket/(R·S). Each point is checked against that, at the load the row says: at
// the probe and half the NDR (below the rate), at three quarters (near the rate, just above it where loss
// alone finds 1.3 times it or more), at 90 % and at the NDR itself; and the curve rises with the load.
func TestLatencyAgainstLoadFollowsTheShapersQueue(t *testing.T) {
	eng := need(t)
	tns, rns := router(t, "ll")
	const bucket, limit, frameBytes = 64 << 10, 4_000_000, 1514 // tbf counts the frame without its FCS
	sh(t, "ip", "netns", "exec", rns, "tc", "qdisc", "add", "dev", "r1", "root", "tbf", "rate", "16mbit",
		"burst", strconv.Itoa(bucket), "limit", strconv.Itoa(limit))
	rateFPS := 16e6 / (frameBytes * 8)
	bucketS := float64(bucket) / (rateFPS * frameBytes)
	const trialS, warmUpS = 2.0, 0.2
	tt := routedTest("curve", []v1alpha1.TestKind{v1alpha1.TestThroughput, v1alpha1.TestLatency}, []int32{1518}, "0.1", "4",
		func(tt *v1alpha1.TrafficTest) {
			tt.Spec.Durations.ValidationTrial = dur(2 * time.Second)
			tt.Spec.Durations.LatencyTrial = dur(time.Duration(trialS * float64(time.Second)))
			tt.Spec.Durations.Drain = dur(time.Second)
			tt.Spec.Latency = v1alpha1.LatencyParams{Repetitions: 2, PercentOfNDR: []v1alpha1.Percent{"0", "50", "75", "90", "100"}}
			// a frame stamped when it leaves: a sender late by 10 ms (a shared VM) sends its owed frames into
			// the bucket, which takes 33 ms of them at once, so the queue's delay is the same
			tt.Spec.Tester.Validity = v1alpha1.TrialValidity{MaxTxLag: dur(10 * time.Millisecond), MaxWorkerGap: dur(20 * time.Millisecond)}
		})
	o := runCLI(t, eng, tns, tt)
	if o.Error != "" || len(o.Results.Throughput) != 1 {
		t.Fatalf("run: %q %+v", o.Error, o.Results)
	}
	defer logTrialsIfFailed(t, o)
	bounds := lowerBounds(t, o)
	ndr := float64(o.Results.Throughput[0].NDR.FramesPerSecond)
	t.Logf("NDR (loss alone) %.0f frames/s, %.2f times the shaper's rate of %.0f", ndr, ndr/rateFPS, rateFPS)
	if len(o.Results.Latency) != 5 {
		t.Fatalf("latency rows %+v, want one per load", o.Results.Latency)
	}
	for i, want := range []struct {
		load string
		fps  float64
	}{{"0", min(500/trialS, ndr/10)}, {"50", ndr / 2}, {"75", ndr * 0.75}, {"90", ndr * 0.9}, {"100", ndr}} {
		l := o.Results.Latency[i]
		got := float64(l.Rate.FramesPerSecond)
		if string(l.PercentOfNDR) != want.load || math.Abs(got-want.fps) > 1 {
			t.Errorf("row %d: %q%% at %.0f frames/s, want %s%% of the NDR: %.0f", i, l.PercentOfNDR, got, want.load, want.fps)
			continue
		}
		a := l.Aggregate
		// a repetition is invalid for the DUT's loss or the tester's fault, and says which
		for j, rep := range l.Repetitions {
			if !rep.Valid && !strings.Contains(rep.Reason, "lost") && !strings.Contains(rep.Reason, "tester spoiled") &&
				!strings.Contains(rep.Reason, "run with it was invalid") && !strings.Contains(rep.Reason, "aborted") {
				t.Errorf("%s%% of the NDR, repetition %d: invalid for no reason it names: %q", l.PercentOfNDR, j+1, rep.Reason)
			}
		}
		// a repetition too short for the worst case (p99.9, 1,000 frames: the probe's 500) says so, with
		// the fewest frames a repetition timestamped
		fewest := int64(-1)
		for _, s := range l.Repetitions {
			if s.Valid && (fewest < 0 || s.Frames < fewest) {
				fewest = s.Frames
			}
		}
		if named := fmt.Sprintf("timestamped %d frames", fewest); (fewest >= 0 && fewest < 1000) != strings.Contains(l.Note, named) {
			t.Errorf("%s%% of the NDR: the fewest frames of a repetition %d, the row's note %q", l.PercentOfNDR, fewest, l.Note)
		}
		if !a.Valid {
			// at the NDR itself a trial may lose what its validation did not (RFC 8219: then invalid)
			if len(bounds) == 0 && want.load != "100" {
				t.Errorf("%s%% of the NDR: not valid: %s", l.PercentOfNDR, a.Reason)
			}
			continue
		}
		// what the queue implies for the frame sent p of the way through the trial (the warm-up's few
		// frames may go first): a path's few ms more at most, and the percentile's resolution
		wait := func(p float64) (lo, hi float64) {
			grow := max(0, got/rateFPS-1)
			return max(0, grow*p*trialS-bucketS), max(0, grow*(p*trialS+warmUpS)-bucketS)
		}
		slack := 0.005 + float64(a.ResolutionNs)/1e9
		for _, q := range []struct {
			name string
			p    float64
			ns   int64
		}{{"p50", 0.5, a.P50Ns}, {"p99", 0.99, a.P99Ns}} {
			lo, hi := wait(q.p)
			s := float64(q.ns) / 1e9
			t.Logf("%s%% of the NDR (%.0f frames/s, %.2f of the rate): %s %.3f ms, the queue implies %.1f-%.1f ms", l.PercentOfNDR, got, got/rateFPS, q.name, s*1e3, lo*1e3, hi*1e3)
			if s < lo*0.95-slack || s > hi*1.05+slack {
				t.Errorf("%s%% of the NDR: %s %.1f ms, the queue implies %.1f-%.1f ms", l.PercentOfNDR, q.name, s*1e3, lo*1e3, hi*1e3)
			}
		}
	}
	// the curve: each load's median at least the lower load's, within the percentiles' resolution and the
	// path's few ms (the points below the rate are all the path's)
	var prev *v1alpha1.LatencySummary
	for i := range o.Results.Latency {
		a := &o.Results.Latency[i].Aggregate
		if !a.Valid {
			continue
		}
		if prev != nil && float64(a.P50Ns) < float64(prev.P50Ns)-5e6-float64(a.ResolutionNs+prev.ResolutionNs) {
			t.Errorf("the curve falls: p50 %.3f ms at %s%% of the NDR, %.3f ms at the load below", float64(a.P50Ns)/1e6,
				o.Results.Latency[i].PercentOfNDR, float64(prev.P50Ns)/1e6)
		}
		prev = a
	}
	if top, low := o.Results.Latency[4].Aggregate, o.Results.Latency[1].Aggregate; top.Valid && low.Valid && ndr > 1.2*rateFPS && top.P50Ns < 10*low.P50Ns {
		t.Errorf("the NDR (%.2f times the rate) queues no more than half of it: p50 %d ns against %d ns", ndr/rateFPS, top.P50Ns, low.P50Ns)
	}
	skipForLowerBounds(t, bounds, o)
}
