package controllers

import (
	"context"
	"strconv"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/plan"
)

// Condition of an ImixProfile.
const (
	ConditionImixValid = "Valid"
	ReasonScheduled    = "Scheduled"
	ReasonInvalidMix   = "InvalidMix"
)

// ImixProfileReconciler publishes what a mix looks like on the wire: mean frame size, cycle length and
// each size's share of frames and of bytes.
type ImixProfileReconciler struct {
	client.Client
}

// +kubebuilder:rbac:groups=linerate.dev,resources=imixprofiles,verbs=get;list;watch
// +kubebuilder:rbac:groups=linerate.dev,resources=imixprofiles/status,verbs=get;update;patch

// Reconcile computes the status of one ImixProfile.
func (r *ImixProfileReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	p := &v1alpha1.ImixProfile{}
	if err := r.Get(ctx, req.NamespacedName, p); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := p.Status.DeepCopy()
	p.Status.ObservedGeneration = p.Generation
	sched, err := plan.NewSchedule(p.Spec)
	if err != nil {
		p.Status.AverageFrameSize, p.Status.CycleLength, p.Status.Shares = "", 0, nil
		meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{Type: ConditionImixValid, Status: metav1.ConditionFalse,
			Reason: ReasonInvalidMix, Message: "spec." + err.Error(), ObservedGeneration: p.Generation})
	} else {
		p.Status.AverageFrameSize = strconv.FormatFloat(sched.AverageFrameSize, 'f', 2, 64)
		p.Status.CycleLength = int32(len(sched.Cycle))
		p.Status.Shares = sched.Shares
		meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{Type: ConditionImixValid, Status: metav1.ConditionTrue,
			Reason: ReasonScheduled, Message: "order " + string(sched.Order), ObservedGeneration: p.Generation})
	}
	if equality.Semantic.DeepEqual(before, &p.Status) {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, r.Status().Update(ctx, p)
}

// SetupWithManager wires the reconciler.
func (r *ImixProfileReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&v1alpha1.ImixProfile{}).Named("imixprofile").Complete(r)
}
