package report

import (
	"fmt"
	"strings"
	"testing"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/report/reporttest"
	"linerate.dev/linerate/internal/results"
)

func rate(fps int64, size int32) v1alpha1.Rate {
	return v1alpha1.Rate{FramesPerSecond: fps, L2BitsPerSecond: fps * int64(size) * 8, L1BitsPerSecond: fps * int64(size+20) * 8,
		PercentOfLineRate: fmt.Sprintf("%.2f", float64(fps*int64(size+20)*8)/1e8)}
}

func latency(base int64) v1alpha1.LatencySummary {
	return v1alpha1.LatencySummary{Valid: true, Frames: 1e6, MinNs: base, MeanNs: base * 2, P50Ns: base * 2, P90Ns: base * 3,
		P99Ns: base * 5, P999Ns: base * 9, P9999Ns: base * 12, MaxNs: base * 40, PDVNs: base * 8}
}

// reportShapes are the results a report must read well with: one frame size, the seven of RFC 2544 in
// both directions with every test, an IMIX run, a run that failed part way and one still running.
func reportShapes() map[string]Run {
	seven := &v1alpha1.Results{DUT: &v1alpha1.DUTSpec{Name: "ipsec-gw-1", Model: "GW-9000", Software: "7.2.1", Cipher: "AES-256-GCM"},
		LineRateBitsPerSecond: 10e9}
	for i, size := range []int32{64, 128, 256, 512, 1024, 1280, 1518} {
		for d, dir := range []string{"west->east", "east->west"} {
			fps := int64(10e9/float64((size+20)*8)) * int64(60+5*i-3*d) / 100
			seven.Throughput = append(seven.Throughput, v1alpha1.ThroughputResult{FrameSize: size, Direction: dir, NDR: rate(fps, size),
				LossPercent: "0", Trials: 14, TrialSeconds: "322"})
			seven.Latency = append(seven.Latency, v1alpha1.LatencyResult{FrameSize: size, Direction: dir, Rate: rate(fps, size),
				Aggregate: latency(int64(5000 + 300*i + 100*d))})
			seven.BackToBack = append(seven.BackToBack, v1alpha1.BackToBackResult{FrameSize: size, Direction: dir, Frames: 20000 + 1000*int64(i),
				BurstSeconds: "0.0021"})
			curve := v1alpha1.FrameLossResult{FrameSize: size, Direction: dir}
			for load := 100; load >= 60; load -= 10 {
				curve.Points = append(curve.Points, v1alpha1.FrameLossPoint{PercentOfLineRate: fmt.Sprint(load),
					LossPercent: fmt.Sprintf("%.2f", max(0, float64(load-60-5*i)/2))})
			}
			seven.FrameLoss = append(seven.FrameLoss, curve)
		}
	}
	seven.Diagnosis = &v1alpha1.Diagnosis{Bound: "frames", Explanation: "the NDR in frames/s falls little with the frame size: the DUT is bound by its per-packet cost"}
	seven.Notes = []string{"port east (net_af_packet) does not verify IPv4 header and UDP checksums on receipt"}

	one := &v1alpha1.Results{LineRateBitsPerSecond: 1e9,
		Throughput: []v1alpha1.ThroughputResult{{FrameSize: 512, Direction: "west->east", NDR: rate(116_000, 512), LossPercent: "0", Trials: 9, TrialSeconds: "20"}},
		Latency:    []v1alpha1.LatencyResult{{FrameSize: 512, Direction: "west->east", Rate: rate(116_000, 512), Aggregate: latency(41000)}}}

	imix := &v1alpha1.Results{LineRateBitsPerSecond: 10e9, Imix: []v1alpha1.ImixResult{{Direction: "west->east", AverageFrameSize: "353.83",
		NDR: rate(2_100_000, 354), LossPercent: "0", Trials: 12,
		Classes: []v1alpha1.ImixClassResult{{FrameSize: 64, TxFrames: 7e6, RxFrames: 7e6, LossPercent: "0"},
			{FrameSize: 594, TxFrames: 4e6, RxFrames: 4e6, LossPercent: "0"}, {FrameSize: 1518, TxFrames: 1e6, RxFrames: 1e6, LossPercent: "0"}}}}}

	failed := &v1alpha1.Results{LineRateBitsPerSecond: 10e9, DUT: &v1alpha1.DUTSpec{Name: "vpn-7"},
		Throughput: []v1alpha1.ThroughputResult{{FrameSize: 64, Direction: "west->east", NDR: rate(4_100_000, 64), LossPercent: "0", Trials: 11, TrialSeconds: "40", TesterLimited: true}},
		Notes:      []string{"the DUT stalled (nothing came back for 2s) during throughput at 128 B west->east: the run was aborted; results measured before are kept"}}
	return map[string]Run{
		"one frame size":    {Name: "one-size", Results: one, Trials: make([]results.Trial, 9)},
		"seven frame sizes": {Name: "rfc2544-full", Results: seven, Trials: make([]results.Trial, 1200)},
		"IMIX":              {Name: "imix", Results: imix, Trials: make([]results.Trial, 12)},
		"failed run":        {Name: "stalled", Results: failed, Trials: make([]results.Trial, 11), Failure: "DUTStalled: nothing came back from the DUT for 2 s"},
		"still running":     {Name: "nightly", Results: one, Trials: make([]results.Trial, 9), Running: "the TrafficTest is Running, 1 of 4 steps done (latency 512 B west->east)"},
	}
}

// The report in a real browser: every shape of result reads without a label cut off or drawn over another,
// with every measured row and the run's end said.
func TestReportReadsWellInABrowser(t *testing.T) {
	chromium := reporttest.Browser(t)
	for name, run := range reportShapes() {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := Write(dir, run); err != nil {
				t.Fatal(err)
			}
			problems, text := reporttest.InBrowser(t, chromium, dir)
			for _, p := range problems {
				t.Error(p)
			}
			r := run.Results
			var want []string
			for _, tr := range r.Throughput {
				want = append(want, fmt.Sprintf("%d B", tr.FrameSize))
				if tr.TesterLimited {
					want = append(want, "tester-limited")
				}
			}
			for _, m := range r.Imix {
				want = append(want, "IMIX", m.AverageFrameSize+" B", "1518 B")
			}
			if len(r.BackToBack) > 0 {
				want = append(want, "Back-to-back")
			}
			if run.Failure != "" {
				want = append(want, "did not finish", run.Failure)
			}
			if run.Running != "" {
				want = append(want, "has not finished yet", run.Running)
			}
			missing := false
			for _, w := range want {
				if !strings.Contains(text, w) {
					t.Errorf("the page does not say %q", w)
					missing = true
				}
			}
			if missing {
				t.Logf("the page says: %s", text)
			}
		})
	}
}
