// Package controllers holds the reconcilers of linerate's API.
package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/tester"
)

// runningRequeue is how often a running test is looked at even without events, so the status shows
// progress at least every 10 s whatever the tester does.
const runningRequeue = 5 * time.Second

// TrafficTestReconciler runs TrafficTests: it renders the plan, starts the tester pods, follows them and
// the results they write, and keeps the status current.
type TrafficTestReconciler struct {
	client.Client
	// APIReader reads the results ConfigMap from the API server, not the cache: when the tester pod is seen
	// Succeeded, the ConfigMap update it made just before exiting may not have reached the cache yet.
	APIReader client.Reader
	Scheme    *runtime.Scheme
	Recorder  events.EventRecorder
	Tester    tester.Options
	// Now is the clock (tests move it).
	Now func() time.Time

	eventsMu sync.Mutex
	pending  map[types.UID][]pendingEvent
}

// +kubebuilder:rbac:groups=linerate.dev,resources=traffictests,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=linerate.dev,resources=traffictests/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=linerate.dev,resources=traffictests/finalizers,verbs=update
// +kubebuilder:rbac:groups=linerate.dev,resources=imixprofiles,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=configmaps;serviceaccounts;services,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// conflictRetry is when a pass whose status write lost to another writer is redone.
const conflictRetry = 100 * time.Millisecond

// Reconcile moves one TrafficTest one step towards done.
func (r *TrafficTestReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	tt := &v1alpha1.TrafficTest{}
	if err := r.Get(ctx, req.NamespacedName, tt); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !tt.DeletionTimestamp.IsZero() {
		// Everything the test created is owned by it and goes with it.
		return ctrl.Result{}, nil
	}
	before := tt.Status.DeepCopy()
	res, err := r.reconcile(ctx, tt)
	if err == nil {
		// the status now describes this generation: its work for it is done (or waits on something else)
		tt.Status.ObservedGeneration = tt.Generation
	}
	if tt.Status.Phase != v1alpha1.PhaseQueued {
		tt.Status.Queue = nil // a place in a queue only while it waits in one
	}
	summarize(tt)
	events := r.takeEvents(tt)
	if !equality.Semantic.DeepEqual(before, &tt.Status) {
		if uerr := r.Status().Update(ctx, tt); uerr != nil {
			// the events describe a status that was not written: the pass is redone, and says them again
			if apierrors.IsConflict(uerr) {
				// another writer was first, as is routine: redo the pass from a fresh read, once the cache
				// has had the time to hold the newer object (at once, it would conflict again)
				return ctrl.Result{RequeueAfter: conflictRetry}, nil
			}
			return ctrl.Result{}, errors.Join(err, uerr)
		}
	}
	// events after the status they describe, as a reader of `kubectl describe` expects to find it
	for _, e := range events {
		r.Recorder.Eventf(tt, nil, e.typ, e.reason, e.action, "%s", e.note)
	}
	return res, err
}

func (r *TrafficTestReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *TrafficTestReconciler) reconcile(ctx context.Context, tt *v1alpha1.TrafficTest) (ctrl.Result, error) {
	st := &tt.Status
	if finished(st.Phase) {
		if res, done, err := r.afterSpecChange(ctx, tt); done || err != nil {
			return res, err
		}
		return r.afterFinish(ctx, tt)
	}
	if st.Phase == "" {
		st.Phase = v1alpha1.PhasePending
	}
	// queued only while this pass finds it waiting for its testbed (wait); any other wait (its plan, pods
	// still stopping) is Pending
	wasQueued := st.Phase == v1alpha1.PhaseQueued
	if wasQueued {
		st.Phase = v1alpha1.PhasePending
	}

	if tt.Spec.Cancel {
		return r.stop(ctx, tt, v1alpha1.ReasonCancelled, "cancelled by spec.cancel")
	}
	if st.MeasuredSpec != "" && len(st.TesterPods) > 0 && (st.Phase == v1alpha1.PhasePending || st.Phase == v1alpha1.PhaseRunning) {
		// the API server lets a running test change only what does not change its measurement (tester,
		// dut, priority, ...): the run goes on as this spec's, and its end does not start another
		st.MeasuredSpec = measuredSpec(&tt.Spec)
	}
	if d := tt.Spec.ActiveDeadlineSeconds; d != nil && st.StartTime != nil &&
		r.now().After(st.StartTime.Add(time.Duration(*d)*time.Second)) {
		return r.stop(ctx, tt, v1alpha1.ReasonDeadlineExceeded,
			fmt.Sprintf("the run took longer than spec.activeDeadlineSeconds (%ds)", *d))
	}
	if tt.Spec.Suspend {
		return r.suspend(ctx, tt)
	}

	p, hash, ok, err := r.resolvePlan(ctx, tt)
	if !ok && err == nil && tt.Status.StartTime == nil && tt.Status.Progress != nil && tt.Status.Progress.Trial == 0 {
		tt.Status.Progress = nil // the estimate of a plan that no longer stands
	}
	if err == nil && !ok {
		if res, ended, err := r.endUnplannableRun(ctx, tt); ended || err != nil {
			return res, err
		}
	}
	if err != nil || !ok {
		return planWait(tt), err
	}
	if err := r.ensureResultPath(ctx, tt, p, hash); err != nil {
		return ctrl.Result{}, err
	}
	pods, err := r.testerPods(ctx, tt)
	if err != nil {
		return ctrl.Result{}, err
	}
	if ending := terminating(pods); len(ending) > 0 {
		// Pods of a suspended run (or deleted by someone) still write as they stop; nothing new starts,
		// and nothing they write is read as this run's, until they are gone.
		r.setCondition(tt, v1alpha1.ConditionTesterReady, metav1.ConditionFalse, v1alpha1.ReasonPodsPending,
			"waiting for tester pod(s) "+strings.Join(ending, ", ")+" to end")
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	if len(pods) == 0 {
		if st.StartTime != nil && len(st.TesterPods) > 0 {
			if res, ended, err := r.podsGone(ctx, tt); ended || err != nil {
				return res, err
			}
		}
		statePlannedCost(tt, p)
		q, err := r.queueFor(ctx, tt, r.Client)
		if err == nil && q == nil {
			q, err = r.queueFor(ctx, tt, r.apiReader())
		}
		if err != nil {
			return ctrl.Result{}, err
		}
		if q != nil {
			return r.wait(tt, q, wasQueued)
		}
		return r.startPods(ctx, tt, p, hash)
	}
	return r.follow(ctx, tt, pods)
}

func finished(p v1alpha1.Phase) bool {
	return p == v1alpha1.PhaseSucceeded || p == v1alpha1.PhaseFailed
}

// apiReader reads from the API server itself (the cache when none is set).
func (r *TrafficTestReconciler) apiReader() client.Reader {
	if r.APIReader == nil {
		return r.Client
	}
	return r.APIReader
}

func (r *TrafficTestReconciler) setCondition(tt *v1alpha1.TrafficTest, typ string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&tt.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: tt.Generation,
	})
}

// SetupWithManager wires the reconciler: it owns the tester's objects and follows ImixProfiles that
// TrafficTests wait for.
func (r *TrafficTestReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.TrafficTest{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{},
			predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Owns(&corev1.Pod{}).
		Owns(&corev1.ConfigMap{}).
		Owns(&corev1.ServiceAccount{}).
		Owns(&rbacv1.Role{}).
		Owns(&rbacv1.RoleBinding{}).
		Watches(&v1alpha1.ImixProfile{}, handler.EnqueueRequestsFromMapFunc(r.testsUsingProfile)).
		// a queued test is looked at again whenever another one changes or goes (its testbed may be free)
		Watches(&v1alpha1.TrafficTest{}, handler.EnqueueRequestsFromMapFunc(r.waitingTests)).
		// and when a tester pod ends or goes: a deleted test's pods hold its testbed until then
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.waitingTests), builder.WithPredicates(testerPodEnded())).
		// one pass at a time: a test starts only after reading, from the API server, that no other holds its
		// testbed, and that check is sound only while no other pass starts a test meanwhile
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		Named("traffictest").
		Complete(r)
}

// testerPodEnded passes the events of a tester pod that stop it from sending: its deletion, or its end.
func testerPodEnded() predicate.Predicate {
	tester := func(o client.Object) bool { _, ok := o.GetLabels()[tester.LabelTest]; return ok }
	ended := func(o client.Object) bool {
		p, ok := o.(*corev1.Pod)
		return ok && (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed)
	}
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		DeleteFunc: func(e event.DeleteEvent) bool { return tester(e.Object) },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return tester(e.ObjectNew) && ended(e.ObjectNew) && !ended(e.ObjectOld)
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

func (r *TrafficTestReconciler) testsUsingProfile(ctx context.Context, obj client.Object) []reconcile.Request {
	var list v1alpha1.TrafficTestList
	if err := r.List(ctx, &list, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, tt := range list.Items {
		if im := tt.Spec.Imix; im != nil && im.ProfileRef != nil && im.ProfileRef.Name == obj.GetName() {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: tt.Namespace, Name: tt.Name}})
		}
	}
	return out
}
