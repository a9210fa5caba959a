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

// mirrorPodUID is the annotation of a static pod's mirror in the API server: the UID the kubelet knows the
// pod (and names its cgroup) by, where the mirror's own metadata.uid is another.
const mirrorPodUID = "kubernetes.io/config.mirror"

// attachDUTPod finds the pod spec.dut.cpu.pod names running on a node, for the runner to read its cgroup's
// CPU time there; until it runs there, the test waits (PlanReady says why). A run under way keeps what it
// started with, whatever becomes of the pod (or of spec.dut.cpu): a DUT pod that ends mid-run or after it
// neither stops the run nor touches its verdict. A suspended run looks again, for its resumed runner.
func (r *TrafficTestReconciler) attachDUTPod(ctx context.Context, tt *v1alpha1.TrafficTest, p *plan.Plan) (bool, error) {
	if tt.Status.StartTime != nil && tt.Status.Phase != v1alpha1.PhaseSuspended {
		started, err := r.startedPlan(ctx, tt)
		if err != nil {
			return false, err
		}
		if started != nil {
			p.DUTPod = started.DUTPod
			return true, nil
		}
	}
	c := tt.Spec.DUT.CPU
	if c == nil || c.Pod == "" || p.CalibrationRepetitions > 0 {
		return true, nil // none, or a calibration: the tester's ports joined, no DUT
	}
	wait := func(format string, args ...any) (bool, error) {
		r.setCondition(tt, v1alpha1.ConditionPlanReady, metav1.ConditionFalse, v1alpha1.ReasonDUTPodMissing, fmt.Sprintf(format, args...))
		return false, nil
	}
	pod := &corev1.Pod{}
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: tt.Namespace, Name: c.Pod}, pod)
	switch {
	case apierrors.IsNotFound(err):
		return wait("waiting for pod %q (spec.dut.cpu.pod) in namespace %s: it does not exist", c.Pod, tt.Namespace)
	case err != nil:
		return false, err
	case pod.DeletionTimestamp != nil:
		return wait("waiting for pod %q (spec.dut.cpu.pod): it is being deleted", c.Pod)
	case pod.Spec.NodeName == "" || pod.Status.Phase != corev1.PodRunning:
		return wait("waiting for pod %q (spec.dut.cpu.pod) to run: it is %s on node %q", c.Pod, pod.Status.Phase, pod.Spec.NodeName)
	}
	if n := p.Ports[0].Node; n != "" && n != pod.Spec.NodeName {
		// where a pod runs is the cluster's doing, not the spec's: the test waits for it to run there
		return wait("waiting for pod %q (spec.dut.cpu.pod) to run on node %s, where ports[0].node puts the runner: it runs on node %s, and a pod's CPU time is read on its own node",
			c.Pod, n, pod.Spec.NodeName)
	}
	uid := string(pod.UID)
	if m := pod.Annotations[mirrorPodUID]; m != "" {
		uid = m
	}
	p.DUTPod = &plan.DUTPod{Name: pod.Name, UID: uid, Node: pod.Spec.NodeName}
	return true, nil
}
