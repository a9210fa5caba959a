package controllers

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"linerate.dev/linerate/api/v1alpha1"
)

// stop ends a test on request (cancel, deadline): pods go, results stay.
func (r *TrafficTestReconciler) stop(ctx context.Context, tt *v1alpha1.TrafficTest, reason, msg string) (ctrl.Result, error) {
	return r.finish(ctx, tt, v1alpha1.PhaseFailed, reason, msg)
}

func (r *TrafficTestReconciler) suspend(ctx context.Context, tt *v1alpha1.TrafficTest) (ctrl.Result, error) {
	if _, err := r.harvest(ctx, tt); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.deletePods(ctx, tt); err != nil {
		return ctrl.Result{}, err
	}
	st := &tt.Status
	if st.Phase != v1alpha1.PhaseSuspended {
		r.event(tt, corev1.EventTypeNormal, v1alpha1.ReasonSuspended, "Suspend", "Suspended by spec.suspend")
	}
	st.Phase = v1alpha1.PhaseSuspended
	st.TesterPods = nil
	st.StartTime = nil
	r.setCondition(tt, v1alpha1.ConditionTesterReady, metav1.ConditionFalse, v1alpha1.ReasonSuspended,
		"spec.suspend is true; when it is set to false the run goes on after its last complete step (the trial records so far are kept)")
	return ctrl.Result{}, nil
}

// finish records the end of a run once: phase, conditions, verdict, events; the receiver pod (which never
// exits on its own) and, for failures, any still-running pods are deleted.
func (r *TrafficTestReconciler) finish(ctx context.Context, tt *v1alpha1.TrafficTest, phase v1alpha1.Phase, reason, msg string) (ctrl.Result, error) {
	// One last look at what the tester wrote, so nothing measured before the end is missed.
	if _, err := r.harvest(ctx, tt); err != nil {
		return ctrl.Result{}, err
	}
	pods, err := r.testerPods(ctx, tt)
	if err != nil {
		return ctrl.Result{}, err
	}
	for i := range pods {
		p := &pods[i]
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue // kept for its logs; it holds no resources any more
		}
		if err := r.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
	}
	st := &tt.Status
	st.Phase = phase
	now := metav1.NewTime(r.now())
	st.CompletionTime = &now
	st.Progress = nil
	r.setCondition(tt, v1alpha1.ConditionTesterReady, metav1.ConditionFalse, reason, "the run has ended")
	if phase == v1alpha1.PhaseSucceeded {
		r.setCondition(tt, v1alpha1.ConditionComplete, metav1.ConditionTrue, reason, msg)
		r.setCondition(tt, v1alpha1.ConditionFailed, metav1.ConditionFalse, reason, msg)
		r.event(tt, corev1.EventTypeNormal, reason, "Complete", "%s", msg)
	} else {
		r.setCondition(tt, v1alpha1.ConditionComplete, metav1.ConditionFalse, reason, msg)
		r.setCondition(tt, v1alpha1.ConditionFailed, metav1.ConditionTrue, reason, msg)
		if st.Results != nil {
			r.event(tt, corev1.EventTypeWarning, reason, "Fail", "%s (measured results are kept in status and ConfigMap %s)", msg, st.ResultsConfigMap)
		} else {
			r.event(tt, corev1.EventTypeWarning, reason, "Fail", "%s (no complete step was measured)", msg)
		}
	}
	if err := r.judge(ctx, tt); err != nil {
		return ctrl.Result{}, err
	}
	return r.afterFinish(ctx, tt)
}

// afterFinish applies ttlSecondsAfterFinished.
func (r *TrafficTestReconciler) afterFinish(ctx context.Context, tt *v1alpha1.TrafficTest) (ctrl.Result, error) {
	ttl := tt.Spec.TTLSecondsAfterFinished
	if ttl == nil || tt.Status.CompletionTime == nil {
		return ctrl.Result{}, nil
	}
	left := tt.Status.CompletionTime.Add(time.Duration(*ttl) * time.Second).Sub(r.now())
	if left > 0 {
		return ctrl.Result{RequeueAfter: left}, nil
	}
	logf.FromContext(ctx).Info("deleting finished TrafficTest after its TTL", "ttlSecondsAfterFinished", *ttl)
	if err := r.Delete(ctx, tt, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}
