package controllers

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"linerate.dev/linerate/internal/tester"
)

// Setup registers every linerate controller with a manager; the manager binary and the tests share it so
// the tests run the controllers exactly as deployed.
func Setup(mgr ctrl.Manager, opt tester.Options) error {
	if err := (&TrafficTestReconciler{
		Client:   mgr.GetClient(),
		Scheme:   mgr.GetScheme(),
		Recorder: mgr.GetEventRecorder("linerate"),
		Tester:   opt,
	}).SetupWithManager(mgr); err != nil {
		return err
	}
	return (&ImixProfileReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
}
