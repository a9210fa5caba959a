// Package plan turns a TrafficTest spec into the resolved test plan the tester executes: every default
// applied, sizes in one unit (L2 frame bytes with FCS), the IMIX expanded into its frame schedule, and
// durations as plain time.Durations.
//
// The plan is the contract between the operator and the tester pod: the operator renders it into the
// ConfigMap "<test>-plan" (key plan.json); the runner reads it there, or `linerate run` resolves it
// locally from the very same YAML. Keep it small and versioned.
package plan

import (
	"strconv"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/calibration"
)

// Version of the plan format; the runner refuses plans it does not know. 2: a tester's calibration, which a
// runner that ignored it would let pass the tester's ceiling as the DUT's. 3: the goal's relative width
// (and the CSIT preset's 0.5 %), which a runner that ignored it would stop at the resolution. 4: the
// timeline test, which a runner that ignored it would skip and call the run complete. 5: latency at loads
// (latency.percentOfNDR, a list whose 0 is the sparse probe where it was one number whose 0 meant the NDR),
// which a runner of version 4 cannot decode.
const Version = 5

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
	// Timeline is the timeline test's (nil when the run has none).
	Timeline *Timeline `json:"timeline,omitempty"`
	// PathMTU is the path MTU finder's (nil when the run has none).
	PathMTU *PathMTU `json:"pathMTU,omitempty"`
	Traffic Traffic  `json:"traffic"`
	Ports   []Port   `json:"ports"`

	Validity Validity `json:"validity"`
	// Polling is how the engine's workers wait (spec.tester.polling; "" is Auto).
	Polling string `json:"polling,omitempty"`
	// MaxClockOffset, for ports on two nodes, is the largest offset bound between the nodes' clocks at
	// which one-way latency across them is reported (0: it is not measured across nodes).
	MaxClockOffset time.Duration `json:"maxClockOffset,omitempty"`

	DUT          v1alpha1.DUTSpec       `json:"dut"`
	Expectations *v1alpha1.Expectations `json:"expectations,omitempty"`

	// Calibration is the tester's own ceiling (linerate calibrate); rows within CeilingMarginPercent of it
	// are the tester's, not the DUT's.
	Calibration          *calibration.Calibration `json:"calibration,omitempty"`
	CeilingMarginPercent float64                  `json:"ceilingMarginPercent,omitempty"`
	// DUTPod is the pod spec.dut.cpu.pod names, as the operator found it running: the runner reads the CPU
	// time of its cgroup, found by its UID on its node.
	DUTPod *DUTPod `json:"dutPod,omitempty"`
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
	// MaxLatency, when set, bounds the throughput by latency too: a trial passes only when its latency at
	// the percentile MaxLatency.Percentile is at most MaxLatency.Bound.
	MaxLatency *LatencyBound `json:"maxLatency,omitempty"`
}

// LatencyBound is spec.throughput.maxLatency resolved.
type LatencyBound struct {
	Bound time.Duration `json:"bound"`
	// Percentile is one the engine reports: 50, 90, 99, 99.9, 99.99 or 100 (the largest).
	Percentile float64 `json:"percentile"`
}

// Statistic is the bound's percentile as a latency statistic: "p99", "max" for 100.
func (b LatencyBound) Statistic() v1alpha1.Statistic {
	if b.Percentile >= 100 {
		return "max"
	}
	return v1alpha1.Statistic("p" + strconv.FormatFloat(b.Percentile, 'f', -1, 64))
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
	// PercentOfNDR are the loads of latency trials in percent of the NDR, in the order run: 100 is the NDR
	// itself (RFC 2544), 0 the sparse probe (LatencyLoadPercent). A calibration measures the tester's latency floor
	// well below its ceiling.
	PercentOfNDR []float64 `json:"percentOfNDR"`
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
	// Fragmentable: IPv4 frames leave with DF clear (spec.traffic.dontFragment false), and FragmentedLost
	// counts a frame that arrived in fragments as lost (spec.traffic.fragmentedFrames Lost).
	Fragmentable   bool `json:"fragmentable,omitempty"`
	FragmentedLost bool `json:"fragmentedLost,omitempty"`
}

// DUTPod is a running pod that is the DUT (spec.dut.cpu.pod).
type DUTPod struct {
	Name string `json:"name"`
	UID  string `json:"uid"`
	Node string `json:"node"`
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
