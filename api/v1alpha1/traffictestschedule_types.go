package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConcurrencyPolicy says what a schedule does when a run is due while its previous run has not ended.
// +kubebuilder:validation:Enum=Forbid;Replace;Allow
type ConcurrencyPolicy string

const (
	// ForbidConcurrent lets the due run wait until the running one ends (and drops it when
	// startingDeadlineSeconds passes first): one regression run at a time, never two measuring each other.
	ForbidConcurrent ConcurrencyPolicy = "Forbid"
	// ReplaceConcurrent cancels the running run (spec.cancel: its measured results are kept) and starts
	// the due one.
	ReplaceConcurrent ConcurrencyPolicy = "Replace"
	// AllowConcurrent starts the due run at once; runs that share a testbed still take turns in its queue.
	AllowConcurrent ConcurrencyPolicy = "Allow"
)

// Labels and annotations a schedule puts on its runs.
const (
	// LabelSchedule names the TrafficTestSchedule that made a TrafficTest.
	LabelSchedule = "linerate.dev/schedule"
	// AnnotationScheduledTime is the time (RFC 3339) the run was due, which may be before it was made.
	AnnotationScheduledTime = "linerate.dev/scheduled-time"
)

// Condition types and reasons of a TrafficTestSchedule.
const (
	// ConditionLastRunPassed says whether the newest finished run passed (Ready), and why not.
	ConditionLastRunPassed = "LastRunPassed"

	ReasonInvalidSchedule = "InvalidSchedule"
	ReasonScheduled       = "Scheduled"
	ReasonRunWaits        = "RunWaits"
	ReasonRunMissed       = "RunMissed"
	ReasonRunStarted      = "RunStarted"
	ReasonRunReplaced     = "RunReplaced"
	ReasonNoRunYet        = "NoRunYet"
	ReasonRunFailed       = "RunFailed"
	ReasonRunPruned       = "RunPruned"
)

// TrafficTestScheduleSpec runs a TrafficTest on a cron schedule and compares each run with the last
// passed one.
type TrafficTestScheduleSpec struct {
	// schedule in cron format, five fields (minute hour day-of-month month day-of-week) or a descriptor
	// such as @daily, e.g. "0 2 * * 1-5" for 02:00 on working days.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=100
	// +kubebuilder:validation:XValidation:rule="!self.contains('TZ=')",message="spec.schedule: give the time zone in spec.timeZone, not as CRON_TZ= or TZ= in the schedule"
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('@every')",message="spec.schedule: @every is not supported: runs are named by the minute they are due; give a cron line such as */30 * * * *"
	// +required
	Schedule string `json:"schedule"`
	// timeZone the schedule is read in, an IANA name such as Europe/Berlin; UTC when empty.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +optional
	TimeZone *string `json:"timeZone,omitempty"`
	// startingDeadlineSeconds is how late a due run may still start (e.g. after the previous run ran
	// long under Forbid, or the operator was down); a run later than this is skipped with an event.
	// Unset: a missed run starts whenever it can (only the most recent missed one).
	// +kubebuilder:validation:Minimum=1
	// +optional
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`
	// concurrencyPolicy says what happens when a run is due while the previous one has not ended:
	// Forbid (default) lets it wait, Replace cancels the running one (keeping what it measured), Allow
	// starts it at once (runs on one testbed still take turns).
	// +kubebuilder:default=Forbid
	// +optional
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`
	// suspend stops new runs from starting; a run under way goes on.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
	// passedRunsHistoryLimit is how many passed runs are kept (oldest deleted first, with their results
	// ConfigMaps); at least 1, as the newest passed run is the next run's baseline.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=3
	// +optional
	PassedRunsHistoryLimit *int32 `json:"passedRunsHistoryLimit,omitempty"`
	// failedRunsHistoryLimit is how many runs that ended otherwise (failed, missed an expectation,
	// inconclusive) are kept.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=3
	// +optional
	FailedRunsHistoryLimit *int32 `json:"failedRunsHistoryLimit,omitempty"`
	// template is the TrafficTest each run is made from. Its spec.previousRun is set by the schedule to
	// the last passed run, so each run reports its NDR and latency change against it (and
	// spec.expectations.maxNDRDrop can fail a run that lost throughput).
	// +required
	Template TrafficTestTemplate `json:"template"`
}

// TrafficTestTemplate is the TrafficTest a schedule makes for each run.
type TrafficTestTemplate struct {
	// metadata are labels and annotations copied to each run.
	// +optional
	Metadata TemplateMetadata `json:"metadata,omitzero"`
	// spec of each run.
	// +required
	Spec TrafficTestSpec `json:"spec"`
}

// TemplateMetadata are the labels and annotations a run gets.
type TemplateMetadata struct {
	// labels of each run.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// annotations of each run.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ScheduledRun is one run of a schedule, as the schedule lists it.
type ScheduledRun struct {
	// name of the TrafficTest.
	// +required
	Name string `json:"name"`
	// scheduledTime is when the run was due.
	// +optional
	ScheduledTime *metav1.Time `json:"scheduledTime,omitempty"`
	// phase of the run.
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// verdict of the run.
	// +optional
	Verdict Verdict `json:"verdict,omitempty"`
	// headline of the run, e.g. "NDR 1518B: 9.87 Gbit/s (98.7%)".
	// +optional
	Headline string `json:"headline,omitempty"`
	// comparedWith is the earlier run this one was compared with.
	// +optional
	ComparedWith string `json:"comparedWith,omitempty"`
	// cancelled is true for a run ended by spec.cancel (e.g. replaced): it neither passed nor failed.
	// +optional
	Cancelled bool `json:"cancelled,omitempty"`
}

// TrafficTestScheduleStatus is what the schedule did.
type TrafficTestScheduleStatus struct {
	// conditions are Ready (the schedule is valid and makes runs), Stalled (the schedule cannot be read:
	// the message says what to fix) and LastRunPassed (the newest finished run passed).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
	// observedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// lastScheduleTime is when the newest run was due.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`
	// nextScheduleTime is when the next run is due.
	// +optional
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`
	// active are the runs that have not ended.
	// +optional
	// +listType=atomic
	Active []string `json:"active,omitempty"`
	// lastRun is the newest run.
	// +optional
	LastRun *ScheduledRun `json:"lastRun,omitempty"`
	// lastPassedRun names the newest run that passed: the next run is compared with it.
	// +optional
	LastPassedRun string `json:"lastPassedRun,omitempty"`
	// runsStarted counts the runs this schedule made.
	// +optional
	RunsStarted int32 `json:"runsStarted,omitempty"`
	// runs are the runs kept (newest first), within the history limits, at most 200.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=201
	Runs []ScheduledRun `json:"runs,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=tts
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="Last Run",type=string,JSONPath=`.status.lastRun.name`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.lastRun.phase`
// +kubebuilder:printcolumn:name="Verdict",type=string,JSONPath=`.status.lastRun.verdict`
// +kubebuilder:printcolumn:name="Last Passed",type=string,JSONPath=`.status.lastPassedRun`
// +kubebuilder:printcolumn:name="Next",type=string,JSONPath=`.status.nextScheduleTime`,description="When the next run is due"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 45",message="metadata.name: a TrafficTestSchedule's name is at most 45 characters (its runs are named <name>-<minute it was due>, and a run's receiver Service <run>-receiver must fit 63)"

// TrafficTestSchedule runs a TrafficTest on a cron schedule, as a regression suite does every night, and
// compares each run with the last one that passed.
type TrafficTestSchedule struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the schedule, its policies and the TrafficTest template.
	// +required
	Spec TrafficTestScheduleSpec `json:"spec"`
	// status lists the runs and when the next one is due.
	// +optional
	Status TrafficTestScheduleStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// TrafficTestScheduleList contains a list of TrafficTestSchedule.
type TrafficTestScheduleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TrafficTestSchedule `json:"items"`
}

func init() {
	register(&TrafficTestSchedule{}, &TrafficTestScheduleList{})
}
