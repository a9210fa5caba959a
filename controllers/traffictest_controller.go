// Package controllers holds the reconcilers of linerate's API.
package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/calibration"
	"linerate.dev/linerate/internal/expectations"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/rfc2544"
	"linerate.dev/linerate/internal/tester"
	"linerate.dev/linerate/internal/units"
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
		if st.StartTime != nil && len(st.TesterPods) > 0 && st.Phase == v1alpha1.PhaseRunning {
			// The pods were there and are gone (deleted, evicted, node lost): fail, keep what was measured.
			return r.finish(ctx, tt, v1alpha1.PhaseFailed, v1alpha1.ReasonTesterPodLost,
				fmt.Sprintf("tester pod(s) %s disappeared while the test was running", strings.Join(st.TesterPods, ", ")))
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

// endUnplannableRun ends a schedule's run that never started and whose spec cannot be planned (PlanReady
// False, InvalidPlan, set by this pass), as Failed with that reason. A test a user made waits for its
// spec to be fixed; a run's spec is its schedule's template at the time it was due, which nobody edits,
// so it would wait for ever: it would hold a Forbid schedule's next runs, escape the history limits and
// leave the schedule's LastRunPassed silent. A run that has started (or measured, and was suspended) is
// left to wait as before: what it measured is kept, and a referenced ImixProfile fixed meanwhile lets it
// go on. ended says whether it did.
func (r *TrafficTestReconciler) endUnplannableRun(ctx context.Context, tt *v1alpha1.TrafficTest) (ctrl.Result, bool, error) {
	st := &tt.Status
	c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionPlanReady)
	owner := metav1.GetControllerOf(tt)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonInvalidPlan || owner == nil ||
		st.StartTime != nil || len(st.TesterPods) > 0 || st.Results != nil || st.Phase != v1alpha1.PhasePending {
		return ctrl.Result{}, false, nil
	}
	if gv, _ := schema.ParseGroupVersion(owner.APIVersion); gv.Group != v1alpha1.GroupVersion.Group || owner.Kind != "TrafficTestSchedule" {
		return ctrl.Result{}, false, nil
	}
	res, err := r.stop(ctx, tt, v1alpha1.ReasonInvalidPlan, fmt.Sprintf(
		"the run cannot be planned: %s (a run's spec is schedule %s's spec.template, which nobody edits on the run: fix the template, or what it refers to such as its ImixProfile, and the next run takes it)",
		c.Message, owner.Name))
	return res, true, err
}

// wait keeps a test in the queue for its testbed; it is looked at again when any TrafficTest changes.
func (r *TrafficTestReconciler) wait(tt *v1alpha1.TrafficTest, q *v1alpha1.QueueStatus, wasQueued bool) (ctrl.Result, error) {
	st := &tt.Status
	if !wasQueued {
		r.event(tt, corev1.EventTypeNormal, v1alpha1.ReasonQueued, "Queue", "Queued at position %d: %s", q.Position, strings.Join(q.WaitingFor, "; "))
	}
	st.Phase, st.Queue = v1alpha1.PhaseQueued, q
	r.setCondition(tt, v1alpha1.ConditionTesterReady, metav1.ConditionFalse, v1alpha1.ReasonQueued,
		fmt.Sprintf("queued at position %d for its testbed: %s", q.Position, strings.Join(q.WaitingFor, "; ")))
	return ctrl.Result{RequeueAfter: runningRequeue}, nil
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

func finished(p v1alpha1.Phase) bool {
	return p == v1alpha1.PhaseSucceeded || p == v1alpha1.PhaseFailed
}

// specPlan is what a test's spec plans to, with the ImixProfile it refers to.
type specPlan struct {
	plan *plan.Plan
	// missingProfile names a referenced ImixProfile that does not exist: the plan waits for it
	missingProfile string
	// invalid says why the spec cannot be planned ("" when it can)
	invalid string
}

// planSpec resolves a test's spec as its run would be planned. beforeRun also refuses an expectation no
// DUT can meet: a run under way or finished is judged by its verdict, whatever its expectations became.
func planSpec(ctx context.Context, c client.Reader, tt *v1alpha1.TrafficTest, beforeRun bool) (specPlan, error) {
	var profile *v1alpha1.ImixProfile
	if im := tt.Spec.Imix; im != nil && im.ProfileRef != nil {
		profile = &v1alpha1.ImixProfile{}
		err := c.Get(ctx, types.NamespacedName{Namespace: tt.Namespace, Name: im.ProfileRef.Name}, profile)
		if apierrors.IsNotFound(err) {
			return specPlan{missingProfile: im.ProfileRef.Name}, nil
		}
		if err != nil {
			return specPlan{}, err
		}
	}
	// a spec that cannot be planned is an answer, not a failure of the pass
	p, invalid := plan.Resolve(tt, profile)
	if invalid == nil && beforeRun {
		invalid = p.UnreachableExpectation()
	}
	if invalid != nil {
		return specPlan{invalid: invalid.Error()}, nil //nolint:nilerr // the spec's fault is the answer, told in its condition
	}
	return specPlan{plan: p}, nil
}

// resolvePlan finds the IMIX profile and resolves the spec; ok is false when the test must wait.
func (r *TrafficTestReconciler) resolvePlan(ctx context.Context, tt *v1alpha1.TrafficTest) (*plan.Plan, string, bool, error) {
	sp, err := planSpec(ctx, r.Client, tt, tt.Status.StartTime == nil && len(tt.Status.TesterPods) == 0)
	switch {
	case err != nil:
		return nil, "", false, err
	case sp.missingProfile != "":
		r.setCondition(tt, v1alpha1.ConditionPlanReady, metav1.ConditionFalse, v1alpha1.ReasonImixProfileMissing,
			fmt.Sprintf("waiting for ImixProfile %q (spec.imix.profileRef) in namespace %s", sp.missingProfile, tt.Namespace))
		return nil, "", false, nil
	case sp.invalid != "":
		r.setCondition(tt, v1alpha1.ConditionPlanReady, metav1.ConditionFalse, v1alpha1.ReasonInvalidPlan, sp.invalid)
		return nil, "", false, nil
	}
	p := sp.plan
	if ok, err := r.attachCalibration(ctx, tt, p); !ok || err != nil {
		return nil, "", false, err
	}
	hash, err := plan.MeasurementHash(p)
	if err != nil {
		return nil, "", false, err
	}
	r.setCondition(tt, v1alpha1.ConditionPlanReady, metav1.ConditionTrue, v1alpha1.ReasonResolved,
		fmt.Sprintf("%d test(s), %s, %s", len(p.Tests), describeSizes(p), p.Traffic.Direction))
	return p, hash, true, nil
}

// calibrationPoll is how often a test waiting for its tester's calibration looks for it again: the
// ConfigMap is the user's, and the manager watches only its own.
const calibrationPoll = 5 * time.Second

// planWait is when a test whose plan is not ready looks again: only a calibration is polled for, the other
// causes change through objects the manager watches (the spec, an ImixProfile).
func planWait(tt *v1alpha1.TrafficTest) ctrl.Result {
	c := meta.FindStatusCondition(tt.Status.Conditions, v1alpha1.ConditionPlanReady)
	if c != nil && c.Status == metav1.ConditionFalse &&
		(c.Reason == v1alpha1.ReasonCalibrationMissing || c.Reason == v1alpha1.ReasonCalibrationInvalid || c.Reason == v1alpha1.ReasonCalibrationMismatch) {
		return ctrl.Result{RequeueAfter: calibrationPoll}
	}
	return ctrl.Result{}
}

// attachCalibration puts the tester's calibration that spec.tester.calibration names into the plan; ok is
// false when the test must wait for it or cannot use it (the PlanReady condition says which). Once the run
// has started, the calibration it started with stays its own (in its plan ConfigMap), through a suspension
// too: a ConfigMap edited or deleted meanwhile changes nothing of a run under way.
func (r *TrafficTestReconciler) attachCalibration(ctx context.Context, tt *v1alpha1.TrafficTest, p *plan.Plan) (bool, error) {
	if tt.Status.StartTime != nil || tt.Status.Phase == v1alpha1.PhaseSuspended {
		started, err := r.startedPlan(ctx, tt)
		if err != nil {
			return false, err
		}
		if started != nil {
			p.Calibration, p.CeilingMarginPercent = started.Calibration, started.CeilingMarginPercent
			return true, nil
		}
	}
	tc := tt.Spec.Tester.Calibration
	if tc == nil || tc.Measure {
		return true, nil // none, or this run makes it
	}
	// the manager caches only the ConfigMaps it labels; the user's is read from the API server
	cm := &corev1.ConfigMap{}
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: tt.Namespace, Name: tc.ConfigMapName}, cm)
	if apierrors.IsNotFound(err) {
		r.setCondition(tt, v1alpha1.ConditionPlanReady, metav1.ConditionFalse, v1alpha1.ReasonCalibrationMissing,
			fmt.Sprintf("waiting for ConfigMap %q (spec.tester.calibration.configMapName) in namespace %s: create it from the file linerate calibrate wrote (kubectl create configmap %s --from-file=%s)",
				tc.ConfigMapName, tt.Namespace, tc.ConfigMapName, calibration.ConfigMapKey))
		return false, nil
	}
	if err != nil {
		return false, err
	}
	raw, found := cm.Data[calibration.ConfigMapKey]
	if !found {
		err = fmt.Errorf("has no key %s", calibration.ConfigMapKey)
	} else {
		p.Calibration, err = calibration.Parse([]byte(raw))
	}
	if err != nil {
		r.setCondition(tt, v1alpha1.ConditionPlanReady, metav1.ConditionFalse, v1alpha1.ReasonCalibrationInvalid,
			fmt.Sprintf("spec.tester.calibration: ConfigMap %q %v", tc.ConfigMapName, err))
		return false, nil
	}
	// the traffic is known here, the ports and cores only to the tester's preflight
	if d := p.Calibration.Mismatch(p.CalibrationShape(), nil); d != "" {
		r.setCondition(tt, v1alpha1.ConditionPlanReady, metav1.ConditionFalse, v1alpha1.ReasonCalibrationMismatch,
			fmt.Sprintf("spec.tester.calibration: ConfigMap %q holds a calibration of other traffic (%s): calibrate with this test (linerate calibrate -f)", tc.ConfigMapName, d))
		return false, nil
	}
	return true, nil
}

// startedPlan is the plan a started run was given (nil when there is no plan ConfigMap this manager can
// read: then the spec decides).
func (r *TrafficTestReconciler) startedPlan(ctx context.Context, tt *v1alpha1.TrafficTest) (*plan.Plan, error) {
	cm := &corev1.ConfigMap{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: tt.Namespace, Name: results.PlanConfigMapName(tt.Name)}, cm); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if started, err := plan.Unmarshal([]byte(cm.Data[plan.ConfigMapKey])); err == nil {
		return started, nil
	}
	return nil, nil
}

func describeSizes(p *plan.Plan) string {
	var parts []string
	if len(p.FrameSizes) > 0 {
		s := make([]string, len(p.FrameSizes))
		for i, f := range p.FrameSizes {
			s[i] = fmt.Sprint(f)
		}
		parts = append(parts, "frames "+strings.Join(s, ",")+" B")
	}
	if p.Imix != nil {
		parts = append(parts, fmt.Sprintf("IMIX of %d sizes (mean %.1f B)", len(p.Imix.Entries), p.Imix.AverageFrameSize))
	}
	return strings.Join(parts, " and ")
}

// ensureResultPath creates the plan and results ConfigMaps and the tester's identity.
func (r *TrafficTestReconciler) ensureResultPath(ctx context.Context, tt *v1alpha1.TrafficTest, p *plan.Plan, hash string) error {
	data, err := p.Marshal()
	if err != nil {
		return err
	}
	planCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: results.PlanConfigMapName(tt.Name), Namespace: tt.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, planCM, func() error {
		planCM.Labels = tester.Labels(tt, "")
		if planCM.Annotations == nil {
			planCM.Annotations = map[string]string{}
		}
		planCM.Annotations[tester.PlanHashAnnotation] = hash
		planCM.Data = map[string]string{plan.ConfigMapKey: data}
		return controllerutil.SetControllerReference(tt, planCM, r.Scheme)
	}); err != nil {
		return fmt.Errorf("plan ConfigMap: %w", err)
	}

	// The results ConfigMap is created once and never overwritten by the operator: it is the tester's.
	resCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: results.ConfigMapName(tt.Name), Namespace: tt.Namespace,
		Labels: tester.Labels(tt, "")}}
	if err := controllerutil.SetControllerReference(tt, resCM, r.Scheme); err != nil {
		return err
	}
	if err := r.Create(ctx, resCM); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("results ConfigMap: %w", err)
	}
	tt.Status.ResultsConfigMap = resCM.Name

	sa, role, rb := tester.RBAC(tt)
	// The Role first: the API server refuses a RoleBinding to a Role it cannot find. It follows the
	// tester's needs as this operator knows them (a test made by an older operator gets the rights its new
	// tester pods need).
	want := role.Rules
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, role, func() error {
		role.Rules = want
		return controllerutil.SetControllerReference(tt, role, r.Scheme)
	}); err != nil {
		return fmt.Errorf("tester Role: %w", err)
	}
	for _, obj := range []client.Object{sa, rb} {
		if err := r.createOwned(ctx, tt, obj); err != nil {
			return err
		}
	}
	if tester.SplitAcrossNodes(p) {
		if err := r.createOwned(ctx, tt, tester.ReceiverService(tt)); err != nil {
			return err
		}
	}
	return nil
}

func (r *TrafficTestReconciler) createOwned(ctx context.Context, tt *v1alpha1.TrafficTest, obj client.Object) error {
	if err := controllerutil.SetControllerReference(tt, obj, r.Scheme); err != nil {
		return err
	}
	if err := r.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
	}
	return nil
}

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

// statePlannedCost puts the plan's estimate into the status of a run not yet started, so that a test
// waiting for its testbed or its pods says what it will cost. The runner's progress, from the same model,
// replaces it once it runs; a resumed run (started before, or suspended with progress made) keeps the
// runner's, which knows what is left.
func statePlannedCost(tt *v1alpha1.TrafficTest, p *plan.Plan) {
	st := &tt.Status
	if st.StartTime != nil || (st.Progress != nil && (st.Progress.StepsDone > 0 || st.Progress.Trial > 0)) {
		return
	}
	pg := rfc2544.PlannedProgress(p)
	st.Progress = &pg
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

// apiReader reads from the API server itself (the cache when none is set).
func (r *TrafficTestReconciler) apiReader() client.Reader {
	if r.APIReader == nil {
		return r.Client
	}
	return r.APIReader
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
		if state != nil && state.State == results.StateSucceeded && measuresCalibration(tt) {
			return r.finishCalibration(ctx, tt)
		}
		if state != nil && state.State == results.StateSucceeded {
			return r.finish(ctx, tt, v1alpha1.PhaseSucceeded, v1alpha1.ReasonAllTestsDone, "every test ran to the end")
		}
		return r.finish(ctx, tt, v1alpha1.PhaseFailed, failureReason(state, v1alpha1.ReasonResultsIncomplete),
			failureMessage(state, "the tester exited without reporting that every test finished"))
	}
	if state != nil && state.State == results.StateFailed {
		return r.finish(ctx, tt, v1alpha1.PhaseFailed, failureReason(state, v1alpha1.ReasonTesterFailed), failureMessage(state, "the tester failed"))
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

// harvest copies what the tester has written into the status. It never drops results already in the
// status when the ConfigMap is gone or unreadable.
func (r *TrafficTestReconciler) harvest(ctx context.Context, tt *v1alpha1.TrafficTest) (*results.State, error) {
	cm := &corev1.ConfigMap{}
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	err := reader.Get(ctx, types.NamespacedName{Namespace: tt.Namespace, Name: results.ConfigMapName(tt.Name)}, cm)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	log := logf.FromContext(ctx)
	st := &tt.Status
	if s := cm.Data[results.KeyResults]; s != "" {
		var res v1alpha1.Results
		if err := json.Unmarshal([]byte(s), &res); err != nil {
			log.Error(err, "unreadable results.json in the results ConfigMap; keeping the previous results")
		} else {
			st.Results = forStatus(&res, &tt.Spec.DUT)
			st.Headline = headline(&res)
			r.judgePlacement(tt)
		}
	}
	if s := cm.Data[results.KeyProgress]; s != "" {
		var p v1alpha1.Progress
		if err := json.Unmarshal([]byte(s), &p); err == nil {
			if p.Summary == "" {
				p.Summary = fmt.Sprintf("%d/%d %s %dB", p.StepsDone, p.StepsTotal, p.Test, p.FrameSize)
			}
			st.Progress = &p
		}
	}
	// Counted from the segment list and the open segment alone: the sealed segments are not read again.
	segments, err := results.Segments(cm)
	if err != nil {
		log.Error(err, "unreadable list of trial segments in the results ConfigMap")
	}
	open, err := results.DecodeTrialLines(cm.BinaryData[results.KeyTrials])
	if err != nil {
		log.Error(err, "unreadable trial records in the results ConfigMap")
	}
	if segments != nil || open != nil {
		n := len(open)
		st.TrialConfigMaps = nil
		for _, s := range segments {
			n += s.Trials
			st.TrialConfigMaps = append(st.TrialConfigMaps, s.ConfigMap)
		}
		st.TrialsMeasured = int32(n)
	}
	if err := r.ensureSpareSegment(ctx, tt, len(segments), results.OpenBytes(open)); err != nil {
		return nil, err
	}
	var state *results.State
	if s := cm.Data[results.KeyState]; s != "" {
		state = &results.State{}
		if err := json.Unmarshal([]byte(s), state); err != nil {
			state = nil
		}
	}
	return state, nil
}

// forStatus keeps the status small: the per-repetition latency lists stay in the results ConfigMap.
func forStatus(res *v1alpha1.Results, dut *v1alpha1.DUTSpec) *v1alpha1.Results {
	out := res.DeepCopy()
	for i := range out.Latency {
		out.Latency[i].Repetitions = nil
	}
	if out.DUT == nil {
		out.DUT = dut.DeepCopy()
	}
	return out
}

// headline picks the NDR at the largest frame size (the slowest direction), or the IMIX NDR.
func headline(res *v1alpha1.Results) string {
	var best *v1alpha1.ThroughputResult
	for i := range res.Throughput {
		t := &res.Throughput[i]
		if best == nil || t.FrameSize > best.FrameSize ||
			(t.FrameSize == best.FrameSize && t.NDR.L2BitsPerSecond < best.NDR.L2BitsPerSecond) {
			best = t
		}
	}
	if best != nil {
		return fmt.Sprintf("NDR %dB %s (%s%%)", best.FrameSize, units.FormatBits(best.NDR.L2BitsPerSecond), best.NDR.PercentOfLineRate)
	}
	if len(res.Imix) > 0 {
		m := res.Imix[0]
		return fmt.Sprintf("IMIX NDR %s (%s%%)", units.FormatBits(m.NDR.L2BitsPerSecond), m.NDR.PercentOfLineRate)
	}
	return ""
}

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

// ensureSpareSegment makes the ConfigMap the runner seals the open segment of trial records into next,
// once it is half full: the runner may write ConfigMaps named for its test, not create any.
func (r *TrafficTestReconciler) ensureSpareSegment(ctx context.Context, tt *v1alpha1.TrafficTest, sealed, openBytes int) error {
	name := results.SpareSegment(tt.Name, sealed, openBytes)
	if name == "" || finished(tt.Status.Phase) {
		return nil
	}
	if err := r.Get(ctx, types.NamespacedName{Namespace: tt.Namespace, Name: name}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		return err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tt.Namespace, Labels: tester.Labels(tt, "")}}
	return r.createOwned(ctx, tt, cm)
}

// forgetEndedRunner removes what an earlier runner of this test said about its own end and position (a
// suspended runner ends "Failed: Cancelled"): read as the new runner's, it would end the resumed run at
// once. The records, tables and checkpoint stay; the new runner goes on from them.
func (r *TrafficTestReconciler) forgetEndedRunner(ctx context.Context, tt *v1alpha1.TrafficTest) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: tt.Namespace, Name: results.ConfigMapName(tt.Name)}}
	patch := []byte(`{"data":{"` + results.KeyState + `":null,"` + results.KeyProgress + `":null}}`)
	if err := r.Patch(ctx, cm, client.RawPatch(types.MergePatchType, patch)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("results ConfigMap: %w", err)
	}
	tt.Status.Progress = nil
	return nil
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

func (r *TrafficTestReconciler) setCondition(tt *v1alpha1.TrafficTest, typ string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&tt.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: tt.Generation,
	})
}

// event records an event of this pass; Reconcile emits it once the status it describes is written.
func (r *TrafficTestReconciler) event(tt *v1alpha1.TrafficTest, typ, reason, action, note string, args ...any) {
	if r.Recorder == nil {
		return
	}
	r.eventsMu.Lock()
	defer r.eventsMu.Unlock()
	if r.pending == nil {
		r.pending = map[types.UID][]pendingEvent{}
	}
	r.pending[tt.UID] = append(r.pending[tt.UID], pendingEvent{typ, reason, action, fmt.Sprintf(note, args...)})
}

// takeEvents hands over the events of this pass (controller-runtime never reconciles one object twice at
// once, so a pass's events are its own).
func (r *TrafficTestReconciler) takeEvents(tt *v1alpha1.TrafficTest) []pendingEvent {
	r.eventsMu.Lock()
	defer r.eventsMu.Unlock()
	ev := r.pending[tt.UID]
	delete(r.pending, tt.UID)
	return ev
}

type pendingEvent struct{ typ, reason, action, note string }

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
