// Package plan turns a TrafficTest spec into the resolved test plan the tester executes: every default
// applied, sizes in one unit (L2 frame bytes with FCS), the IMIX expanded into its frame schedule, and
// durations as plain time.Durations.
//
// The plan is the contract between the operator and the tester pod: the operator renders it into the
// ConfigMap "<test>-plan" (key plan.json); the runner reads it there, or `linerate run` resolves it
// locally from the very same YAML. Keep it small and versioned.
package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/calibration"
)

// Version of the plan format; the runner refuses plans it does not know. 2: a tester's calibration, which a
// runner that ignored it would let pass the tester's ceiling as the DUT's. 3: the goal's relative width
// (and the CSIT preset's 0.5 %), which a runner that ignored it would stop at the resolution.
const Version = 3

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

// ConfigMapKey is the key of the plan in the plan ConfigMap.
const ConfigMapKey = "plan.json"

// RFC2544FrameSizes are the Ethernet frame sizes RFC 2544 §9.1 lists for Ethernet.
var RFC2544FrameSizes = []int{64, 128, 256, 512, 1024, 1280, 1518}

// TagBytes is the size of linerate's per-frame tag (dataplane/PROTOCOL.md) at the start of the UDP payload.
const TagBytes = 18

// Plan is a fully resolved TrafficTest.
type Plan struct {
	Version   int    `json:"version"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`

	// Tests in the order they run (RFC 2544 order).
	Tests []v1alpha1.TestKind `json:"tests"`
	// FrameSizes are L2 frame sizes with FCS (VLAN tag included), ascending.
	FrameSizes []int `json:"frameSizes,omitempty"`
	// SizeBasis says how the user gave sizes ("frame" or "ipPacket"), for reports.
	SizeBasis string `json:"sizeBasis"`
	Imix      *Imix  `json:"imix,omitempty"`

	Durations  Durations  `json:"durations"`
	Throughput Throughput `json:"throughput"`
	Latency    Latency    `json:"latency"`
	FrameLoss  FrameLoss  `json:"frameLoss"`
	BackToBack BackToBack `json:"backToBack"`
	Traffic    Traffic    `json:"traffic"`
	Ports      []Port     `json:"ports"`

	Validity Validity `json:"validity"`
	// MaxClockOffset, for ports on two nodes, is the largest offset bound between the nodes' clocks at
	// which one-way latency across them is reported (0: it is not measured across nodes).
	MaxClockOffset time.Duration `json:"maxClockOffset,omitempty"`

	DUT          v1alpha1.DUTSpec       `json:"dut"`
	Expectations *v1alpha1.Expectations `json:"expectations,omitempty"`

	// Calibration is the tester's own ceiling (linerate calibrate); rows within CeilingMarginPercent of it
	// are the tester's, not the DUT's.
	Calibration          *calibration.Calibration `json:"calibration,omitempty"`
	CeilingMarginPercent float64                  `json:"ceilingMarginPercent,omitempty"`
	// CalibrationRepetitions, when set, makes the run the tester's calibration (spec.tester.calibration.
	// measure): its ports joined, each throughput search this many times, the file written for
	// spec.tester.calibration.configMapName.
	CalibrationRepetitions int `json:"calibrationRepetitions,omitempty"`
}

// Imix is a mix expanded into the frame schedule the engine sends: frame n has size Cycle[n % len].
type Imix struct {
	Name             string               `json:"name,omitempty"`
	Entries          []v1alpha1.ImixEntry `json:"entries"`
	Order            v1alpha1.ImixOrder   `json:"order"`
	Cycle            []int                `json:"cycle"`
	AverageFrameSize float64              `json:"averageFrameSize"`
}

// Durations of trial phases.
type Durations struct {
	SearchTrial     time.Duration `json:"searchTrial"`
	ValidationTrial time.Duration `json:"validationTrial"`
	LatencyTrial    time.Duration `json:"latencyTrial"`
	BackToBackTrial time.Duration `json:"backToBackTrial"`
	WarmUp          time.Duration `json:"warmUp"`
	Drain           time.Duration `json:"drain"`
	DUTRest         time.Duration `json:"dutRest"`
}

// Throughput search parameters; percentages are plain numbers (0.5 means 0.5 %).
type Throughput struct {
	LossTolerancePercent    float64               `json:"lossTolerancePercent"`
	PDRLossTolerancePercent *float64              `json:"pdrLossTolerancePercent,omitempty"`
	ResolutionPercent       float64               `json:"resolutionPercent"`
	Method                  v1alpha1.SearchMethod `json:"method"`
	Repetitions             int                   `json:"repetitions"`
	MaxRatePercent          float64               `json:"maxRatePercent"`
	// Goal is the Multistage search's goal (RFC 9971); nil: RFC 2544 strict at durations.validationTrial.
	Goal *Goal `json:"goal,omitempty"`
}

// Goal is a search goal with its preset resolved.
type Goal struct {
	Preset             v1alpha1.GoalPreset `json:"preset"`
	FinalTrialDuration time.Duration       `json:"finalTrialDuration"`
	DurationSum        time.Duration       `json:"durationSum"`
	ExceedRatioPercent float64             `json:"exceedRatioPercent"`
	// WidthPercent is RFC 9971's goal width in percent of the upper bound: the search is done once
	// (upper − lower) / upper is at most this. 0: the resolution, an absolute width, stops it.
	WidthPercent float64 `json:"widthPercent,omitempty"`
}

// Latency test parameters.
type Latency struct {
	Repetitions int `json:"repetitions"`
	// PercentOfNDR is the load of latency trials in percent of the NDR; 0 is the NDR itself (RFC 2544).
	// A calibration measures the tester's latency floor well below its ceiling.
	PercentOfNDR float64 `json:"percentOfNDR,omitempty"`
}

// FrameLoss test parameters.
type FrameLoss struct {
	StepPercent float64 `json:"stepPercent"`
}

// BackToBack test parameters.
type BackToBack struct {
	MaxFrames   int64 `json:"maxFrames"`
	Resolution  int64 `json:"resolution"`
	Repetitions int   `json:"repetitions"`
}

// Traffic describes the generated frames.
type Traffic struct {
	Direction   v1alpha1.Direction `json:"direction"`
	LineRateBps int64              `json:"lineRateBps"`
	IPVersion   int                `json:"ipVersion"`
	Flows       int                `json:"flows"`
	Vary        []string           `json:"vary,omitempty"`
	SrcPort     int                `json:"srcPort"`
	DstPort     int                `json:"dstPort"`
	VLAN        int                `json:"vlan,omitempty"`
	DSCP        int                `json:"dscp,omitempty"`
	Payload     string             `json:"payload"`
}

// Port is one tester port with its addressing resolved.
type Port struct {
	Name      string              `json:"name"`
	Driver    v1alpha1.PortDriver `json:"driver"`
	Interface string              `json:"interface,omitempty"`
	Resource  string              `json:"resource,omitempty"`
	Network   string              `json:"network,omitempty"`
	// Address is the port's own address with prefix (IPv4 or IPv6 per traffic.ipVersion).
	Address string `json:"address"`
	// Gateway is the next hop to resolve (routed DUT); empty with PeerMAC.
	Gateway string `json:"gateway,omitempty"`
	PeerMAC string `json:"peerMAC,omitempty"`
	Node    string `json:"node,omitempty"`
}

// Direction is one way through the DUT, named "tx->rx" after the ports.
type Direction struct {
	Name string `json:"name"`
	TX   int    `json:"tx"`
	RX   int    `json:"rx"`
}

// Directions lists the directions traffic flows in.
func (p *Plan) Directions() []Direction {
	d := []Direction{{Name: p.Ports[0].Name + "->" + p.Ports[1].Name, TX: 0, RX: 1}}
	if p.Traffic.Direction != v1alpha1.Unidirectional {
		d = append(d, Direction{Name: p.Ports[1].Name + "->" + p.Ports[0].Name, TX: 1, RX: 0})
	}
	return d
}

// SeqWindow is what each received stream's sequence window must hold so that every frame of the longest
// trial is classified (in order, reordered, duplicate), never "beyond the window": the frames of that
// trial with its warm-up, drain and a second of slack at line rate with the smallest frame (64 B + 20 B
// on the wire). Bits is the engine's --window-bits (a power of two at least that large, 16..40; 0 when
// the line rate is unknown); Frames is what the window holds resident at most, a bit per frame.
func (p *Plan) SeqWindow() (bits int, frames int64) {
	if p.Traffic.LineRateBps <= 0 {
		return 0, 0
	}
	d := p.Durations
	longest := max(d.SearchTrial, d.ValidationTrial) // throughput, frame loss and IMIX trials
	if p.Has(v1alpha1.TestLatency) {
		longest = max(longest, d.LatencyTrial)
	}
	if p.Has(v1alpha1.TestBackToBack) {
		longest = max(longest, d.BackToBackTrial)
	}
	seconds := (longest + d.WarmUp + d.Drain + time.Second).Seconds()
	frames = int64(math.Ceil(float64(p.Traffic.LineRateBps) / (84 * 8) * seconds))
	bits = 16
	for bits < 40 && int64(1)<<bits < frames {
		bits++
	}
	return bits, frames
}

// CalibrationShape is what of this plan a tester's ceiling depends on besides the frame size
// (calibration.Shape): a calibration holds for plans of the same shape only.
func (p *Plan) CalibrationShape() calibration.Shape {
	t := p.Traffic
	sh := calibration.Shape{Direction: string(t.Direction), LineRateBps: t.LineRateBps, IPVersion: t.IPVersion, Flows: t.Flows,
		Vary: t.Vary, VLAN: t.VLAN, Payload: t.Payload, LossTolerance: FormatPercent(p.Throughput.LossTolerancePercent),
		SearchTrial: p.Durations.SearchTrial.String(), ValidationTrial: p.Durations.ValidationTrial.String()}
	if p.Imix != nil {
		sh.Imix = fmt.Sprintf("%s (mean %.2f B)", p.Imix.Name, p.Imix.AverageFrameSize)
	}
	return sh
}

// Has says whether the plan runs test t.
func (p *Plan) Has(t v1alpha1.TestKind) bool { return slices.Contains(p.Tests, t) }

// LargestFrame is the largest frame the plan sends, FCS included (frame sizes and the IMIX's).
func (p *Plan) LargestFrame() int {
	largest := 0
	for _, f := range p.FrameSizes {
		largest = max(largest, f)
	}
	if p.Imix != nil {
		for _, e := range p.Imix.Entries {
			largest = max(largest, int(e.FrameSize))
		}
	}
	return largest
}

// Marshal renders the plan for the plan ConfigMap.
func (p *Plan) Marshal() (string, error) {
	b, err := json.MarshalIndent(p, "", "  ")
	return string(b), err
}

// Hash names a rendered plan (the text Marshal returns, as the plan ConfigMap and the tester's plan file
// hold it): the operator annotates the tester pods with it, and a runner resumes a run only from a
// checkpoint of the same plan.
func Hash(rendered []byte) string {
	sum := sha256.Sum256(rendered)
	return hex.EncodeToString(sum[:8])
}

// MeasurementHash names what a plan measures: its Hash without the tester's calibration, which only judges
// the rows afterwards (and which a run keeps from its start, through a suspension: the operator's
// attachCalibration).
func MeasurementHash(p *Plan) (string, error) {
	q := *p
	q.Calibration, q.CeilingMarginPercent = nil, 0
	data, err := q.Marshal()
	return Hash([]byte(data)), err
}

// Unmarshal reads a plan and checks its version.
func Unmarshal(data []byte) (*Plan, error) {
	var p Plan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	if p.Version != Version {
		return nil, fmt.Errorf("plan: version %d, this tester understands %d", p.Version, Version)
	}
	return &p, nil
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

// testOrder is RFC 2544's order; latency, frame loss and back-to-back follow throughput.
var testOrder = []v1alpha1.TestKind{v1alpha1.TestThroughput, v1alpha1.TestLatency, v1alpha1.TestFrameLoss,
	v1alpha1.TestBackToBack, v1alpha1.TestImixThroughput}

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
	vlanBytes := 0
	if p.Traffic.VLAN != 0 {
		vlanBytes = 4
	}
	minFrame := MinFrameSize(p.Traffic.IPVersion, p.Traffic.VLAN != 0)
	maxFrame := 9216
	if s.DUT.MaxFrameSize != nil {
		maxFrame = int(*s.DUT.MaxFrameSize)
	}

	if p.needsSizes() {
		switch {
		case len(s.IPPacketSizes) > 0:
			p.SizeBasis = "ipPacket"
			for _, ip := range s.IPPacketSizes {
				p.FrameSizes = append(p.FrameSizes, int(ip)+18+vlanBytes)
			}
		case len(s.FrameSizes) > 0:
			p.SizeBasis = "frame"
			for _, f := range s.FrameSizes {
				p.FrameSizes = append(p.FrameSizes, int(f))
			}
		default:
			p.SizeBasis = "frame"
			for _, f := range RFC2544FrameSizes {
				if f >= minFrame && f <= maxFrame {
					p.FrameSizes = append(p.FrameSizes, f)
				}
			}
		}
		slices.Sort(p.FrameSizes)
		p.FrameSizes = slices.Compact(p.FrameSizes)
		for _, f := range p.FrameSizes {
			if f < minFrame || f > maxFrame {
				return nil, fmt.Errorf("spec.frameSizes: frame size %d B is outside %d..%d B (IPv%d%s, dut.maxFrameSize)",
					f, minFrame, maxFrame, p.Traffic.IPVersion, map[bool]string{true: " with VLAN"}[vlanBytes > 0])
			}
		}
	}

	if s.Imix != nil {
		var spec v1alpha1.ImixSpec
		name := ""
		if s.Imix.ProfileRef != nil {
			if profile == nil {
				return nil, fmt.Errorf("spec.imix.profileRef: ImixProfile %q not found", s.Imix.ProfileRef.Name)
			}
			spec, name = profile.Spec, profile.Name
		} else {
			spec = v1alpha1.ImixSpec{Entries: s.Imix.Entries, Order: s.Imix.Order, Seed: s.Imix.Seed}
		}
		sched, err := NewSchedule(spec)
		if err != nil {
			return nil, fmt.Errorf("spec.imix: %w", err)
		}
		for _, e := range spec.Entries {
			if int(e.FrameSize) < minFrame || int(e.FrameSize) > maxFrame {
				return nil, fmt.Errorf("spec.imix: frame size %d B is outside %d..%d B", e.FrameSize, minFrame, maxFrame)
			}
		}
		p.Imix = &Imix{Name: name, Entries: spec.Entries, Order: sched.Order, Cycle: sched.Cycle, AverageFrameSize: sched.AverageFrameSize}
	}

	d := &s.Durations
	p.Durations = Durations{
		SearchTrial:     orDefault(d.SearchTrial.Duration, 10*time.Second),
		ValidationTrial: orDefault(d.ValidationTrial.Duration, 60*time.Second),
		LatencyTrial:    orDefault(d.LatencyTrial.Duration, 120*time.Second),
		BackToBackTrial: orDefault(d.BackToBackTrial.Duration, 2*time.Second),
		WarmUp:          orDefault(d.WarmUp.Duration, time.Second),
		Drain:           orDefault(d.Drain.Duration, 2*time.Second),
		DUTRest:         orDefault(d.DUTRest.Duration, 5*time.Second),
	}

	th := &s.Throughput
	if p.Throughput.LossTolerancePercent, err = Percent("spec.throughput.lossTolerance", th.LossTolerance, 0); err != nil {
		return nil, err
	}
	if th.PDRLossTolerance != "" {
		v, err := Percent("spec.throughput.pdrLossTolerance", th.PDRLossTolerance, 0)
		if err != nil {
			return nil, err
		}
		p.Throughput.PDRLossTolerancePercent = &v
	}
	if th.PDRLossTolerance == "" && th.Goal != nil && th.Goal.Preset == v1alpha1.GoalCSIT && p.Throughput.LossTolerancePercent < CSITPDRLossPercent {
		// CSIT's NDR/PDR settings search a PDR at 0.5 % loss beside the NDR (above the NDR's tolerance)
		v := CSITPDRLossPercent
		p.Throughput.PDRLossTolerancePercent = &v
	}
	if p.Throughput.ResolutionPercent, err = Percent("spec.throughput.resolution", th.Resolution, 0.5); err != nil {
		return nil, err
	}
	if p.Throughput.ResolutionPercent <= 0 {
		return nil, fmt.Errorf("spec.throughput.resolution: must be larger than 0")
	}
	if p.Throughput.MaxRatePercent, err = Percent("spec.throughput.maxRate", th.MaxRate, 100); err != nil {
		return nil, err
	}
	p.Throughput.Method = th.Method
	if p.Throughput.Method == "" {
		p.Throughput.Method = v1alpha1.SearchMultistage
	}
	p.Throughput.Repetitions = int(orDefault(th.Repetitions, 1))
	if p.Throughput.Goal, err = resolveGoal(th.Goal, p.Durations.ValidationTrial); err != nil {
		return nil, err
	}
	if g := p.Throughput.Goal; g != nil && g.WidthPercent > 0 && g.WidthPercent/100*p.Throughput.ResolutionPercent < minBracketPercent {
		return nil, fmt.Errorf("spec.throughput.goal.width: %g%% of the resolution of %g%% is a bracket of %g%% of line rate at the low end, finer than the %g%% rates are told apart by: widen it or raise spec.throughput.resolution",
			g.WidthPercent, p.Throughput.ResolutionPercent, g.WidthPercent/100*p.Throughput.ResolutionPercent, minBracketPercent)
	}
	if p.Throughput.Goal != nil && p.Throughput.Method == v1alpha1.SearchBinary {
		return nil, fmt.Errorf("spec.throughput.goal applies to the Multistage search; Binary is RFC 2544's own bisection")
	}
	p.Latency.Repetitions = int(orDefault(s.Latency.Repetitions, 20))
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

	if m := s.Tester.MaxClockOffset; m != nil {
		p.MaxClockOffset = m.Duration
	}
	if c := s.Tester.Calibration; c != nil {
		// the calibration itself is in a ConfigMap: the operator (or linerate run --calibration) adds it
		if p.CeilingMarginPercent, err = Percent("spec.tester.calibration.ceilingMargin", c.CeilingMargin, calibration.DefaultMarginPercent); err != nil {
			return nil, err
		}
		if p.CeilingMarginPercent <= 0 || p.CeilingMarginPercent >= 100 {
			return nil, fmt.Errorf("spec.tester.calibration.ceilingMargin: must be more than 0 and less than 100")
		}
		if c.Measure {
			p.CalibrationRepetitions = int(orDefault(c.Repetitions, 3))
		}
	}
	v := &s.Tester.Validity
	p.Validity = Validity{MaxTxLag: v.MaxTxLag.Duration, MaxWorkerGap: v.MaxWorkerGap.Duration, InvalidTrialRetries: DefaultInvalidTrialRetries}
	if v.InvalidTrialRetries != nil {
		p.Validity.InvalidTrialRetries = int(*v.InvalidTrialRetries)
	}
	if p.Validity.MaxShortfallPercent, err = Percent("spec.tester.validity.maxShortfall", v.MaxShortfall, 0.1); err != nil {
		return nil, err
	}

	if len(s.Ports) != 2 {
		return nil, fmt.Errorf("spec.ports: exactly two ports are needed, %d given", len(s.Ports))
	}
	if s.Ports[0].Name == s.Ports[1].Name {
		return nil, fmt.Errorf("spec.ports: the two ports need distinct names")
	}
	for i := range s.Ports {
		port, err := resolvePort(i, &s.Ports[i], p.Traffic.IPVersion)
		if err != nil {
			return nil, err
		}
		p.Ports = append(p.Ports, port)
	}
	if err := p.interfacesApart(); err != nil {
		return nil, err
	}
	return p, nil
}

// interfacesApart refuses two ports on one interface of one tester pod (as the spec names it, or as
// Multus's net1 and net2 by default): af_packet would put their sockets in one fanout group, each taking
// a share of the other's frames, and Multus cannot attach one name twice. Ports on two different nodes
// are two pods.
func (p *Plan) interfacesApart() error {
	a, b := p.Ports[0], p.Ports[1]
	if a.Node != "" && b.Node != "" && a.Node != b.Node {
		return nil
	}
	used := func(q Port) bool { return q.Interface != "" && (q.Driver != v1alpha1.DriverVFIO || q.Network != "") }
	if used(a) && used(b) && a.Interface == b.Interface {
		return fmt.Errorf("spec.ports[1].interface: ports %s and %s would both use interface %s of one tester pod, where each takes a share of the other's frames: give each port its own interface, or pin the ports to two different nodes (ports[].node)",
			a.Name, b.Name, a.Interface)
	}
	return nil
}

func (p *Plan) needsSizes() bool {
	for _, t := range p.Tests {
		if t != v1alpha1.TestImixThroughput {
			return true
		}
	}
	return false
}

// MinFrameSize is the smallest frame that holds Ethernet (+VLAN) / IP / UDP headers, the tag and FCS.
func MinFrameSize(ipVersion int, vlan bool) int {
	n := 14 + 8 + TagBytes + 4
	if ipVersion == 6 {
		n += 40
	} else {
		n += 20
	}
	if vlan {
		n += 4
	}
	return max(n, 64)
}

func resolveTraffic(t *v1alpha1.TrafficParams) (Traffic, error) {
	lr, err := LineRateBps(t.LineRate)
	if err != nil {
		return Traffic{}, err
	}
	out := Traffic{
		Direction:   t.Direction,
		LineRateBps: lr,
		IPVersion:   int(orDefault(t.IPVersion, 4)),
		Flows:       int(orDefault(t.Flows, 1)),
		SrcPort:     int(orDefault(t.SrcPort, 49152)),
		DstPort:     int(orDefault(t.DstPort, 49153)),
		DSCP:        int(t.DSCP),
		Payload:     string(t.Payload),
	}
	if out.Direction == "" {
		out.Direction = v1alpha1.Bidirectional
	}
	if out.Payload == "" {
		out.Payload = string(v1alpha1.PayloadPattern("Zeros"))
	}
	if t.VLAN != nil {
		out.VLAN = int(*t.VLAN)
	}
	for _, v := range t.Vary {
		out.Vary = append(out.Vary, string(v))
	}
	if out.Flows > 1 && len(out.Vary) == 0 {
		out.Vary = []string{"srcPort"}
	}
	if out.Flows+out.SrcPort-1 > 65535 && slices.Contains(out.Vary, "srcPort") {
		return Traffic{}, fmt.Errorf("spec.traffic.flows: %d flows from srcPort %d run past port 65535", out.Flows, out.SrcPort)
	}
	if out.Flows+out.DstPort-1 > 65535 && slices.Contains(out.Vary, "dstPort") {
		return Traffic{}, fmt.Errorf("spec.traffic.flows: %d flows from dstPort %d run past port 65535", out.Flows, out.DstPort)
	}
	return out, nil
}

// RFC 2544 Appendix C puts the tester on 198.18.1.2 and 198.19.1.2 behind a DUT at .1; RFC 5180 gives
// IPv6 benchmarking the prefix 2001:2::/48.
var defaultAddress = map[int][2][2]string{
	4: {{"198.18.1.2/24", "198.18.1.1"}, {"198.19.1.2/24", "198.19.1.1"}},
	6: {{"2001:2:0:1::2/64", "2001:2:0:1::1"}, {"2001:2:0:2::2/64", "2001:2:0:2::1"}},
}

func resolvePort(i int, s *v1alpha1.PortSpec, ipVersion int) (Port, error) {
	field := fmt.Sprintf("spec.ports[%d]", i)
	p := Port{Name: s.Name, Driver: s.Driver, Interface: s.Interface, Resource: s.Resource, Network: s.Network,
		Address: s.Address, Gateway: s.Gateway, PeerMAC: s.PeerMAC, Node: s.Node}
	if p.Driver == "" {
		p.Driver = v1alpha1.DriverVFIO
	}
	// the interface Multus names the port's attachment: a kernel port's device, a VF port's key into the
	// pod's network-status (which VF is whose)
	if p.Interface == "" && (p.Driver != v1alpha1.DriverVFIO || p.Network != "") {
		p.Interface = fmt.Sprintf("net%d", i+1)
	}
	if p.Address == "" {
		p.Address = defaultAddress[ipVersion][i][0]
		if p.Gateway == "" && p.PeerMAC == "" {
			p.Gateway = defaultAddress[ipVersion][i][1]
		}
	}
	pfx, err := netip.ParsePrefix(p.Address)
	if err != nil {
		return Port{}, fmt.Errorf("%s.address: %q is not an address with prefix length (e.g. 198.18.1.2/24)", field, p.Address)
	}
	if (ipVersion == 6) != pfx.Addr().Is6() {
		return Port{}, fmt.Errorf("%s.address: %s is not an IPv%d address (traffic.ipVersion)", field, p.Address, ipVersion)
	}
	if p.Gateway == "" && p.PeerMAC == "" {
		return Port{}, fmt.Errorf("%s: give a gateway (routed DUT) or a peerMAC (transparent DUT)", field)
	}
	if p.Gateway != "" {
		gw, err := netip.ParseAddr(p.Gateway)
		if err != nil || gw.Is6() != pfx.Addr().Is6() {
			return Port{}, fmt.Errorf("%s.gateway: %q is not an IPv%d address", field, p.Gateway, ipVersion)
		}
		if !pfx.Masked().Contains(gw) {
			return Port{}, fmt.Errorf("%s.gateway: %s is not in the port's subnet %s", field, gw, pfx.Masked())
		}
	}
	return p, nil
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Validity says when a trial is the tester's fault (spec.tester.validity): its limits, and how often a
// search repeats a trial the tester spoiled before it takes the tester as the limit at that rate.
type Validity struct {
	MaxTxLag            time.Duration `json:"maxTxLag,omitempty"`
	MaxWorkerGap        time.Duration `json:"maxWorkerGap,omitempty"`
	MaxShortfallPercent float64       `json:"maxShortfallPercent,omitempty"`
	InvalidTrialRetries int           `json:"invalidTrialRetries"`
}

// DefaultInvalidTrialRetries is how often a search repeats a trial the tester spoiled, unless told.
const DefaultInvalidTrialRetries = 2

// Row is one result a plan asks for: a test at a frame size (0 for the IMIX) in one direction.
type Row struct {
	Test      v1alpha1.TestKind
	FrameSize int
	Direction string
}

func (r Row) String() string {
	if r.Test == v1alpha1.TestImixThroughput {
		return fmt.Sprintf("%s %s", r.Test, r.Direction)
	}
	return fmt.Sprintf("%s %d B %s", r.Test, r.FrameSize, r.Direction)
}

// Rows are every result the plan asks for, in the order they run.
func (p *Plan) Rows() []Row {
	var out []Row
	for _, t := range p.Tests {
		sizes := p.FrameSizes
		if t == v1alpha1.TestImixThroughput {
			sizes = []int{0}
		}
		for _, size := range sizes {
			for _, d := range p.Directions() {
				out = append(out, Row{Test: t, FrameSize: size, Direction: d.Name})
			}
		}
	}
	return out
}

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
