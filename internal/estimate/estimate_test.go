package estimate_test

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/estimate"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/rfc2544"
)

// samplePlan is the plan of a sample TrafficTest (config/samples).
func samplePlan(t *testing.T, file string) *plan.Plan {
	t.Helper()
	b, err := os.ReadFile("../../config/samples/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var tt v1alpha1.TrafficTest
	if err := yaml.Unmarshal(b, &tt); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Resolve(&tt, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// runnersEstimate is what the runner states of p before its first trial: its model's, on a model DUT of
// which nothing is known yet.
func runnersEstimate(p *plan.Plan) rfc2544.Estimate {
	if p.CalibrationRepetitions > 0 {
		q := *p
		q.AsCalibration(p.CalibrationRepetitions)
		p = &q
	}
	return rfc2544.New(p, nil, nil, rfc2544.Options{}).Estimate()
}

// The operator's estimate, counted from the plan alone, says what the runner then says before its first
// trial within a factor of two: the searches by formula (the runner runs its search code on a model DUT),
// latency, frame loss and back-to-back as the runner counts them. The widest gaps are the CSIT goal's many
// short trials and a calibration's repeated searches, which the formula counts short by a third to a half.
func TestThePlannedEstimateIsNearTheRunnersOwn(t *testing.T) {
	goal := func(p *plan.Plan) {
		p.Throughput.Goal = &plan.Goal{Preset: v1alpha1.GoalCSIT, FinalTrialDuration: time.Second, DurationSum: 21 * time.Second,
			ExceedRatioPercent: 50, WidthPercent: 0.5}
		pdr := plan.CSITPDRLossPercent
		p.Throughput.PDRLossTolerancePercent = &pdr
	}
	for _, sample := range []string{"throughput-test-demo.yaml", "throughput-test.yaml"} {
		for _, c := range []struct {
			name   string
			change func(*plan.Plan)
		}{
			{"as written", nil},
			{"Binary search", func(p *plan.Plan) { p.Throughput.Method = v1alpha1.SearchBinary }},
			{"CSIT goal", goal},
			{"Unidirectional", func(p *plan.Plan) { p.Traffic.Direction = v1alpha1.Unidirectional }},
			{"BidirectionalBound", func(p *plan.Plan) { p.Traffic.Direction = v1alpha1.BidirectionalBound }},
			{"3 repetitions", func(p *plan.Plan) { p.Throughput.Repetitions = 3 }},
			{"a calibration run", func(p *plan.Plan) { p.CalibrationRepetitions = 3 }},
		} {
			p := samplePlan(t, sample)
			if c.change != nil {
				c.change(p)
			}
			planned, runners := estimate.Planned(p), runnersEstimate(p)
			ratio := float64(planned.EstimatedTotalSeconds) / runners.Total.Seconds()
			if ratio < 0.5 || ratio > 2 {
				t.Errorf("%s, %s: the operator says %q, the runner %s: %.2f times", sample, c.name, planned.Summary, runners, ratio)
			}
		}
	}
}

// Where the DUT has no say in the count, or the formula knows its range (latency repetitions, frame loss
// steps, back-to-back bursts), the operator and the runner count a step with one rule: their estimates are
// the same, range and words included.
func TestThePlannedEstimateCountsStepsAsTheRunnerDoes(t *testing.T) {
	p := samplePlan(t, "throughput-test.yaml")
	for _, tests := range [][]v1alpha1.TestKind{
		{v1alpha1.TestLatency},
		{v1alpha1.TestFrameLoss},
		{v1alpha1.TestBackToBack},
		{v1alpha1.TestLatency, v1alpha1.TestFrameLoss, v1alpha1.TestBackToBack},
	} {
		for _, direction := range []v1alpha1.Direction{v1alpha1.Unidirectional, v1alpha1.Bidirectional, v1alpha1.BidirectionalBound} {
			p.Tests, p.Traffic.Direction = tests, direction
			planned, runners := estimate.Planned(p), runnersEstimate(p)
			said := runners.String() // "about 3m (1m to 4m: the DUT decides ...): latency 1m (3 trials), ..."
			want := "expected to take " + said[:strings.LastIndex(said, ": ")]
			if secs := int64(math.Ceil(runners.Total.Seconds())); planned.EstimatedTotalSeconds != secs || planned.Summary != want {
				t.Errorf("%v, %s: the operator says %d s, %q; the runner %d s, %q", tests, direction, planned.EstimatedTotalSeconds, planned.Summary, secs, want)
			}
		}
	}
}

// The planned progress is the whole run still to come: every step of the plan (a calibration run's, when
// the test measures the tester), all of its time left.
func TestThePlannedProgressIsTheWholeRun(t *testing.T) {
	p := samplePlan(t, "throughput-test.yaml")
	pg := estimate.Planned(p)
	if pg.StepsTotal != int32(len(p.Steps())) || pg.StepsDone != 0 || pg.EstimatedSecondsLeft != pg.EstimatedTotalSeconds ||
		pg.EstimatedTotalSeconds <= 0 || !strings.HasPrefix(pg.Summary, "expected to take about ") {
		t.Errorf("progress %+v of a plan of %d steps", pg, len(p.Steps()))
	}
	p.CalibrationRepetitions = 3
	q := *p
	q.AsCalibration(3)
	if cal := estimate.Planned(p); cal.StepsTotal != int32(len(q.Steps())) || cal.StepsTotal == pg.StepsTotal {
		t.Errorf("a calibration run: %d steps, want its calibration's %d (the test's are %d)", cal.StepsTotal, len(q.Steps()), pg.StepsTotal)
	}
}
