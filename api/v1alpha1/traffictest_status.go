package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Phase is where a TrafficTest is in its life.
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed;Suspended
type Phase string

const (
	PhasePending   Phase = "Pending"
	PhaseRunning   Phase = "Running"
	PhaseSucceeded Phase = "Succeeded"
	PhaseFailed    Phase = "Failed"
	PhaseSuspended Phase = "Suspended"
)

// Condition types of a TrafficTest.
const (
	// ConditionPlanReady is true once the spec has been resolved into a test plan (IMIX found, defaults
	// applied) for the tester.
	ConditionPlanReady = "PlanReady"
	// ConditionTesterReady is true while the tester pod(s) run.
	ConditionTesterReady = "TesterReady"
	// ConditionComplete is true when every test ran to the end.
	ConditionComplete = "Complete"
	// ConditionFailed is true when the run ended without completing; the reason says why.
	ConditionFailed = "Failed"
	// ConditionExpectationsMet holds the regression verdict.
	ConditionExpectationsMet = "ExpectationsMet"
)

// Condition reasons of a TrafficTest.
const (
	ReasonResolved           = "Resolved"
	ReasonImixProfileMissing = "ImixProfileMissing"
	ReasonInvalidPlan        = "InvalidPlan"
	ReasonPodsCreated        = "PodsCreated"
	ReasonPodsRunning        = "PodsRunning"
	ReasonPodsPending        = "PodsPending"
	ReasonAllTestsDone       = "AllTestsDone"
	ReasonTesterFailed       = "TesterFailed"
	ReasonTesterPodLost      = "TesterPodLost"
	ReasonDUTStalled         = "DUTStalled"
	ReasonCancelled          = "Cancelled"
	ReasonSuspended          = "Suspended"
	ReasonDeadlineExceeded   = "DeadlineExceeded"
	ReasonExpectationsMet    = "AllExpectationsMet"
	ReasonExpectationsFailed = "ExpectationsNotMet"
	ReasonNoExpectations     = "NoExpectations"
	ReasonResultsIncomplete  = "ResultsIncomplete"
)

// Verdict is the regression outcome.
// +kubebuilder:validation:Enum=Passed;Failed;None
type Verdict string

const (
	VerdictPassed Verdict = "Passed"
	VerdictFailed Verdict = "Failed"
	VerdictNone   Verdict = "None"
)

// TrafficTestStatus is what the operator observed and measured.
type TrafficTestStatus struct {
	// ObservedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Progress is what the tester is doing now.
	// +optional
	Progress *Progress `json:"progress,omitempty"`
	// Headline is a one-line summary of the main result, e.g. "NDR 1518B: 9.87 Gbit/s (98.7%)".
	// +optional
	Headline string `json:"headline,omitempty"`
	// Results are the RFC 2544 result tables.
	// +optional
	Results *Results `json:"results,omitempty"`
	// Verdict of the expectations.
	// +optional
	Verdict Verdict `json:"verdict,omitempty"`
	// Failures lists the expectations that were not met.
	// +optional
	// +listType=atomic
	Failures []string `json:"failures,omitempty"`
	// ResultsConfigMap holds every trial record (trials.jsonl.gz), the result tables (results.json) and the
	// tester's progress; it outlives the tester pods and is deleted with the TrafficTest.
	// +optional
	ResultsConfigMap string `json:"resultsConfigMap,omitempty"`
	// TrialsMeasured counts trial records in ResultsConfigMap.
	// +optional
	TrialsMeasured int32 `json:"trialsMeasured,omitempty"`
	// TesterPods are the pods running the test.
	// +optional
	// +listType=atomic
	TesterPods []string `json:"testerPods,omitempty"`
}

// Progress is the tester's live position in the test plan.
type Progress struct {
	// Test running now.
	// +optional
	Test TestKind `json:"test,omitempty"`
	// FrameSize being measured (0 for IMIX).
	// +optional
	FrameSize int32 `json:"frameSize,omitempty"`
	// Direction being measured, e.g. west->east.
	// +optional
	Direction string `json:"direction,omitempty"`
	// Trial number within the whole run.
	// +optional
	Trial int32 `json:"trial,omitempty"`
	// OfferedRate of the current trial in percent of line rate.
	// +optional
	OfferedRate string `json:"offeredRate,omitempty"`
	// StepsDone and StepsTotal count (test, size) steps of the plan.
	// +optional
	StepsDone int32 `json:"stepsDone,omitempty"`
	// +optional
	StepsTotal int32 `json:"stepsTotal,omitempty"`
	// Summary is a short human line for kubectl get.
	// +optional
	Summary string `json:"summary,omitempty"`
	// UpdateTime is when the tester last reported.
	// +optional
	UpdateTime *metav1.Time `json:"updateTime,omitempty"`
}

// Results are the RFC 2544 result tables. The tester writes them (results.json in the results ConfigMap)
// and the operator copies them here. Rates are integers in bit/s and frames/s; percentages are decimal
// strings.
type Results struct {
	// DUT as described in the spec when the run started.
	// +optional
	DUT *DUTSpec `json:"dut,omitempty"`
	// LineRateBitsPerSecond is the nominal L1 rate of the ports.
	// +optional
	LineRateBitsPerSecond int64 `json:"lineRateBitsPerSecond,omitempty"`
	// +optional
	// +listType=atomic
	Throughput []ThroughputResult `json:"throughput,omitempty"`
	// +optional
	// +listType=atomic
	Latency []LatencyResult `json:"latency,omitempty"`
	// +optional
	// +listType=atomic
	FrameLoss []FrameLossResult `json:"frameLoss,omitempty"`
	// +optional
	// +listType=atomic
	BackToBack []BackToBackResult `json:"backToBack,omitempty"`
	// +optional
	// +listType=atomic
	Imix []ImixResult `json:"imix,omitempty"`
	// Diagnosis says from the frame-size sweep whether the DUT is limited in bit/s or frames/s.
	// +optional
	Diagnosis *Diagnosis `json:"diagnosis,omitempty"`
	// Penalty against the baseline TrafficTest, per frame size and direction.
	// +optional
	// +listType=atomic
	Penalty []PenaltyResult `json:"penalty,omitempty"`
	// Notes the tester wants the user to read (tester saturated, latency not valid across nodes, ...).
	// +optional
	// +listType=atomic
	Notes []string `json:"notes,omitempty"`
}

// Rate is one rate in every unit a network engineer asks for.
type Rate struct {
	// L1BitsPerSecond counts frame bytes plus 20 B of preamble and inter-frame gap.
	L1BitsPerSecond int64 `json:"l1BitsPerSecond"`
	// L2BitsPerSecond counts frame bytes, FCS included.
	L2BitsPerSecond int64 `json:"l2BitsPerSecond"`
	// FramesPerSecond.
	FramesPerSecond int64 `json:"framesPerSecond"`
	// PercentOfLineRate (L1).
	PercentOfLineRate string `json:"percentOfLineRate"`
}

// Spread summarises repetitions of one measurement.
type Spread struct {
	Repetitions int32 `json:"repetitions"`
	// Mean, StdDev, Min, Max in frames/s.
	Mean   int64 `json:"mean"`
	StdDev int64 `json:"stdDev"`
	Min    int64 `json:"min"`
	Max    int64 `json:"max"`
}

// ThroughputResult is the NDR (and PDR) at one frame size and direction.
type ThroughputResult struct {
	FrameSize int32  `json:"frameSize"`
	Direction string `json:"direction"`
	// NDR is the highest rate whose validation trial lost at most lossTolerance.
	NDR Rate `json:"ndr"`
	// LossPercent of the validation trial at the NDR.
	LossPercent string `json:"lossPercent"`
	// PDR at pdrLossTolerance, when asked for.
	// +optional
	PDR *Rate `json:"pdr,omitempty"`
	// Spread of the NDR over repetitions (frames/s).
	// +optional
	Spread *Spread `json:"spread,omitempty"`
	// Latency measured on every frame of the validation trial.
	// +optional
	Latency *LatencySummary `json:"latency,omitempty"`
	// Trials the search used and their total traffic time in seconds.
	Trials       int32  `json:"trials"`
	TrialSeconds string `json:"trialSeconds"`
	// TesterLimited is true when the tester could not offer more: the DUT may be faster.
	// +optional
	TesterLimited bool `json:"testerLimited,omitempty"`
}

// LatencySummary is a latency distribution; all values in nanoseconds.
type LatencySummary struct {
	// Valid is false when the tester cannot measure latency correctly (e.g. unsynchronised clocks
	// across two nodes); the other fields are then empty.
	Valid  bool  `json:"valid"`
	Frames int64 `json:"frames,omitempty"`
	MinNs  int64 `json:"minNs,omitempty"`
	MeanNs int64 `json:"meanNs,omitempty"`
	P50Ns  int64 `json:"p50Ns,omitempty"`
	P90Ns  int64 `json:"p90Ns,omitempty"`
	P99Ns  int64 `json:"p99Ns,omitempty"`
	P999Ns int64 `json:"p999Ns,omitempty"`
	// P9999Ns is the 99.99th percentile.
	P9999Ns int64 `json:"p9999Ns,omitempty"`
	MaxNs   int64 `json:"maxNs,omitempty"`
	// PDVNs is the packet delay variation (RFC 5481: p99.9 minus min).
	PDVNs int64 `json:"pdvNs,omitempty"`
	// JitterNs is the RFC 3550 interarrival jitter, one sample per TX timestamp (a TX burst shares one).
	JitterNs int64 `json:"jitterNs,omitempty"`
	// Reason latency is not valid.
	// +optional
	Reason string `json:"reason,omitempty"`
}

// LatencyResult is the latency test at one frame size and direction.
type LatencyResult struct {
	FrameSize int32  `json:"frameSize"`
	Direction string `json:"direction"`
	// Rate the latency was measured at (the NDR).
	Rate Rate `json:"rate"`
	// Aggregate over all repetitions; MeanNs is the mean of the repetition means (RFC 2544).
	Aggregate LatencySummary `json:"aggregate"`
	// Repetitions each summarised.
	// +listType=atomic
	// +optional
	Repetitions []LatencySummary `json:"repetitions,omitempty"`
}

// FrameLossPoint is one step of the frame loss curve.
type FrameLossPoint struct {
	PercentOfLineRate string `json:"percentOfLineRate"`
	LossPercent       string `json:"lossPercent"`
	TxFrames          int64  `json:"txFrames"`
	RxFrames          int64  `json:"rxFrames"`
}

// FrameLossResult is the frame loss curve at one frame size and direction.
type FrameLossResult struct {
	FrameSize int32  `json:"frameSize"`
	Direction string `json:"direction"`
	// +listType=atomic
	Points []FrameLossPoint `json:"points"`
}

// BackToBackResult is the longest loss-free burst at one frame size and direction.
type BackToBackResult struct {
	FrameSize int32  `json:"frameSize"`
	Direction string `json:"direction"`
	// Frames is the mean burst length over repetitions.
	Frames int64  `json:"frames"`
	Spread Spread `json:"spread"`
	// BurstSeconds is the mean burst length in seconds at line rate.
	BurstSeconds string `json:"burstSeconds"`
}

// ImixClassResult is the loss of one size class of an IMIX.
type ImixClassResult struct {
	FrameSize   int32  `json:"frameSize"`
	TxFrames    int64  `json:"txFrames"`
	RxFrames    int64  `json:"rxFrames"`
	LossPercent string `json:"lossPercent"`
}

// ImixResult is the IMIX throughput in one direction.
type ImixResult struct {
	Direction string `json:"direction"`
	// AverageFrameSize of the mix in bytes.
	AverageFrameSize string `json:"averageFrameSize"`
	NDR              Rate   `json:"ndr"`
	LossPercent      string `json:"lossPercent"`
	// Classes at the NDR's validation trial.
	// +listType=atomic
	Classes []ImixClassResult `json:"classes"`
	// Loss per class at the first rate above the NDR, which shows which sizes the DUT drops first.
	// +listType=atomic
	// +optional
	ClassesAboveNDR []ImixClassResult `json:"classesAboveNDR,omitempty"`
	// +optional
	Latency       *LatencySummary `json:"latency,omitempty"`
	Trials        int32           `json:"trials"`
	TesterLimited bool            `json:"testerLimited,omitempty"`
}

// Diagnosis of what limits the DUT, fitted over the frame-size sweep: time per frame = a + b*bytes.
type Diagnosis struct {
	Direction string `json:"direction"`
	// Bound is FramesPerSecond (per-frame cost dominates: NIC, stack, dispatch), BitsPerSecond
	// (per-byte cost dominates: crypto, bus), Mixed (frames/s-bound for small frames, bit/s-bound for
	// large ones) or LineRate (the DUT kept up with the line).
	Bound string `json:"bound"`
	// PerFrameNs and PerByteNs are the fitted costs.
	PerFrameNs string `json:"perFrameNs"`
	PerByteNs  string `json:"perByteNs"`
	// Explanation in one sentence.
	Explanation string `json:"explanation"`
}

// PenaltyResult compares the NDR with the baseline's at one size and direction.
type PenaltyResult struct {
	FrameSize int32  `json:"frameSize"`
	Direction string `json:"direction"`
	// Percent of the baseline's L2 throughput lost.
	Percent string `json:"percent"`
	// L2BitsPerSecond lost.
	L2BitsPerSecond int64 `json:"l2BitsPerSecond"`
}
