package controllers

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/tester"
)

// follow reads the pods and the results ConfigMap and moves the phase.
func (r *TrafficTestReconciler) follow(ctx context.Context, tt *v1alpha1.TrafficTest, pods []corev1.Pod) (ctrl.Result, error) {
	if recoverStart(tt, pods) {
		r.event(tt, corev1.EventTypeNormal, v1alpha1.ReasonPodsCreated, "Start", "Created tester pod(s) %s", strings.Join(tt.Status.TesterPods, ", "))
	}
	state, err := r.harvest(ctx, tt)
	if err != nil {
		return ctrl.Result{}, err
	}
	var main *corev1.Pod
	var pending []string
	for i := range pods {
		p := &pods[i]
		role := p.Labels[tester.LabelRole]
		if role == tester.RoleTester || role == tester.RoleGenerator {
			main = p
		}
		if p.Status.Phase == corev1.PodFailed {
			return r.finish(ctx, tt, v1alpha1.PhaseFailed, failureReason(state, v1alpha1.ReasonTesterFailed),
				failureMessage(state, "tester pod "+p.Name+" failed: "+podFailure(p)))
		}
		if p.Status.Phase == corev1.PodPending || p.Status.Phase == "" {
			pending = append(pending, p.Name+" ("+podWaiting(p)+")")
		}
	}
	if main != nil && main.Status.Phase == corev1.PodSucceeded {
		if res, ended, err := r.endAsTheRunnerSaid(ctx, tt, state); ended || err != nil {
			return res, err
		}
		return r.finish(ctx, tt, v1alpha1.PhaseFailed, failureReason(state, v1alpha1.ReasonResultsIncomplete),
			failureMessage(state, "the tester exited without reporting that every test finished"))
	}
	if state != nil && state.State == results.StateFailed {
		res, _, err := r.endAsTheRunnerSaid(ctx, tt, state)
		return res, err
	}
	if len(pending) > 0 {
		tt.Status.Phase = v1alpha1.PhasePending
		r.setCondition(tt, v1alpha1.ConditionTesterReady, metav1.ConditionFalse, v1alpha1.ReasonPodsPending,
			"waiting for "+strings.Join(pending, ", "))
		return ctrl.Result{RequeueAfter: runningRequeue}, nil
	}
	if tt.Status.Phase != v1alpha1.PhaseRunning {
		r.event(tt, corev1.EventTypeNormal, v1alpha1.ReasonPodsRunning, "Run", "Tester running")
	}
	tt.Status.Phase = v1alpha1.PhaseRunning
	r.setCondition(tt, v1alpha1.ConditionTesterReady, metav1.ConditionTrue, v1alpha1.ReasonPodsRunning, "tester pod(s) running")
	return ctrl.Result{RequeueAfter: runningRequeue}, nil
}

// endAsTheRunnerSaid ends the run as the runner's state.json says it ended, when it says so (ended).
func (r *TrafficTestReconciler) endAsTheRunnerSaid(ctx context.Context, tt *v1alpha1.TrafficTest, state *results.State) (res ctrl.Result, ended bool, err error) {
	switch {
	case state == nil:
		return ctrl.Result{}, false, nil
	case state.State == results.StateSucceeded && measuresCalibration(tt):
		res, err = r.finishCalibration(ctx, tt)
	case state.State == results.StateSucceeded:
		res, err = r.finish(ctx, tt, v1alpha1.PhaseSucceeded, v1alpha1.ReasonAllTestsDone, "every test ran to the end")
	case state.State == results.StateFailed:
		res, err = r.finish(ctx, tt, v1alpha1.PhaseFailed, failureReason(state, v1alpha1.ReasonTesterFailed), failureMessage(state, "the tester failed"))
	default:
		return ctrl.Result{}, false, nil
	}
	return res, true, err
}

// podsGone handles a started run whose pods are gone. Its runner's own end comes first: the pass that read
// it deleted the pods still running, and when the API server refused that pass's status write, this one
// finds the phase of before (Pending or Running) and no pods. A Cancelled is not such an end: a runner
// stopped from outside (its pod deleted or evicted, a suspend) writes it as it goes. Without an end of its
// own, a Running run lost its pods (deleted, evicted, node lost) and fails with what it measured; a
// Pending one is started again (ended false). The cache may not yet hold pods made a moment ago: the API
// server is asked first.
func (r *TrafficTestReconciler) podsGone(ctx context.Context, tt *v1alpha1.TrafficTest) (res ctrl.Result, ended bool, err error) {
	if live, err := r.livePods(ctx, tt); err != nil || live {
		return ctrl.Result{RequeueAfter: time.Second}, true, err
	}
	state, err := r.harvest(ctx, tt)
	if err != nil {
		return ctrl.Result{}, true, err
	}
	// a runner stopped from outside (its pod deleted or evicted, a suspend) says Cancelled as it goes:
	// that is not an end of its own
	if state != nil && state.Reason == v1alpha1.ReasonCancelled {
		state = nil
	}
	if res, ended, err := r.endAsTheRunnerSaid(ctx, tt, state); ended || err != nil {
		return res, true, err
	}
	if tt.Status.Phase != v1alpha1.PhaseRunning {
		return ctrl.Result{}, false, nil
	}
	res, err = r.finish(ctx, tt, v1alpha1.PhaseFailed, v1alpha1.ReasonTesterPodLost,
		fmt.Sprintf("tester pod(s) %s disappeared while the test was running", strings.Join(tt.Status.TesterPods, ", ")))
	return res, true, err
}

// recoverStart fills in what the pass that made the pods would have written had its status write not
// been refused (a conflict): which pods run, since when, and which spec they measure (true when it did,
// and the pods' creation is then said). Without it the deadline would not be enforced and a lost pod
// would be made again instead of failing the run.
func recoverStart(tt *v1alpha1.TrafficTest, pods []corev1.Pod) bool {
	st := &tt.Status
	if len(st.TesterPods) > 0 || len(pods) == 0 {
		return false
	}
	first := pods[0].CreationTimestamp
	for _, p := range pods {
		st.TesterPods = append(st.TesterPods, p.Name)
		if p.CreationTimestamp.Before(&first) {
			first = p.CreationTimestamp
		}
	}
	sort.Strings(st.TesterPods)
	if st.StartTime == nil {
		st.StartTime = &first
	}
	if st.MeasuredSpec == "" {
		// the pods were made from the spec of the pass whose write was refused, moments ago; the API server
		// refuses a change of what the test measures only from now on, so an edit in that moment is taken
		// as measured
		st.RunGeneration, st.MeasuredSpec = tt.Generation, measuredSpec(&tt.Spec)
	}
	return true
}

func failureReason(s *results.State, def string) string {
	if s != nil && s.State == results.StateFailed && s.Reason != "" {
		return s.Reason
	}
	return def
}

func failureMessage(s *results.State, def string) string {
	if s != nil && s.State == results.StateFailed && s.Message != "" {
		return s.Message
	}
	return def
}

func podFailure(p *corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil {
			msg := fmt.Sprintf("container %s exited with code %d (%s)", cs.Name, t.ExitCode, t.Reason)
			if t.Message != "" {
				msg += ": " + strings.TrimSpace(t.Message)
			}
			return msg
		}
	}
	if p.Status.Message != "" {
		return p.Status.Reason + ": " + p.Status.Message
	}
	return "pod phase Failed"
}

func podWaiting(p *corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil {
			if w.Message != "" {
				return w.Reason + ": " + w.Message
			}
			return w.Reason
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return c.Reason + ": " + c.Message
		}
	}
	return "pending"
}
