package controllers

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/expectations"
	"linerate.dev/linerate/internal/plan"
)

// judge computes the baseline penalty and the verdict.
func (r *TrafficTestReconciler) judge(ctx context.Context, tt *v1alpha1.TrafficTest) error {
	st := &tt.Status
	if b := tt.Spec.Baseline; b != nil && st.Results != nil {
		base, err := r.resultsOf(ctx, tt, "baseline TrafficTest", b.Name, "penalty")
		if err != nil {
			return err
		}
		if base != nil {
			st.Results.Penalty = expectations.Penalty(st.Results, base)
		}
	}
	if pr := tt.Spec.PreviousRun; pr != nil && st.Results != nil {
		prev, err := r.resultsOf(ctx, tt, "previous run", pr.Name, "change")
		if err != nil {
			return err
		}
		if prev != nil && !r.measuredTheSame(ctx, tt, pr.Name) {
			addNote(st.Results, fmt.Sprintf("previous run %q measured something else (frame sizes, traffic, ports, durations or the DUT differ): no change computed", pr.Name))
			prev = nil
		}
		if prev != nil {
			st.Results.ComparedWith = pr.Name
			st.Results.Change = expectations.Change(st.Results, prev)
		}
	}
	// What the run planned decides whether it measured everything: nil (unknown) is never a pass.
	var planned []plan.Row
	if p, _, ok, err := r.resolvePlan(ctx, tt); err != nil {
		return err
	} else if ok {
		planned = p.Rows()
	}
	verdict, failures := expectations.Evaluate(tt.Spec.Expectations, st.Results, planned)
	if e := tt.Spec.Expectations; e != nil && e.MaxNDRDrop != "" && tt.Spec.PreviousRun != nil && (st.Results == nil || st.Results.ComparedWith == "") {
		// asked to compare with a run that cannot be read: never a pass
		failures = append(failures, fmt.Sprintf("inconclusive: maxNDRDrop: previous run %q could not be compared with", tt.Spec.PreviousRun.Name))
		if verdict == v1alpha1.VerdictPassed {
			verdict = v1alpha1.VerdictInconclusive
		}
	}
	if verdict != v1alpha1.VerdictNone && st.Phase == v1alpha1.PhaseFailed && st.Results == nil {
		why := "the run failed before measuring anything"
		if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionFailed); c != nil && c.Status == metav1.ConditionTrue {
			why += ": " + c.Message
		}
		failures = append(failures, why)
		verdict = v1alpha1.VerdictFailed
	}
	st.Verdict, st.Failures = verdict, failures
	switch verdict {
	case v1alpha1.VerdictPassed:
		r.setCondition(tt, v1alpha1.ConditionExpectationsMet, metav1.ConditionTrue, v1alpha1.ReasonExpectationsMet, "every expectation is met")
	case v1alpha1.VerdictInconclusive:
		r.setCondition(tt, v1alpha1.ConditionExpectationsMet, metav1.ConditionUnknown, v1alpha1.ReasonResultsIncomplete, strings.Join(failures, "; "))
		r.event(tt, corev1.EventTypeWarning, v1alpha1.ReasonResultsIncomplete, "Judge", "%s", strings.Join(failures, "; "))
	case v1alpha1.VerdictFailed:
		r.setCondition(tt, v1alpha1.ConditionExpectationsMet, metav1.ConditionFalse, v1alpha1.ReasonExpectationsFailed, strings.Join(failures, "; "))
		r.event(tt, corev1.EventTypeWarning, v1alpha1.ReasonExpectationsFailed, "Judge", "%s", strings.Join(failures, "; "))
	default:
		r.setCondition(tt, v1alpha1.ConditionExpectationsMet, metav1.ConditionUnknown, v1alpha1.ReasonNoExpectations, "spec.expectations is empty")
	}
	return nil
}

// judgePlacement turns the tester's preflight record into the TesterPlacement condition: a port driven
// across NUMA nodes is said where a user looks first (the numbers may be the tester's), with the event
// once.
func (r *TrafficTestReconciler) judgePlacement(tt *v1alpha1.TrafficTest) {
	pf := tt.Status.Results.Preflight
	if pf == nil {
		return
	}
	if len(pf.Warnings) == 0 {
		r.setCondition(tt, v1alpha1.ConditionTesterPlacement, metav1.ConditionTrue, v1alpha1.ReasonNUMAAligned,
			"every port on the NUMA node of the engine's cores and hugepages (or on none)")
		return
	}
	msg := strings.Join(pf.Warnings, "; ")
	if c := meta.FindStatusCondition(tt.Status.Conditions, v1alpha1.ConditionTesterPlacement); c == nil || c.Message != msg {
		r.event(tt, corev1.EventTypeWarning, v1alpha1.ReasonCrossesNUMA, "Preflight", "%s", msg)
	}
	r.setCondition(tt, v1alpha1.ConditionTesterPlacement, metav1.ConditionFalse, v1alpha1.ReasonCrossesNUMA, msg)
}

// measuredTheSame says whether another test measured what this one does, on the same device (its
// software may differ: that is what a comparison is for).
func (r *TrafficTestReconciler) measuredTheSame(ctx context.Context, tt *v1alpha1.TrafficTest, name string) bool {
	other := &v1alpha1.TrafficTest{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: tt.Namespace, Name: name}, other); err != nil {
		return false
	}
	return comparableSpec(&other.Spec) == comparableSpec(&tt.Spec)
}

// resultsOf reads the results of another, finished test to compare with; when there are none it says
// so in a note and returns nil.
func (r *TrafficTestReconciler) resultsOf(ctx context.Context, tt *v1alpha1.TrafficTest, what, name, computed string) (*v1alpha1.Results, error) {
	other := &v1alpha1.TrafficTest{}
	err := r.Get(ctx, types.NamespacedName{Namespace: tt.Namespace, Name: name}, other)
	switch {
	case apierrors.IsNotFound(err):
		addNote(tt.Status.Results, fmt.Sprintf("%s %q not found: no %s computed", what, name, computed))
	case err != nil:
		return nil, err
	case !finished(other.Status.Phase) || other.Status.Results == nil:
		addNote(tt.Status.Results, fmt.Sprintf("%s %q has no finished results: no %s computed", what, name, computed))
	default:
		return other.Status.Results, nil
	}
	return nil, nil
}
