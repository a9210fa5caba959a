package controllers

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/metrics"
)

// The results gauges are built at scrape time from TrafficTest status as stored in the API server.
func TestResultsMetricsAreServedFromStatus(t *testing.T) {
	ns := namespace(t)
	tt := newTest(t, ns, "metrics", sriovTest())
	tt.Status.Phase = v1alpha1.PhaseSucceeded
	meta.SetStatusCondition(&tt.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionComplete, Status: metav1.ConditionTrue,
		Reason: v1alpha1.ReasonAllTestsDone, Message: "every test ran to the end"})
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

	// a cancelled run failed, but the test did not fail: the phase says why it ended, and the alert leaves it
	cancelled := newTest(t, ns, "cancelled", sriovTest())
	cancelled.Status.Phase = v1alpha1.PhaseFailed
	meta.SetStatusCondition(&cancelled.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionComplete, Status: metav1.ConditionFalse,
		Reason: v1alpha1.ReasonCancelled, Message: "cancelled by spec.cancel"})
	if err := k8sClient.Status().Update(context.Background(), cancelled); err != nil {
		t.Fatal(err)
	}

	text := scrapeResults(t)
	want := []string{
		`linerate_traffictest_phase{dut="gw-1",namespace="` + ns + `",phase="Failed",reason="Cancelled",traffictest="cancelled"} 1`,
		`linerate_traffictest_phase{dut="gw-1",namespace="` + ns + `",phase="Succeeded",reason="AllTestsDone",traffictest="metrics"} 1`,
		`linerate_throughput_frames_per_second{direction="west->east",dut="gw-1",frame_size="64",namespace="` + ns + `",traffictest="metrics"} 7.440476e+06`,
		`linerate_throughput_line_rate_ratio{direction="west->east",dut="gw-1",frame_size="1518",namespace="` + ns + `",traffictest="metrics"} 0.5`,
		`linerate_latency_seconds{direction="west->east",dut="gw-1",frame_size="64",namespace="` + ns + `",percent_of_ndr="100",statistic="p99",traffictest="metrics"} 1.2e-05`,
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

// A schedule's runs change names every night; its gauges follow the newest finished run under the
// schedule's name, and the change against the previous run leaves out what the tester limited.
func TestScheduleMetricsFollowTheNewestRun(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	s := nightly(ns, "nightly")
	if err := k8sClient.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	run := newTest(t, ns, "nightly-29000000", sriovTest())
	run.Status.Phase, run.Status.Verdict = v1alpha1.PhaseSucceeded, v1alpha1.VerdictFailed
	run.Status.Results = sampleResults(64, 1518)
	run.Status.Results.Throughput[0].TesterLimited = true
	p99 := int64(2500)
	run.Status.Results.ComparedWith = "nightly-28998560"
	run.Status.Results.Change = []v1alpha1.ChangeResult{
		{FrameSize: 64, Direction: "west->east", NDRPercent: "-30.00", TesterLimited: true},
		{FrameSize: 1518, Direction: "west->east", NDRPercent: "-7.50", LatencyP99Ns: &p99, LatencyMeanNs: &p99, LatencyP99Percent: "25.00"},
	}
	if err := k8sClient.Status().Update(ctx, run); err != nil {
		t.Fatal(err)
	}
	s.Status.Runs = []v1alpha1.ScheduledRun{{Name: "nightly-29000100", Phase: v1alpha1.PhaseRunning}, {Name: run.Name, Phase: v1alpha1.PhaseSucceeded, Verdict: v1alpha1.VerdictFailed}}
	if err := k8sClient.Status().Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	text := scrapeResults(t)
	for _, w := range []string{
		`linerate_schedule_last_run_passed{dut="gw-1",namespace="` + ns + `",schedule="nightly"} 0`,
		`linerate_schedule_throughput_l2_bits_per_second{direction="west->east",dut="gw-1",frame_size="1518",namespace="` + ns + `",schedule="nightly"} 4.934969424e+09`,
		`linerate_schedule_ndr_change_ratio{direction="west->east",dut="gw-1",frame_size="1518",namespace="` + ns + `",schedule="nightly"} -0.075`,
		`linerate_schedule_latency_p99_change_ratio{direction="west->east",dut="gw-1",frame_size="1518",namespace="` + ns + `",schedule="nightly"} 0.25`,
		`linerate_ndr_change_ratio{direction="west->east",dut="gw-1",frame_size="1518",namespace="` + ns + `",previous_run="nightly-28998560",traffictest="nightly-29000000"} -0.075`,
		`linerate_latency_change_seconds{direction="west->east",dut="gw-1",frame_size="1518",namespace="` + ns + `",previous_run="nightly-28998560",statistic="p99",traffictest="nightly-29000000"} 2.5e-06`,
	} {
		if !strings.Contains(text, w) {
			t.Errorf("metrics output lacks\n  %s\n%s", w, text)
		}
	}
	if strings.Contains(text, `frame_size="64",namespace="`+ns+`",schedule="nightly"`) || strings.Contains(text, "-0.3") {
		t.Errorf("a tester-limited row is exported as the DUT's:\n%s", text)
	}

	// a run that crashed measured part of its plan: the schedule says it did not pass, and its partial
	// figures do not become the schedule's (the series keep the newest run that measured all of it)
	crashed := newTest(t, ns, "nightly-29000200", sriovTest())
	crashed.Status.Phase, crashed.Status.Results = v1alpha1.PhaseFailed, sampleResults(1518)
	crashed.Status.Results.Throughput[0].NDR.L2BitsPerSecond = 1e9
	if err := k8sClient.Status().Update(ctx, crashed); err != nil {
		t.Fatal(err)
	}
	s.Status.Runs = append([]v1alpha1.ScheduledRun{{Name: crashed.Name, Phase: v1alpha1.PhaseFailed}}, s.Status.Runs...)
	if err := k8sClient.Status().Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	text = scrapeResults(t)
	if !strings.Contains(text, `linerate_schedule_last_run_passed{dut="gw-1",namespace="`+ns+`",schedule="nightly"} 0`) ||
		!strings.Contains(text, `linerate_schedule_throughput_l2_bits_per_second{direction="west->east",dut="gw-1",frame_size="1518",namespace="`+ns+`",schedule="nightly"} 4.934969424e+09`) {
		t.Errorf("a crashed run's figures exported as the schedule's, or the last complete run's lost:\n%s", text)
	}
}

// scrapeResults is what Prometheus reads from the results collector now.
func scrapeResults(t *testing.T) string {
	t.Helper()
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
	return out.String()
}
