package controllers

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/cgroupcpu"
	"linerate.dev/linerate/internal/plan"
)

// runningDUTPod makes a pod the API server says runs on node (no kubelet here: its status is set).
func runningDUTPod(t *testing.T, ns, name, node string, annotations map[string]string) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "charon", Image: "strongswan"}}}}
	if err := k8sClient.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodRunning
	if err := k8sClient.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

// A test that reads a DUT pod's CPU (spec.dut.cpu.pod) waits for the pod to run, then runs its runner on
// the pod's node with the node's cgroups mounted, the pod's UID in its plan; the pod ending mid-run ends
// neither the run nor its plan.
func TestADUTPodIsWaitedForAndTheRunnerRunsOnItsNode(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	ctx := context.Background()
	newTest(t, ns, "cnf", sriovTest(func(tt *v1alpha1.TrafficTest) {
		tt.Spec.DUT.CPU = &v1alpha1.DUTCPUSource{Pod: "gw"}
	}))
	tt := waitTest(t, ns, "cnf", "DUTPodMissing", func(tt *v1alpha1.TrafficTest) bool {
		c := condition(tt, v1alpha1.ConditionPlanReady)
		return c != nil && c.Reason == v1alpha1.ReasonDUTPodMissing && strings.Contains(c.Message, "does not exist")
	})
	if c := condition(tt, v1alpha1.ConditionPlanReady); !strings.Contains(c.Message, `"gw" (spec.dut.cpu.pod)`) || tt.Status.Phase != v1alpha1.PhasePending {
		t.Errorf("condition %+v phase %s", c, tt.Status.Phase)
	}
	gw := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gw"},
		Spec: corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "charon", Image: "strongswan"}}}}
	if err := k8sClient.Create(ctx, gw); err != nil {
		t.Fatal(err)
	}
	waitTest(t, ns, "cnf", "the pod not yet running", func(tt *v1alpha1.TrafficTest) bool {
		c := condition(tt, v1alpha1.ConditionPlanReady)
		return c != nil && c.Reason == v1alpha1.ReasonDUTPodMissing && strings.Contains(c.Message, `to run: it is Pending on node "node-a"`)
	})
	gw.Status.Phase = corev1.PodRunning
	if err := k8sClient.Status().Update(ctx, gw); err != nil {
		t.Fatal(err)
	}
	pod := waitPod(t, ns, "cnf-tester")
	if got := pod.Spec.NodeSelector[corev1.LabelHostname]; got != "node-a" {
		t.Errorf("the runner's pod is placed on node %q, the DUT pod runs on node-a", got)
	}
	mounted := false
	for _, m := range pod.Spec.Containers[0].VolumeMounts {
		mounted = mounted || (m.MountPath == cgroupcpu.NodeMount && m.ReadOnly)
	}
	if !mounted {
		t.Errorf("the runner's pod does not mount the node's cgroups: %+v", pod.Spec.Containers[0].VolumeMounts)
	}
	readPlan := func() *plan.Plan {
		t.Helper()
		cm := &corev1.ConfigMap{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cnf-plan"}, cm); err != nil {
			t.Fatal(err)
		}
		p, err := plan.Unmarshal([]byte(cm.Data[plan.ConfigMapKey]))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := readPlan(); p.DUTPod == nil || p.DUTPod.UID != string(gw.UID) || p.DUTPod.Node != "node-a" || p.DUTPod.Name != "gw" {
		t.Errorf("plan's DUT pod %+v, want gw %s on node-a", p.DUTPod, gw.UID)
	}
	kubelet(t, pod, corev1.PodRunning, 0, "")
	waitTest(t, ns, "cnf", "Running", phaseIs(v1alpha1.PhaseRunning))
	// gone for good (no kubelet here to end a graceful deletion)
	if err := k8sClient.Delete(ctx, gw, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the DUT pod gone", func() (bool, string) {
		err := k8sClient.Get(ctx, client.ObjectKeyFromObject(gw), &corev1.Pod{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	writeResults(t, ns, "cnf", testerWrites{results: sampleResults(64)})
	tt = waitTest(t, ns, "cnf", "results after the DUT pod went", func(tt *v1alpha1.TrafficTest) bool {
		return tt.Status.Results != nil && len(tt.Status.Results.Throughput) == 1
	})
	if c := condition(tt, v1alpha1.ConditionPlanReady); c == nil || c.Status != metav1.ConditionTrue || tt.Status.Phase != v1alpha1.PhaseRunning {
		t.Errorf("a running test lost its plan with its DUT pod: %+v, phase %s", c, tt.Status.Phase)
	}
	if p := readPlan(); p.DUTPod == nil || p.DUTPod.UID != string(gw.UID) {
		t.Errorf("the running test's plan lost its DUT pod: %+v", p.DUTPod)
	}
}

// A DUT pod on another node than the one ports[0] pins the runner to is waited for there, naming both nodes:
// where a pod runs is the cluster's doing, not the spec's.
func TestADUTPodOnAnotherNodeThanTheRunnerIsWaitedFor(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	runningDUTPod(t, ns, "gw", "node-a", nil)
	newTest(t, ns, "far", sriovTest(func(tt *v1alpha1.TrafficTest) {
		tt.Spec.DUT.CPU = &v1alpha1.DUTCPUSource{Pod: "gw"}
		tt.Spec.Ports[0].Node, tt.Spec.Ports[1].Node = "node-b", "node-b"
	}))
	tt := waitTest(t, ns, "far", "DUTPodMissing", func(tt *v1alpha1.TrafficTest) bool {
		c := condition(tt, v1alpha1.ConditionPlanReady)
		return c != nil && c.Reason == v1alpha1.ReasonDUTPodMissing
	})
	if c := condition(tt, v1alpha1.ConditionPlanReady); !strings.Contains(c.Message, `waiting for pod "gw" (spec.dut.cpu.pod) to run on node node-b, where ports[0].node puts the runner: it runs on node node-a`) {
		t.Errorf("condition %+v", c)
	}
	if c := condition(tt, v1alpha1.ConditionStalled); c != nil && c.Status == metav1.ConditionTrue {
		t.Errorf("a test waiting for its DUT pod is stalled: %+v", c)
	}
}

// A static pod's mirror carries the UID the kubelet names the pod's cgroup by: that one goes to the runner.
func TestAStaticDUTPodIsFoundByItsKubeletUID(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	ctx := context.Background()
	const kubeletUID = "5b1c2f0e-1111-2222-3333-444455556666"
	gw := runningDUTPod(t, ns, "gw-node-a", "node-a", map[string]string{mirrorPodUID: kubeletUID})
	newTest(t, ns, "static", sriovTest(func(tt *v1alpha1.TrafficTest) {
		tt.Spec.DUT.CPU = &v1alpha1.DUTCPUSource{Pod: "gw-node-a"}
	}))
	waitPod(t, ns, "static-tester")
	cm := &corev1.ConfigMap{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "static-plan"}, cm); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Unmarshal([]byte(cm.Data[plan.ConfigMapKey]))
	if err != nil {
		t.Fatal(err)
	}
	if p.DUTPod == nil || p.DUTPod.UID != kubeletUID {
		t.Errorf("plan's DUT pod %+v, want the kubelet's UID %s (the mirror's is %s)", p.DUTPod, kubeletUID, gw.UID)
	}
}
