package rfc2544

import (
	"context"
	"fmt"
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine"
)

// rate expresses a percentage of line rate at a mean frame size in every unit of the result tables.
func (r *Runner) rate(percent, mean float64) v1alpha1.Rate {
	fps := percent / 100 * r.lineFPS(mean)
	return v1alpha1.Rate{
		FramesPerSecond:   int64(math.Round(fps)),
		L2BitsPerSecond:   int64(math.Round(fps * mean * 8)),
		L1BitsPerSecond:   int64(math.Round(fps * (mean + 20) * 8)),
		PercentOfLineRate: FormatPct(percent),
	}
}

func spread(v []float64) v1alpha1.Spread {
	if len(v) == 0 {
		return v1alpha1.Spread{}
	}
	mn, mx, sum := v[0], v[0], 0.0
	for _, x := range v {
		mn, mx, sum = math.Min(mn, x), math.Max(mx, x), sum+x
	}
	mean := sum / float64(len(v))
	ss := 0.0
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	sd := 0.0
	if len(v) > 1 {
		sd = math.Sqrt(ss / float64(len(v)-1)) // sample standard deviation
	}
	return v1alpha1.Spread{Repetitions: int32(len(v)), Mean: int64(math.Round(mean)), StdDev: int64(math.Round(sd)),
		Min: int64(math.Round(mn)), Max: int64(math.Round(mx))}
}

func metaTime(t time.Time) metav1.Time { return metav1.NewTime(t) }

// frameLoss runs the frame loss curve (RFC 2544 §26.3): from the maximum rate down in steps of at most
// 10 % of line rate, until two successive trials lose nothing.
func (r *Runner) frameLoss(ctx context.Context, size int) error {
	if err := r.defineStreams(ctx, []int{size}); err != nil {
		return err
	}
	dirs := r.plan.Directions()
	step := r.plan.FrameLoss.StepPercent
	if step <= 0 || step > 10 {
		step = 10
	}
	curves := make([]v1alpha1.FrameLossResult, len(dirs))
	for d := range dirs {
		curves[d] = v1alpha1.FrameLossResult{FrameSize: int32(size), Direction: dirs[d].Name}
	}
	publish := func() {
		for d := range curves {
			if len(curves[d].Points) > 0 {
				r.res.FrameLoss = append(r.res.FrameLoss, curves[d])
			}
		}
	}
	clean := 0
	for rate := r.plan.Throughput.MaxRatePercent; rate > 1e-9 && clean < 2; rate -= step {
		rate = math.Round(rate*1e6) / 1e6
		ts := trialSpec{test: v1alpha1.TestFrameLoss, size: size, duration: r.plan.Durations.ValidationTrial, tol: 0}
		for d := range dirs {
			if why := r.refusedAt(size, d); why != "" {
				// no frame of it crosses: its trials would only stall the others'
				r.note(fmt.Sprintf("frame loss %d B %s: not run, the DUT refused every frame of that size as %s", size, dirs[d].Name, why))
				continue
			}
			ts.dirs = append(ts.dirs, d)
			ts.rates = append(ts.rates, rate)
			ts.purposes = append(ts.purposes, "step")
		}
		drs, aborted, spoiled, err := r.validTrial(ctx, ts)
		if err != nil {
			publish()
			return err
		}
		if spoiled {
			// fail closed: a point the tester spoiled is no point of the DUT's curve
			r.note(fmt.Sprintf("frame loss %d B at %s%%: the tester spoiled the trial %d times (%s); no point is reported there",
				size, FormatPct(rate), r.plan.Validity.InvalidTrialRetries+1, spoiledBy(drs)))
			continue
		}
		lossFree := true
		for _, dr := range drs {
			curves[dr.dir].Points = append(curves[dr.dir].Points, v1alpha1.FrameLossPoint{
				PercentOfLineRate: FormatPct(rate), LossPercent: FormatLoss(dr.rec.LossPercent),
				TxFrames: dr.rec.TxFrames, RxFrames: dr.rec.RxFrames})
			if dr.rec.Lost > 0 || dr.rec.Aborted != "" {
				lossFree = false
			}
		}
		if aborted == engine.ReasonDUTStalled {
			publish()
			return fmt.Errorf("%w: frame loss %d B at %s%%", ErrDUTStalled, size, FormatPct(rate))
		}
		if lossFree {
			clean++
		} else {
			clean = 0
		}
	}
	publish()
	return nil
}
