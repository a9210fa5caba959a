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
	"linerate.dev/linerate/internal/tester"
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
	c, err := calibration.Parse([]byte(raw))
	if err == nil {
		err = unknownCeilings(c)
	}
	if err != nil {
		return r.finish(ctx, tt, v1alpha1.PhaseFailed, v1alpha1.ReasonCalibrationInvalid,
			fmt.Sprintf("the calibration this run measured is not published (%v): ConfigMap %s is left as it was", err, name))
	}
	if refused, err := r.publishCalibration(ctx, tt, name, raw); err != nil {
		return ctrl.Result{}, err
	} else if refused != "" {
		return r.finish(ctx, tt, v1alpha1.PhaseFailed, v1alpha1.ReasonCalibrationInvalid,
			fmt.Sprintf("spec.tester.calibration.configMapName: %s; the calibration is in this run's results ConfigMap %s", refused, results.ConfigMapName(tt.Name)))
	}
	return r.finish(ctx, tt, v1alpha1.PhaseSucceeded, v1alpha1.ReasonCalibrated,
		fmt.Sprintf("the tester's ceiling and latency floor are in ConfigMap %s (%s): tests that name it use them", name, calibration.ConfigMapKey))
}

// unknownCeilings refuses a calibration with a row whose ceiling was not found (the tester spoiled every
// rate, or lost at all): published, a test naming it would find no ceiling for that row and could not
// tell the tester's limit from the DUT's there.
func unknownCeilings(c *calibration.Calibration) error {
	for _, ce := range c.Ceilings {
		if ce.Unknown != "" {
			size := fmt.Sprintf("%d B", ce.FrameSize)
			if ce.FrameSize == 0 {
				size = "IMIX"
			}
			return fmt.Errorf("no ceiling at %s %s: %s", size, ce.Direction, ce.Unknown)
		}
	}
	return nil
}

// publishCalibration writes raw as the calibration.json of ConfigMap name; refused says why it may not
// (one of linerate's own ConfigMaps, or an immutable one). The ConfigMap is not owned by the run: a
// calibration outlives the test that measured it, as a baseline does.
func (r *TrafficTestReconciler) publishCalibration(ctx context.Context, tt *v1alpha1.TrafficTest, name, raw string) (refused string, err error) {
	cm := &corev1.ConfigMap{}
	// the manager caches only the ConfigMaps it labels; the user's may predate this run
	err = r.APIReader.Get(ctx, types.NamespacedName{Namespace: tt.Namespace, Name: name}, cm)
	if apierrors.IsNotFound(err) {
		cm.Namespace, cm.Name = tt.Namespace, name
		cm.Labels = map[string]string{LabelCalibratedBy: tt.Name}
		cm.Data = map[string]string{calibration.ConfigMapKey: raw}
		return "", r.Create(ctx, cm)
	}
	if err != nil {
		return "", err
	}
	if owner := cm.Labels[tester.LabelTest]; owner != "" {
		return fmt.Sprintf("ConfigMap %s holds the results or plan of TrafficTest %s, not a calibration", name, owner), nil
	}
	if cm.Immutable != nil && *cm.Immutable {
		return fmt.Sprintf("ConfigMap %s is immutable: name another, or delete it first", name), nil
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	cm.Data[calibration.ConfigMapKey] = raw
	cm.Labels[LabelCalibratedBy] = tt.Name
	return "", r.Update(ctx, cm)
}
