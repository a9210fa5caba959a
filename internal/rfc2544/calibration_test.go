package rfc2544_test

import (
	"strings"
	"testing"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/calibration"
	"linerate.dev/linerate/internal/engine/sim"
	"linerate.dev/linerate/internal/expectations"
	"linerate.dev/linerate/internal/rfc2544"
)

// A DUT as fast as the tester's calibrated ceiling finds the tester's ceiling, not its own: the rows there
// are the tester's, no expectation fails the DUT on them, and rows the tester does not limit keep their verdict.
func TestRowsAtTheCalibratedCeilingAreTheTesters(t *testing.T) {
	p := planFor(t, v1alpha1.TestThroughput)
	const dutFPS = 2e6
	p.Calibration = &calibration.Calibration{Kind: calibration.Kind, MeasuredAt: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC),
		Shape: p.CalibrationShape(), Ports: []calibration.Port{{Name: "west", Driver: "simulated"}, {Name: "east", Driver: "simulated"}},
		Ceilings: []calibration.Ceiling{
			{FrameSize: 64, Direction: "west->east", FramesPerSecond: 2_030_000, PercentOfLineRate: "13.6"},
			{FrameSize: 512, Direction: "west->east", FramesPerSecond: 8_000_000, PercentOfLineRate: "100", AtLineRate: true},
			{FrameSize: 1518, Direction: "west->east", FramesPerSecond: 812_743, PercentOfLineRate: "100", AtLineRate: true},
		}}
	p.CeilingMarginPercent = calibration.DefaultMarginPercent
	res, _, _, err := run(t, p, sim.DUT{CapacityFPS: dutFPS})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range res.Throughput {
		switch row.FrameSize {
		case 64:
			// the search's resolution (0.5 % of line rate, 3.7 % of this ceiling) is the margin here
			if !row.TesterLimited || row.CeilingMarginPercent == "" || pct(row.CeilingMarginPercent) >= 3.7 {
				t.Errorf("64 B: a DUT at the tester's ceiling was reported as the DUT's: %+v", row)
			}
		default:
			if row.TesterLimited || row.CeilingMarginPercent != "" {
				t.Errorf("%d B: a tester at line rate limited the row: %+v", row.FrameSize, row)
			}
		}
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "within 3.7% of the tester's calibrated ceiling of 2030000 frames/s") {
		t.Errorf("notes %q", res.Notes)
	}
	// more than the tester can offer is not the DUT's failure: undecided, not Failed (and never Passed)
	verdict, failures := expectations.Evaluate(&v1alpha1.Expectations{MinThroughput: []v1alpha1.ThroughputExpectation{{FrameSize: 64, PercentOfLineRate: "14"}}}, res, p.Rows())
	if verdict != v1alpha1.VerdictInconclusive {
		t.Errorf("verdict %s on the tester's ceiling: %v", verdict, failures)
	}
}

// A calibration of other traffic is no ceiling of this run's: the run is refused before its first trial,
// saying what differs, rather than judged against it.
func TestACalibrationOfOtherTrafficIsRefused(t *testing.T) {
	p := planFor(t, v1alpha1.TestThroughput)
	shape := p.CalibrationShape()
	shape.Direction, shape.Flows = string(v1alpha1.Bidirectional), 1000
	p.Calibration = &calibration.Calibration{Kind: calibration.Kind, Shape: shape,
		Ports:    []calibration.Port{{Name: "west", Driver: "simulated"}, {Name: "east", Driver: "simulated"}},
		Ceilings: []calibration.Ceiling{{FrameSize: 64, Direction: "west->east", FramesPerSecond: 2_030_000, PercentOfLineRate: "13.6"}}}
	res, rec, _, err := run(t, p, sim.DUT{CapacityFPS: 2e6})
	pe, ok := rfc2544.IsPreflight(err)
	if !ok || pe.Reason != v1alpha1.ReasonCalibrationMismatch || len(rec.trials) != 0 {
		t.Fatalf("err %v, %d trials", err, len(rec.trials))
	}
	for _, want := range []string{"direction Unidirectional, calibrated with Bidirectional", "flows 1, calibrated with 1000", "linerate calibrate"} {
		if !strings.Contains(pe.Message, want) {
			t.Errorf("message %q lacks %q", pe.Message, want)
		}
	}
	if res == nil || res.Preflight == nil {
		t.Error("the preflight record was not kept")
	}
}
