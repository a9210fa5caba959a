package runner_test

import (
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"linerate.dev/linerate/api/v1alpha1"
)

// TestNDRUnderALatencyBoundIsTheRateWhereTheQueueStartsToGrow: a shaper with a queue of two seconds (tbf
// at 16 Mbit/s with a 4 MB limit) loses nothing in a 2 s trial well above its rate; the frames only wait
// longer and longer, and those that arrive within the drain count as received. Loss alone finds an NDR far
// above the rate (the queue's delay at the trial's end is the drain), as it does for the demo's userspace
// IPsec gateways. Under throughput.maxLatency the NDR is where the queue starts to grow: the rate, within the
// resolution and what the bucket lets pass, and the row says latency bound it.
func TestNDRUnderALatencyBoundIsTheRateWhereTheQueueStartsToGrow(t *testing.T) {
	eng := need(t)
	tns, rns := router(t, "lb")
	const bucket, limit = 64 << 10, 4_000_000
	sh(t, "ip", "netns", "exec", rns, "tc", "qdisc", "add", "dev", "r1", "root", "tbf", "rate", "16mbit",
		"burst", strconv.Itoa(bucket), "limit", strconv.Itoa(limit))
	truthFPS := 16e6 / (1514 * 8) // tbf counts the frame without FCS
	resFPS := 0.001 * 1e9 / (1538 * 8)
	deepQueue := func(tt *v1alpha1.TrafficTest) {
		tt.Spec.Durations.ValidationTrial = dur(2 * time.Second)
		tt.Spec.Durations.Drain = dur(time.Second)
	}

	// loss alone: a trial of 2.2 s (warm-up included) loses nothing up to where its last frames wait the
	// whole drain, (1 + 1/2.2) times the rate
	o := runCLI(t, eng, tns, routedTest("lossonly", throughput, []int32{1518}, "0.1", "4", deepQueue))
	if o.Error != "" || len(o.Results.Throughput) != 1 {
		t.Fatalf("run: %q %+v", o.Error, o.Results)
	}
	lossOnly := o.Results.Throughput[0]
	if got := float64(lossOnly.NDR.FramesPerSecond); got < 1.2*truthFPS && len(lowerBounds(t, o)) == 0 {
		logTrialsIfFailed(t, o)
		t.Errorf("loss alone: NDR %.0f frames/s; the queue should hide the rate (%.0f frames/s) up to about %.0f", got, truthFPS, 1.45*truthFPS)
	}
	t.Logf("loss alone: NDR %d frames/s, %.2f times the rate (%.0f frames/s)", lossOnly.NDR.FramesPerSecond, float64(lossOnly.NDR.FramesPerSecond)/truthFPS, truthFPS)
	if lossOnly.BoundBy != "" {
		t.Errorf("loss alone: boundBy %q without a bound", lossOnly.BoundBy)
	}

	// bounded: p99 within 20 ms. Above the rate the queue grows by (R/C - 1) × 2.2 s: past 20 ms at 1 %
	// above it; the bucket's 64 KiB (33 ms at the rate) lets a little more through
	bounded := func(tt *v1alpha1.TrafficTest) {
		deepQueue(tt)
		tt.Spec.Throughput.MaxLatency = &metav1.Duration{Duration: 20 * time.Millisecond}
	}
	o = runCLI(t, eng, tns, routedTest("bounded", throughput, []int32{1518}, "0.1", "4", bounded))
	if o.Error != "" || len(o.Results.Throughput) != 1 {
		t.Fatalf("run: %q %+v", o.Error, o.Results)
	}
	defer logTrialsIfFailed(t, o)
	row := o.Results.Throughput[0]
	got := float64(row.NDR.FramesPerSecond)
	t.Logf("p99 within 20 ms: NDR %d frames/s, %.3f times the rate, bound by %s", row.NDR.FramesPerSecond, got/truthFPS, row.BoundBy)
	overshoot := (float64(bucket)/1514 + 0.02*truthFPS) / 2.2
	bounds := lowerBounds(t, o)
	if got > truthFPS+overshoot+truthFPS*0.01 || (got < truthFPS-resFPS-truthFPS*0.03 && len(bounds) == 0) {
		t.Errorf("bounded: NDR %.0f frames/s, the rate %.0f frames/s (resolution %.0f, overshoot up to %.0f)", got, truthFPS, resFPS, overshoot)
	}
	if row.BoundBy != "latency" && len(bounds) == 0 {
		t.Errorf("bounded: boundBy %q, want latency (the trials above the NDR lost nothing within the drain)", row.BoundBy)
	}
	over := 0
	for _, tr := range o.Trials {
		if tr.OverLatency {
			over++
			if tr.Pass {
				t.Errorf("trial %d exceeded the latency bound and passed", tr.Seq)
			}
		}
	}
	if over == 0 && len(bounds) == 0 {
		t.Errorf("no trial exceeded the latency bound")
	}
	skipForLowerBounds(t, bounds, o)
}
