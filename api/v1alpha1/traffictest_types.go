package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKind names one of the benchmarks a TrafficTest runs.
// +kubebuilder:validation:Enum=throughput;latency;frameLoss;backToBack;imixThroughput;timeline;pathMTU
type TestKind string

const (
	// TestThroughput is RFC 2544 §26.1: the highest rate without loss (NDR), per frame size.
	TestThroughput TestKind = "throughput"
	// TestLatency is RFC 2544 §26.2, measured on every frame at the throughput rate.
	TestLatency TestKind = "latency"
	// TestFrameLoss is RFC 2544 §26.3: the loss curve from the maximum rate down.
	TestFrameLoss TestKind = "frameLoss"
	// TestBackToBack is RFC 2544 §26.4: the longest burst at minimum gap forwarded without loss.
	TestBackToBack TestKind = "backToBack"
	// TestImixThroughput is the throughput search with an IMIX instead of one frame size.
	TestImixThroughput TestKind = "imixThroughput"
	// TestTimeline holds one load for a long time (seconds to days) and finds every outage in it, to the
	// frame: IPsec rekeys, failovers, soak tests (spec.timeline).
	TestTimeline TestKind = "timeline"
	// TestPathMTU finds the largest frame that crosses the DUT whole in each direction, before every other
	// test: frames of one size at a time at a low rate (spec.pathMTU), the DUT's ICMP "too big" errors
	// taken as a hint and every answer confirmed by a frame that crossed.
	TestPathMTU TestKind = "pathMTU"
)

// Direction says which way traffic flows between the two ports.
// +kubebuilder:validation:Enum=Unidirectional;Bidirectional;BidirectionalBound
type Direction string

const (
	// Unidirectional sends from ports[0] to ports[1] only.
	Unidirectional Direction = "Unidirectional"
	// Bidirectional sends both ways at once; each direction's rate is searched on its own.
	Bidirectional Direction = "Bidirectional"
	// BidirectionalBound sends both ways at one common rate with one combined verdict, for DUTs whose
	// directions share CPU cores.
	BidirectionalBound Direction = "BidirectionalBound"
)

// SearchMethod is the throughput search algorithm.
// +kubebuilder:validation:Enum=Binary;Multistage
type SearchMethod string

const (
	// SearchBinary is the plain RFC 2544 binary search with full-length trials.
	SearchBinary SearchMethod = "Binary"
	// SearchMultistage reuses earlier trials and uses short trials far from the answer, long ones only
	// near it (in the spirit of FD.io CSIT's MLRsearch), then validates with one full-length trial.
	SearchMultistage SearchMethod = "Multistage"
)

// LineRate is the nominal speed of the tester's ports.
// +kubebuilder:validation:Enum="1G";"10G";"25G";"40G";"50G";"100G"
type LineRate string

// FlowField is a header field that varies between flows.
// +kubebuilder:validation:Enum=srcPort;dstPort;srcIP;dstIP
type FlowField string

// PayloadPattern fills the payload after linerate's 18-byte tag.
// +kubebuilder:validation:Enum=Zeros;Random;Incrementing
type PayloadPattern string

// FragmentedFrames is what a frame that arrived in fragments counts as.
// +kubebuilder:validation:Enum=Received;Lost
type FragmentedFrames string

const (
	// FragmentedReceived counts a frame every fragment of which arrived as received (the results say how
	// many came so).
	FragmentedReceived FragmentedFrames = "Received"
	// FragmentedLost counts every frame that arrived in fragments as lost: for a DUT that must carry the
	// frames whole.
	FragmentedLost FragmentedFrames = "Lost"
)

// PortDriver is how the tester pod drives a port.
// +kubebuilder:validation:Enum=vfio-pci;af_packet;af_xdp
type PortDriver string

const (
	// DriverVFIO drives an SR-IOV VF bound to vfio-pci, found from the device plugin's environment.
	DriverVFIO PortDriver = "vfio-pci"
	// DriverAFPacket drives a kernel interface in the pod (e.g. a Multus macvlan or host-device network).
	DriverAFPacket PortDriver = "af_packet"
	// DriverAFXDP drives a kernel interface through AF_XDP.
	DriverAFXDP PortDriver = "af_xdp"
)

// Percent is a decimal number of percent between 0 and 100, e.g. "0", "0.5", "99.9".
// +kubebuilder:validation:Pattern=`^(100(\.0+)?|[0-9]{1,2}(\.[0-9]+)?)$`
// +kubebuilder:validation:MaxLength=12
type Percent string

// TrafficTestSpec describes one benchmark of a device under test.
// +kubebuilder:validation:XValidation:rule="!(has(self.frameSizes) && has(self.ipPacketSizes))",message="frameSizes and ipPacketSizes are two ways to give the same thing: set only one"
// +kubebuilder:validation:XValidation:rule="self.tests.exists(t, t == 'imixThroughput') == has(self.imix)",message="imix must be set exactly when tests includes imixThroughput"
// +kubebuilder:validation:XValidation:rule="!(has(self.frameSizes) || has(self.ipPacketSizes)) || self.tests.exists(t, t != 'imixThroughput')",message="frameSizes/ipPacketSizes are given but tests only has imixThroughput, which uses imix: remove them or add a per-size test"
// +kubebuilder:validation:XValidation:rule="!has(self.frameSizes) || !has(self.dut.maxFrameSize) || self.frameSizes.all(s, s <= self.dut.maxFrameSize)",message="frameSizes: every size must be at most dut.maxFrameSize"
// +kubebuilder:validation:XValidation:rule="!has(self.ipPacketSizes) || !has(self.dut.maxFrameSize) || self.ipPacketSizes.all(s, s + 18 + (has(self.traffic.vlan) ? 4 : 0) <= self.dut.maxFrameSize)",message="ipPacketSizes: every size plus Ethernet header and FCS (18 B, 22 B with VLAN) must be at most dut.maxFrameSize"
// +kubebuilder:validation:XValidation:rule="!has(self.imix) || !has(self.imix.entries) || !has(self.dut.maxFrameSize) || self.imix.entries.all(e, e.frameSize <= self.dut.maxFrameSize)",message="imix.entries: every frameSize must be at most dut.maxFrameSize"
// +kubebuilder:validation:XValidation:rule="!(has(self.traffic.dontFragment) && !self.traffic.dontFragment && self.tests.exists(t, t == 'timeline'))",message="traffic.dontFragment false is not for the timeline test: its bins count a frame by its first fragment, whole or not",fieldPath=".traffic.dontFragment"
// +kubebuilder:validation:XValidation:rule="!(has(self.traffic.dontFragment) && !self.traffic.dontFragment && (self.tests.exists(t, t == 'pathMTU') || (has(self.traffic.fragmentedFrames) && self.traffic.fragmentedFrames == 'Lost')) && ((has(self.ports[1].driver) && self.ports[1].driver == 'af_packet') || (has(self.ports[0].driver) && self.ports[0].driver == 'af_packet' && (!has(self.traffic.direction) || self.traffic.direction != 'Unidirectional'))))",message="traffic.dontFragment false with the pathMTU test or traffic.fragmentedFrames Lost needs receiving ports that see fragments (vfio-pci or af_xdp): an af_packet port's kernel socket reassembles them before the tester sees any",fieldPath=".traffic.dontFragment"
// +kubebuilder:validation:XValidation:rule="self.ports[0].name != self.ports[1].name",message="ports: the two ports need distinct names"
// +kubebuilder:validation:XValidation:rule="(has(self.ports[0].node) && has(self.ports[1].node) && size(self.ports[0].node) > 0 && size(self.ports[1].node) > 0 && self.ports[0].node != self.ports[1].node) || ((has(self.ports[0].driver) ? self.ports[0].driver : 'vfio-pci') == 'vfio-pci' && !(has(self.ports[0].network) && size(self.ports[0].network) > 0) ? 'vfio0' : (has(self.ports[0].interface) && size(self.ports[0].interface) > 0 ? self.ports[0].interface : 'net1')) != ((has(self.ports[1].driver) ? self.ports[1].driver : 'vfio-pci') == 'vfio-pci' && !(has(self.ports[1].network) && size(self.ports[1].network) > 0) ? 'vfio1' : (has(self.ports[1].interface) && size(self.ports[1].interface) > 0 ? self.ports[1].interface : 'net2'))",message="ports[].interface: both ports would use one interface of one tester pod (as named, or Multus's net1 and net2 when not), where each takes a share of the other's frames: give each port its own interface, or pin the ports to two different nodes (ports[].node)",fieldPath=".ports"
// +kubebuilder:validation:XValidation:rule="!has(self.tester) || !has(self.tester.calibration) || !has(self.tester.calibration.measure) || !self.tester.calibration.measure || !(has(self.expectations) || has(self.baseline) || has(self.previousRun))",message="tester.calibration.measure: a calibration run measures the tester with its ports joined, not a DUT: remove expectations, baseline and previousRun",fieldPath=".tester.calibration.measure"
// +kubebuilder:validation:XValidation:rule="self.ports.all(p, !has(p.address) || !isCIDR(p.address) || cidr(p.address).ip().family() == (has(self.traffic.ipVersion) ? self.traffic.ipVersion : 4))",message="ports[].address: every address must be of traffic.ipVersion (4 unless set)",fieldPath=".ports"
// +kubebuilder:validation:XValidation:rule="self.ports.all(p, !has(p.gateway) || !isIP(p.gateway) || ip(p.gateway).family() == (has(self.traffic.ipVersion) ? self.traffic.ipVersion : 4))",message="ports[].gateway: every gateway must be of traffic.ipVersion (4 unless set)",fieldPath=".ports"
// +kubebuilder:validation:XValidation:rule="!has(self.frameSizes) || !(has(self.traffic.ipVersion) && self.traffic.ipVersion == 6) || self.frameSizes.all(s, s >= 84 + (has(self.traffic.vlan) ? 4 : 0))",message="frameSizes: IPv6/UDP frames with linerate's 18 B tag need at least 84 B (88 B with VLAN)"
// +kubebuilder:validation:XValidation:rule="!has(self.frameSizes) || !has(self.traffic.vlan) || self.frameSizes.all(s, s >= 68)",message="frameSizes: with a VLAN tag the smallest frame is 68 B"
type TrafficTestSpec struct {
	// tests to run, in RFC 2544 order whatever the order given here. Latency, frameLoss and backToBack
	// use the throughput result of the same frame size, so throughput is run for them when missing.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=7
	// +listType=set
	// +required
	Tests []TestKind `json:"tests"`

	// frameSizes are Ethernet frame sizes in bytes as RFC 2544 counts them: from destination MAC to FCS,
	// VLAN tag included. Defaults to the RFC 2544 set 64, 128, 256, 512, 1024, 1280, 1518 when neither
	// this nor ipPacketSizes is given.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:Minimum=64
	// +kubebuilder:validation:items:Maximum=9216
	// +listType=set
	// +optional
	FrameSizes []int32 `json:"frameSizes,omitempty"`

	// ipPacketSizes are IP packet sizes in bytes (what an MTU limits: IP header to end of payload). The
	// frame on the wire is 18 B larger (Ethernet header + FCS), 22 B with a VLAN tag.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:Minimum=46
	// +kubebuilder:validation:items:Maximum=9194
	// +listType=set
	// +optional
	IPPacketSizes []int32 `json:"ipPacketSizes,omitempty"`

	// imix is the frame size mix of the imixThroughput test.
	// +optional
	Imix *ImixSource `json:"imix,omitempty"`

	// durations of the phases of every trial.
	// +kubebuilder:default={}
	// +optional
	Durations Durations `json:"durations,omitzero"`

	// throughput search parameters (also used by imixThroughput).
	// +kubebuilder:default={}
	// +optional
	Throughput ThroughputParams `json:"throughput,omitzero"`

	// latency test parameters.
	// +kubebuilder:default={}
	// +optional
	Latency LatencyParams `json:"latency,omitzero"`

	// frameLoss test parameters.
	// +kubebuilder:default={}
	// +optional
	FrameLoss FrameLossParams `json:"frameLoss,omitzero"`

	// backToBack test parameters.
	// +kubebuilder:default={}
	// +optional
	BackToBack BackToBackParams `json:"backToBack,omitzero"`

	// timeline test parameters: the load held, for how long, and how outages are counted.
	// +kubebuilder:default={}
	// +optional
	Timeline TimelineParams `json:"timeline,omitzero"`

	// pathMTU tunes the path MTU finder (tests: pathMTU).
	// +optional
	PathMTU PathMTUParams `json:"pathMTU,omitzero"`

	// traffic is what the frames look like and where they go.
	// +kubebuilder:default={}
	// +optional
	Traffic TrafficParams `json:"traffic,omitzero"`

	// ports are the tester's two ports, each wired to one side of the DUT. Traffic of a unidirectional
	// test goes from ports[0] to ports[1].
	// +kubebuilder:validation:MinItems=2
	// +kubebuilder:validation:MaxItems=2
	// +listType=map
	// +listMapKey=name
	// +required
	Ports []PortSpec `json:"ports"`

	// tester places and sizes the tester pod(s).
	// +kubebuilder:default={}
	// +optional
	Tester TesterSpec `json:"tester,omitzero"`

	// dut describes the device under test; it is carried into the results.
	// +kubebuilder:default={}
	// +optional
	DUT DUTSpec `json:"dut,omitzero"`

	// baseline names another TrafficTest in this namespace (e.g. the same path without encryption) whose
	// throughput results the penalty is reported against.
	// +optional
	Baseline *LocalTestReference `json:"baseline,omitempty"`

	// previousRun names an earlier run of the same measurement in this namespace (a TrafficTestSchedule
	// sets it to its last passed run): the NDR and latency of this run are compared with it per frame size
	// and direction (status.results.change), and expectations.maxNDRDrop judges the change.
	// +optional
	PreviousRun *LocalTestReference `json:"previousRun,omitempty"`

	// priority orders the queue of a shared testbed (DUT, port network or device resource): a waiting test
	// of higher priority starts before waiting tests of lower priority, whatever their age; equal
	// priorities go in creation order. A test that runs is never stopped for one of higher priority.
	// +kubebuilder:validation:Minimum=-1000
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Priority int32 `json:"priority,omitempty"`

	// expectations turn results into a Passed/Failed verdict for regression testing.
	// +optional
	Expectations *Expectations `json:"expectations,omitempty"`

	// suspend keeps the test from starting, or stops a running one (its pods are deleted, measured
	// results are kept); setting it back to false resumes the run after its last complete step (one test
	// at one frame size): a step under way is measured again from its start, its earlier trial records are
	// kept. A spec that changed what it measures while suspended starts from the beginning.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// cancel ends the test for good with the phase Failed and the reason Cancelled, keeping what was
	// measured.
	// +optional
	Cancel bool `json:"cancel,omitempty"`

	// activeDeadlineSeconds bounds the whole run; past it the test fails with DeadlineExceeded.
	// +kubebuilder:validation:Minimum=1
	// +optional
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`

	// ttlSecondsAfterFinished deletes the finished TrafficTest (and everything it owns) after this time.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// ImixSource is an IMIX given by reference or inline.
// +kubebuilder:validation:XValidation:rule="has(self.profileRef) != has(self.entries)",message="imix: give either profileRef or entries, not both"
type ImixSource struct {
	// profileRef names an ImixProfile in the same namespace.
	// +optional
	ProfileRef *LocalObjectReference `json:"profileRef,omitempty"`
	// entries define the mix inline.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	Entries []ImixEntry `json:"entries,omitempty"`
	// order of the inline mix.
	// +optional
	Order ImixOrder `json:"order,omitempty"`
	// seed of the inline mix's Random order.
	// +optional
	Seed int64 `json:"seed,omitempty"`
}

// LocalObjectReference names an object in the same namespace.
type LocalObjectReference struct {
	// name of the object, in the TrafficTest's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
}

// LocalTestReference names another TrafficTest in the same namespace.
type LocalTestReference struct {
	// name of the other TrafficTest, in the same namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
}

// Durations of the phases of a trial. RFC 2544 asks for 60 s trials; searches may use shorter ones as
// long as the final answer is validated with a full-length trial.
// +kubebuilder:validation:XValidation:rule="!has(self.searchTrial) || !has(self.validationTrial) || duration(self.searchTrial) <= duration(self.validationTrial)",message="durations: searchTrial must not be longer than validationTrial"
type Durations struct {
	// searchTrial is the length of the short trials of the throughput search.
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="must be longer than 0s"
	// +kubebuilder:default="10s"
	// +optional
	SearchTrial metav1.Duration `json:"searchTrial,omitzero"`
	// validationTrial is the length of the final full-length throughput trial (RFC 2544: 60 s).
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="must be longer than 0s"
	// +kubebuilder:default="60s"
	// +optional
	ValidationTrial metav1.Duration `json:"validationTrial,omitzero"`
	// latencyTrial is the length of each latency repetition (RFC 2544: 120 s).
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="must be longer than 0s"
	// +kubebuilder:default="120s"
	// +optional
	LatencyTrial metav1.Duration `json:"latencyTrial,omitzero"`
	// backToBackTrial bounds each back-to-back burst trial including drain (RFC 2544: at least 2 s).
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="must be longer than 0s"
	// +kubebuilder:default="2s"
	// +optional
	BackToBackTrial metav1.Duration `json:"backToBackTrial,omitzero"`
	// warmUp sends a few frames of every flow before each trial so the DUT learns addresses and flows.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s')",message="must not be negative"
	// +kubebuilder:default="1s"
	// +optional
	WarmUp metav1.Duration `json:"warmUp,omitzero"`
	// drain is how long late frames are still counted after sending stops (RFC 2544: 2 s).
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s')",message="must not be negative"
	// +kubebuilder:default="2s"
	// +optional
	Drain metav1.Duration `json:"drain,omitzero"`
	// dutRest is the pause between trials (RFC 2544: 5 s). A trial begins only once nothing has arrived
	// from the DUT for this long (at most 10 s more): a DUT that queues deeply is still forwarding the
	// trial before, and the trial records say how much longer it rested (restExtendedS).
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s')",message="must not be negative"
	// +kubebuilder:default="5s"
	// +optional
	DUTRest metav1.Duration `json:"dutRest,omitzero"`
}

// ThroughputParams tune the throughput search.
// +kubebuilder:validation:XValidation:rule="!has(self.goal) || !has(self.method) || self.method != 'Binary'",message="throughput.goal applies to the Multistage search; Binary is RFC 2544's own bisection"
// +kubebuilder:validation:XValidation:rule="!has(self.pdrLossTolerance) || double(self.pdrLossTolerance) > (has(self.lossTolerance) ? double(self.lossTolerance) : 0.0)",message="throughput.pdrLossTolerance must be larger than throughput.lossTolerance"
// +kubebuilder:validation:XValidation:rule="!has(self.resolution) || double(self.resolution) > 0.0",message="throughput.resolution must be larger than 0"
// +kubebuilder:validation:XValidation:rule="!has(self.maxLatencyPercentile) || has(self.maxLatency)",message="throughput.maxLatencyPercentile is the percentile throughput.maxLatency bounds: give maxLatency too"
type ThroughputParams struct {
	// lossTolerance is the loss, in percent of offered frames, a trial may have and still pass
	// (RFC 2544: 0). The answer at this tolerance is the NDR.
	// +kubebuilder:default="0"
	// +optional
	LossTolerance Percent `json:"lossTolerance,omitempty"`
	// pdrLossTolerance is the loss, in percent, of a partial drop rate (PDR) reported next to the NDR: the
	// highest rate losing at most this much, found in the same search. Unset: no PDR, except under the CSIT
	// goal preset, whose PDR is at 0.5.
	// +optional
	PDRLossTolerance Percent `json:"pdrLossTolerance,omitempty"`
	// resolution is the precision of the search in percent of line rate (unless throughput.goal.width sets a
	// relative one), and the low end of the rates it searches.
	// +kubebuilder:default="0.5"
	// +optional
	Resolution Percent `json:"resolution,omitempty"`
	// method is the search algorithm.
	// +kubebuilder:default=Multistage
	// +optional
	Method SearchMethod `json:"method,omitempty"`
	// repetitions of the whole search per frame size; results report mean, deviation, min and max.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	Repetitions int32 `json:"repetitions,omitempty"`
	// maxRate is where the search starts, in percent of line rate.
	// +kubebuilder:default="100"
	// +optional
	MaxRate Percent `json:"maxRate,omitempty"`
	// goal is what the Multistage search must establish at its answer, in the terms of RFC 9971
	// (MLRsearch). Unset: RFC 2544 strict. Its loss ratio is lossTolerance (pdrLossTolerance for the PDR)
	// and its width is goal.width when set, else resolution.
	// +optional
	Goal *SearchGoal `json:"goal,omitempty"`
	// maxLatency bounds the throughput by latency as well as by loss (the NDR under a latency bound, as
	// TRex's NDR bench finds it): a trial passes only when the maxLatencyPercentile of its frames' latency is
	// at most this too. A DUT that queues what it cannot forward (a userspace gateway) loses nothing in a
	// short trial at a rate it cannot sustain, while its queue grows: the bound finds the rate below that.
	// Each row says which bound it (boundBy). Unset: loss alone (RFC 2544).
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="throughput.maxLatency must be positive"
	// +optional
	MaxLatency *metav1.Duration `json:"maxLatency,omitempty"`
	// maxLatencyPercentile is the percentile of a trial's latency that maxLatency bounds ("100": the
	// largest). Default 99.
	// +kubebuilder:validation:Enum="50";"90";"99";"99.9";"99.99";"100"
	// +optional
	MaxLatencyPercentile string `json:"maxLatencyPercentile,omitempty"`
}

// GoalPreset names a set of search goal settings.
// +kubebuilder:validation:Enum=RFC2544;CSIT
type GoalPreset string

const (
	// GoalRFC2544 is RFC 2544's throughput: the answer is a rate a full-length trial (durations.validationTrial)
	// passed at, with a full-length trial within the resolution above it losing more than the tolerance;
	// short search trials only steer the search (a row names a rate at or below its NDR where one lost).
	GoalRFC2544 GoalPreset = "RFC2544"
	// GoalCSIT is FD.io CSIT's NDR/PDR goal: 1 s trials, 21 s of them decide a rate, up to half of that
	// time may lose more than the tolerance at the answer, the search is done at a relative width of 0.5 %
	// of the upper bound, and a PDR at 0.5 % loss is searched beside the NDR unless pdrLossTolerance is set.
	GoalCSIT GoalPreset = "CSIT"
)

// SearchGoal is a search goal in the terms of RFC 9971: a rate is a lower bound of the answer once its
// trials show the DUT keeps within the loss tolerance for all but exceedRatio of durationSum, counting
// only trials of at least finalTrialDuration as full-length, and an upper bound once they show it does not.
// +kubebuilder:validation:XValidation:rule="!has(self.exceedRatio) || double(self.exceedRatio) < 100.0",message="throughput.goal.exceedRatio must be less than 100"
// +kubebuilder:validation:XValidation:rule="!has(self.width) || (double(self.width) >= 0.01 && double(self.width) < 100.0)",message="throughput.goal.width must be at least 0.01 and less than 100 (percent of the upper bound)"
type SearchGoal struct {
	// preset fills the settings not given: RFC2544 (the default) or CSIT.
	// +optional
	Preset GoalPreset `json:"preset,omitempty"`
	// finalTrialDuration is how long a trial must be to count as full-length (RFC2544:
	// durations.validationTrial; CSIT: 1s).
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="must be longer than 0s"
	// +optional
	FinalTrialDuration *metav1.Duration `json:"finalTrialDuration,omitempty"`
	// durationSum is how much trial time at one rate decides it (RFC2544: finalTrialDuration; CSIT: 21s).
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="must be longer than 0s"
	// +optional
	DurationSum *metav1.Duration `json:"durationSum,omitempty"`
	// exceedRatio is the share of durationSum, in percent, that may lose more than the tolerance at the
	// answer (RFC2544: 0; CSIT: 50).
	// +optional
	ExceedRatio Percent `json:"exceedRatio,omitempty"`
	// width is the goal width (RFC 9971 leaves absolute or relative to the implementation; this is FD.io
	// CSIT's relative width), in percent of the upper bound: the search is done once its lower bound L and
	// upper bound U satisfy (U - L) / U <= width (RFC2544: unset; CSIT: 0.5). Set, it stops the search in
	// place of throughput.resolution: 0.5 brackets an NDR at 5 % of line rate to 0.025 % of line rate, one
	// at 90 % to 0.45 %. Below the resolution (the low end of the rates searched) the bracket asked for is
	// width percent of the resolution. At least 0.01: finer brackets than rates can be told apart waste the
	// search's trials. A search that runs out of trials first is undetermined. Unset: resolution, an
	// absolute width in percent of line rate, stops the search, as in RFC 2544's bisection.
	// +optional
	Width Percent `json:"width,omitempty"`
}

// LatencyParams tune the latency test.
type LatencyParams struct {
	// repetitions of the latency trial (RFC 2544: at least 20).
	// +kubebuilder:default=20
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Repetitions int32 `json:"repetitions,omitempty"`
	// percentOfNDR are the loads the latency is measured at, each in percent of the throughput (NDR) the same
	// run measures at the same frame size and direction, and each with its own repetitions: "100" is the NDR
	// itself (RFC 2544 §26.2), "0" a sparse probe that shows an idle DUT's latency (1 % of the NDR, raised to
	// give a trial RFC 8219's 500 timestamped frames up to a tenth of the NDR, at most 1,000 frames/s).
	// ["0", "10", "50", "90", "100"] draws latency against load as FD.io CSIT does (CSIT takes its fractions
	// of the PDR; these are of the NDR, which RFC 2544's latency is measured at); every point is under RFC 8219's rules (a repetition that lost more than the loss tolerance is invalid).
	// Default: ["100"], RFC 2544's single point; under throughput.goal.preset CSIT, ["0", "10", "50", "90", "100"].
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=11
	// +kubebuilder:validation:XValidation:rule="self.all(x, self.exists_one(y, double(y) == double(x)))",message="latency.percentOfNDR: each load once"
	// +listType=atomic
	// +optional
	PercentOfNDR []Percent `json:"percentOfNDR,omitempty"`
}

// FrameLossParams tune the frame loss test.
// +kubebuilder:validation:XValidation:rule="!has(self.step) || (double(self.step) > 0.0 && double(self.step) <= 10.0)",message="frameLoss.step must be more than 0 and at most 10 (percent of line rate, RFC 2544 §26.3)"
type FrameLossParams struct {
	// step between rates, in percent of line rate (RFC 2544: at most 10).
	// +kubebuilder:default="10"
	// +optional
	Step Percent `json:"step,omitempty"`
}

// BackToBackParams tune the back-to-back test.
// +kubebuilder:validation:XValidation:rule="!has(self.resolution) || !has(self.maxFrames) || self.resolution < self.maxFrames",message="backToBack.resolution must be smaller than backToBack.maxFrames"
type BackToBackParams struct {
	// maxFrames is the longest burst tried.
	// +kubebuilder:default=100000
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=100000000
	// +optional
	MaxFrames int64 `json:"maxFrames,omitempty"`
	// resolution of the burst length search, in frames.
	// +kubebuilder:default=16
	// +kubebuilder:validation:Minimum=1
	// +optional
	Resolution int64 `json:"resolution,omitempty"`
	// repetitions of the search (RFC 2544: 50), averaged.
	// +kubebuilder:default=50
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Repetitions int32 `json:"repetitions,omitempty"`
}

// PathMTUParams tune the path MTU finder: frames of one size at a time, at a low rate, between the
// smallest frame and maxFrameSize.
// +kubebuilder:validation:XValidation:rule="!has(self.trial) || (duration(self.trial) >= duration('100ms') && duration(self.trial) <= duration('10s'))",message="pathMTU.trial must be from 100ms to 10s",fieldPath=".trial"
type PathMTUParams struct {
	// maxFrameSize is the largest frame tried, FCS (and any VLAN tag) included. Default: 1518 B, or
	// dut.maxFrameSize where smaller. The tester's own ports must send it: a port at MTU 1500 sends frames
	// up to 1518 B, and preflight refuses a larger one rather than let the tester's limit pass for the
	// DUT's.
	// +kubebuilder:validation:Minimum=64
	// +kubebuilder:validation:Maximum=9216
	// +optional
	MaxFrameSize *int32 `json:"maxFrameSize,omitempty"`
	// framesPerSecond each probe sends: low, so that only the size decides.
	// +kubebuilder:default=1000
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000
	// +optional
	FramesPerSecond int64 `json:"framesPerSecond,omitempty"`
	// trial is how long each probe sends (warm-up and drain as spec.durations).
	// +kubebuilder:default="500ms"
	// +optional
	Trial *metav1.Duration `json:"trial,omitempty"`
}

// TimelineParams tune the timeline test: one load held for duration, every frame judged received or lost
// settle after it was due, counted in bins of bin by when it was due, and every run of at least
// outageMinFrames consecutive losses reported as an outage. The load is one of percentOfLineRate,
// framesPerSecond, l2BitsPerSecond, l1BitsPerSecond or percentOfNDR (of the throughput measured at the
// same frame size in the same run).
// +kubebuilder:validation:XValidation:rule="(has(self.percentOfLineRate) ? 1 : 0) + (has(self.framesPerSecond) ? 1 : 0) + (has(self.l2BitsPerSecond) ? 1 : 0) + (has(self.l1BitsPerSecond) ? 1 : 0) + (has(self.percentOfNDR) ? 1 : 0) <= 1",message="timeline: give the load one way: percentOfLineRate, framesPerSecond, l2BitsPerSecond, l1BitsPerSecond or percentOfNDR"
// +kubebuilder:validation:XValidation:rule="!has(self.bin) || (duration(self.bin) >= duration('10ms') && duration(self.bin) <= duration('10s'))",message="timeline.bin must be from 10ms to 10s",fieldPath=".bin"
// +kubebuilder:validation:XValidation:rule="!has(self.settle) || (duration(self.settle) >= duration('10ms') && duration(self.settle) <= duration('60s'))",message="timeline.settle must be from 10ms to 60s",fieldPath=".settle"
// +kubebuilder:validation:XValidation:rule="!has(self.duration) || (duration(self.duration) >= duration('1s') && duration(self.duration) <= duration('720h'))",message="timeline.duration must be from 1s to 720h (30 days)",fieldPath=".duration"
type TimelineParams struct {
	// duration the load is held (warm-up and drain come on top).
	// +kubebuilder:default="60s"
	// +optional
	Duration metav1.Duration `json:"duration,omitzero"`
	// percentOfLineRate is the load in percent of line rate (L1). The default when no load is given: 50.
	// +optional
	PercentOfLineRate Percent `json:"percentOfLineRate,omitempty"`
	// framesPerSecond is the load in frames per second, per direction.
	// +kubebuilder:validation:Minimum=1
	// +optional
	FramesPerSecond int64 `json:"framesPerSecond,omitempty"`
	// l2BitsPerSecond is the load in bits per second counting the frames' bytes (FCS included), per
	// direction, e.g. 2G.
	// +optional
	L2BitsPerSecond *resource.Quantity `json:"l2BitsPerSecond,omitempty"`
	// l1BitsPerSecond is the load in bits per second counting 20 B of preamble and gap more per frame, as
	// the line rate does, per direction.
	// +optional
	L1BitsPerSecond *resource.Quantity `json:"l1BitsPerSecond,omitempty"`
	// percentOfNDR is the load in percent of the throughput (NDR) the same run measures at the same frame
	// size and direction (throughput is then run for it).
	// +optional
	PercentOfNDR Percent `json:"percentOfNDR,omitempty"`
	// frameSize of the held load, in bytes as RFC 2544 counts them. Default: the first of the run's frame
	// sizes.
	// +kubebuilder:validation:Minimum=64
	// +kubebuilder:validation:Maximum=9216
	// +optional
	FrameSize int32 `json:"frameSize,omitempty"`
	// bin is the width of a counting bin (by when each frame was due).
	// +kubebuilder:default="100ms"
	// +optional
	Bin metav1.Duration `json:"bin,omitzero"`
	// settle is how long after it was due a frame is judged: one arriving later is lost in its bin (and
	// counted as late after settle). It must be longer than tester.validity.maxWorkerGap (the run is
	// refused otherwise), and should be longer than that gap and the DUT's latency together: the engine
	// sees a pause of its receiver only past that gap, and the frames waiting for it must not be judged
	// first.
	// +kubebuilder:default="200ms"
	// +optional
	Settle metav1.Duration `json:"settle,omitzero"`
	// outageMinFrames is the shortest run of consecutive lost frames that is an outage; shorter runs are
	// scattered loss.
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=2
	// +optional
	OutageMinFrames int64 `json:"outageMinFrames,omitempty"`
	// maxTesterSpoiled is the share of bins, in percent, the tester may spoil (its own lag, pauses or
	// drops: those bins are never the DUT's) before the result is Inconclusive.
	// +kubebuilder:default="1"
	// +optional
	MaxTesterSpoiled Percent `json:"maxTesterSpoiled,omitempty"`
}

// TrafficParams describe the generated frames.
// +kubebuilder:validation:XValidation:rule="!has(self.dontFragment) || self.dontFragment || !has(self.ipVersion) || self.ipVersion == 4",message="dontFragment: only IPv4 has a DF bit to clear (a hop never fragments an IPv6 packet; it answers packet too big)",fieldPath=".dontFragment"
type TrafficParams struct {
	// direction of the traffic.
	// +kubebuilder:default=Bidirectional
	// +optional
	Direction Direction `json:"direction,omitempty"`
	// lineRate of the tester's ports; all percentages are of this rate.
	// +kubebuilder:default="10G"
	// +optional
	LineRate LineRate `json:"lineRate,omitempty"`
	// ipVersion of the frames.
	// +kubebuilder:validation:Enum=4;6
	// +kubebuilder:default=4
	// +optional
	IPVersion int32 `json:"ipVersion,omitempty"`
	// flows per direction; more flows spread a multi-core DUT's work over its cores (RSS).
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65536
	// +optional
	Flows int32 `json:"flows,omitempty"`
	// vary lists the header fields that differ between flows.
	// +kubebuilder:validation:MaxItems=4
	// +listType=set
	// +optional
	Vary []FlowField `json:"vary,omitempty"`
	// srcPort is the UDP source port of the first flow.
	// +kubebuilder:default=49152
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	SrcPort int32 `json:"srcPort,omitempty"`
	// dstPort is the UDP destination port of the first flow.
	// +kubebuilder:default=49153
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	DstPort int32 `json:"dstPort,omitempty"`
	// vlan tags every frame with this VLAN ID.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4094
	// +optional
	VLAN *int32 `json:"vlan,omitempty"`
	// dscp of every frame.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=63
	// +optional
	DSCP int32 `json:"dscp,omitempty"`
	// payload pattern after the tag; matters for compressing DUTs.
	// +kubebuilder:default=Zeros
	// +optional
	Payload PayloadPattern `json:"payload,omitempty"`
	// dontFragment sets the IPv4 DF bit on every frame (the default): a hop whose MTU is smaller than a frame
	// refuses it and says so with ICMP "fragmentation needed", which the results report. false lets the DUT
	// fragment IPv4 frames instead; the results then count the frames that arrived in fragments, those
	// whole, and the fragments (fragmentedFrames says what such a frame counts as).
	// +kubebuilder:default=true
	// +optional
	DontFragment *bool `json:"dontFragment,omitempty"`
	// fragmentedFrames is what a frame that arrived in fragments, every one of them, counts as: Received (the
	// default; the results say how many came so) or Lost (a DUT that must carry the frames whole fails). A
	// frame a fragment of which never arrived is lost either way.
	// +kubebuilder:default=Received
	// +optional
	FragmentedFrames FragmentedFrames `json:"fragmentedFrames,omitempty"`
}

// Fragmentable is whether the DUT may fragment the frames (dontFragment false).
func (t TrafficParams) Fragmentable() bool { return t.DontFragment != nil && !*t.DontFragment }

// PortSpec is one tester port and how it reaches the DUT.
// +kubebuilder:validation:XValidation:rule="!(has(self.gateway) && has(self.peerMAC))",message="a port has either a gateway (routed DUT, resolved by ARP) or a static peerMAC (transparent DUT), not both"
// +kubebuilder:validation:XValidation:rule="self.driver != 'vfio-pci' || has(self.resource)",message="resource: a vfio-pci port needs the SR-IOV device plugin resource name"
// +kubebuilder:validation:XValidation:rule="!has(self.address) || !has(self.gateway) || !isCIDR(self.address) || !isIP(self.gateway) || cidr(self.address).containsIP(self.gateway)",message="gateway: the DUT's address must lie in the port's subnet (address)",fieldPath=".gateway"
type PortSpec struct {
	// name of the port, e.g. west or east.
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$`
	// +required
	Name string `json:"name"`
	// network is the Multus NetworkAttachmentDefinition ([namespace/]name) that attaches the port.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Network string `json:"network,omitempty"`
	// resource is the device plugin resource of the SR-IOV VF, e.g. intel.com/intel_sriov_dpdk.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Resource string `json:"resource,omitempty"`
	// driver says how the tester drives the port.
	// +kubebuilder:default=vfio-pci
	// +optional
	Driver PortDriver `json:"driver,omitempty"`
	// interface is the kernel interface inside the tester pod for af_packet and af_xdp ports
	// (Multus names them net1, net2, ...).
	// +kubebuilder:validation:MaxLength=15
	// +optional
	Interface string `json:"interface,omitempty"`
	// address is the port's IPv4 or IPv6 address with prefix length. Defaults follow RFC 2544 Appendix C
	// (198.18.0.0/15): 198.18.1.2/24 and 198.19.1.2/24, for IPv6 2001:2:0:1::2/64 and 2001:2:0:2::2/64.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="isCIDR(self)",message="want an IPv4 or IPv6 address with prefix length, e.g. 198.18.1.2/24 or 2001:2:0:1::2/64"
	// +optional
	Address string `json:"address,omitempty"`
	// gateway is the DUT's address on this port's side (routed DUT). Defaults to .1 of the port subnet
	// unless peerMAC is set.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="want an IPv4 or IPv6 address without prefix length, e.g. 198.18.1.1"
	// +optional
	Gateway string `json:"gateway,omitempty"`
	// peerMAC sends frames to this MAC without ARP (transparent, bump-in-the-wire DUT).
	// +kubebuilder:validation:Pattern=`^([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$`
	// +optional
	PeerMAC string `json:"peerMAC,omitempty"`
	// node pins this port's side of the tester to a node. When the two ports name different nodes the
	// tester runs as two pods, generator and receiver.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Node string `json:"node,omitempty"`
}

// TesterSpec places and sizes the tester pod(s).
type TesterSpec struct {
	// image of the tester (engine + runner). Defaults to the operator's configured tester image.
	// +optional
	Image string `json:"image,omitempty"`
	// nodeSelector for the tester pod(s).
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// tolerations for the tester pod(s).
	// +optional
	// +listType=atomic
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// cpus dedicated to each tester pod (whole CPUs, Guaranteed QoS). DPDK wants one per TX and RX
	// queue plus one for control.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=128
	// +optional
	CPUs int32 `json:"cpus,omitempty"`
	// memory of each tester pod, besides hugepages and the sequence windows: the operator adds a bit per
	// frame of the longest trial at line rate for every stream the pod receives (about 220 MiB per stream for
	// the default 120 s latency trial at 10 Gbit/s), so that every frame is checked for order and
	// duplication.
	// +kubebuilder:default="1Gi"
	// +optional
	Memory resource.Quantity `json:"memory,omitzero"`
	// hugePageSize is 2Mi or 1Gi.
	// +kubebuilder:validation:Enum="2Mi";"1Gi"
	// +kubebuilder:default="2Mi"
	// +optional
	HugePageSize string `json:"hugePageSize,omitempty"`
	// hugePages is the amount of hugepage memory per tester pod.
	// +kubebuilder:default="1Gi"
	// +optional
	HugePages resource.Quantity `json:"hugePages,omitzero"`
	// polling is how the engine's workers wait when nothing is due. Auto: they poll without a pause (like
	// DPDK's own applications) where the pod's CPUs are its own — a Guaranteed pod given whole CPUs by the
	// kubelet's static CPU manager — and sleep until the next frame is due on CPUs they share. Spin: they
	// always poll (a CPU each, the least latency). Sleep: they always sleep when idle, e.g. on a virtual
	// machine whose host takes a vCPU away for milliseconds when all of them are busy.
	// +kubebuilder:validation:Enum=Auto;Spin;Sleep
	// +kubebuilder:default=Auto
	// +optional
	Polling TesterPolling `json:"polling,omitempty"`
	// validity sets when a trial counts as spoiled by the tester instead of measured on the DUT. A spoiled
	// trial is invalid, neither a pass nor a fail of the DUT; it is repeated, and when every repetition is
	// spoiled the tester is taken as the limit at that rate and the result is marked testerLimited. The
	// defaults are met by a tester on dedicated cores; a tester sharing its CPU breaks them, and its results
	// say so instead of blaming the DUT.
	// +optional
	Validity TrialValidity `json:"validity,omitzero"`

	// maxClockOffset makes one-way latency measurable for ports on two nodes (generator and receiver
	// pods): each engine stamps with CLOCK_REALTIME as read at its start and carried on by the TSC, and
	// latency is reported only while the tester finds the two engines' clocks agree within this bound. It
	// checks that itself, before the first trial and after every trial: the measured offset plus half the
	// shortest round trip of its control connection to the other node; every latency result states it.
	// The engines do not follow PTP's corrections while they run, so over a long run the bound grows
	// and latency becomes not measurable. Unset, latency across two nodes is reported as not measurable,
	// never as a number from two clocks.
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s') && duration(self) <= duration('1s')",message="tester.maxClockOffset: give a bound above 0 and at most 1s, e.g. 10us"
	// +optional
	MaxClockOffset *metav1.Duration `json:"maxClockOffset,omitempty"`

	// calibration is this tester's own ceiling and latency floor, measured by `linerate calibrate` with
	// its ports joined to each other (two VFs of one PF through the NIC's switch, or a cable) and stored
	// in a ConfigMap: each throughput row states its margin to the ceiling, and a row within
	// ceilingMargin of it is testerLimited, never reported as the DUT's. The test waits for the
	// ConfigMap and refuses one that holds no calibration.
	// +optional
	Calibration *TesterCalibration `json:"calibration,omitempty"`
}

// TesterPolling is how the engine's workers wait when nothing is due.
type TesterPolling string

const (
	PollingAuto  TesterPolling = "Auto"
	PollingSpin  TesterPolling = "Spin"
	PollingSleep TesterPolling = "Sleep"
)

// TesterCalibration names where the tester's calibration is kept.
// +kubebuilder:validation:XValidation:rule="!has(self.ceilingMargin) || (double(self.ceilingMargin) > 0.0 && double(self.ceilingMargin) < 100.0)",message="tester.calibration.ceilingMargin must be more than 0 and less than 100 (percent of the ceiling)"
type TesterCalibration struct {
	// configMapName is the ConfigMap, in the TrafficTest's namespace, whose key calibration.json holds
	// the file `linerate calibrate` wrote (kubectl create configmap NAME --from-file=calibration.json).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +required
	ConfigMapName string `json:"configMapName"`
	// ceilingMargin is how close to the ceiling, in percent of it, an NDR is the tester's.
	// +kubebuilder:default="3"
	// +optional
	CeilingMargin Percent `json:"ceilingMargin,omitempty"`
	// measure makes this TrafficTest the calibration run that writes the ConfigMap, as `linerate
	// calibrate` does on a node: its ports must be joined to each other with no DUT between them (two VFs
	// of one PF through the NIC's switch, a cable, a bridge; each port sends to the other's MAC, gateways
	// are not used). It runs the throughput searches of its spec, repetitions times, and a latency floor,
	// and, once it succeeds, writes calibration.json into configMapName (created, or replaced). Tests
	// that name the ConfigMap wait for it: apply them with this one and it runs first.
	// +optional
	Measure bool `json:"measure,omitempty"`
	// repetitions of each throughput search of a calibration run: their spread is the tester's own, and
	// a row within it of the ceiling is the tester's.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=20
	// +kubebuilder:default=3
	// +optional
	Repetitions int32 `json:"repetitions,omitempty"`
}

// TrialValidity are the limits of the tester's own health in a trial.
type TrialValidity struct {
	// maxTxLag is how far a stream may fall behind its TX schedule. A stream L behind at r frames/s sends
	// r·L frames back to back once it runs again: a burst the DUT's buffers must absorb, which the paced
	// rate never asked of them.
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="must be longer than 0s"
	// +kubebuilder:default="1ms"
	// +optional
	MaxTxLag metav1.Duration `json:"maxTxLag,omitzero"`
	// maxWorkerGap is the longest a tester worker may pause while a latency trial measures: frames that
	// waited for it carry the wait in their latency. In other trials a longer pause only withholds the
	// trial's latency (its loss counts stand: a pause that dropped frames is caught by the drop counters).
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="must be longer than 0s"
	// +kubebuilder:default="1ms"
	// +optional
	MaxWorkerGap metav1.Duration `json:"maxWorkerGap,omitzero"`
	// maxShortfall is the share of its scheduled frames a stream may fail to send, in percent.
	// +kubebuilder:default="0.1"
	// +optional
	MaxShortfall Percent `json:"maxShortfall,omitempty"`
	// invalidTrialRetries is how often a search repeats a trial the tester spoiled, at the same rate, before
	// it takes the tester as the limit there.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	// +kubebuilder:default=2
	// +optional
	InvalidTrialRetries *int32 `json:"invalidTrialRetries,omitempty"`
}

// DUTSpec describes the device under test.
type DUTSpec struct {
	// name of the device under test, carried into the results and reports.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Name string `json:"name,omitempty"`
	// model of the device under test (hardware or product), carried into the results.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Model string `json:"model,omitempty"`
	// software (and version) running on the device under test, carried into the results.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Software string `json:"software,omitempty"`
	// cipher (or other configuration) under test, e.g. AES-256-GCM.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Cipher string `json:"cipher,omitempty"`
	// notes about this setup, carried into the results and the report.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Notes string `json:"notes,omitempty"`
	// maxFrameSize the DUT accepts; larger frames are refused by the API.
	// +kubebuilder:validation:Minimum=64
	// +kubebuilder:validation:Maximum=9216
	// +optional
	MaxFrameSize *int32 `json:"maxFrameSize,omitempty"`
	// cpu is where the DUT's CPU time is read, through every paced trial: each throughput row then says what
	// the DUT's CPU paid at the NDR (cores busy, µs per kilobyte and per thousand frames) and the diagnosis
	// whether it was the limit.
	// +optional
	CPU *DUTCPUSource `json:"cpu,omitempty"`
}

// DUTCPUSource is where the DUT's CPU time is read: a cgroup by its path, or a pod's.
// +kubebuilder:validation:XValidation:rule="has(self.cgroup) != has(self.pod)",message="dut.cpu: give either cgroup or pod, not both"
type DUTCPUSource struct {
	// cgroup is the DUT's cgroup as /proc/<pid>/cgroup names it (e.g. /system.slice/strongswan.service): its
	// CPU time (cgroup v2 cpu.stat, v1 cpuacct.usage) and its CPU quota. It is read on the node of the pod
	// that runs the test's runner (the one of ports[0]), whose /sys/fs/cgroup the tester pod mounts
	// read-only; `linerate run` reads the local machine's.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:XValidation:rule="!self.contains('..')",message="a cgroup path without '..'"
	// +optional
	Cgroup string `json:"cgroup,omitempty"`
	// pod names a pod in the test's namespace that is the DUT (a CNF: an IPsec gateway, a router): its
	// cgroup, found on its node by its UID, holds all its containers. The test waits for it to run, and
	// its runner runs on the pod's node (ports[0].node, when given, must be that node).
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:MinLength=1
	// +optional
	Pod string `json:"pod,omitempty"`
	// cores the DUT may use when its cgroup has no CPU quota that says so, a decimal string (e.g. "1" for a
	// DUT pinned to one CPU, "0.5"): what its cores busy are judged saturated against. With a quota too,
	// the smaller. Without either, whether the DUT's CPU was the limit is not said.
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	// +kubebuilder:validation:XValidation:rule="double(self) > 0.0",message="dut.cpu.cores must be more than 0"
	// +optional
	Cores string `json:"cores,omitempty"`
}

// Statistic names a latency statistic.
// +kubebuilder:validation:Enum=min;mean;p50;p90;p99;p99.9;p99.99;max
type Statistic string

// Expectations a regression suite sets for the results.
type Expectations struct {
	// minThroughput per frame size (frameSize 0 means every size).
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	MinThroughput []ThroughputExpectation `json:"minThroughput,omitempty"` //nolint:kubeapilinter // arrayofstruct: every field is optional on purpose, and a CEL rule demands one of them
	// maxLatency per frame size (frameSize 0 means every size).
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	MaxLatency []LatencyExpectation `json:"maxLatency,omitempty"`
	// maxPenalty is the largest throughput loss against the baseline, in percent.
	// +optional
	MaxPenalty Percent `json:"maxPenalty,omitempty"`
	// maxNDRDrop is the largest NDR loss against spec.previousRun, in percent of the previous run's NDR,
	// at any frame size and direction both measured (e.g. "5" fails a run that lost more than 5%).
	// +optional
	MaxNDRDrop Percent `json:"maxNDRDrop,omitempty"`
	// minBackToBackFrames is the shortest acceptable back-to-back burst.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinBackToBackFrames *int64 `json:"minBackToBackFrames,omitempty"`
	// timeline bounds what the timeline test may find, in each direction.
	// +optional
	Timeline *TimelineExpectation `json:"timeline,omitempty"`
}

// TimelineExpectation bounds the DUT's outages in a timeline test (the tester's own bins never count).
// +kubebuilder:validation:XValidation:rule="has(self.maxOutages) || has(self.maxOutage) || has(self.maxLoss) || has(self.minAvailability)",message="expectations.timeline: give maxOutages, maxOutage, maxLoss or minAvailability"
type TimelineExpectation struct {
	// maxOutages is the most outages the DUT may have in a direction (0: none at all).
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxOutages *int64 `json:"maxOutages,omitempty"`
	// maxOutage is the longest an outage may last (its frames over the rate), e.g. 50ms.
	// +optional
	MaxOutage *metav1.Duration `json:"maxOutage,omitempty"`
	// maxLoss is the most frames the DUT may lose, in percent of those it was sent.
	// +optional
	MaxLoss Percent `json:"maxLoss,omitempty"`
	// minAvailability is the least share of seconds, in percent, that may not be unavailable time in the
	// ITU-T Y.1564 sense (ten severely errored seconds in a row begin it), e.g. "99.9". Needs a bin that
	// divides a second.
	// +optional
	MinAvailability Percent `json:"minAvailability,omitempty"`
}

// ThroughputExpectation is a lower bound on the throughput at a frame size.
// +kubebuilder:validation:XValidation:rule="has(self.l2BitsPerSecond) || has(self.l1BitsPerSecond) || has(self.framesPerSecond) || has(self.percentOfLineRate)",message="minThroughput: give l2BitsPerSecond, l1BitsPerSecond, framesPerSecond or percentOfLineRate"
type ThroughputExpectation struct {
	// frameSize this applies to; 0 for all sizes (and the IMIX).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=9216
	// +optional
	FrameSize int32 `json:"frameSize,omitempty"`
	// l2BitsPerSecond counts frame bytes (FCS included), e.g. 3500M.
	// +optional
	L2BitsPerSecond *resource.Quantity `json:"l2BitsPerSecond,omitempty"`
	// l1BitsPerSecond counts frame bytes plus 20 B of preamble and gap.
	// +optional
	L1BitsPerSecond *resource.Quantity `json:"l1BitsPerSecond,omitempty"`
	// framesPerSecond the NDR must reach, as a quantity (e.g. 1.2M).
	// +optional
	FramesPerSecond *resource.Quantity `json:"framesPerSecond,omitempty"`
	// percentOfLineRate of traffic.lineRate.
	// +optional
	PercentOfLineRate Percent `json:"percentOfLineRate,omitempty"`
}

// LatencyExpectation is an upper bound on a latency statistic.
type LatencyExpectation struct {
	// frameSize this applies to; 0 for all sizes.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=9216
	// +optional
	FrameSize int32 `json:"frameSize,omitempty"`
	// statistic compared, e.g. p99.
	// +kubebuilder:default=p99
	// +optional
	Statistic Statistic `json:"statistic,omitempty"`
	// max is the bound, e.g. 500us.
	// +required
	Max metav1.Duration `json:"max"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=tt;ttest
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Queue",type=integer,JSONPath=`.status.queue.position`
// +kubebuilder:printcolumn:name="Waiting For",type=string,JSONPath=`.status.queue.waitingFor[0]`
// +kubebuilder:printcolumn:name="Progress",type=string,JSONPath=`.status.progress.summary`
// +kubebuilder:printcolumn:name="Headline",type=string,JSONPath=`.status.headline`
// +kubebuilder:printcolumn:name="Verdict",type=string,JSONPath=`.status.verdict`
// +kubebuilder:printcolumn:name="DUT",type=string,JSONPath=`.spec.dut.name`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// What a run measures is fixed while it runs: one rule per field, so the refusal names the field.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.testerPods) || size(oldSelf.status.testerPods) == 0 || !has(oldSelf.status.phase) || !(oldSelf.status.phase in ['Pending', 'Running']) || (self.spec.tests == oldSelf.spec.tests)",message="spec.tests: a running TrafficTest cannot change what it measures: spec.tests cannot change while its tester pods run (status.testerPods, phase Pending or Running: it would no longer measure what it started measuring); only suspend, cancel, priority, tester, dut (not dut.name), baseline, previousRun, expectations, activeDeadlineSeconds and ttlSecondsAfterFinished may: suspend it first, or delete and re-create it",fieldPath=".spec.tests",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.testerPods) || size(oldSelf.status.testerPods) == 0 || !has(oldSelf.status.phase) || !(oldSelf.status.phase in ['Pending', 'Running']) || (self.spec.ports == oldSelf.spec.ports)",message="spec.ports: a running TrafficTest cannot change what it measures: spec.ports cannot change while its tester pods run (status.testerPods, phase Pending or Running: it would no longer measure what it started measuring); only suspend, cancel, priority, tester, dut (not dut.name), baseline, previousRun, expectations, activeDeadlineSeconds and ttlSecondsAfterFinished may: suspend it first, or delete and re-create it",fieldPath=".spec.ports",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.testerPods) || size(oldSelf.status.testerPods) == 0 || !has(oldSelf.status.phase) || !(oldSelf.status.phase in ['Pending', 'Running']) || duration(self.spec.durations.searchTrial) == duration(oldSelf.spec.durations.searchTrial)",message="spec.durations.searchTrial: a running TrafficTest cannot change what it measures: spec.durations.searchTrial cannot change while its tester pods run (status.testerPods, phase Pending or Running: it would no longer measure what it started measuring); only suspend, cancel, priority, tester, dut (not dut.name), baseline, previousRun, expectations, activeDeadlineSeconds and ttlSecondsAfterFinished may: suspend it first, or delete and re-create it",fieldPath=".spec.durations.searchTrial",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.testerPods) || size(oldSelf.status.testerPods) == 0 || !has(oldSelf.status.phase) || !(oldSelf.status.phase in ['Pending', 'Running']) || duration(self.spec.durations.validationTrial) == duration(oldSelf.spec.durations.validationTrial)",message="spec.durations.validationTrial: a running TrafficTest cannot change what it measures: spec.durations.validationTrial cannot change while its tester pods run (status.testerPods, phase Pending or Running: it would no longer measure what it started measuring); only suspend, cancel, priority, tester, dut (not dut.name), baseline, previousRun, expectations, activeDeadlineSeconds and ttlSecondsAfterFinished may: suspend it first, or delete and re-create it",fieldPath=".spec.durations.validationTrial",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.testerPods) || size(oldSelf.status.testerPods) == 0 || !has(oldSelf.status.phase) || !(oldSelf.status.phase in ['Pending', 'Running']) || duration(self.spec.durations.latencyTrial) == duration(oldSelf.spec.durations.latencyTrial)",message="spec.durations.latencyTrial: a running TrafficTest cannot change what it measures: spec.durations.latencyTrial cannot change while its tester pods run (status.testerPods, phase Pending or Running: it would no longer measure what it started measuring); only suspend, cancel, priority, tester, dut (not dut.name), baseline, previousRun, expectations, activeDeadlineSeconds and ttlSecondsAfterFinished may: suspend it first, or delete and re-create it",fieldPath=".spec.durations.latencyTrial",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.testerPods) || size(oldSelf.status.testerPods) == 0 || !has(oldSelf.status.phase) || !(oldSelf.status.phase in ['Pending', 'Running']) || duration(self.spec.durations.backToBackTrial) == duration(oldSelf.spec.durations.backToBackTrial)",message="spec.durations.backToBackTrial: a running TrafficTest cannot change what it measures: spec.durations.backToBackTrial cannot change while its tester pods run (status.testerPods, phase Pending or Running: it would no longer measure what it started measuring); only suspend, cancel, priority, tester, dut (not dut.name), baseline, previousRun, expectations, activeDeadlineSeconds and ttlSecondsAfterFinished may: suspend it first, or delete and re-create it",fieldPath=".spec.durations.backToBackTrial",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.testerPods) || size(oldSelf.status.testerPods) == 0 || !has(oldSelf.status.phase) || !(oldSelf.status.phase in ['Pending', 'Running']) || duration(self.spec.durations.warmUp) == duration(oldSelf.spec.durations.warmUp)",message="spec.durations.warmUp: a running TrafficTest cannot change what it measures: spec.durations.warmUp cannot change while its tester pods run (status.testerPods, phase Pending or Running: it would no longer measure what it started measuring); only suspend, cancel, priority, tester, dut (not dut.name), baseline, previousRun, expectations, activeDeadlineSeconds and ttlSecondsAfterFinished may: suspend it first, or delete and re-create it",fieldPath=".spec.durations.warmUp",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.testerPods) || size(oldSelf.status.testerPods) == 0 || !has(oldSelf.status.phase) || !(oldSelf.status.phase in ['Pending', 'Running']) || duration(self.spec.durations.drain) == duration(oldSelf.spec.durations.drain)",message="spec.durations.drain: a running TrafficTest cannot change what it measures: spec.durations.drain cannot change while its tester pods run (status.testerPods, phase Pending or Running: it would no longer measure what it started measuring); only suspend, cancel, priority, tester, dut (not dut.name), baseline, previousRun, expectations, activeDeadlineSeconds and ttlSecondsAfterFinished may: suspend it first, or delete and re-create it",fieldPath=".spec.durations.drain",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.testerPods) || size(oldSelf.status.testerPods) == 0 || !has(oldSelf.status.phase) || !(oldSelf.status.phase in ['Pending', 'Running']) || duration(self.spec.durations.dutRest) == duration(oldSelf.spec.durations.dutRest)",message="spec.durations.dutRest: a running TrafficTest cannot change what it measures: spec.durations.dutRest cannot change while its tester pods run (status.testerPods, phase Pending or Running: it would no longer measure what it started measuring); only suspend, cancel, priority, tester, dut (not dut.name), baseline, previousRun, expectations, activeDeadlineSeconds and ttlSecondsAfterFinished may: suspend it first, or delete and re-create it",fieldPath=".spec.durations.dutRest",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.testerPods) || size(oldSelf.status.testerPods) == 0 || !has(oldSelf.status.phase) || !(oldSelf.status.phase in ['Pending', 'Running']) || (self.spec.throughput == oldSelf.spec.throughput)",message="spec.throughput: a running TrafficTest cannot change what it measures: spec.throughput cannot change while its tester pods run (status.testerPods, phase Pending or Running: it would no longer measure what it started measuring); only suspend, cancel, priority, tester, dut (not dut.name), baseline, previousRun, expectations, activeDeadlineSeconds and ttlSecondsAfterFinished may: suspend it first, or delete and re-create it",fieldPath=".spec.throughput",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.testerPods) || size(oldSelf.status.testerPods) == 0 || !has(oldSelf.status.phase) || !(oldSelf.status.phase in ['Pending', 'Running']) || (self.spec.latency == oldSelf.spec.latency)",message="spec.latency: a running TrafficTest cannot change what it measures: spec.latency cannot change while its tester pods run (status.testerPods, phase Pending or Running: it would no longer measure what it started measuring); only suspend, cancel, priority, tester, dut (not dut.name), baseline, previousRun, expectations, activeDeadlineSeconds and ttlSecondsAfterFinished may: suspend it first, or delete and re-create it",fieldPath=".spec.latency",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.testerPods) || size(oldSelf.status.testerPods) == 0 || !has(oldSelf.status.phase) || !(oldSelf.status.phase in ['Pending', 'Running']) || (self.spec.frameLoss == oldSelf.spec.frameLoss)",message="spec.frameLoss: a running TrafficTest cannot change what it measures: spec.frameLoss cannot change while its tester pods run (status.testerPods, phase Pending or Running: it would no longer measure what it started measuring); only suspend, cancel, priority, tester, dut (not dut.name), baseline, previousRun, expectations, activeDeadlineSeconds and ttlSecondsAfterFinished may: suspend it first, or delete and re-create it",fieldPath=".spec.frameLoss",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.testerPods) || size(oldSelf.status.testerPods) == 0 || !has(oldSelf.status.phase) || !(oldSelf.status.phase in ['Pending', 'Running']) || (self.spec.backToBack == oldSelf.spec.backToBack)",message="spec.backToBack: a running TrafficTest cannot change what it measures: spec.backToBack cannot change while its tester pods run (status.testerPods, phase Pending or Running: it would no longer measure what it started measuring); only suspend, cancel, priority, tester, dut (not dut.name), baseline, previousRun, expectations, activeDeadlineSeconds and ttlSecondsAfterFinished may: suspend it first, or delete and re-create it",fieldPath=".spec.backToBack",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.testerPods) || size(oldSelf.status.testerPods) == 0 || !has(oldSelf.status.phase) || !(oldSelf.status.phase in ['Pending', 'Running']) || (self.spec.traffic == oldSelf.spec.traffic)",message="spec.traffic: a running TrafficTest cannot change what it measures: spec.traffic cannot change while its tester pods run (status.testerPods, phase Pending or Running: it would no longer measure what it started measuring); only suspend, cancel, priority, tester, dut (not dut.name), baseline, previousRun, expectations, activeDeadlineSeconds and ttlSecondsAfterFinished may: suspend it first, or delete and re-create it",fieldPath=".spec.traffic",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.testerPods) || size(oldSelf.status.testerPods) == 0 || !has(oldSelf.status.phase) || !(oldSelf.status.phase in ['Pending', 'Running']) || (has(self.spec.frameSizes) == has(oldSelf.spec.frameSizes) && (!has(self.spec.frameSizes) || self.spec.frameSizes == oldSelf.spec.frameSizes))",message="spec.frameSizes: a running TrafficTest cannot change what it measures: spec.frameSizes cannot change while its tester pods run (status.testerPods, phase Pending or Running: it would no longer measure what it started measuring); only suspend, cancel, priority, tester, dut (not dut.name), baseline, previousRun, expectations, activeDeadlineSeconds and ttlSecondsAfterFinished may: suspend it first, or delete and re-create it",fieldPath=".spec.frameSizes",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.testerPods) || size(oldSelf.status.testerPods) == 0 || !has(oldSelf.status.phase) || !(oldSelf.status.phase in ['Pending', 'Running']) || (has(self.spec.ipPacketSizes) == has(oldSelf.spec.ipPacketSizes) && (!has(self.spec.ipPacketSizes) || self.spec.ipPacketSizes == oldSelf.spec.ipPacketSizes))",message="spec.ipPacketSizes: a running TrafficTest cannot change what it measures: spec.ipPacketSizes cannot change while its tester pods run (status.testerPods, phase Pending or Running: it would no longer measure what it started measuring); only suspend, cancel, priority, tester, dut (not dut.name), baseline, previousRun, expectations, activeDeadlineSeconds and ttlSecondsAfterFinished may: suspend it first, or delete and re-create it",fieldPath=".spec.ipPacketSizes",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.testerPods) || size(oldSelf.status.testerPods) == 0 || !has(oldSelf.status.phase) || !(oldSelf.status.phase in ['Pending', 'Running']) || (has(self.spec.imix) == has(oldSelf.spec.imix) && (!has(self.spec.imix) || self.spec.imix == oldSelf.spec.imix))",message="spec.imix: a running TrafficTest cannot change what it measures: spec.imix cannot change while its tester pods run (status.testerPods, phase Pending or Running: it would no longer measure what it started measuring); only suspend, cancel, priority, tester, dut (not dut.name), baseline, previousRun, expectations, activeDeadlineSeconds and ttlSecondsAfterFinished may: suspend it first, or delete and re-create it",fieldPath=".spec.imix",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.testerPods) || size(oldSelf.status.testerPods) == 0 || !has(oldSelf.status.phase) || !(oldSelf.status.phase in ['Pending', 'Running']) || (has(self.spec.dut) == has(oldSelf.spec.dut) && (!has(self.spec.dut) || (has(self.spec.dut.name) == has(oldSelf.spec.dut.name) && (!has(self.spec.dut.name) || self.spec.dut.name == oldSelf.spec.dut.name))))",message="spec.dut.name: the DUT of a running TrafficTest cannot change while its tester pods run (status.testerPods, phase Pending or Running): the testbed it holds is its DUT's, and tests queued for the new DUT would wait behind it while those of the old one started; suspend it first, or delete and re-create it",fieldPath=".spec.dut.name",reason=FieldValueForbidden

// TrafficTest is one RFC 2544 benchmark of a device under test.
type TrafficTest struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec describes the benchmark: tests, frame sizes, traffic, ports, DUT and expectations.
	// +required
	Spec TrafficTestSpec `json:"spec"`
	// status is what the operator observed and the tester measured: phase, progress, results and verdict.
	// +optional
	Status TrafficTestStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// TrafficTestList contains a list of TrafficTest.
type TrafficTestList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TrafficTest `json:"items"`
}

func init() {
	register(&TrafficTest{}, &TrafficTestList{})
}
