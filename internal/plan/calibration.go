package plan

import (
	"fmt"
	"slices"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/calibration"
)

// floorLoadPercent is the load, in percent of the tester's ceiling, its latency floor is measured at.
const floorLoadPercent = 10

// AsCalibration turns a TrafficTest's plan into the tester's own calibration (linerate calibrate, or a
// calibration run: spec.tester.calibration.measure): its throughput searches, each repetitions times, and
// latency through no DUT, and nothing to expect of a DUT. Only fields are replaced, none written through,
// so a shallow copy of a plan can be turned without changing the plan.
func (p *Plan) AsCalibration(repetitions int) {
	var tests []v1alpha1.TestKind
	for _, t := range p.Tests {
		if t == v1alpha1.TestThroughput || t == v1alpha1.TestImixThroughput {
			tests = append(tests, t)
		}
	}
	if !slices.Contains(tests, v1alpha1.TestThroughput) && len(p.FrameSizes) > 0 {
		tests = append([]v1alpha1.TestKind{v1alpha1.TestThroughput}, tests...)
	}
	if len(p.FrameSizes) > 0 && !p.Has(v1alpha1.TestLatency) {
		// a floor needs no RFC 8219 statistics of 20 two-minute repetitions: three trials as long as the
		// throughput's validation trial
		p.Latency.Repetitions, p.Durations.LatencyTrial = 3, p.Durations.ValidationTrial
	}
	// at its ceiling the tester is at its limit and spoils its own trials: its floor is what it measures
	// at a tenth of it
	p.Latency.PercentOfNDR = []float64{floorLoadPercent}
	if len(p.FrameSizes) > 0 {
		// after throughput, before IMIX: the order the runner keeps (RFC 2544's)
		i := slices.Index(tests, v1alpha1.TestThroughput) + 1
		tests = slices.Insert(tests, i, v1alpha1.TestLatency)
	}
	p.Tests = tests
	p.Expectations = nil
	// a cap below line rate would be written down as the tester's ceiling; the ceiling is a loss ceiling
	// (the tester's latency is its floor, measured apart)
	p.Throughput.MaxRatePercent = 100
	p.Throughput.MaxLatency = nil
	p.Throughput.Repetitions = repetitions
}

// CalibrationShape is what of this plan a tester's ceiling depends on besides the frame size
// (calibration.Shape): a calibration holds for plans of the same shape only.
func (p *Plan) CalibrationShape() calibration.Shape {
	t := p.Traffic
	sh := calibration.Shape{Direction: string(t.Direction), LineRateBps: t.LineRateBps, IPVersion: t.IPVersion, Flows: t.Flows,
		Vary: t.Vary, VLAN: t.VLAN, Payload: t.Payload, LossTolerance: FormatPercent(p.Throughput.LossTolerancePercent),
		SearchTrial: p.Durations.SearchTrial.String(), ValidationTrial: p.Durations.ValidationTrial.String(),
		Fragmentable: t.Fragmentable}
	if p.Imix != nil {
		sh.Imix = fmt.Sprintf("%s (mean %.2f B)", p.Imix.Name, p.Imix.AverageFrameSize)
	}
	return sh
}
