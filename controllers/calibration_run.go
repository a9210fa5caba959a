package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/calibration"
	"linerate.dev/linerate/internal/results"
)

// LabelCalibratedBy marks a calibration ConfigMap the operator wrote, with the calibration run's name.
const LabelCalibratedBy = "linerate.dev/calibrated-by"

// measuresCalibration says whether the test is a calibration run (spec.tester.calibration.measure).
func measuresCalibration(tt *v1alpha1.TrafficTest) bool {
	tc := tt.Spec.Tester.Calibration
	return tc != nil && tc.Measure
}

// finishCalibration ends a calibration run whose tester succeeded: the calibration it wrote into its
// results ConfigMap is checked as a test naming it would check it, then copied to the ConfigMap
// spec.tester.calibration names (created, or its calibration.json replaced), where tests waiting for it
// find it. A calibration that would be refused is not published: the run fails and says why, and the
// ConfigMap keeps what it held.
func (r *TrafficTestReconciler) finishCalibration(ctx context.Context, tt *v1alpha1.TrafficTest) (ctrl.Result, error) {
	name := tt.Spec.Tester.Calibration.ConfigMapName
	own := &corev1.ConfigMap{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: tt.Namespace, Name: results.ConfigMapName(tt.Name)}, own); err != nil {
		return ctrl.Result{}, err
	}
	raw := own.Data[calibration.ConfigMapKey]
	if raw == "" {
		return r.finish(ctx, tt, v1alpha1.PhaseFailed, v1alpha1.ReasonCalibrationInvalid,
			"the calibration run ended without writing a calibration: ConfigMap "+name+" is left as it was")
	}
	if _, err := calibration.Parse([]byte(raw)); err != nil {
		return r.finish(ctx, tt, v1alpha1.PhaseFailed, v1alpha1.ReasonCalibrationInvalid,
			fmt.Sprintf("the calibration this run measured would be refused (%v): ConfigMap %s is left as it was", err, name))
	}
	if err := r.publishCalibration(ctx, tt, name, raw); err != nil {
		return ctrl.Result{}, err
	}
	return r.finish(ctx, tt, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCalibrated,
		fmt.Sprintf("the tester's ceiling and latency floor are in ConfigMap %s (%s): tests that name it use them", name, calibration.ConfigMapKey))
}

// publishCalibration writes raw as the calibration.json of ConfigMap name. The ConfigMap is not owned by
// the run: a calibration outlives the test that measured it, as a baseline does.
func (r *TrafficTestReconciler) publishCalibration(ctx context.Context, tt *v1alpha1.TrafficTest, name, raw string) error {
	cm := &corev1.ConfigMap{}
	// the manager caches only the ConfigMaps it labels; the user's may predate this run
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: tt.Namespace, Name: name}, cm)
	if apierrors.IsNotFound(err) {
		cm.Namespace, cm.Name = tt.Namespace, name
		cm.Labels = map[string]string{LabelCalibratedBy: tt.Name}
		cm.Data = map[string]string{calibration.ConfigMapKey: raw}
		return r.Create(ctx, cm)
	}
	if err != nil {
		return err
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	cm.Data[calibration.ConfigMapKey] = raw
	cm.Labels[LabelCalibratedBy] = tt.Name
	return r.Update(ctx, cm)
}
