package controllers

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/metrics"
)

// The results gauges are built at scrape time from TrafficTest status as stored in the API server.
func TestResultsMetricsAreServedFromStatus(t *testing.T) {
	ns := namespace(t)
	tt := newTest(t, ns, "metrics", sriovTest())
	tt.Status.Phase = v1alpha1.PhaseSucceeded
	tt.Status.Verdict = v1alpha1.VerdictPassed
	tt.Status.TrialsMeasured = 42
	tt.Status.Results = sampleResults(64, 512, 1518)
	// at 512 B the tester was the limit: its NDR is a lower bound, never the DUT's throughput
	tt.Status.Results.Throughput[1].TesterLimited = true
	tt.Status.Results.Latency = []v1alpha1.LatencyResult{{FrameSize: 64, Direction: "west->east",
		Aggregate: v1alpha1.LatencySummary{Valid: true, MinNs: 4000, MeanNs: 5000, P50Ns: 4900, P99Ns: 12000, MaxNs: 30000}}}
	tt.Status.Results.FrameLoss = []v1alpha1.FrameLossResult{{FrameSize: 64, Direction: "west->east",
		Points: []v1alpha1.FrameLossPoint{{PercentOfLineRate: "100", LossPercent: "12.5"}, {PercentOfLineRate: "90", LossPercent: "0"}}}}
	if err := k8sClient.Status().Update(context.Background(), tt); err != nil {
		t.Fatal(err)
	}

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(&metrics.ResultsCollector{Reader: k8sClient})
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, f := range families {
		if _, err := expfmt.MetricFamilyToText(&out, f); err != nil {
			t.Fatal(err)
		}
	}
	text := out.String()
	want := []string{
		`linerate_throughput_frames_per_second{direction="west->east",dut="gw-1",frame_size="64",namespace="` + ns + `",traffictest="metrics"} 7.440476e+06`,
		`linerate_throughput_line_rate_ratio{direction="west->east",dut="gw-1",frame_size="1518",namespace="` + ns + `",traffictest="metrics"} 0.5`,
		`linerate_latency_seconds{direction="west->east",dut="gw-1",frame_size="64",namespace="` + ns + `",statistic="p99",traffictest="metrics"} 1.2e-05`,
		`linerate_frame_loss_ratio{direction="west->east",dut="gw-1",frame_size="64",namespace="` + ns + `",offered_load="1",traffictest="metrics"} 0.125`,
		`linerate_traffictest_verdict{dut="gw-1",namespace="` + ns + `",traffictest="metrics",verdict="Passed"} 1`,
		`linerate_traffictest_trials{dut="gw-1",namespace="` + ns + `",traffictest="metrics"} 42`,
		`# TYPE linerate_throughput_l2_bits_per_second gauge`,
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("metrics output lacks\n  %s\ngot:\n%s", w, text)
		}
	}
	limited := `direction="west->east",dut="gw-1",frame_size="512",namespace="` + ns + `",traffictest="metrics"}`
	if !strings.Contains(text, `linerate_throughput_tester_limited{`+limited+` 1`) {
		t.Errorf("no linerate_throughput_tester_limited 1 for the tester-limited row:\n%s", text)
	}
	for _, name := range []string{"linerate_throughput_frames_per_second", "linerate_throughput_l1_bits_per_second",
		"linerate_throughput_l2_bits_per_second", "linerate_throughput_line_rate_ratio"} {
		if strings.Contains(text, name+"{"+limited) {
			t.Errorf("%s exported for a row the tester limited: a lower bound booked as the DUT's throughput", name)
		}
	}
}
