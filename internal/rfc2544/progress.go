package rfc2544

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/estimate"
	"linerate.dev/linerate/internal/plan"
)

// emitProgress reports where the run stands and what is left: at a trial's start (pr nil, which books the
// trial for the estimate) and with the trial's live counters.
func (r *Runner) emitProgress(ts trialSpec, pr *engine.Progress) {
	pg := r.progress
	now := r.opt.Now()
	t := metaTime(now)
	pg.UpdateTime = &t
	what := string(ts.test)
	if ts.size > 0 {
		what += fmt.Sprintf(" %dB", ts.size)
	}
	purpose := ""
	if len(ts.purposes) > 0 {
		purpose = ts.purposes[0]
	}
	if ts.burst > 0 {
		pg.Summary = fmt.Sprintf("%s %s: trial %d, burst of %d frames (step %d/%d)", what, pg.Direction, pg.Trial, ts.burst, r.stepsDone+1, r.stepsTotal)
	} else {
		pg.Summary = fmt.Sprintf("%s %s: trial %d at %s%% (%s, %s) (step %d/%d)", what, pg.Direction, pg.Trial, pg.OfferedRate, purpose,
			ts.duration, r.stepsDone+1, r.stepsTotal)
	}
	if pr == nil {
		r.est.trialStarted(now, r.stepsDone, len(ts.dirs), estimate.Phases(r.plan.Durations, ts.duration, ts.burst > 0), len(r.trials))
	}
	left := r.remaining(now.Sub(r.stepStart))
	pg.EstimatedSecondsLeft = int64(math.Ceil(left.expected.Seconds()))
	pg.EstimatedTotalSeconds = int64(math.Ceil(r.planned.Seconds()))
	pg.Summary += ", " + left.String()
	if pr != nil {
		var tx, rx int64
		for _, s := range pr.Streams {
			tx += s.TxFrames
			rx += s.RxFrames
		}
		pg.Summary += fmt.Sprintf(" %s %.0fs tx=%d rx=%d", pr.State, pr.Elapsed.Seconds(), tx, rx)
	}
	if ts.live != nil {
		pg.Summary += "; " + ts.live()
	}
	if ts.liveRows != nil {
		pg.Timeline = ts.liveRows()
	}
	r.sink.OnProgress(pg)
}

// FormatPct renders a percentage of line rate with up to three decimals.
func FormatPct(v float64) string {
	s := strconv.FormatFloat(v, 'f', 3, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// FormatLoss renders a loss percentage.
func FormatLoss(v float64) string { return plan.FormatPercent(v) }
