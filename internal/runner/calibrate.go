package runner

import (
	"context"
	"fmt"
	"time"

	"linerate.dev/linerate/internal/calibration"

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
	p.AsCalibration(max(1, o.Repetitions))
	res, runErr := runPlan(ctx, o.LocalOptions, tt.Name+" (calibration, ports joined)", p, rfc2544.Options{JoinedPorts: true})
	if res == nil || (len(res.Throughput) == 0 && len(res.Imix) == 0) {
		if runErr == nil {
			runErr = fmt.Errorf("no ceiling was measured")
		}
		return nil, runErr
	}
	c := calibration.FromResults(tt.Name, res, p.CalibrationShape(), p.Throughput.PrecisionPercent(100), time.Now())
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
