package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Phase is where a TrafficTest is in its life.
// +kubebuilder:validation:Enum=Pending;Queued;Running;Succeeded;Failed;Suspended
type Phase string

const (
	PhasePending Phase = "Pending"
	// PhaseQueued waits for a testbed another TrafficTest holds or will hold first (status.queue).
	PhaseQueued    Phase = "Queued"
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
	// ConditionTesterPlacement is false when the tester's preflight found a port on another NUMA node than
	// the cores or hugepages that drive it.
	ConditionTesterPlacement = "TesterPlacement"
	// ConditionExpectationsMet holds the regression verdict.
	ConditionExpectationsMet = "ExpectationsMet"

	// The conditions GitOps tools read (kstatus: kubectl wait, Flux health checks, Argo CD through the
	// chart's health check), a summary of the ones above.

	// ConditionReady is true when the run finished and passed (or has no expectations): the goal state.
	ConditionReady = "Ready"
	// ConditionReconciling is true while the run is on its way (pending, waiting for a profile, running).
	ConditionReconciling = "Reconciling"
	// ConditionStalled is true when the run will not reach Ready without a change by the user: it failed,
	// missed its expectations, could not decide them, or its spec cannot be planned.
	ConditionStalled = "Stalled"
)

// Condition reasons of a TrafficTest.
const (
	ReasonResolved           = "Resolved"
	ReasonImixProfileMissing = "ImixProfileMissing"
	// ReasonCalibrationMissing: the ConfigMap spec.tester.calibration names does not exist (yet).
	ReasonCalibrationMissing = "CalibrationMissing"
	// ReasonDUTPodMissing: the pod spec.dut.cpu.pod names does not run (yet).
	// (The runner fails a run with DUTCPUUnreadable when the DUT's cgroup cannot be read on its node.)
	ReasonDUTPodMissing = "DUTPodMissing"
	// ReasonCalibrationInvalid: that ConfigMap holds no usable calibration.
	ReasonCalibrationInvalid = "CalibrationInvalid"
	ReasonInvalidPlan        = "InvalidPlan"
	ReasonPodsCreated        = "PodsCreated"
	ReasonPodsRunning        = "PodsRunning"
	ReasonPodsPending        = "PodsPending"
	// ReasonPodsRefused: the API server refused the tester pods (admission, a quota); the pass is redone
	// with back-off, and the test keeps no place ahead of others in its testbed's queue meanwhile.
	ReasonPodsRefused  = "PodsRefused"
	ReasonAllTestsDone = "AllTestsDone"
	// ReasonCalibrated: a calibration run (spec.tester.calibration.measure) ended and its calibration is
	// in the ConfigMap spec.tester.calibration names.
	ReasonCalibrated         = "Calibrated"
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
	ReasonPassed             = "Passed"
	ReasonQueued             = "Queued"
	ReasonMeasured           = "Measured"
	ReasonPending            = "Pending"
	ReasonRunning            = "Running"
	ReasonSpecChanged        = "SpecChanged"
	// Preflight refusals: the tester cannot measure through a port.
	ReasonPortLinkDown           = "PortLinkDown"
	ReasonPortSlowerThanLineRate = "PortSlowerThanLineRate"
	ReasonFrameTooLargeForPort   = "FrameTooLargeForPort"
	// ReasonPortQueuesUnbound: an af_xdp port binds fewer of its interface's receive queues than the
	// interface has, or binds them from a queue past 0 (start_queue); the NIC puts frames on the others,
	// where the tester never sees them.
	ReasonPortQueuesUnbound = "PortQueuesUnbound"
	// ReasonCalibrationMismatch: the tester's calibration was measured with other ports, cores or traffic.
	ReasonCalibrationMismatch = "CalibrationMismatch"
	// ReasonCrossesNUMA and ReasonNUMAAligned are the TesterPlacement condition's.
	ReasonCrossesNUMA = "CrossesNUMA"
	ReasonNUMAAligned = "NUMAAligned"
)

// Verdict is the regression outcome.
// +kubebuilder:validation:Enum=Passed;Failed;Inconclusive;None
type Verdict string

const (
	// VerdictPassed: every planned result was measured and met every expectation.
	VerdictPassed Verdict = "Passed"
	// VerdictFailed: a measured result did not meet an expectation, or a run with expectations failed
	// before measuring anything.
	VerdictFailed Verdict = "Failed"
	// VerdictInconclusive: nothing measured failed, but not everything could be decided (a planned result
	// is missing, or the tester was the limit below an expected value).
	VerdictInconclusive Verdict = "Inconclusive"
	// VerdictNone: the TrafficTest has no expectations.
	VerdictNone Verdict = "None"
)

// TrafficTestStatus is what the operator observed and measured.
type TrafficTestStatus struct {
	// conditions are the run's conditions: PlanReady, TesterReady, Complete, Failed and ExpectationsMet, and
	// their summary for GitOps tools in kstatus form (Ready, Reconciling, Stalled), each with the reason, a
	// message and the observedGeneration it describes.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
	// observedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// phase is where the run is: Pending (the plan and the tester pods are being made), Running, Succeeded
	// (the run finished: read the verdict), Failed (the Failed condition says why; what was measured is kept)
	// or Suspended.
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// startTime is when the tester pods were created for this run.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// completionTime is when the run ended, successfully or not.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// progress is what the tester is doing now.
	// +optional
	Progress *Progress `json:"progress,omitempty"`
	// headline is a one-line summary of the main result, e.g. "NDR 1518B: 9.87 Gbit/s (98.7%)".
	// +optional
	Headline string `json:"headline,omitempty"`
	// results are the RFC 2544 result tables.
	// +optional
	Results *Results `json:"results,omitempty"`
	// verdict of the expectations.
	// +optional
	Verdict Verdict `json:"verdict,omitempty"`
	// failures lists the expectations that were not met.
	// +optional
	// +listType=atomic
	Failures []string `json:"failures,omitempty"`
	// resultsConfigMap holds every trial record (trials.jsonl.gz), the result tables (results.json) and the
	// tester's progress; it outlives the tester pods and is deleted with the TrafficTest.
	// +optional
	ResultsConfigMap string `json:"resultsConfigMap,omitempty"`
	// trialsMeasured counts the trial records of the run, in resultsConfigMap and trialConfigMaps.
	// +optional
	TrialsMeasured int32 `json:"trialsMeasured,omitempty"`
	// trialConfigMaps hold the trial records that no longer fit resultsConfigMap (a ConfigMap holds 1 MiB),
	// oldest first, each as trials.jsonl.gz; the newest records are in resultsConfigMap. They are deleted
	// with it.
	// +optional
	// +listType=atomic
	TrialConfigMaps []string `json:"trialConfigMaps,omitempty"`
	// testerPods are the pods running the test.
	// +optional
	// +listType=atomic
	TesterPods []string `json:"testerPods,omitempty"`
	// queue says why the test waits (phase Queued): TrafficTests that share its DUT (spec.dut.name), a
	// port's network or a port's device resource never run at once, and run by spec.priority, then in creation order.
	// +optional
	Queue *QueueStatus `json:"queue,omitempty"`
	// runGeneration is the spec generation the current (or last) run measures. A finished test whose spec
	// changes what it measures runs again; a change of what judges it (expectations, baseline,
	// previousRun) judges the same results again.
	// +optional
	RunGeneration int64 `json:"runGeneration,omitempty"`
	// measuredSpec is a digest of what the current run measures (the spec without the fields that only
	// judge or control it).
	// +optional
	MeasuredSpec string `json:"measuredSpec,omitempty"`
	// previousRuns are the earlier runs of this test (before a spec change), oldest first, at most 10:
	// each one's result tables stay in its ConfigMap, and its trial records in the trial chain.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	PreviousRuns []PreviousRun `json:"previousRuns,omitempty"`
}

// PreviousRun is an earlier run of the same TrafficTest, kept when its spec changed.
type PreviousRun struct {
	// generation of the spec the run measured.
	// +required
	Generation int64 `json:"generation"`
	// phase the run ended in.
	// +required
	Phase Phase `json:"phase"`
	// verdict of the run.
	// +optional
	Verdict Verdict `json:"verdict,omitempty"`
	// headline of the run.
	// +optional
	Headline string `json:"headline,omitempty"`
	// startTime of the run.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// completionTime of the run.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// configMap holds the run's result tables (results.json), its end (state.json) and last checkpoint.
	// +required
	ConfigMap string `json:"configMap"`
	// lastTrial is the sequence number of the run's last trial record: the records up to it are this run's.
	// +optional
	LastTrial int32 `json:"lastTrial,omitempty"`
}

// Progress is the tester's live position in the test plan.
type Progress struct {
	// test running now.
	// +optional
	Test TestKind `json:"test,omitempty"`
	// frameSize being measured (0 for IMIX).
	// +optional
	FrameSize int32 `json:"frameSize,omitempty"`
	// direction being measured, e.g. west->east.
	// +optional
	Direction string `json:"direction,omitempty"`
	// trial number within the whole run.
	// +optional
	Trial int32 `json:"trial,omitempty"`
	// offeredRate of the current trial in percent of line rate.
	// +optional
	OfferedRate string `json:"offeredRate,omitempty"`
	// stepsDone and StepsTotal count (test, size) steps of the plan.
	// +optional
	StepsDone int32 `json:"stepsDone,omitempty"`
	// stepsTotal is the number of (test, frame size) steps in the plan.
	// +optional
	StepsTotal int32 `json:"stepsTotal,omitempty"`
	// summary is a short human line for kubectl get.
	// +optional
	Summary string `json:"summary,omitempty"`
	// estimatedSecondsLeft is the expected wall time left, in seconds: the plan's estimate of the steps
	// still to run, updated from what was measured (the NDRs decide the frame loss curve's length and
	// whether back-to-back can be measured), plus what the step under way has not yet spent.
	// +optional
	EstimatedSecondsLeft int64 `json:"estimatedSecondsLeft,omitempty"`
	// estimatedTotalSeconds is what the whole run was expected to take when it started.
	// +optional
	EstimatedTotalSeconds int64 `json:"estimatedTotalSeconds,omitempty"`
	// updateTime is when the tester last reported.
	// +optional
	UpdateTime *metav1.Time `json:"updateTime,omitempty"`
	// timeline is what a timeline test running now has judged so far, a row per direction (Prometheus
	// exports it while the run lasts).
	// +optional
	// +listType=atomic
	Timeline []TimelineProgress `json:"timeline,omitempty"`
}

// TimelineProgress is one direction of a timeline test as far as it has been judged (settle behind the
// load): the DUT's figures come from the bins the tester did not spoil.
type TimelineProgress struct {
	// frameSize is the Ethernet frame size in bytes, FCS included.
	// +required
	FrameSize int32 `json:"frameSize"`
	// direction is "<from port>-><to port>".
	// +required
	Direction string `json:"direction"`
	// offeredFramesPerSecond is the load held.
	// +required
	OfferedFramesPerSecond int64 `json:"offeredFramesPerSecond"`
	// receivedFramesPerSecond is what arrived of the frames due in the last whole second judged, when the
	// tester spoiled none of its bins (absent otherwise, and where bins do not divide a second).
	// +optional
	ReceivedFramesPerSecond *int64 `json:"receivedFramesPerSecond,omitempty"`
	// seconds judged so far.
	// +required
	Seconds string `json:"seconds"`
	// lostFrames so far in the DUT's bins.
	// +required
	LostFrames int64 `json:"lostFrames"`
	// outages of the DUT's so far.
	// +required
	Outages int64 `json:"outages"`
	// lastOutageMilliseconds is the length of the DUT's latest outage so far.
	// +optional
	LastOutageMilliseconds string `json:"lastOutageMilliseconds,omitempty"`
	// bins judged so far, and those the tester spoiled.
	// +required
	Bins int64 `json:"bins"`
	// testerBins are the bins the tester spoiled so far.
	// +optional
	TesterBins int64 `json:"testerBins,omitempty"`
	// testerLostFrames were lost so far in the tester's bins: while there are any, the DUT's outages so
	// far are a lower bound.
	// +optional
	TesterLostFrames int64 `json:"testerLostFrames,omitempty"`
	// testerLimited is true when the tester has spoiled more than timeline.maxTesterSpoiled of the bins so
	// far, or outages or bins were dropped before they were read: the DUT's figures so far are no count.
	// +optional
	TesterLimited bool `json:"testerLimited,omitempty"`
}

// Results are the RFC 2544 result tables. The tester writes them (results.json in the results ConfigMap)
// and the operator copies them here. Rates are integers in bit/s and frames/s; percentages are decimal
// strings.
type Results struct {
	// dut as described in the spec when the run started.
	// +optional
	DUT *DUTSpec `json:"dut,omitempty"`
	// lineRateBitsPerSecond is the nominal L1 rate of the ports.
	// +optional
	LineRateBitsPerSecond int64 `json:"lineRateBitsPerSecond,omitempty"`
	// throughput is the RFC 2544 §26.1 table: the NDR (and PDR) per frame size and direction.
	// +optional
	// +listType=atomic
	Throughput []ThroughputResult `json:"throughput,omitempty"`
	// latency is the RFC 2544 §26.2 table: latency at the NDR per frame size and direction, measured on every
	// frame.
	// +optional
	// +listType=atomic
	Latency []LatencyResult `json:"latency,omitempty"`
	// frameLoss is the RFC 2544 §26.3 table: the loss curve per frame size and direction, from the top rate
	// down in steps.
	// +optional
	// +listType=atomic
	FrameLoss []FrameLossResult `json:"frameLoss,omitempty"`
	// backToBack is the RFC 2544 §26.4 table: the longest burst at line rate the DUT forwards without loss.
	// +optional
	// +listType=atomic
	BackToBack []BackToBackResult `json:"backToBack,omitempty"`
	// imix is the throughput of the IMIX (spec.imix) per direction, with the loss of each size class.
	// +optional
	// +listType=atomic
	Imix []ImixResult `json:"imix,omitempty"`
	// pathMTU has one row per direction of the path MTU finder: the largest frame that crossed the DUT
	// whole.
	// +optional
	// +listType=atomic
	PathMTU []PathMTUResult `json:"pathMTU,omitempty"`
	// timeline has one row per direction of the timeline test: the load held, the outages found.
	// +optional
	// +listType=atomic
	Timeline []TimelineResult `json:"timeline,omitempty"`
	// diagnosis says from the frame-size sweep whether the DUT is limited in bit/s or frames/s.
	// +optional
	Diagnosis *Diagnosis `json:"diagnosis,omitempty"`
	// penalty against the baseline TrafficTest, per frame size and direction.
	// +optional
	// +listType=atomic
	Penalty []PenaltyResult `json:"penalty,omitempty"`
	// comparedWith names the earlier run (spec.previousRun) the change rows compare with.
	// +optional
	ComparedWith string `json:"comparedWith,omitempty"`
	// change against spec.previousRun, per frame size (and IMIX) and direction both runs measured.
	// +optional
	// +listType=atomic
	Change []ChangeResult `json:"change,omitempty"`
	// preflight is what the tester found before the first trial: each port's device, link and NUMA node,
	// and where the engine runs.
	// +optional
	Preflight *Preflight `json:"preflight,omitempty"`
	// notes the tester wants the user to read (tester saturated, latency not valid across nodes, ...).
	// +optional
	// +listType=atomic
	Notes []string `json:"notes,omitempty"`
}

// Rate is one rate in every unit a network engineer asks for.
type Rate struct {
	// l1BitsPerSecond counts frame bytes plus 20 B of preamble and inter-frame gap.
	// +required
	L1BitsPerSecond int64 `json:"l1BitsPerSecond"`
	// l2BitsPerSecond counts frame bytes, FCS included.
	// +required
	L2BitsPerSecond int64 `json:"l2BitsPerSecond"`
	// framesPerSecond is the rate in frames per second.
	// +required
	FramesPerSecond int64 `json:"framesPerSecond"`
	// percentOfLineRate is the rate in percent of traffic.lineRate, counted at L1 (frame + 20 B preamble and
	// gap).
	// +required
	PercentOfLineRate string `json:"percentOfLineRate"`
}

// Spread summarises repetitions of one measurement.
type Spread struct {
	// repetitions is the number of measurements summarised.
	// +required
	Repetitions int32 `json:"repetitions"`
	// mean of the measurements, in frames/s (back-to-back: in frames).
	// +required
	Mean int64 `json:"mean"`
	// stdDev is the sample standard deviation, in the unit of mean.
	// +required
	StdDev int64 `json:"stdDev"`
	// min is the smallest measurement, in the unit of mean.
	// +required
	Min int64 `json:"min"`
	// max is the largest measurement, in the unit of mean.
	// +required
	Max int64 `json:"max"`
}

// PathMTUResult is the path MTU finder's answer in one direction.
type PathMTUResult struct {
	// direction is "<from port>-><to port>".
	// +required
	Direction string `json:"direction"`
	// largestFrame is the largest frame size, FCS included, that crossed the DUT whole (0: none crossed,
	// or undetermined).
	// +required
	LargestFrame int32 `json:"largestFrame"`
	// mtu is the IP MTU that frame means: largestFrame less the Ethernet header and FCS (18 B, 22 B with a
	// VLAN tag).
	// +optional
	MTU int32 `json:"mtu,omitempty"`
	// atLeast says the largest frame tried (spec.pathMTU.maxFrameSize) crossed, so the path may carry larger.
	// +optional
	AtLeast bool `json:"atLeast,omitempty"`
	// icmpMTU is the smallest MTU the DUT's ICMP errors named for the frames it refused (IPv4
	// "fragmentation needed", ICMPv6 "packet too big"); 0: no error named one.
	// +optional
	ICMPMTU int32 `json:"icmpMTU,omitempty"`
	// silent says the DUT refused the next larger frame without any ICMP error (dropped it unseen), so only
	// the probes tell its MTU.
	// +optional
	Silent bool `json:"silent,omitempty"`
	// fragmented says the DUT fragmented the next larger frame (sent with DF clear: spec.traffic.dontFragment
	// false) rather than carry it whole.
	// +optional
	Fragmented bool `json:"fragmented,omitempty"`
	// probes is how many trials the finder ran in this direction.
	// +required
	Probes int32 `json:"probes"`
	// undetermined says why the finder gave no size: no frame crossed at all, or the tester spoiled every
	// try of a probe.
	// +optional
	Undetermined string `json:"undetermined,omitempty"`
}

// FragmentCounts are the frames of one trial that arrived in fragments (sent with DF clear).
type FragmentCounts struct {
	// frames arrived in fragments (their first fragment arrived).
	// +required
	Frames int64 `json:"frames"`
	// percent is frames in percent of the frames the trial received (first fragments included, copies
	// not): "100" only when every one came in fragments, "0" only when none did.
	// +required
	Percent string `json:"percent"`
	// whole are those of them every fragment of which arrived; the others are lost (and with
	// spec.traffic.fragmentedFrames Lost, these too).
	// +required
	Whole int64 `json:"whole"`
	// fragments is how many fragments of them arrived.
	// +required
	Fragments int64 `json:"fragments"`
	// unmatched counts the fragments that came to the receiving port in the trial whose first fragment
	// never did (their frames are lost); the port's count, shared by every stream it receives.
	// +optional
	Unmatched int64 `json:"unmatched,omitempty"`
}

// DUTCPUCost is what the DUT's CPU paid for one trial (spec.dut.cpu), read from its cgroup every 10 ms
// through the trial: every direction of the trial together.
type DUTCPUCost struct {
	// coresBusy is the DUT's CPU seconds per second while the trial's frames came (from the warm-up's end
	// for the trial's duration): 1 is one core busy throughout.
	// +required
	CoresBusy string `json:"coresBusy"`
	// coresAllowed is what the cgroup's CPU quota (or an ancestor's) allows, or spec.dut.cpu.cores (the
	// smaller of the two); absent when neither says.
	// +optional
	CoresAllowed string `json:"coresAllowed,omitempty"`
	// saturated says coresBusy reached 90 % of coresAllowed: the DUT's CPU quota was a limit at this rate.
	// +optional
	Saturated bool `json:"saturated,omitempty"`
	// microsecondsPerKilobyte is the CPU time from the trial's start to its drain's end (a DUT works on
	// queued frames in the drain) per 1000 bytes of frames forwarded (Ethernet frames as the test counts
	// them, FCS included). It includes what the DUT used idle in the warm-up and the drain.
	// +optional
	MicrosecondsPerKilobyte string `json:"microsecondsPerKilobyte,omitempty"`
	// microsecondsPerThousandFrames is that CPU time per 1000 frames forwarded.
	// +optional
	MicrosecondsPerThousandFrames string `json:"microsecondsPerThousandFrames,omitempty"`
}

// ThroughputResult is the NDR (and PDR) at one frame size and direction.
type ThroughputResult struct {
	// frameSize is the Ethernet frame size in bytes, FCS included (the RFC 2544 convention).
	// +required
	FrameSize int32 `json:"frameSize"`
	// direction is the traffic direction this row measures, "<from port>-><to port>" by the ports' names (e.g.
	// west->east).
	// +required
	Direction string `json:"direction"`
	// ndr is the highest rate whose validation trial lost at most lossTolerance.
	// +required
	NDR Rate `json:"ndr"`
	// lossPercent of the validation trial at the NDR.
	// +required
	LossPercent string `json:"lossPercent"`
	// pdr at pdrLossTolerance, when asked for.
	// +optional
	PDR *Rate `json:"pdr,omitempty"`
	// ndrConditional is RFC 9971's conditional throughput at the NDR, where throughput.lossTolerance is not
	// 0: the NDR less the loss of its full-length trial at the quantile the goal's exceed ratio leaves, the
	// rate the DUT forwards there. With a loss tolerance of 0 it is the NDR itself, and not given.
	// +optional
	NDRConditional *Rate `json:"ndrConditional,omitempty"`
	// pdrConditional is RFC 9971's conditional throughput at the PDR, where pdrLossTolerance is not 0.
	// +optional
	PDRConditional *Rate `json:"pdrConditional,omitempty"`
	// spread of the NDR over repetitions (frames/s).
	// +optional
	Spread *Spread `json:"spread,omitempty"`
	// latency measured on every frame of the validation trial.
	// +optional
	Latency *LatencySummary `json:"latency,omitempty"`
	// fragmented counts, with spec.traffic.dontFragment false, the frames of the validation trial at the
	// NDR that arrived in fragments: the DUT carried them, but not as sent (spec.traffic.fragmentedFrames
	// says whether they counted as received). Absent: no fragment of the trial arrived.
	// +optional
	Fragmented *FragmentCounts `json:"fragmented,omitempty"`
	// dutCPU is what the DUT's CPU paid in the validation trial at the NDR (spec.dut.cpu); absent when no
	// CPU source is given or it could not be read.
	// +optional
	DUTCPU *DUTCPUCost `json:"dutCPU,omitempty"`
	// trials is the number of trials the search used for this row.
	// +required
	Trials int32 `json:"trials"`
	// trialSeconds is the total traffic time of those trials, in seconds.
	// +required
	TrialSeconds string `json:"trialSeconds"`
	// testerLimited is true when the tester could not offer more: the DUT may be faster.
	// +optional
	TesterLimited bool `json:"testerLimited,omitempty"`
	// ceilingMarginPercent is how far below the tester's calibrated ceiling (linerate calibrate) the NDR is,
	// in percent of that ceiling; a row within the calibration's margin is testerLimited.
	// +optional
	CeilingMarginPercent string `json:"ceilingMarginPercent,omitempty"`
	// undetermined says why the search did not determine the NDR (it reached its cap of trials): ndr is
	// then the highest rate a full-length trial passed at, a lower bound, and no verdict rests on it.
	// +optional
	Undetermined string `json:"undetermined,omitempty"`
	// shortTrialLossPercent is the lowest rate, in percent of line rate, at or below the NDR where a short
	// search trial lost more than the tolerance while the full-length trials there kept within it: the
	// DUT's capacity varies from trial to trial near its NDR. RFC 2544 decides by the full-length trials;
	// the short ones only steer the search.
	// +optional
	ShortTrialLossPercent string `json:"shortTrialLossPercent,omitempty"`
	// boundBy says, under throughput.maxLatency, what the lowest failed trial above the NDR exceeded:
	// "latency" (it kept within the loss tolerance, its latency did not keep within the bound) or "loss".
	// Empty: no bound was set, or no trial above the NDR failed.
	// +kubebuilder:validation:Enum=loss;latency
	// +optional
	BoundBy string `json:"boundBy,omitempty"`
	// refused says why no frame of this size crossed the DUT in this direction, where the DUT said so: a hop
	// refused every frame as too big for its MTU and sent ICMP errors back (the frames carry DF), e.g. "too
	// big for the path MTU 1400 (the DUT's ICMP)". The NDR is then 0, at any rate; the search stopped at the
	// first such trial, and the tests that follow skip the size where every direction refused it.
	// +optional
	Refused string `json:"refused,omitempty"`
}

// LatencySummary is a latency distribution; all values in nanoseconds.
type LatencySummary struct {
	// valid is false when the tester cannot measure latency correctly (e.g. unsynchronised clocks
	// across two nodes); the other fields are then empty.
	// +required
	Valid bool `json:"valid"`
	// frames is the number of frames whose latency was measured.
	// +optional
	Frames int64 `json:"frames,omitempty"`
	// clockOffsetBoundNs bounds, for latency measured across two nodes, the offset between their clocks
	// (checked by the tester): each value is the true latency to within this many nanoseconds.
	// +optional
	ClockOffsetBoundNs int64 `json:"clockOffsetBoundNs,omitempty"`
	// minNs is the smallest latency, in nanoseconds.
	// +optional
	MinNs int64 `json:"minNs,omitempty"`
	// meanNs is the mean latency, in nanoseconds.
	// +optional
	MeanNs int64 `json:"meanNs,omitempty"`
	// p50Ns is the median latency (RFC 8219's typical latency), in nanoseconds.
	// +optional
	P50Ns int64 `json:"p50Ns,omitempty"`
	// p90Ns is the 90th percentile of latency, in nanoseconds.
	// +optional
	P90Ns int64 `json:"p90Ns,omitempty"`
	// p99Ns is the 99th percentile of latency, in nanoseconds. Each percentile is left out where the frames
	// cannot support it (fewer than 1/(1−p): p99 needs 100, p99.9 1,000, p99.99 10,000): it would be the
	// largest latency seen under another name.
	// +optional
	P99Ns int64 `json:"p99Ns,omitempty"`
	// p999Ns is the 99.9th percentile of latency (RFC 8219's worst-case latency), in nanoseconds.
	// +optional
	P999Ns int64 `json:"p999Ns,omitempty"`
	// p9999Ns is the 99.99th percentile.
	// +optional
	P9999Ns int64 `json:"p9999Ns,omitempty"`
	// maxNs is the largest latency, in nanoseconds.
	// +optional
	MaxNs int64 `json:"maxNs,omitempty"`
	// pdvNs is the packet delay variation (RFC 5481: p99.9 minus min); left out with p99.9.
	// +optional
	PDVNs int64 `json:"pdvNs,omitempty"`
	// jitterNs is the RFC 3550 interarrival jitter, one sample per TX timestamp (a TX burst shares one).
	// +optional
	JitterNs int64 `json:"jitterNs,omitempty"`
	// resolutionNs is how far a percentile may be from the frame's latency it stands for: half the width of
	// its histogram bucket (1024 buckets per power of two: 0.05 %), the largest of the percentiles reported;
	// 0 where they are exact (below 1024 ns). min, max and mean are exact.
	// +optional
	ResolutionNs int64 `json:"resolutionNs,omitempty"`
	// reason latency is not valid.
	// +optional
	Reason string `json:"reason,omitempty"`
}

// LatencyResult is the latency test at one frame size and direction.
type LatencyResult struct {
	// frameSize is the Ethernet frame size in bytes, FCS included (the RFC 2544 convention).
	// +required
	FrameSize int32 `json:"frameSize"`
	// direction is the traffic direction this row measures, "<from port>-><to port>" by the ports' names (e.g.
	// west->east).
	// +required
	Direction string `json:"direction"`
	// rate the latency was measured at: the NDR, or percentOfNDR of it.
	// +required
	Rate Rate `json:"rate"`
	// percentOfNDR is the load this row measures, in percent of the NDR (spec.latency.percentOfNDR): "100"
	// is the NDR (RFC 2544), "0" the sparse probe. Unset in results written before loads could be chosen:
	// those are at the NDR.
	// +optional
	PercentOfNDR Percent `json:"percentOfNDR,omitempty"`
	// aggregate over all valid repetitions; MeanNs is the mean of the repetition means (RFC 2544).
	// +required
	Aggregate LatencySummary `json:"aggregate"`
	// rfc8219 summarises the valid repetitions as RFC 8219 §7.2 asks.
	// +optional
	RFC8219 *LatencyRepetitions `json:"rfc8219,omitempty"`
	// repetitions each summarised, in the order they ran; one that lost more than the throughput's loss
	// tolerance is invalid (RFC 8219) and says so.
	// +listType=atomic
	// +optional
	Repetitions []LatencySummary `json:"repetitions,omitempty"`
	// testerMaxLatencyNs is the most latency the tester itself added to a frame through no DUT (its
	// calibration, at a tenth of its ceiling): a maxLatency exceeded by no more than it is no proven
	// failure of the DUT.
	// +optional
	TesterMaxLatencyNs int64 `json:"testerMaxLatencyNs,omitempty"`
	// note says what limits this row: repetitions of fewer timestamped frames than RFC 8219's 500, and the
	// percentiles their count cannot support, which are left out (p99 needs 100 frames, p99.9 1,000,
	// p99.99 10,000).
	// +optional
	Note string `json:"note,omitempty"`
}

// LatencyRepetitions is RFC 8219 §7.2's summary of latency repetitions: per repetition, the typical latency
// is its median and the worst-case latency its 99.9th percentile; reported are the medians of those values
// over the valid repetitions, with their 1st and 99th percentiles as the spread. All values in nanoseconds.
type LatencyRepetitions struct {
	// repetitions is the number of valid repetitions summarised; RFC 8219 asks for at least 20.
	// +required
	Repetitions int32 `json:"repetitions"`
	// invalid is the number of repetitions left out: they lost more than the loss tolerance, or the tester
	// spoiled them.
	// +optional
	Invalid int32 `json:"invalid,omitempty"`
	// typicalNs is the median of the repetitions' typical latencies.
	// +required
	TypicalNs int64 `json:"typicalNs"`
	// typicalP1Ns is the 1st percentile of the repetitions' typical latencies (nearest rank).
	// +required
	TypicalP1Ns int64 `json:"typicalP1Ns"`
	// typicalP99Ns is the 99th percentile of the repetitions' typical latencies (nearest rank).
	// +required
	TypicalP99Ns int64 `json:"typicalP99Ns"`
	// worstCaseNs is the median of the repetitions' worst-case latencies.
	// +optional
	WorstCaseNs int64 `json:"worstCaseNs,omitempty"`
	// worstCaseP1Ns is the 1st percentile of the repetitions' worst-case latencies (nearest rank).
	// +optional
	WorstCaseP1Ns int64 `json:"worstCaseP1Ns,omitempty"`
	// worstCaseP99Ns is the 99th percentile of the repetitions' worst-case latencies (nearest rank).
	// +optional
	WorstCaseP99Ns int64 `json:"worstCaseP99Ns,omitempty"`
	// pdvNs is the median of the repetitions' packet delay variation (99.9th percentile − minimum, RFC 8219 §7.3).
	// The worst case and the PDV are left out where no valid repetition timestamped the 1,000 frames a 99.9th
	// percentile needs.
	// +optional
	PDVNs int64 `json:"pdvNs,omitempty"`
}

// FrameLossPoint is one step of the frame loss curve.
type FrameLossPoint struct {
	// percentOfLineRate is the offered rate of this step, in percent of traffic.lineRate (L1).
	// +required
	PercentOfLineRate string `json:"percentOfLineRate"`
	// lossPercent is (tx − rx) × 100 ÷ tx at this step (RFC 2544 §26.3).
	// +required
	LossPercent string `json:"lossPercent"`
	// txFrames is the number of frames the tester sent in this step's trial.
	// +required
	TxFrames int64 `json:"txFrames"`
	// rxFrames is the number of those frames that came back (duplicates not counted).
	// +required
	RxFrames int64 `json:"rxFrames"`
}

// FrameLossResult is the frame loss curve at one frame size and direction.
type FrameLossResult struct {
	// frameSize is the Ethernet frame size in bytes, FCS included (the RFC 2544 convention).
	// +required
	FrameSize int32 `json:"frameSize"`
	// direction is the traffic direction this row measures, "<from port>-><to port>" by the ports' names (e.g.
	// west->east).
	// +required
	Direction string `json:"direction"`
	// points are the steps of the curve, from the highest rate down.
	// +listType=atomic
	// +required
	Points []FrameLossPoint `json:"points"`
}

// BackToBackResult is the longest loss-free burst at one frame size and direction.
type BackToBackResult struct {
	// frameSize is the Ethernet frame size in bytes, FCS included (the RFC 2544 convention).
	// +required
	FrameSize int32 `json:"frameSize"`
	// direction is the traffic direction this row measures, "<from port>-><to port>" by the ports' names (e.g.
	// west->east).
	// +required
	Direction string `json:"direction"`
	// frames is the mean burst length over the repetitions, each an independent search (RFC 9004).
	// +required
	Frames int64 `json:"frames"`
	// spread of the burst length over the repetitions, in frames: their number, mean, standard deviation,
	// minimum and maximum.
	// +required
	Spread Spread `json:"spread"`
	// burstSeconds is the mean burst length in seconds at line rate: RFC 9004's implied DUT buffer time.
	// +required
	BurstSeconds string `json:"burstSeconds"`
	// correctedBufferSeconds is RFC 9004's corrected DUT buffer time: the implied buffer time × (1 −
	// the throughput measured at this size ÷ line rate), the time the frames the DUT held take at line
	// rate. Empty when no throughput was measured at this size, or when the throughput was the tester's
	// limit, not the DUT's.
	// +optional
	CorrectedBufferSeconds string `json:"correctedBufferSeconds,omitempty"`
	// saturated is true when a search ended at the longest burst tried (backToBack.maxFrames): frames is
	// then a lower bound.
	// +optional
	Saturated bool `json:"saturated,omitempty"`
	// notMeasurable says why no burst was measured: a DUT that forwarded a full-length trial at line rate
	// without loss at this size never fills its buffer from a line-rate burst, so it has no back-to-back
	// figure (RFC 9004); frames is then the length of that trial in frames, a lower bound.
	// +optional
	NotMeasurable string `json:"notMeasurable,omitempty"`
	// testerLimited is true when the tester could not send or receive a longer burst cleanly: frames is
	// then a lower bound of what the DUT holds.
	// +optional
	TesterLimited bool `json:"testerLimited,omitempty"`
}

// TimelineResult is one direction of a timeline test: one load held for a duration, every frame judged,
// every outage (a run of consecutive lost frames) found. The tester's own trouble (falling behind its
// schedule, pausing, dropping on receipt) spoils bins, which are never counted against the DUT.
type TimelineResult struct {
	// frameSize is the Ethernet frame size in bytes, FCS included.
	// +required
	FrameSize int32 `json:"frameSize"`
	// direction is "<from port>-><to port>".
	// +required
	Direction string `json:"direction"`
	// rate is the load held.
	// +required
	Rate Rate `json:"rate"`
	// seconds the load was held (the measurement, without warm-up and drain).
	// +required
	Seconds string `json:"seconds"`
	// startTime is when the measurement started (the tester's clock, UTC).
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// binMilliseconds is the width of a counting bin.
	// +required
	BinMilliseconds int32 `json:"binMilliseconds"`
	// txFrames is the frames sent.
	// +required
	TxFrames int64 `json:"txFrames"`
	// lostFrames are the frames judged lost in the DUT's bins (the tester's bins excluded).
	// +required
	LostFrames int64 `json:"lostFrames"`
	// lossPercent is lostFrames over the frames of the DUT's bins.
	// +required
	LossPercent string `json:"lossPercent"`
	// outages is the number of the DUT's outages.
	// +required
	Outages int64 `json:"outages"`
	// outageFrames are the frames the DUT's outages lost.
	// +optional
	OutageFrames int64 `json:"outageFrames,omitempty"`
	// longestOutageMilliseconds is the longest outage's length: its frames lost over the rate.
	// +optional
	LongestOutageMilliseconds string `json:"longestOutageMilliseconds,omitempty"`
	// totalOutageMilliseconds is all outages' length together.
	// +optional
	TotalOutageMilliseconds string `json:"totalOutageMilliseconds,omitempty"`
	// longest are the DUT's longest outages (at most 20), longest first; every outage is in the trial
	// records.
	// +optional
	// +listType=atomic
	Longest []OutageRecord `json:"longest,omitempty"`
	// scatteredFrames were lost alone or in runs shorter than timeline.outageMinFrames.
	// +optional
	ScatteredFrames int64 `json:"scatteredFrames,omitempty"`
	// severelyErroredSeconds counts the whole seconds of the DUT's bins that lost more than half their
	// frames (ITU-T Y.1563's severely errored second, by frames due), in unavailable time too.
	// +optional
	SeverelyErroredSeconds int64 `json:"severelyErroredSeconds,omitempty"`
	// unavailableSeconds are the seconds of unavailable time in the ITU-T Y.1564 sense: it begins with ten
	// consecutive severely errored seconds (included) and ends with ten consecutive seconds that are not
	// (excluded). The least the DUT's own seconds prove: a second the tester spoiled is not severely
	// errored here, nor is the run still open at the end (fewer than ten seconds, which may or may not
	// have changed the state). Only where bins divide a second.
	// +optional
	UnavailableSeconds int64 `json:"unavailableSeconds,omitempty"`
	// availabilityPercent is the share of availabilitySeconds that were not unavailableSeconds, rounded
	// down to a thousandth: the most available the DUT can have been (unavailableSecondsAtMost gives the
	// least).
	// +optional
	AvailabilityPercent string `json:"availabilityPercent,omitempty"`
	// availabilitySeconds are the seconds availability was judged over (a last part second included).
	// +optional
	AvailabilitySeconds int64 `json:"availabilitySeconds,omitempty"`
	// unavailableSecondsAtMost is set when there could be more unavailable time than unavailableSeconds:
	// if every frame lost in the tester's bins (every frame, in bins nobody read) had been the DUT's, and
	// the run open at the end had gone on. An expectation on availability between the two is undecided.
	// +optional
	UnavailableSecondsAtMost int64 `json:"unavailableSecondsAtMost,omitempty"`
	// bins is the number of bins.
	// +required
	Bins int64 `json:"bins"`
	// testerBins are the bins the tester spoiled.
	// +optional
	TesterBins int64 `json:"testerBins,omitempty"`
	// testerOutages are the outages that lie in the tester's bins: the tester's, not the DUT's.
	// +optional
	TesterOutages int64 `json:"testerOutages,omitempty"`
	// testerLostFrames were lost in the tester's bins: neither the DUT's nor proven not to be, so an
	// outage of the DUT's may lie there (an expectation on outages is then undecided).
	// +optional
	TesterLostFrames int64 `json:"testerLostFrames,omitempty"`
	// lateAfterSettle frames arrived later than timeline.settle after they were due: lost in their bins.
	// +optional
	LateAfterSettle int64 `json:"lateAfterSettle,omitempty"`
	// testerLimited is true when the tester spoiled more than timeline.maxTesterSpoiled of the bins, when
	// outages or bins were dropped before they were read, or when the trial was cut short: the result is
	// then no statement about the DUT (what its own bins show against a bound still fails it).
	// +optional
	TesterLimited bool `json:"testerLimited,omitempty"`
	// cutShort is true when the trial ended before its duration (aborted): its seconds are not the run's.
	// +optional
	CutShort bool `json:"cutShort,omitempty"`
}

// OutageRecord is one outage: consecutive frames lost.
type OutageRecord struct {
	// start is when its first lost frame was due (UTC, RFC 3339 with nanoseconds).
	// +required
	Start string `json:"start"`
	// frames lost in a row.
	// +required
	Frames int64 `json:"frames"`
	// milliseconds is its length: frames over the rate.
	// +required
	Milliseconds string `json:"milliseconds"`
	// firstFrame is the position of its first lost frame in the schedule (frame 0 was due at the start).
	// +required
	FirstFrame int64 `json:"firstFrame"`
	// open is true when the frames were still lost when the measurement ended.
	// +optional
	Open bool `json:"open,omitempty"`
}

// ImixClassResult is the loss of one size class of an IMIX.
type ImixClassResult struct {
	// frameSize is this class's Ethernet frame size in bytes, FCS included.
	// +required
	FrameSize int32 `json:"frameSize"`
	// txFrames is the number of frames of this size the tester sent.
	// +required
	TxFrames int64 `json:"txFrames"`
	// rxFrames is the number of frames of this size that came back.
	// +required
	RxFrames int64 `json:"rxFrames"`
	// lossPercent is this class's loss, (tx − rx) × 100 ÷ tx.
	// +required
	LossPercent string `json:"lossPercent"`
}

// ImixResult is the IMIX throughput in one direction.
type ImixResult struct {
	// direction is the traffic direction this row measures, "<from port>-><to port>" by the ports' names (e.g.
	// west->east).
	// +required
	Direction string `json:"direction"`
	// averageFrameSize of the mix in bytes.
	// +required
	AverageFrameSize string `json:"averageFrameSize"`
	// ndr is the highest rate of the mix whose validation trial lost at most lossTolerance.
	// +required
	NDR Rate `json:"ndr"`
	// lossPercent of the validation trial at the NDR.
	// +required
	LossPercent string `json:"lossPercent"`
	// classes at the NDR's validation trial.
	// +listType=atomic
	// +required
	Classes []ImixClassResult `json:"classes"`
	// classesAboveNDR is the loss per class at the first rate above the NDR: it shows which sizes the DUT
	// drops first.
	// +listType=atomic
	// +optional
	ClassesAboveNDR []ImixClassResult `json:"classesAboveNDR,omitempty"`
	// latency measured on every frame of the NDR's validation trial.
	// +optional
	Latency *LatencySummary `json:"latency,omitempty"`
	// trials is the number of trials the search used.
	// +required
	Trials int32 `json:"trials"`
	// testerLimited is true when the tester could not offer more: the DUT may be faster.
	// +optional
	TesterLimited bool `json:"testerLimited,omitempty"`
	// ceilingMarginPercent is how far below the tester's calibrated ceiling (linerate calibrate) the NDR is,
	// in percent of that ceiling; a row within the calibration's margin is testerLimited.
	// +optional
	CeilingMarginPercent string `json:"ceilingMarginPercent,omitempty"`
	// undetermined says why the search did not determine the NDR (it reached its cap of trials): ndr is
	// then a lower bound, and no verdict rests on it.
	// +optional
	Undetermined string `json:"undetermined,omitempty"`
	// refused says why no frame of the mix crossed the DUT whole in this direction, where the DUT said so:
	// every size of the mix is too big for the MTU its ICMP named, or (spec.traffic.fragmentedFrames Lost)
	// every frame of it that crossed, its smallest size's too, came in fragments. The NDR is then 0, at any
	// rate.
	// +optional
	Refused string `json:"refused,omitempty"`
}

// Diagnosis of what limits the DUT, fitted over the frame-size sweep: time per frame = a + b*bytes.
type Diagnosis struct {
	// direction is the traffic direction this row measures, "<from port>-><to port>" by the ports' names (e.g.
	// west->east).
	// +required
	Direction string `json:"direction"`
	// bound is FramesPerSecond (per-frame cost dominates: NIC, stack, dispatch), BitsPerSecond
	// (per-byte cost dominates: crypto, bus), Mixed (frames/s-bound for small frames, bit/s-bound for
	// large ones), LineRate (the DUT kept up with the line), DUTCPU (the DUT's CPU, spec.dut.cpu, was
	// saturated at the NDR of every size read below line rate) or Unknown (too few sizes below line rate
	// to tell; dutCPU says what the DUT's CPU did).
	// +required
	Bound string `json:"bound"`
	// perFrameNs is the fitted fixed cost per frame, in nanoseconds.
	// +required
	PerFrameNs string `json:"perFrameNs"`
	// perByteNs is the fitted cost per byte, in nanoseconds.
	// +required
	PerByteNs string `json:"perByteNs"`
	// explanation in one sentence.
	// +required
	Explanation string `json:"explanation"`
	// dutCPU says, from the DUT's CPU cost at each NDR (spec.dut.cpu), whether the DUT's CPU was the limit.
	// +optional
	DUTCPU string `json:"dutCPU,omitempty"`
}

// PenaltyResult compares the NDR with the baseline's at one size and direction.
type PenaltyResult struct {
	// frameSize is the Ethernet frame size in bytes, FCS included (the RFC 2544 convention).
	// +required
	FrameSize int32 `json:"frameSize"`
	// direction is the traffic direction this row measures, "<from port>-><to port>" by the ports' names (e.g.
	// west->east).
	// +required
	Direction string `json:"direction"`
	// percent of the baseline's L2 throughput lost.
	// +required
	Percent string `json:"percent"`
	// l2BitsPerSecond lost.
	// +required
	L2BitsPerSecond int64 `json:"l2BitsPerSecond"`
	// bound says how far the penalty is the DUT's: empty when both figures are; AtMost when this run's
	// figure is the tester's limit or undetermined (the DUT may lose less); AtLeast when the baseline's is
	// (it may lose more); Unknown when both are.
	// +optional
	Bound PenaltyBound `json:"bound,omitempty"`
}

// PenaltyBound says which way a penalty computed from a figure that is not the DUT's alone may be off.
// +kubebuilder:validation:Enum=AtMost;AtLeast;Unknown
type PenaltyBound string

// The bounds of a penalty.
const (
	PenaltyAtMost  PenaltyBound = "AtMost"
	PenaltyAtLeast PenaltyBound = "AtLeast"
	PenaltyUnknown PenaltyBound = "Unknown"
)

// Preflight is the tester's record of its ports and its placement before the first trial. A run whose
// link is down, slower than traffic.lineRate, or unable to carry the largest planned frame does not start.
type Preflight struct {
	// ports as the engine found them.
	// +optional
	// +listType=atomic
	Ports []PortPreflight `json:"ports,omitempty"`
	// cpus the engine runs on (the pod's exclusive cores with the static CPU manager).
	// +optional
	// +listType=atomic
	CPUs []int32 `json:"cpus,omitempty"`
	// cpuNUMANodes are the NUMA nodes of cpus, in the same order.
	// +optional
	// +listType=atomic
	CPUNUMANodes []int32 `json:"cpuNUMANodes,omitempty"`
	// memoryNUMANodes hold the engine's frame memory (hugepages).
	// +optional
	// +listType=atomic
	MemoryNUMANodes []int32 `json:"memoryNUMANodes,omitempty"`
	// warnings about the placement, e.g. a port on another NUMA node than the cores that drive it.
	// +optional
	// +listType=atomic
	Warnings []string `json:"warnings,omitempty"`
}

// PortPreflight is one port as the tester found it.
type PortPreflight struct {
	// name of the port (spec.ports).
	// +required
	Name string `json:"name"`
	// device is the PCI address of the port's VF, or the name of a virtual device.
	// +optional
	Device string `json:"device,omitempty"`
	// driver is DPDK's poll-mode driver, e.g. net_ixgbe_vf.
	// +optional
	Driver string `json:"driver,omitempty"`
	// mac address of the port.
	// +optional
	MAC string `json:"mac,omitempty"`
	// linkUp is the link state.
	// +optional
	LinkUp bool `json:"linkUp,omitempty"`
	// speedMbps is the link speed the port reports (0 unknown).
	// +optional
	SpeedMbps int64 `json:"speedMbps,omitempty"`
	// maxFrame is the largest frame the port carries, FCS included.
	// +optional
	MaxFrame int32 `json:"maxFrame,omitempty"`
	// numaNode of the device; -1 when it has none (a virtual device).
	// +optional
	NUMANode int32 `json:"numaNode"`
	// rxQueues and txQueues the engine uses on the port.
	// +optional
	RxQueues int32 `json:"rxQueues,omitempty"`
	// txQueues the engine uses on the port.
	// +optional
	TxQueues int32 `json:"txQueues,omitempty"`
}

// ChangeResult is how one size and direction moved since the previous run.
type ChangeResult struct {
	// frameSize is the Ethernet frame size in bytes, FCS included (0 for the IMIX).
	// +required
	FrameSize int32 `json:"frameSize"`
	// direction is the traffic direction this row measures, e.g. west->east.
	// +required
	Direction string `json:"direction"`
	// ndrPercent is the NDR change in percent of the previous run's NDR (L2): negative when throughput
	// was lost, e.g. "-7.50".
	// +required
	NDRPercent string `json:"ndrPercent"`
	// ndrL2BitsPerSecond is the NDR change in bit/s of Ethernet frames.
	// +required
	NDRL2BitsPerSecond int64 `json:"ndrL2BitsPerSecond"`
	// testerLimited is true when either run's NDR at this row was the tester's ceiling, not the DUT's:
	// the change is then not the DUT's, and is not exported as such.
	// +optional
	TesterLimited bool `json:"testerLimited,omitempty"`
	// latencyP99Ns is the change of the 99th percentile latency at the NDR, in nanoseconds, when both
	// runs measured it validly.
	// +optional
	LatencyP99Ns *int64 `json:"latencyP99Ns,omitempty"`
	// latencyP99Percent is that change in percent of the previous run's p99, e.g. "12.50" for 12.5 % more.
	// +optional
	LatencyP99Percent string `json:"latencyP99Percent,omitempty"`
	// latencyMeanNs is the change of the mean latency at the NDR, in nanoseconds, when both runs measured
	// it validly.
	// +optional
	LatencyMeanNs *int64 `json:"latencyMeanNs,omitempty"`
}

// QueueStatus is a waiting test's place in the queue for its testbed.
type QueueStatus struct {
	// position is the test's place among those waiting for what it needs: 1 runs next.
	// +required
	// +kubebuilder:validation:Minimum=1
	Position int32 `json:"position"`
	// waitingFor names each TrafficTest ahead ([namespace/]name) and what it shares with this one.
	// +optional
	// +listType=atomic
	WaitingFor []string `json:"waitingFor,omitempty"`
}
