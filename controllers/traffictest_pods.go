package controllers

import (
	"context"
	"errors"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/tester"
)

func (r *TrafficTestReconciler) testerPods(ctx context.Context, tt *v1alpha1.TrafficTest) ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := r.List(ctx, &list, client.InNamespace(tt.Namespace), client.MatchingLabels{tester.LabelTest: tt.Name}); err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if metav1.IsControlledBy(&p, tt) {
			out = append(out, p)
		}
	}
	return out, nil
}

// livePods says whether the API server holds tester pods of this test.
func (r *TrafficTestReconciler) livePods(ctx context.Context, tt *v1alpha1.TrafficTest) (bool, error) {
	var list corev1.PodList
	if err := r.apiReader().List(ctx, &list, client.InNamespace(tt.Namespace), client.MatchingLabels{tester.LabelTest: tt.Name}); err != nil {
		return false, err
	}
	for i := range list.Items {
		if metav1.IsControlledBy(&list.Items[i], tt) {
			return true, nil
		}
	}
	return false, nil
}

func terminating(pods []corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		if !p.DeletionTimestamp.IsZero() {
			out = append(out, p.Name)
		}
	}
	return out
}

func (r *TrafficTestReconciler) startPods(ctx context.Context, tt *v1alpha1.TrafficTest, p *plan.Plan, hash string) (ctrl.Result, error) {
	pods, err := tester.Pods(tt, p, hash, r.Tester)
	if err != nil {
		r.setCondition(tt, v1alpha1.ConditionPlanReady, metav1.ConditionFalse, v1alpha1.ReasonInvalidPlan, err.Error())
		return ctrl.Result{}, nil
	}
	// The cache may not hold pods made a moment ago (a pass redone after a conflict): ask the API server
	// before making them again, or the runner's first words (state.json) would be wiped as an ended one's.
	if live, err := r.livePods(ctx, tt); err != nil {
		return ctrl.Result{}, err
	} else if live {
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	if err := r.forgetEndedRunner(ctx, tt); err != nil {
		return ctrl.Result{}, err
	}
	statePlannedCost(tt, p) // until the runner says more
	var names []string
	for _, pod := range pods {
		if tb := testbedOf(tt); len(tb) > 0 {
			metav1.SetMetaDataAnnotation(&pod.ObjectMeta, annotationTestbed, strings.Join(tb, "\n"))
		}
		if err := r.createOwned(ctx, tt, pod); err != nil {
			return r.podsRefused(ctx, tt, names, err)
		}
		names = append(names, pod.Name)
	}
	st := &tt.Status
	if st.StartTime == nil {
		now := metav1.NewTime(r.now())
		st.StartTime = &now
	}
	st.TesterPods = names
	st.Phase = v1alpha1.PhasePending
	st.RunGeneration, st.MeasuredSpec = tt.Generation, measuredSpec(&tt.Spec)
	st.CompletionTime = nil
	r.setCondition(tt, v1alpha1.ConditionTesterReady, metav1.ConditionFalse, v1alpha1.ReasonPodsCreated,
		"created tester pod(s) "+strings.Join(names, ", "))
	r.event(tt, corev1.EventTypeNormal, v1alpha1.ReasonPodsCreated, "Start", "Created tester pod(s) %s", strings.Join(names, ", "))
	return ctrl.Result{RequeueAfter: runningRequeue}, nil
}

// podsRefused undoes a start the API server refused part of (admission, a quota): the pods made stop, so
// neither half a tester runs nor its testbed is held, and the condition says why; the pass is redone with
// back-off (the error), and the test keeps no place ahead of others meanwhile (readyToRun).
func (r *TrafficTestReconciler) podsRefused(ctx context.Context, tt *v1alpha1.TrafficTest, made []string, err error) (ctrl.Result, error) {
	for _, name := range made {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: tt.Namespace, Name: name}}
		if derr := r.Delete(ctx, pod); derr != nil && !apierrors.IsNotFound(derr) {
			err = errors.Join(err, derr)
		}
	}
	r.setCondition(tt, v1alpha1.ConditionTesterReady, metav1.ConditionFalse, v1alpha1.ReasonPodsRefused,
		"the API server refused the tester pods: "+err.Error())
	return ctrl.Result{}, err
}

func (r *TrafficTestReconciler) deletePods(ctx context.Context, tt *v1alpha1.TrafficTest) error {
	pods, err := r.testerPods(ctx, tt)
	if err != nil {
		return err
	}
	for i := range pods {
		if err := r.Delete(ctx, &pods[i], client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}
