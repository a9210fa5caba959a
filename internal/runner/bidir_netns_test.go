package runner_test

import (
	"math"
	"strconv"
	"testing"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/results"
)

// Bidirectional searches each direction with its own verdict. The pair it reports must have been shown
// loss-free together: a full-length trial with both directions at their reported rates at once, within the
// tolerance in both. Two routers whose truth is known: one shaped in one direction only (the pair is the
// shaper's rate and the unshaped maximum), and one whose east->west direction shares a frame budget with
// west->east, so east->west loses only while west->east runs (the pair must fit the budget together).
func TestBidirectionalPairIsConfirmedTogether(t *testing.T) {
	eng := need(t)
	// 1518 B frames at 1 Gbit/s: 81,274 frames/s is line rate, 0.1 % (the resolution) is 81 frames/s.
	const size = 1518
	lineFPS := 1e9 / ((size + 20) * 8)
	tbfFPS := 16e6 / ((size - 4) * 8) // tbf counts the frame without FCS
	for _, tc := range []struct {
		name, tag string
		// budget is the frames/s east->west and west->east share (0: none)
		budget float64
	}{
		{name: "one direction shaped", tag: "bs"},
		{name: "a budget both directions share", tag: "bj", budget: 2000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tns, rns := router(t, tc.tag)
			// west->east leaves the router on r1: shaped at 16 Mbit/s, with a 64 KiB bucket (see
			// TestNDROfATokenBucketIsItsRate for why a bucket of a few frames would not be the truth here)
			sh(t, "ip", "netns", "exec", rns, "tc", "qdisc", "add", "dev", "r1", "root", "tbf", "rate", "16mbit",
				"burst", "65536", "limit", "65536")
			if tc.budget > 0 {
				// west->east frames spend the shared budget and are never dropped by it; east->west frames
				// pass only while it lasts
				rules := `table inet lrt {
  limit shared { rate ` + strconv.Itoa(int(tc.budget)) + `/second burst 100 packets }
  chain lrfwd { type filter hook forward priority 0; policy accept;
    ip daddr 198.19.1.0/24 limit name "shared" accept
    ip daddr 198.18.1.0/24 limit name "shared" accept
    ip daddr 198.18.1.0/24 drop
  }
}`
				nft(t, rns, rules)
			}
			tt := routedTest("bidir", throughput, []int32{size}, "0.1", "4", func(tt *v1alpha1.TrafficTest) {
				tt.Spec.Traffic.Direction = v1alpha1.Bidirectional
			})
			o := runCLI(t, eng, tns, tt)
			defer logTrialsIfFailed(t, o)
			if o.Error != "" || len(o.Results.Throughput) != 2 {
				t.Fatalf("run: %q %+v", o.Error, o.Results.Throughput)
			}
			ndr := map[string]v1alpha1.ThroughputResult{}
			for _, row := range o.Results.Throughput {
				ndr[row.Direction] = row
			}
			we, ew := ndr["west->east"], ndr["east->west"]
			weFPS, ewFPS := float64(we.NDR.FramesPerSecond), float64(ew.NDR.FramesPerSecond)
			res := 0.001 * lineFPS
			// a lower bound (the tester the limit on a loaded host) is checked from above only
			bounds := lowerBounds(t, o)
			// a 1.2 s trial (warm-up included) passes above the rate by at most what the bucket and the
			// queue hold over it
			if weFPS > tbfFPS*1.01+2*65536/float64(size-4)/1.2 || (weFPS < tbfFPS*0.97-res && !bounds[rowName(we)]) {
				t.Errorf("west->east NDR %.0f frames/s, the shaper's truth %.0f", weFPS, tbfFPS)
			}
			if tc.budget == 0 {
				if ewFPS < 0.04*lineFPS-res-1 && !bounds[rowName(ew)] {
					t.Errorf("east->west is not shaped: NDR %.0f frames/s, want the maximum rate %.0f", ewFPS, 0.04*lineFPS)
				}
			} else if ewFPS+weFPS > tc.budget+100/1.2+res {
				// west->east spends the budget at the rate it is offered: east->west gets what is left
				t.Errorf("the pair (west->east %.0f, east->west %.0f frames/s) spends more than the shared budget of %.0f frames/s: it was never loss-free together",
					weFPS, ewFPS, tc.budget)
			} else if ewFPS+weFPS < 0.8*tc.budget && len(bounds) == 0 {
				t.Errorf("the pair (west->east %.0f, east->west %.0f frames/s) leaves a fifth of the shared budget of %.0f frames/s unused", weFPS, ewFPS, tc.budget)
			}
			// the confirming trial: both directions at once, at the reported rates, full length, both passing
			joint := map[int][]results.Trial{}
			for _, tr := range o.Trials {
				if tr.Purpose == "joint-validation" {
					joint[tr.Seq-indexOfDirection(tr.Direction)] = append(joint[tr.Seq-indexOfDirection(tr.Direction)], tr)
				}
			}
			confirmed := false
			for _, recs := range joint {
				if len(recs) != 2 {
					continue
				}
				ok := true
				for _, tr := range recs {
					row := ndr[tr.Direction]
					want, _ := strconv.ParseFloat(row.NDR.PercentOfLineRate, 64)
					ok = ok && tr.Pass && !tr.TesterLimited && math.Abs(tr.OfferedPercent-want) < 1e-3 && tr.DurationS >= time.Second.Seconds()*0.99
				}
				confirmed = confirmed || ok
			}
			// a pair reported with both NDRs must have been confirmed together; one the tester kept from
			// being confirmed is undetermined, never reported as confirmed
			both := weFPS > 0 && ewFPS > 0 && we.Undetermined == "" && ew.Undetermined == ""
			if !confirmed && (both || len(bounds) == 0) {
				t.Errorf("no trial ran both directions at once at their reported NDRs (west->east %s%%, east->west %s%%) and passed in both",
					we.NDR.PercentOfLineRate, ew.NDR.PercentOfLineRate)
			}
			skipForLowerBounds(t, bounds, o)
		})
	}
}

// indexOfDirection is the order of a direction's record within its trial (west->east first).
func indexOfDirection(dir string) int {
	if dir == "east->west" {
		return 1
	}
	return 0
}
