package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
)

// PrecisionPercent is how precisely the throughput search places an answer near ratePercent of line rate,
// in percent of line rate: the resolution, or, when the goal sets a relative width, that width of the rate
// (of the resolution below it), which replaces the resolution however fine it is.
func (t *Throughput) PrecisionPercent(ratePercent float64) float64 {
	if t.Goal == nil || t.Goal.WidthPercent <= 0 {
		return t.ResolutionPercent
	}
	return t.Goal.WidthPercent / 100 * max(ratePercent, t.ResolutionPercent)
}

// minBracketPercent is the finest bracket a search is asked for, in percent of line rate: ten times the
// 1e-6 % that rates are rounded to.
const minBracketPercent = 1e-5

// CSITPDRLossPercent is the PDR's loss ratio in FD.io CSIT's NDR/PDR settings, searched with the CSIT
// preset unless throughput.pdrLossTolerance says otherwise.
const CSITPDRLossPercent = 0.5

// MinWidthPercent is the finest relative goal width: 1e-4 of the upper bound, above the 1e-6 % of line rate
// that rates are rounded to down to a bound of 1 % of line rate.
const MinWidthPercent = 0.01

// resolveGoal fills a search goal from its preset; nil (RFC 2544 strict at the validation trial) when none
// is asked for or it is exactly that.
func resolveGoal(g *v1alpha1.SearchGoal, validation time.Duration) (*Goal, error) {
	if g == nil {
		return nil, nil
	}
	out := Goal{Preset: g.Preset, FinalTrialDuration: validation, DurationSum: validation}
	switch g.Preset {
	case "", v1alpha1.GoalRFC2544:
		out.Preset = v1alpha1.GoalRFC2544
	case v1alpha1.GoalCSIT:
		out.FinalTrialDuration, out.DurationSum, out.ExceedRatioPercent, out.WidthPercent = time.Second, 21*time.Second, 50, 0.5
	default:
		return nil, fmt.Errorf("spec.throughput.goal.preset: unknown preset %q", g.Preset)
	}
	if g.FinalTrialDuration != nil {
		out.FinalTrialDuration = g.FinalTrialDuration.Duration
		if g.Preset != v1alpha1.GoalCSIT && g.DurationSum == nil {
			out.DurationSum = out.FinalTrialDuration
		}
	}
	if g.DurationSum != nil {
		out.DurationSum = g.DurationSum.Duration
	}
	if g.ExceedRatio != "" {
		v, err := Percent("spec.throughput.goal.exceedRatio", g.ExceedRatio, 0)
		if err != nil {
			return nil, err
		}
		out.ExceedRatioPercent = v
	}
	if g.Width != "" {
		v, err := Percent("spec.throughput.goal.width", g.Width, 0)
		if err != nil {
			return nil, err
		}
		out.WidthPercent = v
	}
	switch {
	case out.FinalTrialDuration <= 0 || out.DurationSum <= 0:
		return nil, fmt.Errorf("spec.throughput.goal: finalTrialDuration and durationSum must be longer than 0s")
	case out.ExceedRatioPercent >= 100:
		return nil, fmt.Errorf("spec.throughput.goal.exceedRatio must be less than 100")
	case g.Width != "" && (out.WidthPercent < MinWidthPercent || out.WidthPercent >= 100):
		return nil, fmt.Errorf("spec.throughput.goal.width: %q must be at least %g and less than 100 (percent of the upper bound)", g.Width, MinWidthPercent)
	case out.FinalTrialDuration == validation && out.DurationSum == validation && out.ExceedRatioPercent == 0 && out.WidthPercent == 0:
		return nil, nil // RFC 2544 strict: what the search does without a goal
	}
	return &out, nil
}

// resolveThroughput is the throughput search of the spec: its tolerances, resolution, method and goal.
func (p *Plan) resolveThroughput(th *v1alpha1.ThroughputParams) error {
	var err error
	if p.Throughput.LossTolerancePercent, err = Percent("spec.throughput.lossTolerance", th.LossTolerance, 0); err != nil {
		return err
	}
	if th.PDRLossTolerance != "" {
		v, err := Percent("spec.throughput.pdrLossTolerance", th.PDRLossTolerance, 0)
		if err != nil {
			return err
		}
		p.Throughput.PDRLossTolerancePercent = &v
	}
	if th.PDRLossTolerance == "" && th.Goal != nil && th.Goal.Preset == v1alpha1.GoalCSIT && p.Throughput.LossTolerancePercent < CSITPDRLossPercent {
		// CSIT's NDR/PDR settings search a PDR at 0.5 % loss beside the NDR (above the NDR's tolerance)
		v := CSITPDRLossPercent
		p.Throughput.PDRLossTolerancePercent = &v
	}
	if p.Throughput.ResolutionPercent, err = Percent("spec.throughput.resolution", th.Resolution, 0.5); err != nil {
		return err
	}
	if p.Throughput.ResolutionPercent <= 0 {
		return fmt.Errorf("spec.throughput.resolution: must be larger than 0")
	}
	if p.Throughput.MaxRatePercent, err = Percent("spec.throughput.maxRate", th.MaxRate, 100); err != nil {
		return err
	}
	p.Throughput.Method = th.Method
	if p.Throughput.Method == "" {
		p.Throughput.Method = v1alpha1.SearchMultistage
	}
	p.Throughput.Repetitions = int(orDefault(th.Repetitions, 1))
	if p.Throughput.Goal, err = resolveGoal(th.Goal, p.Durations.ValidationTrial); err != nil {
		return err
	}
	if g := p.Throughput.Goal; g != nil && g.WidthPercent > 0 && g.WidthPercent/100*p.Throughput.ResolutionPercent < minBracketPercent {
		return fmt.Errorf("spec.throughput.goal.width: %g%% of the resolution of %g%% is a bracket of %s%% of line rate at the low end, finer than the %s%% rates are told apart by: widen it or raise spec.throughput.resolution",
			g.WidthPercent, p.Throughput.ResolutionPercent, FormatPercent(g.WidthPercent/100*p.Throughput.ResolutionPercent), FormatPercent(minBracketPercent))
	}
	if p.Throughput.Goal != nil && p.Throughput.Method == v1alpha1.SearchBinary {
		return fmt.Errorf("spec.throughput.goal applies to the Multistage search; Binary is RFC 2544's own bisection")
	}
	p.Throughput.MaxLatency, err = resolveLatencyBound(th)
	return err
}

// latencyPercentiles are the percentiles a latency bound may name: those the engine reports.
var latencyPercentiles = []string{"50", "90", "99", "99.9", "99.99", "100"}

func resolveLatencyBound(th *v1alpha1.ThroughputParams) (*LatencyBound, error) {
	if th.MaxLatency == nil {
		if th.MaxLatencyPercentile != "" {
			return nil, fmt.Errorf("spec.throughput.maxLatencyPercentile is the percentile spec.throughput.maxLatency bounds: give maxLatency too")
		}
		return nil, nil
	}
	if th.MaxLatency.Duration <= 0 {
		return nil, fmt.Errorf("spec.throughput.maxLatency: %s: must be positive", th.MaxLatency.Duration)
	}
	pct := th.MaxLatencyPercentile
	if pct == "" {
		pct = "99"
	}
	if !slices.Contains(latencyPercentiles, pct) {
		return nil, fmt.Errorf("spec.throughput.maxLatencyPercentile: %q: want one of %s", pct, strings.Join(latencyPercentiles, ", "))
	}
	v, _ := strconv.ParseFloat(pct, 64)
	return &LatencyBound{Bound: th.MaxLatency.Duration, Percentile: v}, nil
}
