package controllers

import (
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"linerate.dev/linerate/internal/tester"
)

// CacheOptions keep the manager's informers to the objects linerate made (by label): on a big cluster it
// must not hold every Pod and ConfigMap in memory.
func CacheOptions() cache.Options {
	own := labels.SelectorFromSet(labels.Set{tester.LabelManagedBy: "linerate"})
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Pod{}:            {Label: own},
		&corev1.ConfigMap{}:      {Label: own},
		&corev1.ServiceAccount{}: {Label: own},
		&corev1.Service{}:        {Label: own},
		&rbacv1.Role{}:           {Label: own},
		&rbacv1.RoleBinding{}:    {Label: own},
	}}
}

// Setup registers every linerate controller with a manager; the manager binary and the tests share it so
// the tests run the controllers exactly as deployed.
func Setup(mgr ctrl.Manager, opt tester.Options) error {
	if err := (&TrafficTestReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Scheme:    mgr.GetScheme(),
		Recorder:  mgr.GetEventRecorder("linerate"),
		Tester:    opt,
	}).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := (&TrafficTestScheduleReconciler{
		Client:   mgr.GetClient(),
		Scheme:   mgr.GetScheme(),
		Recorder: mgr.GetEventRecorder("linerate"),
	}).SetupWithManager(mgr); err != nil {
		return err
	}
	return (&ImixProfileReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
}
