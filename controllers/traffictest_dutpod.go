package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/plan"
)

// dutPodPoll is how often a test waiting for its DUT pod looks for it again: the pod is the user's, and the
// manager watches only its own.
const dutPodPoll = 5 * time.Second

// attachDUTPod finds the pod spec.dut.cpu.pod names running on a node, for the runner to read its cgroup's
// CPU time there; until it runs, the test waits (PlanReady says so). A run keeps the pod it started with
// (through a suspension too): a DUT pod that ends mid-run or after it neither stops the run nor its verdict.
func (r *TrafficTestReconciler) attachDUTPod(ctx context.Context, tt *v1alpha1.TrafficTest, p *plan.Plan) (bool, error) {
	c := tt.Spec.DUT.CPU
	if c == nil || c.Pod == "" || p.CalibrationRepetitions > 0 {
		return true, nil // none, or a calibration: the tester's ports joined, no DUT
	}
	if tt.Status.StartTime != nil || tt.Status.Phase == v1alpha1.PhaseSuspended {
		started, err := r.startedPlan(ctx, tt)
		if err != nil {
			return false, err
		}
		if started != nil && started.DUTPod != nil {
			p.DUTPod = started.DUTPod
			return true, nil
		}
	}
	pod := &corev1.Pod{}
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: tt.Namespace, Name: c.Pod}, pod)
	switch {
	case apierrors.IsNotFound(err):
		r.setCondition(tt, v1alpha1.ConditionPlanReady, metav1.ConditionFalse, v1alpha1.ReasonDUTPodMissing,
			fmt.Sprintf("waiting for pod %q (spec.dut.cpu.pod) in namespace %s: it does not exist", c.Pod, tt.Namespace))
		return false, nil
	case err != nil:
		return false, err
	case pod.Spec.NodeName == "" || pod.Status.Phase != corev1.PodRunning:
		r.setCondition(tt, v1alpha1.ConditionPlanReady, metav1.ConditionFalse, v1alpha1.ReasonDUTPodMissing,
			fmt.Sprintf("waiting for pod %q (spec.dut.cpu.pod) to run: it is %s on node %q", c.Pod, pod.Status.Phase, pod.Spec.NodeName))
		return false, nil
	}
	if n := p.Ports[0].Node; n != "" && n != pod.Spec.NodeName {
		r.setCondition(tt, v1alpha1.ConditionPlanReady, metav1.ConditionFalse, v1alpha1.ReasonInvalidPlan,
			fmt.Sprintf("spec.dut.cpu.pod: pod %s runs on node %s, but ports[0].node pins the runner to node %s: a pod's CPU time is read on its own node",
				c.Pod, pod.Spec.NodeName, n))
		return false, nil
	}
	p.DUTPod = &plan.DUTPod{Name: pod.Name, UID: string(pod.UID), Node: pod.Spec.NodeName}
	return true, nil
}
