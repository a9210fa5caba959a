package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/tester"
)

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
