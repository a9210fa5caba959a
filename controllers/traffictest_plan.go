package controllers

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/calibration"
	"linerate.dev/linerate/internal/estimate"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/results"
)

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
	if ok, err := r.attachDUTPod(ctx, tt, p); !ok || err != nil {
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

// planWait is when a test whose plan is not ready looks again: only a calibration and a DUT pod are polled
// for, the other causes change through objects the manager watches (the spec, an ImixProfile).
func planWait(tt *v1alpha1.TrafficTest) ctrl.Result {
	c := meta.FindStatusCondition(tt.Status.Conditions, v1alpha1.ConditionPlanReady)
	if c != nil && c.Status == metav1.ConditionFalse &&
		(c.Reason == v1alpha1.ReasonCalibrationMissing || c.Reason == v1alpha1.ReasonCalibrationInvalid || c.Reason == v1alpha1.ReasonCalibrationMismatch) {
		return ctrl.Result{RequeueAfter: calibrationPoll}
	}
	if c != nil && c.Status == metav1.ConditionFalse && c.Reason == v1alpha1.ReasonDUTPodMissing {
		return ctrl.Result{RequeueAfter: dutPodPoll}
	}
	return ctrl.Result{}
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

// statePlannedCost puts the plan's estimate into the status of a run not yet started, so that a test
// waiting for its testbed or its pods says what it will cost. The runner's progress, from its model of the
// DUT, replaces it once it runs; a resumed run (started before, or suspended with progress made) keeps the
// runner's, which knows what is left.
func statePlannedCost(tt *v1alpha1.TrafficTest, p *plan.Plan) {
	st := &tt.Status
	if st.StartTime != nil || (st.Progress != nil && (st.Progress.StepsDone > 0 || st.Progress.Trial > 0)) {
		return
	}
	pg := estimate.Planned(p)
	st.Progress = &pg
}
