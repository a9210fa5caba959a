package runner_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestNDROfADeeplyQueuingDUTIsItsRate: a DUT that queues a whole second of frames (as the demo's userspace
// IPsec gateways do) is still forwarding a trial above its rate long after that trial's drain. Begun at
// once, the next trial's frames wait behind that backlog and are lost however low its rate (or, with
// nothing of its own arriving, it was ended as a stall): the search then walks down far below the DUT's
// rate. The tester rests the DUT until nothing has arrived from it for dutRest, so each trial measures the
// DUT as it is at rest, and the NDR is the token bucket's rate.
func TestNDROfADeeplyQueuingDUTIsItsRate(t *testing.T) {
	eng := need(t)
	tns, rns := router(t, "dq")
	// 16 Mbit/s, a 64 KiB bucket as in TestNDROfATokenBucketIsItsRate, and a queue of 2 MB: a second of
	// frames at the rate (tbf counts the frame without FCS: a 1518 B frame costs 1514 B)
	const bucket, limit = 64 << 10, 2_000_000
	sh(t, "ip", "netns", "exec", rns, "tc", "qdisc", "add", "dev", "r1", "root", "tbf", "rate", "16mbit",
		"burst", strconv.Itoa(bucket), "limit", strconv.Itoa(limit))
	o := runCLI(t, eng, tns, routedTest("deepq", throughput, []int32{1518}, "0.1", "4", validationTrial(2*time.Second)))
	if o.Error != "" || len(o.Results.Throughput) != 1 {
		t.Fatalf("run: %q %+v", o.Error, o.Results)
	}
	defer logTrialsIfFailed(t, o)
	row := o.Results.Throughput[0]
	truthFPS := 16e6 / (1514 * 8)
	gotFPS := float64(row.NDR.FramesPerSecond)
	resFPS := 0.001 * 1e9 / (1538 * 8)
	bounds := lowerBounds(t, o)
	// above the rate a trial passes by what the bucket holds and what the queue lets arrive within the
	// drain (300 ms at the rate), over the 2.2 s of the validation trial
	drainBytes := 0.3 * 16e6 / 8
	overshoot := (float64(bucket) + drainBytes) / 1514 / 2.2
	if gotFPS > truthFPS+overshoot+truthFPS*0.01 || (gotFPS < truthFPS-resFPS-truthFPS*0.03 && len(bounds) == 0) {
		t.Errorf("NDR %.0f frames/s, tbf truth %.0f frames/s (resolution %.0f, overshoot up to %.0f)", gotFPS, truthFPS, resFPS, overshoot)
	}
	// the first trial, at 4 % of the line (3.3 times the rate), filled the queue: the next waited for it
	rested := false
	for _, tr := range o.Trials {
		if tr.RestExtendedS > 0.3 {
			rested = true
		}
		if tr.Stale > 0 {
			t.Errorf("trial %d: %d frames of an earlier trial arrived during it: it began before the DUT had settled", tr.Seq, tr.Stale)
		}
	}
	if !rested {
		t.Errorf("no trial waited for the DUT's queue to drain")
	}
	if !slices.ContainsFunc(o.Results.Notes, func(n string) bool { return strings.Contains(n, "still forwarding frames of an earlier trial") }) {
		t.Errorf("no note says the DUT's rest was lengthened: %q", o.Results.Notes)
	}
	skipForLowerBounds(t, bounds, o)
}
