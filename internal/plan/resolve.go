package plan

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/calibration"
)

// testOrder is RFC 2544's order, after the path MTU finder (a size that does not fit is said first);
// latency, frame loss and back-to-back follow throughput.
var testOrder = []v1alpha1.TestKind{v1alpha1.TestPathMTU, v1alpha1.TestThroughput, v1alpha1.TestLatency, v1alpha1.TestFrameLoss,
	v1alpha1.TestBackToBack, v1alpha1.TestImixThroughput, v1alpha1.TestTimeline}

// Resolve builds the plan of a TrafficTest. imix is the referenced ImixProfile's spec (nil when the
// TrafficTest has none or gives its mix inline). Errors name the spec field at fault.
func Resolve(tt *v1alpha1.TrafficTest, profile *v1alpha1.ImixProfile) (*Plan, error) {
	s := &tt.Spec
	p := &Plan{Version: Version, Namespace: tt.Namespace, Name: tt.Name, DUT: s.DUT, Expectations: s.Expectations}

	for _, t := range testOrder {
		if slices.Contains(s.Tests, t) {
			p.Tests = append(p.Tests, t)
		}
	}
	if len(p.Tests) == 0 {
		return nil, fmt.Errorf("spec.tests: no test to run")
	}

	var err error
	if p.Traffic, err = resolveTraffic(&s.Traffic); err != nil {
		return nil, err
	}
	if err := p.resolveSizes(s, profile); err != nil {
		return nil, err
	}
	p.Durations = resolveDurations(&s.Durations)
	if err := p.resolveThroughput(&s.Throughput); err != nil {
		return nil, err
	}
	p.Latency.Repetitions = int(orDefault(s.Latency.Repetitions, 20))
	preset := v1alpha1.GoalRFC2544
	if p.Throughput.Goal != nil {
		preset = p.Throughput.Goal.Preset
	}
	if p.Latency.PercentOfNDR, err = latencyLoads(s.Latency.PercentOfNDR, preset); err != nil {
		return nil, err
	}
	if p.FrameLoss.StepPercent, err = Percent("spec.frameLoss.step", s.FrameLoss.Step, 10); err != nil {
		return nil, err
	}
	if p.FrameLoss.StepPercent <= 0 || p.FrameLoss.StepPercent > 10 {
		return nil, fmt.Errorf("spec.frameLoss.step: must be more than 0 and at most 10")
	}
	p.BackToBack = BackToBack{
		MaxFrames:   orDefault(s.BackToBack.MaxFrames, 100000),
		Resolution:  orDefault(s.BackToBack.Resolution, 16),
		Repetitions: int(orDefault(s.BackToBack.Repetitions, 50)),
	}

	if err := p.resolveTimeline(&s.Timeline); err != nil {
		return nil, err
	}
	if slices.Contains(p.Tests, v1alpha1.TestPathMTU) {
		if p.PathMTU, err = resolvePathMTU(&s.PathMTU, p.Traffic, s.DUT.MaxFrameSize); err != nil {
			return nil, err
		}
	}
	if err := p.resolveTester(&s.Tester); err != nil {
		return nil, err
	}
	if err := p.checkTimelineSettle(); err != nil {
		return nil, err
	}
	if err := p.resolvePorts(s.Ports); err != nil {
		return nil, err
	}
	if err := p.checkFragmentsSeen(); err != nil {
		return nil, err
	}
	return p, nil
}

// checkFragmentsSeen refuses what needs the DUT's fragments counted on a port that never sees them: an
// af_packet port's socket joins a fanout group that reassembles IP fragments in the kernel (DPDK's af_packet
// PMD asks for it), so a frame the DUT fragmented arrives whole, or not at all.
func (p *Plan) checkFragmentsSeen() error {
	if p.Traffic.Fragmentable && slices.Contains(p.Tests, v1alpha1.TestTimeline) {
		return fmt.Errorf("spec.traffic.dontFragment: false is not for the timeline test: its bins count a frame by its first fragment, whole or not")
	}
	counted := slices.Contains(p.Tests, v1alpha1.TestPathMTU) || p.Traffic.FragmentedLost
	if !p.Traffic.Fragmentable || !counted {
		return nil
	}
	for _, d := range p.Directions() {
		if port := p.Ports[d.RX]; port.Driver == v1alpha1.DriverAFPacket {
			return fmt.Errorf("spec.traffic.dontFragment: false with the pathMTU test or traffic.fragmentedFrames Lost needs receiving ports that see fragments (vfio-pci or af_xdp): port %s is af_packet, whose kernel socket reassembles them before the tester sees any", port.Name)
		}
	}
	return nil
}

// LineRateBps is the nominal rate of a LineRate in bit/s.
func LineRateBps(r v1alpha1.LineRate) (int64, error) {
	switch r {
	case "1G":
		return 1_000_000_000, nil
	case "", "10G":
		return 10_000_000_000, nil
	case "25G":
		return 25_000_000_000, nil
	case "40G":
		return 40_000_000_000, nil
	case "50G":
		return 50_000_000_000, nil
	case "100G":
		return 100_000_000_000, nil
	}
	return 0, fmt.Errorf("traffic.lineRate: unknown rate %q", r)
}

// Percent parses a Percent field, with def when empty.
func Percent(field string, v v1alpha1.Percent, def float64) (float64, error) {
	if v == "" {
		return def, nil
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || f < 0 || f > 100 {
		return 0, fmt.Errorf("%s: %q is not a percentage between 0 and 100", field, v)
	}
	return f, nil
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// resolveDurations are the trial phases of the spec, defaults filled.
func resolveDurations(d *v1alpha1.Durations) Durations {
	return Durations{
		SearchTrial:     orDefault(d.SearchTrial.Duration, 10*time.Second),
		ValidationTrial: orDefault(d.ValidationTrial.Duration, 60*time.Second),
		LatencyTrial:    orDefault(d.LatencyTrial.Duration, 120*time.Second),
		BackToBackTrial: orDefault(d.BackToBackTrial.Duration, 2*time.Second),
		WarmUp:          orDefault(d.WarmUp.Duration, time.Second),
		Drain:           orDefault(d.Drain.Duration, 2*time.Second),
		DUTRest:         orDefault(d.DUTRest.Duration, 5*time.Second),
	}
}

// resolveTester is what the spec says of the tester: the clock offset it accepts across two nodes, its
// calibration, and when a trial is its own fault.
func (p *Plan) resolveTester(ts *v1alpha1.TesterSpec) error {
	var err error
	p.Polling = string(ts.Polling)
	if m := ts.MaxClockOffset; m != nil {
		p.MaxClockOffset = m.Duration
	}
	if c := ts.Calibration; c != nil {
		// the calibration itself is in a ConfigMap: the operator (or linerate run --calibration) adds it
		if p.CeilingMarginPercent, err = Percent("spec.tester.calibration.ceilingMargin", c.CeilingMargin, calibration.DefaultMarginPercent); err != nil {
			return err
		}
		if p.CeilingMarginPercent <= 0 || p.CeilingMarginPercent >= 100 {
			return fmt.Errorf("spec.tester.calibration.ceilingMargin: must be more than 0 and less than 100")
		}
		if c.Measure {
			p.CalibrationRepetitions = int(orDefault(c.Repetitions, 3))
		}
	}
	v := &ts.Validity
	p.Validity = Validity{MaxTxLag: v.MaxTxLag.Duration, MaxWorkerGap: v.MaxWorkerGap.Duration, InvalidTrialRetries: DefaultInvalidTrialRetries}
	if v.InvalidTrialRetries != nil {
		p.Validity.InvalidTrialRetries = int(*v.InvalidTrialRetries)
	}
	if p.Validity.MaxShortfallPercent, err = Percent("spec.tester.validity.maxShortfall", v.MaxShortfall, 0.1); err != nil {
		return err
	}
	return nil
}
