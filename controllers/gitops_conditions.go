package controllers

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"linerate.dev/linerate/api/v1alpha1"
)

// summarize sets Ready, Reconciling and Stalled the way kstatus reads them (Reconciling True: in
// progress; Stalled True: failed; Ready True: current), from the phase, the verdict and the other
// conditions, so that `kubectl wait --for=condition=Ready`, Flux health checks and Argo CD (the chart's
// Lua health check) can gate on a TrafficTest. They carry the generation the status describes.
func summarize(tt *v1alpha1.TrafficTest) {
	st := &tt.Status
	ready, reconciling, stalled := metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionFalse
	reason, msg := v1alpha1.ReasonPending, "the run has not started"
	planned := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionPlanReady)
	failed := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionFailed)
	verdict := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionExpectationsMet)
	switch {
	case st.Phase == v1alpha1.PhaseSucceeded && (st.Verdict == v1alpha1.VerdictPassed || st.Verdict == v1alpha1.VerdictNone):
		ready, reason, msg = metav1.ConditionTrue, v1alpha1.ReasonMeasured, "every test ran to the end"
		if st.Verdict == v1alpha1.VerdictPassed {
			reason, msg = v1alpha1.ReasonPassed, "every test ran to the end and every expectation is met"
		}
	case st.Phase == v1alpha1.PhaseSucceeded:
		stalled, reason, msg = metav1.ConditionTrue, v1alpha1.ReasonResultsIncomplete, fmt.Sprintf("verdict %s", st.Verdict)
		if verdict != nil {
			reason, msg = verdict.Reason, fmt.Sprintf("verdict %s: %s", st.Verdict, verdict.Message)
		}
	case st.Phase == v1alpha1.PhaseFailed:
		stalled, reason, msg = metav1.ConditionTrue, v1alpha1.ReasonTesterFailed, "the run failed"
		if failed != nil {
			reason, msg = failed.Reason, failed.Message
		}
	case st.Phase == v1alpha1.PhaseQueued:
		reconciling, reason, msg = metav1.ConditionTrue, v1alpha1.ReasonQueued, "queued for its testbed"
		if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionTesterReady); c != nil {
			msg = c.Message
		}
	case st.Phase == v1alpha1.PhaseSuspended:
		reason, msg = v1alpha1.ReasonSuspended, "suspended by spec.suspend"
	case planned != nil && planned.Status == metav1.ConditionFalse && planned.Reason == v1alpha1.ReasonInvalidPlan:
		stalled, reason, msg = metav1.ConditionTrue, planned.Reason, planned.Message
	default:
		reconciling, reason = metav1.ConditionTrue, v1alpha1.ReasonPending
		switch {
		case st.Phase == v1alpha1.PhaseRunning && st.Progress != nil && st.Progress.Summary != "":
			reason, msg = v1alpha1.ReasonRunning, "running: "+st.Progress.Summary
		case st.Phase == v1alpha1.PhaseRunning:
			reason, msg = v1alpha1.ReasonRunning, "running"
		case planned != nil && planned.Status == metav1.ConditionFalse:
			reason, msg = planned.Reason, planned.Message
		default:
			if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionTesterReady); c != nil {
				msg = c.Message
			}
		}
	}
	set := func(typ string, status metav1.ConditionStatus) {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg,
			ObservedGeneration: st.ObservedGeneration})
	}
	set(v1alpha1.ConditionReady, ready)
	set(v1alpha1.ConditionReconciling, reconciling)
	set(v1alpha1.ConditionStalled, stalled)
}
