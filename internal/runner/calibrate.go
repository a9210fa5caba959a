package runner

import (
	"context"
	"fmt"
	"slices"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/calibration"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/rfc2544"
)

// CalibrateOptions are the flags of `linerate calibrate`.
type CalibrateOptions struct {
	LocalOptions
	// Out is the calibration file to write.
	Out string
	// Repetitions of each throughput search: the spread between them is the tester's own, and a row within
	// it of the ceiling is the tester's.
	Repetitions int
}

// Calibrate measures the tester alone: the TrafficTest's throughput search (its sizes, IMIX, directions,
// trial lengths and loss tolerance) and latency, on its ports joined to each other with no DUT between
// them. What it finds is the tester's ceiling and latency floor, written to o.Out.
func Calibrate(ctx context.Context, o CalibrateOptions) (*calibration.Calibration, error) {
	tt, p, err := loadPlan(o.Files)
	if err != nil {
		return nil, err
	}
	calibrationPlan(p)
	p.Throughput.Repetitions = max(1, o.Repetitions)
	res, runErr := runPlan(ctx, o.LocalOptions, tt.Name+" (calibration, ports joined)", p, rfc2544.Options{JoinedPorts: true})
	if res == nil || (len(res.Throughput) == 0 && len(res.Imix) == 0) {
		if runErr == nil {
			runErr = fmt.Errorf("no ceiling was measured")
		}
		return nil, runErr
	}
	c := calibration.FromResults(tt.Name, res, p.CalibrationShape(), p.Throughput.ResolutionPercent, time.Now())
	if runErr != nil {
		// what was measured is kept for the user to read, and refused as a calibration
		c.Incomplete = runErr.Error()
	}
	if err := c.Write(o.Out); err != nil {
		return c, err
	}
	fmt.Fprintf(o.Stderr, "linerate: calibration in %s\n", o.Out)
	return c, runErr
}

// floorLoadPercent is the load, in percent of the tester's ceiling, its latency floor is measured at.
const floorLoadPercent = 10

// calibrationPlan turns a TrafficTest's plan into the tester's own: its throughput searches and latency
// through no DUT, and nothing to expect of a DUT.
func calibrationPlan(p *plan.Plan) {
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
	p.Latency.PercentOfNDR = floorLoadPercent
	if len(p.FrameSizes) > 0 {
		// after throughput, before IMIX: the order the runner keeps (RFC 2544's)
		i := slices.Index(tests, v1alpha1.TestThroughput) + 1
		tests = slices.Insert(tests, i, v1alpha1.TestLatency)
	}
	p.Tests = tests
	p.Expectations = nil
	// a cap below line rate would be written down as the tester's ceiling
	p.Throughput.MaxRatePercent = 100
}
