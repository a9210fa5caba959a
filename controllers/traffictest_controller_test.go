package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/calibration"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/rfc2544"
	"linerate.dev/linerate/internal/tester"
)

func newTest(t *testing.T, ns, name string, tt *v1alpha1.TrafficTest) *v1alpha1.TrafficTest {
	t.Helper()
	tt.Namespace, tt.Name = ns, name
	if err := k8sClient.Create(context.Background(), tt); err != nil {
		t.Fatal(err)
	}
	return tt
}

func waitPod(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	eventually(t, "pod "+name, func() (bool, string) {
		err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, pod)
		return err == nil, fmt.Sprint(err)
	})
	return pod
}

// waitTest waits until cond holds on the TrafficTest.
func waitTest(t *testing.T, ns, name, what string, cond func(*v1alpha1.TrafficTest) bool) *v1alpha1.TrafficTest {
	t.Helper()
	var tt *v1alpha1.TrafficTest
	eventually(t, what, func() (bool, string) {
		tt = getTest(t, ns, name)
		if tt == nil {
			return false, "not found"
		}
		b, _ := json.Marshal(tt.Status)
		return cond(tt), string(b)
	})
	return tt
}

func phaseIs(p v1alpha1.Phase) func(*v1alpha1.TrafficTest) bool {
	return func(tt *v1alpha1.TrafficTest) bool { return tt.Status.Phase == p }
}

// kubelet plays the node: it moves a pod's phase the way a kubelet reports it.
func kubelet(t *testing.T, pod *corev1.Pod, phase corev1.PodPhase, exit int32, reason string) {
	t.Helper()
	// the operator may write the pod between our read and our write, as it may a real kubelet's
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error { return kubeletOnce(pod, phase, exit, reason) })
	if err != nil {
		t.Fatal(err)
	}
}

func kubeletOnce(pod *corev1.Pod, phase corev1.PodPhase, exit int32, reason string) error {
	ctx := context.Background()
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
		return err
	}
	pod.Status.Phase = phase
	cs := corev1.ContainerStatus{Name: "tester", Image: pod.Spec.Containers[0].Image, ImageID: "sha256:0"}
	switch phase {
	case corev1.PodRunning:
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.Now()}
		cs.Ready = true
	case corev1.PodSucceeded, corev1.PodFailed:
		cs.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: exit, Reason: reason, Message: "engine: " + reason,
			StartedAt: metav1.Now(), FinishedAt: metav1.Now()}
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
	return k8sClient.Status().Update(ctx, pod)
}

// testerWrites plays the runner: it updates the results ConfigMap as the runner does.
type testerWrites struct {
	results  *v1alpha1.Results
	progress *v1alpha1.Progress
	state    *results.State
	trials   []results.Trial
	segments []results.Segment
}

func writeResults(t *testing.T, ns, test string, w testerWrites) {
	t.Helper()
	ctx := context.Background()
	cm := &corev1.ConfigMap{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: results.ConfigMapName(test)}, cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	put := func(key string, v any) {
		if v == nil {
			return
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		cm.Data[key] = string(b)
	}
	if w.results != nil {
		put(results.KeyResults, w.results)
	}
	if w.progress != nil {
		put(results.KeyProgress, w.progress)
	}
	if w.state != nil {
		put(results.KeyState, w.state)
	}
	if w.segments != nil {
		put(results.KeySegments, w.segments)
	}
	if w.trials != nil {
		b, err := results.EncodeTrials(w.trials)
		if err != nil {
			t.Fatal(err)
		}
		cm.BinaryData = map[string][]byte{results.KeyTrials: b}
	}
	if err := k8sClient.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
}

func sampleResults(sizes ...int32) *v1alpha1.Results {
	r := &v1alpha1.Results{LineRateBitsPerSecond: 10_000_000_000}
	for _, s := range sizes {
		fps := 10_000_000_000 / ((int64(s) + 20) * 8) / 2
		r.Throughput = append(r.Throughput, v1alpha1.ThroughputResult{
			FrameSize: s, Direction: "west->east", LossPercent: "0", Trials: 9, TrialSeconds: "11",
			NDR: v1alpha1.Rate{FramesPerSecond: fps, L2BitsPerSecond: fps * int64(s) * 8, L1BitsPerSecond: fps * (int64(s) + 20) * 8, PercentOfLineRate: "50.00"},
		})
	}
	return r
}

func trialsN(n int) []results.Trial {
	out := make([]results.Trial, n)
	for i := range out {
		out[i] = results.Trial{Seq: i + 1, Test: v1alpha1.TestThroughput, FrameSize: 64, Direction: "west->east", Purpose: "search",
			TxFrames: 1000, RxFrames: 1000, Pass: true}
	}
	return out
}

func condition(tt *v1alpha1.TrafficTest, typ string) *metav1.Condition {
	return meta.FindStatusCondition(tt.Status.Conditions, typ)
}

func TestTesterPodIsRenderedForDPDK(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	newTest(t, ns, "gw", sriovTest())
	pod := waitPod(t, ns, "gw-tester")
	ctx := context.Background()

	c := pod.Spec.Containers[0]
	cpu, mem, huge := c.Resources.Limits.Cpu(), c.Resources.Limits.Memory(), c.Resources.Limits[corev1.ResourceName("hugepages-2Mi")]
	// memory: 1Gi and the sequence windows of the two directions it receives, a bit per frame of the
	// longest trial (2 s + 1 s warm-up + 2 s drain + 1 s) at 10 GbE: 2 x 89.3 M bits = 22 MiB (rounded up)
	if cpu.Value() != 4 || mem.String() != "1046Mi" || huge.String() != "2Gi" {
		t.Errorf("limits: cpu %s memory %s hugepages %s", cpu, mem, huge.String())
	}
	for name, q := range c.Resources.Limits {
		if r := c.Resources.Requests[name]; r.Cmp(q) != 0 {
			t.Errorf("requests must equal limits for Guaranteed QoS: %s request %s limit %s", name, r.String(), q.String())
		}
	}
	if vf := c.Resources.Limits[corev1.ResourceName("intel.com/sriov_82599")]; vf.Value() != 2 {
		t.Errorf("SR-IOV resource: want 2 VFs, got %s", vf.String())
	}
	var nets []map[string]string
	if err := json.Unmarshal([]byte(pod.Annotations[tester.NetworksAnnotation]), &nets); err != nil || len(nets) != 2 || nets[0]["name"] != "sriov-west" ||
		nets[0]["interface"] != "net1" || nets[1]["interface"] != "net2" {
		t.Errorf("multus annotation (each VF port's attachment named, to find it in network-status): %q (%v)", pod.Annotations[tester.NetworksAnnotation], err)
	}
	checkNetworkStatusFile(t, pod)
	caps := c.SecurityContext.Capabilities
	if len(caps.Add) != 1 || caps.Add[0] != "IPC_LOCK" || len(caps.Drop) != 1 || caps.Drop[0] != "ALL" {
		t.Errorf("capabilities: want only IPC_LOCK for vfio-pci ports, got %+v", caps)
	}
	var hugeVol bool
	for _, v := range pod.Spec.Volumes {
		if v.EmptyDir != nil && v.EmptyDir.Medium == "HugePages-2Mi" {
			hugeVol = true
		}
	}
	if !hugeVol || pod.Spec.RestartPolicy != corev1.RestartPolicyNever || pod.Spec.ServiceAccountName != "gw-tester" {
		t.Errorf("pod spec: hugepages volume %v, restartPolicy %s, serviceAccount %s", hugeVol, pod.Spec.RestartPolicy, pod.Spec.ServiceAccountName)
	}
	if len(pod.OwnerReferences) != 1 || pod.OwnerReferences[0].Kind != "TrafficTest" || pod.Labels[tester.LabelTest] != "gw" {
		t.Errorf("owner/labels: %+v %+v", pod.OwnerReferences, pod.Labels)
	}

	planCM := &corev1.ConfigMap{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gw-plan"}, planCM); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Unmarshal([]byte(planCM.Data[plan.ConfigMapKey]))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.FrameSizes) != 2 || p.FrameSizes[1] != 1518 || p.Durations.ValidationTrial != 2*time.Second || p.Ports[0].Gateway != "198.18.1.1" {
		t.Errorf("plan: %+v", p)
	}

	role := &rbacv1.Role{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gw-tester"}, role); err != nil {
		t.Fatal(err)
	}
	for _, rule := range role.Rules {
		if len(rule.ResourceNames) == 0 {
			t.Errorf("tester role must be limited by resourceNames: %+v", rule)
		}
		for _, n := range rule.ResourceNames {
			if !strings.HasPrefix(n, "gw-") {
				t.Errorf("tester role reaches %s, not an object of its test", n)
			}
		}
		for _, v := range rule.Verbs {
			if v == "create" || v == "delete" || v == "list" {
				t.Errorf("tester role grants %s", v)
			}
		}
	}
	tt := waitTest(t, ns, "gw", "Pending with PlanReady", func(tt *v1alpha1.TrafficTest) bool {
		c := condition(tt, v1alpha1.ConditionPlanReady)
		return tt.Status.Phase == v1alpha1.PhasePending && c != nil && c.Status == metav1.ConditionTrue
	})
	if tt.Status.ObservedGeneration != tt.Generation || condition(tt, v1alpha1.ConditionPlanReady).ObservedGeneration != tt.Generation {
		t.Errorf("observedGeneration not set: %+v", tt.Status)
	}
	if tt.Status.ResultsConfigMap != "gw-results" || tt.Status.StartTime == nil {
		t.Errorf("status: %+v", tt.Status)
	}
}

func TestAFPacketPortsGetNetRaw(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	newTest(t, ns, "veth", sriovTest(withPorts(
		v1alpha1.PortSpec{Name: "a", Driver: v1alpha1.DriverAFPacket, Network: "macvlan-a"},
		v1alpha1.PortSpec{Name: "b", Driver: v1alpha1.DriverAFPacket, Network: "kube-system/macvlan-b"})))
	pod := waitPod(t, ns, "veth-tester")
	caps := pod.Spec.Containers[0].SecurityContext.Capabilities.Add
	if len(caps) != 3 || caps[0] != "IPC_LOCK" || caps[1] != "NET_ADMIN" || caps[2] != "NET_RAW" {
		t.Errorf("af_packet ports need IPC_LOCK, NET_ADMIN and NET_RAW, got %v", caps)
	}
	if !strings.Contains(pod.Annotations[tester.NetworksAnnotation], `"namespace":"kube-system"`) ||
		!strings.Contains(pod.Annotations[tester.NetworksAnnotation], `"interface":"net2"`) {
		t.Errorf("multus annotation: %s", pod.Annotations[tester.NetworksAnnotation])
	}
}

func TestPortsOnTwoNodesMakeGeneratorAndReceiver(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	newTest(t, ns, "split", sriovTest(withPorts(
		v1alpha1.PortSpec{Name: "west", Resource: "intel.com/vf", Node: "node-a"},
		v1alpha1.PortSpec{Name: "east", Resource: "intel.com/vf", Node: "node-b"})))
	gen := waitPod(t, ns, "split-generator")
	rcv := waitPod(t, ns, "split-receiver")
	if gen.Spec.NodeSelector[corev1.LabelHostname] != "node-a" || rcv.Spec.NodeSelector[corev1.LabelHostname] != "node-b" {
		t.Errorf("placement: %v / %v", gen.Spec.NodeSelector, rcv.Spec.NodeSelector)
	}
	if q := rcv.Spec.Containers[0].Resources.Limits[corev1.ResourceName("intel.com/vf")]; q.Value() != 1 {
		t.Errorf("receiver VFs: %s", q.String())
	}
	svc := &corev1.Service{}
	if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "split-receiver"}, svc); err != nil {
		t.Fatalf("receiver service: %v", err)
	}
	if !strings.Contains(strings.Join(gen.Spec.Containers[0].Args, " "), "--remote-engine east=tcp:split-receiver."+ns+".svc:7777") {
		t.Errorf("generator args: %v", gen.Spec.Containers[0].Args)
	}
}

func TestRunSucceedsWithLiveProgressResultsAndVerdict(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	// sampleResults holds one direction: the plan must ask for no more, or the verdict is Inconclusive
	newTest(t, ns, "ok", sriovTest(unidirectional, minThroughput(64, "40")))
	pod := waitPod(t, ns, "ok-tester")
	kubelet(t, pod, corev1.PodRunning, 0, "")
	waitTest(t, ns, "ok", "Running", func(tt *v1alpha1.TrafficTest) bool {
		c := condition(tt, v1alpha1.ConditionTesterReady)
		return tt.Status.Phase == v1alpha1.PhaseRunning && c != nil && c.Status == metav1.ConditionTrue
	})

	writeResults(t, ns, "ok", testerWrites{
		progress: &v1alpha1.Progress{Test: v1alpha1.TestThroughput, FrameSize: 64, Direction: "west->east", Trial: 3, StepsDone: 0, StepsTotal: 4},
		trials:   trialsN(3),
	})
	tt := waitTest(t, ns, "ok", "live progress", func(tt *v1alpha1.TrafficTest) bool {
		return tt.Status.Progress != nil && tt.Status.Progress.Trial == 3 && tt.Status.TrialsMeasured == 3
	})
	if tt.Status.Progress.Summary == "" {
		t.Error("progress summary empty: kubectl get shows nothing")
	}

	writeResults(t, ns, "ok", testerWrites{results: sampleResults(64, 1518), trials: trialsN(20),
		state: &results.State{State: results.StateSucceeded, Time: time.Now()}})
	kubelet(t, pod, corev1.PodSucceeded, 0, "Completed")
	tt = waitTest(t, ns, "ok", "Succeeded", phaseIs(v1alpha1.PhaseSucceeded))
	if tt.Status.Results == nil || len(tt.Status.Results.Throughput) != 2 || tt.Status.TrialsMeasured != 20 {
		t.Fatalf("results not in status: %+v", tt.Status)
	}
	if tt.Status.Verdict != v1alpha1.VerdictPassed || condition(tt, v1alpha1.ConditionExpectationsMet).Status != metav1.ConditionTrue {
		t.Errorf("verdict: %s %+v", tt.Status.Verdict, tt.Status.Failures)
	}
	if c := condition(tt, v1alpha1.ConditionComplete); c == nil || c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.ReasonAllTestsDone {
		t.Errorf("Complete condition: %+v", c)
	}
	if !strings.HasPrefix(tt.Status.Headline, "NDR 1518B") || tt.Status.CompletionTime == nil || tt.Status.Results.DUT.Name != "gw-1" {
		t.Errorf("headline %q completion %v dut %+v", tt.Status.Headline, tt.Status.CompletionTime, tt.Status.Results.DUT)
	}
}

// A run that ends with a planned row missing is never Passed, even when every row it has meets the
// expectations: the spec asks for both directions, the tester wrote one.
func TestMissingDirectionMakesTheVerdictInconclusive(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	newTest(t, ns, "half", sriovTest(minThroughput(64, "40")))
	pod := waitPod(t, ns, "half-tester")
	writeResults(t, ns, "half", testerWrites{results: sampleResults(64, 1518), state: &results.State{State: results.StateSucceeded}})
	kubelet(t, pod, corev1.PodSucceeded, 0, "Completed")
	tt := waitTest(t, ns, "half", "Succeeded", phaseIs(v1alpha1.PhaseSucceeded))
	if tt.Status.Verdict != v1alpha1.VerdictInconclusive {
		t.Fatalf("verdict %s (failures %q), want Inconclusive", tt.Status.Verdict, tt.Status.Failures)
	}
	c := condition(tt, v1alpha1.ConditionExpectationsMet)
	if c == nil || c.Status != metav1.ConditionUnknown || c.Reason != v1alpha1.ReasonResultsIncomplete ||
		!strings.Contains(c.Message, "throughput 64 B east->west") || !strings.Contains(c.Message, "throughput 1518 B east->west") {
		t.Errorf("ExpectationsMet: %+v", c)
	}
	eventually(t, "a Warning event naming what is missing", func() (bool, string) {
		var evs corev1.EventList
		if err := k8sClient.List(context.Background(), &evs, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		for _, e := range evs.Items {
			if e.Type == corev1.EventTypeWarning && e.Reason == v1alpha1.ReasonResultsIncomplete && strings.Contains(e.Message, "east->west") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events, none a ResultsIncomplete warning", len(evs.Items))
	})
}

// An expectation the measured NDR (half the line rate) misses, though the line could carry it, fails the
// verdict; one the line cannot carry is refused before the run (internal/plan, reachable.go).
func TestMissedExpectationFailsTheVerdict(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	newTest(t, ns, "strict", sriovTest(unidirectional, func(tt *v1alpha1.TrafficTest) {
		l2 := resource.MustParse("9G") // 10G carries 9.87 Gbit/s L2 at 1518 B
		tt.Spec.Expectations = &v1alpha1.Expectations{
			MinThroughput: []v1alpha1.ThroughputExpectation{{FrameSize: 1518, L2BitsPerSecond: &l2}},
			MaxLatency:    []v1alpha1.LatencyExpectation{{Statistic: "p99", Max: metav1.Duration{Duration: time.Microsecond}}},
		}
	}))
	pod := waitPod(t, ns, "strict-tester")
	writeResults(t, ns, "strict", testerWrites{results: sampleResults(64, 1518), state: &results.State{State: results.StateSucceeded}})
	kubelet(t, pod, corev1.PodSucceeded, 0, "Completed")
	tt := waitTest(t, ns, "strict", "Succeeded", phaseIs(v1alpha1.PhaseSucceeded))
	// the throughput was measured and missed; the latency was not measured at all: Failed, and the
	// failures say both
	if tt.Status.Verdict != v1alpha1.VerdictFailed || len(tt.Status.Failures) != 2 {
		t.Fatalf("verdict %s failures %q", tt.Status.Verdict, tt.Status.Failures)
	}
	c := condition(tt, v1alpha1.ConditionExpectationsMet)
	if c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "1518 B west->east") || !strings.Contains(c.Message, "no latency was measured") {
		t.Errorf("condition: %+v", c)
	}
}

func TestTesterCrashKeepsMeasuredTrials(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	newTest(t, ns, "crash", sriovTest())
	pod := waitPod(t, ns, "crash-tester")
	kubelet(t, pod, corev1.PodRunning, 0, "")
	writeResults(t, ns, "crash", testerWrites{results: sampleResults(64), trials: trialsN(7)})
	waitTest(t, ns, "crash", "first results", func(tt *v1alpha1.TrafficTest) bool { return tt.Status.TrialsMeasured == 7 })
	kubelet(t, pod, corev1.PodFailed, 139, "Error")
	tt := waitTest(t, ns, "crash", "Failed", phaseIs(v1alpha1.PhaseFailed))
	c := condition(tt, v1alpha1.ConditionFailed)
	if c == nil || c.Reason != v1alpha1.ReasonTesterFailed || !strings.Contains(c.Message, "exited with code 139") {
		t.Errorf("Failed condition: %+v", c)
	}
	if tt.Status.Results == nil || len(tt.Status.Results.Throughput) != 1 || tt.Status.TrialsMeasured != 7 {
		t.Errorf("partial results lost: %+v", tt.Status)
	}
}

func TestDUTStallIsReportedAsTheReason(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	newTest(t, ns, "stall", sriovTest())
	pod := waitPod(t, ns, "stall-tester")
	kubelet(t, pod, corev1.PodRunning, 0, "")
	writeResults(t, ns, "stall", testerWrites{results: sampleResults(64), state: &results.State{State: results.StateFailed,
		Reason: v1alpha1.ReasonDUTStalled, Message: "nothing received on east for 2s at 1518 B (DUT stopped forwarding)"}})
	kubelet(t, pod, corev1.PodFailed, 3, "Error")
	tt := waitTest(t, ns, "stall", "Failed", phaseIs(v1alpha1.PhaseFailed))
	if c := condition(tt, v1alpha1.ConditionFailed); c.Reason != v1alpha1.ReasonDUTStalled || !strings.Contains(c.Message, "DUT stopped forwarding") {
		t.Errorf("want reason DUTStalled, got %+v", c)
	}
}

func TestManagerRestartMidTestLosesNothing(t *testing.T) {
	m := startManager(t)
	ns := namespace(t)
	newTest(t, ns, "restart", sriovTest())
	pod := waitPod(t, ns, "restart-tester")
	kubelet(t, pod, corev1.PodRunning, 0, "")
	writeResults(t, ns, "restart", testerWrites{results: sampleResults(64), trials: trialsN(5)})
	waitTest(t, ns, "restart", "5 trials", func(tt *v1alpha1.TrafficTest) bool { return tt.Status.TrialsMeasured == 5 })
	m.stop()

	// While no operator runs, the tester goes on and finishes.
	writeResults(t, ns, "restart", testerWrites{results: sampleResults(64, 1518), trials: trialsN(12),
		state: &results.State{State: results.StateSucceeded}})
	kubelet(t, pod, corev1.PodSucceeded, 0, "Completed")

	startManager(t)
	tt := waitTest(t, ns, "restart", "Succeeded after restart", phaseIs(v1alpha1.PhaseSucceeded))
	if tt.Status.TrialsMeasured != 12 || len(tt.Status.Results.Throughput) != 2 {
		t.Errorf("results after restart: %+v", tt.Status)
	}
	var pods corev1.PodList
	if err := k8sClient.List(context.Background(), &pods, client.InNamespace(ns)); err != nil || len(pods.Items) != 1 {
		t.Errorf("the restarted operator must not start a second tester: %d pods (%v)", len(pods.Items), err)
	}
}

func TestDeletedPodFailsTheRunWithReason(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	newTest(t, ns, "lost", sriovTest())
	pod := waitPod(t, ns, "lost-tester")
	kubelet(t, pod, corev1.PodRunning, 0, "")
	waitTest(t, ns, "lost", "Running", phaseIs(v1alpha1.PhaseRunning))
	writeResults(t, ns, "lost", testerWrites{results: sampleResults(64)})
	if err := k8sClient.Delete(context.Background(), pod, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	tt := waitTest(t, ns, "lost", "Failed", phaseIs(v1alpha1.PhaseFailed))
	if c := condition(tt, v1alpha1.ConditionFailed); c.Reason != v1alpha1.ReasonTesterPodLost {
		t.Errorf("reason: %+v", c)
	}
	if tt.Status.Results == nil || len(tt.Status.Results.Throughput) != 1 {
		t.Errorf("results lost with the pod: %+v", tt.Status.Results)
	}
}

func TestMissingImixProfileWaitsThenProceeds(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	newTest(t, ns, "imix", sriovTest(withPorts(
		v1alpha1.PortSpec{Name: "west", Resource: "intel.com/vf"},
		v1alpha1.PortSpec{Name: "east", Resource: "intel.com/vf"}), func(tt *v1alpha1.TrafficTest) {
		tt.Spec.Tests = []v1alpha1.TestKind{v1alpha1.TestImixThroughput}
		tt.Spec.Imix = &v1alpha1.ImixSource{ProfileRef: &v1alpha1.LocalObjectReference{Name: "ipsec"}}
	}))
	tt := waitTest(t, ns, "imix", "ImixProfileMissing", func(tt *v1alpha1.TrafficTest) bool {
		c := condition(tt, v1alpha1.ConditionPlanReady)
		return c != nil && c.Reason == v1alpha1.ReasonImixProfileMissing
	})
	if !strings.Contains(condition(tt, v1alpha1.ConditionPlanReady).Message, `"ipsec"`) || tt.Status.Phase != v1alpha1.PhasePending {
		t.Errorf("condition: %+v", condition(tt, v1alpha1.ConditionPlanReady))
	}
	// waiting for a profile someone may yet apply is in progress, not failed, to GitOps tools
	if ks, argo := kstatusOf(t, tt), first(argoHealth(t, tt)); ks != "InProgress" || argo != "Progressing" {
		t.Errorf("waiting for its profile: kstatus %s, Argo CD %s", ks, argo)
	}
	profile := &v1alpha1.ImixProfile{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ipsec"}, Spec: v1alpha1.ImixSpec{Entries: []v1alpha1.ImixEntry{
		{FrameSize: 90, Weight: 5867}, {FrameSize: 92, Weight: 200}, {FrameSize: 594, Weight: 2366}, {FrameSize: 1418, Weight: 1567}}}}
	if err := k8sClient.Create(context.Background(), profile); err != nil {
		t.Fatal(err)
	}
	waitPod(t, ns, "imix-tester")
	eventually(t, "ImixProfile status", func() (bool, string) {
		p := &v1alpha1.ImixProfile{}
		_ = k8sClient.Get(context.Background(), client.ObjectKeyFromObject(profile), p)
		return p.Status.CycleLength == 10000 && p.Status.AverageFrameSize == "417.38", fmt.Sprintf("%+v", p.Status)
	})
}

func TestCancelSuspendDeadlineAndTTL(t *testing.T) {
	m := startManager(t)
	ns := namespace(t)
	ctx := context.Background()

	// cancel: pods go, results stay, Failed/Cancelled
	newTest(t, ns, "cancel", sriovTest())
	pod := waitPod(t, ns, "cancel-tester")
	kubelet(t, pod, corev1.PodRunning, 0, "")
	writeResults(t, ns, "cancel", testerWrites{results: sampleResults(64)})
	tt := waitTest(t, ns, "cancel", "Running", phaseIs(v1alpha1.PhaseRunning))
	tt.Spec.Cancel = true
	if err := k8sClient.Update(ctx, tt); err != nil {
		t.Fatal(err)
	}
	tt = waitTest(t, ns, "cancel", "Cancelled", phaseIs(v1alpha1.PhaseFailed))
	if c := condition(tt, v1alpha1.ConditionFailed); c.Reason != v1alpha1.ReasonCancelled || tt.Status.Results == nil {
		t.Errorf("cancel: %+v results %v", c, tt.Status.Results)
	}
	eventually(t, "cancelled pod deleted", func() (bool, string) {
		err := k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})

	// suspend: no pod, phase Suspended; resume: pod again
	newTest(t, ns, "susp", sriovTest(func(tt *v1alpha1.TrafficTest) { tt.Spec.Suspend = true }))
	waitTest(t, ns, "susp", "Suspended", phaseIs(v1alpha1.PhaseSuspended))
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "susp-tester"}, &corev1.Pod{}); !apierrors.IsNotFound(err) {
		t.Errorf("a suspended test has a pod: %v", err)
	}
	tt = getTest(t, ns, "susp")
	tt.Spec.Suspend = false
	if err := k8sClient.Update(ctx, tt); err != nil {
		t.Fatal(err)
	}
	susp := waitPod(t, ns, "susp-tester")
	// it holds the testbed the next one shares: gone with its pods (the garbage collector's work, which
	// envtest does not do), it frees it
	if err := k8sClient.Delete(ctx, tt); err != nil {
		t.Fatal(err)
	}
	if err := k8sClient.Delete(ctx, susp); err != nil {
		t.Fatal(err)
	}

	// deadline and TTL, on the operator's clock
	newTest(t, ns, "late", sriovTest(func(tt *v1alpha1.TrafficTest) {
		tt.Spec.ActiveDeadlineSeconds, tt.Spec.TTLSecondsAfterFinished = ptr[int64](600), ptr[int32](60)
	}))
	pod = waitPod(t, ns, "late-tester")
	kubelet(t, pod, corev1.PodRunning, 0, "")
	waitTest(t, ns, "late", "Running", phaseIs(v1alpha1.PhaseRunning))
	m.clock.Advance(11 * time.Minute)
	tt = waitTest(t, ns, "late", "DeadlineExceeded", phaseIs(v1alpha1.PhaseFailed))
	if c := condition(tt, v1alpha1.ConditionFailed); c.Reason != v1alpha1.ReasonDeadlineExceeded {
		t.Errorf("deadline: %+v", c)
	}
	m.clock.Advance(2 * time.Minute)
	// Poke the object so the reconciler looks at the clock now rather than at its requeue time.
	tt.Annotations = map[string]string{"poke": "1"}
	if err := k8sClient.Update(ctx, tt); err != nil {
		t.Fatal(err)
	}
	eventually(t, "TTL deletion", func() (bool, string) {
		return getTest(t, ns, "late") == nil, "still there"
	})
}

// Suspend, then resume: the stopped runner's last words (it ends "Failed: Cancelled" when its pod is
// stopped) do not end the resumed run, no new pod starts while the old one is still stopping, and the
// records measured before stay where they are, counted in the status with the segments that hold them.
func TestResumeIgnoresTheStoppedRunnerAndKeepsTheRecords(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	ctx := context.Background()
	newTest(t, ns, "pause", sriovTest())
	pod := waitPod(t, ns, "pause-tester")
	// the kubelet takes its time to stop the container: the pod stays, terminating, until it is done
	pod.Finalizers = []string{"linerate.dev/test-kubelet-still-stopping"}
	if err := k8sClient.Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	kubelet(t, pod, corev1.PodRunning, 0, "")
	trials := []results.Trial{{Seq: 1501, Test: v1alpha1.TestThroughput, FrameSize: 64}, {Seq: 1502, Test: v1alpha1.TestThroughput, FrameSize: 128}}
	writeResults(t, ns, "pause", testerWrites{results: sampleResults(64), trials: trials,
		segments: []results.Segment{{ConfigMap: results.SegmentConfigMapName("pause", 1), Trials: 1500, FirstSeq: 1, LastSeq: 1500}},
		state:    &results.State{State: results.StateRunning}})
	tt := waitTest(t, ns, "pause", "Running with 1502 trials", func(tt *v1alpha1.TrafficTest) bool {
		return tt.Status.Phase == v1alpha1.PhaseRunning && tt.Status.TrialsMeasured == 1502
	})
	if got := tt.Status.TrialConfigMaps; len(got) != 1 || got[0] != "pause-trials-1" {
		t.Errorf("status.trialConfigMaps %v", got)
	}

	tt.Spec.Suspend = true
	if err := k8sClient.Update(ctx, tt); err != nil {
		t.Fatal(err)
	}
	tt = waitTest(t, ns, "pause", "Suspended", phaseIs(v1alpha1.PhaseSuspended))
	if c := condition(tt, v1alpha1.ConditionTesterReady); c == nil || !strings.Contains(c.Message, "goes on after its last complete step") {
		t.Errorf("suspended: %+v", c)
	}
	// the stopping runner reports its end, as RunPod does when its context ends
	writeResults(t, ns, "pause", testerWrites{state: &results.State{State: results.StateFailed, Reason: "Cancelled", Message: "context canceled"}})

	tt.Spec.Suspend = false
	if err := k8sClient.Update(ctx, tt); err != nil {
		t.Fatal(err)
	}
	waitTest(t, ns, "pause", "waiting for the stopping pod", func(tt *v1alpha1.TrafficTest) bool {
		c := condition(tt, v1alpha1.ConditionTesterReady)
		return c != nil && strings.Contains(c.Message, "waiting for tester pod(s) pause-tester to end")
	})
	time.Sleep(time.Second)
	if tt = getTest(t, ns, "pause"); tt.Status.Phase == v1alpha1.PhaseFailed {
		t.Fatalf("the resumed run ended on the stopped runner's state: %+v", tt.Status.Conditions)
	}

	old := pod.UID
	pod.Finalizers = nil
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
		t.Fatal(err)
	}
	pod.Finalizers = nil
	if err := k8sClient.Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a new tester pod", func() (bool, string) {
		p := &corev1.Pod{}
		err := k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), p)
		return err == nil && p.UID != old, fmt.Sprint(err)
	})
	cm := &corev1.ConfigMap{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: results.ConfigMapName("pause")}, cm); err != nil {
		t.Fatal(err)
	}
	if _, stale := cm.Data[results.KeyState]; stale {
		t.Errorf("the stopped runner's state is still there for the new runner's operator to read: %s", cm.Data[results.KeyState])
	}
	if got, err := results.DecodeTrials(cm.BinaryData[results.KeyTrials]); err != nil || len(got) != 2 || cm.Data[results.KeySegments] == "" || cm.Data[results.KeyResults] == "" {
		t.Errorf("records or tables lost on resume: %d open records (%v), segments %q", len(got), err, cm.Data[results.KeySegments])
	}
	pod = waitPod(t, ns, "pause-tester")
	kubelet(t, pod, corev1.PodRunning, 0, "")
	tt = waitTest(t, ns, "pause", "Running again", phaseIs(v1alpha1.PhaseRunning))
	if tt.Status.TrialsMeasured != 1502 || tt.Status.Results == nil {
		t.Errorf("after resuming: %d trials, results %v", tt.Status.TrialsMeasured, tt.Status.Results)
	}
}

// The operator makes the ConfigMap the runner seals trial records into next, once the records in the
// results ConfigMap are half way to being sealed, owned by the test so that it goes with it; the tester
// itself may create nothing.
func TestOperatorMakesTheNextTrialSegment(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	ctx := context.Background()
	newTest(t, ns, "long", sriovTest())
	kubelet(t, waitPod(t, ns, "long-tester"), corev1.PodRunning, 0, "")
	fault := strings.Repeat("port west: the tester's own receive path dropped frames; ", 20)
	var trials []results.Trial
	for i := 1; i <= 500; i++ {
		trials = append(trials, results.Trial{Seq: 2000 + i, Test: v1alpha1.TestThroughput, FrameSize: 64, TesterFaults: []string{fault}})
	}
	write := func(n int) {
		writeResults(t, ns, "long", testerWrites{trials: trials[:n],
			segments: []results.Segment{{ConfigMap: "long-trials-1", Trials: 2000, FirstSeq: 1, LastSeq: 2000}}})
	}
	write(10)
	waitTest(t, ns, "long", "10 open records counted", func(tt *v1alpha1.TrafficTest) bool { return tt.Status.TrialsMeasured == 2010 })
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "long-trials-2"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a spare segment made while the open one is nearly empty: %v", err)
	}
	write(500) // some 600 KB of JSON lines: past half of results.SealBytes
	spare := &corev1.ConfigMap{}
	eventually(t, "segment long-trials-2", func() (bool, string) {
		err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "long-trials-2"}, spare)
		return err == nil, fmt.Sprint(err)
	})
	tt := getTest(t, ns, "long")
	if !metav1.IsControlledBy(spare, tt) || spare.Labels[tester.LabelTest] != "long" {
		t.Errorf("segment long-trials-2: owners %+v labels %v", spare.OwnerReferences, spare.Labels)
	}
}

// TrafficTests that share a testbed take turns in creation order, each waiting in phase Queued with its
// position and what it waits for; a finished or deleted test frees the testbed at once. Tests on two
// testbeds run together.
func TestTestbedIsSharedInTurn(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	ctx := context.Background()
	names := []string{"q1", "q2", "q3", "q4", "q5"}
	for _, n := range names {
		newTest(t, ns, n, sriovTest())
		time.Sleep(1100 * time.Millisecond) // creation order is by the second
	}
	for i, n := range names {
		pod := waitPod(t, ns, n+"-tester")
		for j, m := range names[i+1:] {
			tt := waitTest(t, ns, m, fmt.Sprintf("%s queued at %d", m, j+1), func(tt *v1alpha1.TrafficTest) bool {
				return tt.Status.Phase == v1alpha1.PhaseQueued && tt.Status.Queue != nil && tt.Status.Queue.Position == int32(j+1)
			})
			if len(tt.Status.TesterPods) != 0 || !strings.Contains(strings.Join(tt.Status.Queue.WaitingFor, ";"), n+" runs on DUT gw-1") {
				t.Fatalf("%s: pods %v, waiting for %q", m, tt.Status.TesterPods, tt.Status.Queue.WaitingFor)
			}
			if c := condition(tt, v1alpha1.ConditionReconciling); c == nil || c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.ReasonQueued {
				t.Errorf("%s: Reconciling %+v", m, c)
			}
			// a queued test is on its way to GitOps tools too
			if ks, argo := kstatusOf(t, tt), first(argoHealth(t, tt)); ks != "InProgress" || argo != "Progressing" {
				t.Errorf("%s queued: kstatus %s, Argo CD %s", m, ks, argo)
			}
		}
		if i == 2 {
			// deleting the holder frees the testbed once its pods, which still send while they stop, are
			// gone (the garbage collector deletes them; envtest runs none, so the test does)
			if err := k8sClient.Delete(ctx, getTest(t, ns, n)); err != nil {
				t.Fatal(err)
			}
			waitTest(t, ns, names[i+1], "the next waits for the deleted test's pod", func(tt *v1alpha1.TrafficTest) bool {
				return tt.Status.Phase == v1alpha1.PhaseQueued &&
					strings.Contains(strings.Join(tt.Status.Queue.WaitingFor, ";"), "pod "+ns+"/"+n+"-tester of deleted test "+n+" still runs on DUT gw-1")
			})
			if err := k8sClient.Delete(ctx, pod); err != nil {
				t.Fatal(err)
			}
			continue
		}
		writeResults(t, ns, n, testerWrites{results: sampleResults(64, 1518), state: &results.State{State: results.StateSucceeded}})
		kubelet(t, pod, corev1.PodSucceeded, 0, "Completed")
		waitTest(t, ns, n, n+" done", phaseIs(v1alpha1.PhaseSucceeded))
	}

	// a later test of higher priority goes ahead of the waiting ones, not of the running one
	newTest(t, ns, "p0", sriovTest())
	time.Sleep(1100 * time.Millisecond)
	newTest(t, ns, "p1", sriovTest())
	time.Sleep(1100 * time.Millisecond)
	newTest(t, ns, "urgent", sriovTest(func(tt *v1alpha1.TrafficTest) { tt.Spec.Priority = 10 }))
	waitTest(t, ns, "urgent", "urgent first in the queue", func(tt *v1alpha1.TrafficTest) bool {
		return tt.Status.Phase == v1alpha1.PhaseQueued && tt.Status.Queue.Position == 1
	})
	waitTest(t, ns, "p1", "p1 behind urgent", func(tt *v1alpha1.TrafficTest) bool {
		return tt.Status.Phase == v1alpha1.PhaseQueued && tt.Status.Queue.Position == 2 &&
			strings.Contains(strings.Join(tt.Status.Queue.WaitingFor, ";"), "urgent is ahead for")
	})
	for _, n := range []string{"p0", "urgent", "p1"} {
		pod := waitPod(t, ns, n+"-tester")
		writeResults(t, ns, n, testerWrites{results: sampleResults(64, 1518), state: &results.State{State: results.StateSucceeded}})
		kubelet(t, pod, corev1.PodSucceeded, 0, "Completed")
		waitTest(t, ns, n, n+" done", phaseIs(v1alpha1.PhaseSucceeded))
	}

	// two testbeds: nothing shared, both run at once
	other := func(tt *v1alpha1.TrafficTest) {
		tt.Spec.DUT.Name = "gw-2"
		tt.Spec.Ports[0].Network, tt.Spec.Ports[1].Network = "sriov-west-2", "sriov-east-2"
		tt.Spec.Ports[0].Resource, tt.Spec.Ports[1].Resource = "intel.com/pf2", "intel.com/pf2"
	}
	newTest(t, ns, "bed1", sriovTest())
	newTest(t, ns, "bed2", sriovTest(other))
	waitPod(t, ns, "bed1-tester")
	waitPod(t, ns, "bed2-tester")
}

func TestBaselinePenalty(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	newTest(t, ns, "clear", sriovTest())
	pod := waitPod(t, ns, "clear-tester")
	base := sampleResults(64, 1518)
	writeResults(t, ns, "clear", testerWrites{results: base, state: &results.State{State: results.StateSucceeded}})
	kubelet(t, pod, corev1.PodSucceeded, 0, "Completed")
	waitTest(t, ns, "clear", "baseline done", phaseIs(v1alpha1.PhaseSucceeded))

	newTest(t, ns, "ipsec", sriovTest(func(tt *v1alpha1.TrafficTest) {
		tt.Spec.Baseline = &v1alpha1.LocalTestReference{Name: "clear"}
		tt.Spec.Expectations = &v1alpha1.Expectations{MaxPenalty: "30"}
	}))
	pod = waitPod(t, ns, "ipsec-tester")
	enc := sampleResults(64, 1518)
	for i := range enc.Throughput {
		enc.Throughput[i].NDR.L2BitsPerSecond = enc.Throughput[i].NDR.L2BitsPerSecond * 6 / 10
	}
	writeResults(t, ns, "ipsec", testerWrites{results: enc, state: &results.State{State: results.StateSucceeded}})
	kubelet(t, pod, corev1.PodSucceeded, 0, "Completed")
	tt := waitTest(t, ns, "ipsec", "done", phaseIs(v1alpha1.PhaseSucceeded))
	if len(tt.Status.Results.Penalty) != 2 || tt.Status.Results.Penalty[0].Percent != "40.00" {
		t.Fatalf("penalty: %+v", tt.Status.Results.Penalty)
	}
	if tt.Status.Verdict != v1alpha1.VerdictFailed {
		t.Errorf("a 40%% penalty must fail maxPenalty 30: %s", tt.Status.Verdict)
	}
}

// Editing a finished test (as a GitOps user does, in Git) measures again and keeps the earlier run;
// editing only its expectations judges the same results again.
func TestEditedFinishedTestRunsAgainAndKeepsThePreviousRun(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	ctx := context.Background()
	newTest(t, ns, "edited", sriovTest(unidirectional, minThroughput(0, "40")))
	pod := waitPod(t, ns, "edited-tester")
	first := sampleResults(64, 1518)
	writeResults(t, ns, "edited", testerWrites{results: first, state: &results.State{State: results.StateSucceeded}, trials: trialsN(5)})
	kubelet(t, pod, corev1.PodSucceeded, 0, "Completed")
	tt := waitTest(t, ns, "edited", "first run passed", func(tt *v1alpha1.TrafficTest) bool { return tt.Status.Verdict == v1alpha1.VerdictPassed })
	firstUID := pod.UID

	// only what judges it: the same results, judged again; nothing measured again
	tt.Spec.Expectations = &v1alpha1.Expectations{MinThroughput: []v1alpha1.ThroughputExpectation{{PercentOfLineRate: "60"}}}
	if err := k8sClient.Update(ctx, tt); err != nil {
		t.Fatal(err)
	}
	tt = waitTest(t, ns, "edited", "judged again", func(tt *v1alpha1.TrafficTest) bool {
		return tt.Status.Verdict == v1alpha1.VerdictFailed && tt.Status.ObservedGeneration == tt.Generation
	})
	if tt.Status.Phase != v1alpha1.PhaseSucceeded || len(tt.Status.PreviousRuns) != 0 {
		t.Fatalf("an expectations edit must not run again: phase %s, previous runs %+v", tt.Status.Phase, tt.Status.PreviousRuns)
	}

	// what it measures: a new run, the earlier one kept
	tt.Spec.FrameSizes = []int32{64, 512, 1518}
	if err := k8sClient.Update(ctx, tt); err != nil {
		t.Fatal(err)
	}
	tt = waitTest(t, ns, "edited", "second run started", func(tt *v1alpha1.TrafficTest) bool {
		return len(tt.Status.PreviousRuns) == 1 && len(tt.Status.TesterPods) == 1
	})
	prev := tt.Status.PreviousRuns[0]
	// the kept run is named by the generation it measured (1), judged last by generation 2's expectations
	if prev.Generation != 1 || prev.Phase != v1alpha1.PhaseSucceeded || prev.Verdict != v1alpha1.VerdictFailed || prev.LastTrial != 5 ||
		prev.ConfigMap != "edited-results-gen1" || tt.Status.Results != nil || tt.Status.Verdict != "" {
		t.Fatalf("previous run %+v; status now %+v", prev, tt.Status)
	}
	kept := &corev1.ConfigMap{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: prev.ConfigMap}, kept); err != nil {
		t.Fatal(err)
	}
	var keptResults v1alpha1.Results
	if err := json.Unmarshal([]byte(kept.Data[results.KeyResults]), &keptResults); err != nil || len(keptResults.Throughput) != 2 || !metav1.IsControlledBy(kept, tt) {
		t.Fatalf("kept results %q (%v), owners %v", kept.Data[results.KeyResults], err, kept.OwnerReferences)
	}
	cur := &corev1.ConfigMap{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: results.ConfigMapName("edited")}, cur); err != nil {
		t.Fatal(err)
	}
	if _, ok := cur.Data[results.KeyResults]; ok || len(cur.BinaryData[results.KeyTrials]) == 0 {
		t.Fatalf("the new run must start without the old tables but with the old records: %v keys, %d B of records", cur.Data, len(cur.BinaryData[results.KeyTrials]))
	}
	pod = waitPod(t, ns, "edited-tester")
	if pod.UID == firstUID {
		t.Fatal("the first run's pod was reused")
	}
	writeResults(t, ns, "edited", testerWrites{results: sampleResults(64, 512, 1518), state: &results.State{State: results.StateSucceeded}})
	kubelet(t, pod, corev1.PodSucceeded, 0, "Completed")
	tt = waitTest(t, ns, "edited", "second run done", phaseIs(v1alpha1.PhaseSucceeded))
	if len(tt.Status.Results.Throughput) != 3 || len(tt.Status.PreviousRuns) != 1 {
		t.Fatalf("second run: %+v, previous %+v", tt.Status.Results, tt.Status.PreviousRuns)
	}
}

// The tester's preflight record reaches the status: a port driven across NUMA nodes is the TesterPlacement
// condition, and a run the tester refused (link down) fails with the tester's reason and keeps the record.
func TestPreflightReachesTheStatus(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	newTest(t, ns, "numa", sriovTest(unidirectional))
	pod := waitPod(t, ns, "numa-tester")
	warning := "port west (0000:3b:02.1) is on NUMA node 1, but the engine runs on CPU 2 (node 0)"
	pf := &v1alpha1.Preflight{CPUs: []int32{2, 3}, CPUNUMANodes: []int32{0, 0}, MemoryNUMANodes: []int32{0}, Warnings: []string{warning},
		Ports: []v1alpha1.PortPreflight{{Name: "west", Device: "0000:3b:02.1", Driver: "net_ixgbe_vf", LinkUp: false, SpeedMbps: 10000, MaxFrame: 1518, NUMANode: 1}}}
	writeResults(t, ns, "numa", testerWrites{results: &v1alpha1.Results{Preflight: pf}})
	kubelet(t, pod, corev1.PodRunning, 0, "")
	tt := waitTest(t, ns, "numa", "TesterPlacement", func(tt *v1alpha1.TrafficTest) bool {
		c := condition(tt, v1alpha1.ConditionTesterPlacement)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == v1alpha1.ReasonCrossesNUMA && c.Message == warning
	})
	if tt.Status.Results.Preflight.Ports[0].Device != "0000:3b:02.1" {
		t.Errorf("preflight in status: %+v", tt.Status.Results.Preflight)
	}
	refusal := "preflight: port west (0000:3b:02.1): link down after 10s"
	writeResults(t, ns, "numa", testerWrites{state: &results.State{State: results.StateFailed, Reason: v1alpha1.ReasonPortLinkDown, Message: refusal}})
	kubelet(t, pod, corev1.PodFailed, 1, "Error")
	tt = waitTest(t, ns, "numa", "refused", phaseIs(v1alpha1.PhaseFailed))
	if c := condition(tt, v1alpha1.ConditionFailed); c == nil || c.Reason != v1alpha1.ReasonPortLinkDown || c.Message != refusal {
		t.Errorf("Failed condition %+v, want the tester's reason and message", c)
	}
	if tt.Status.Results == nil || tt.Status.Results.Preflight == nil || tt.Status.Verdict == v1alpha1.VerdictPassed {
		t.Errorf("a refused run keeps its preflight record and never passes: %+v", tt.Status)
	}
}

// An edit the API server allows while a test runs (dut, tester, priority) describes that run: its end does
// not start another. Editing a cancelled test's spec does not run it again either.
func TestEditsDuringARunDoNotRunItAgain(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	ctx := context.Background()
	newTest(t, ns, "live", sriovTest(unidirectional))
	pod := waitPod(t, ns, "live-tester")
	kubelet(t, pod, corev1.PodRunning, 0, "")
	tt := waitTest(t, ns, "live", "running", phaseIs(v1alpha1.PhaseRunning))
	tt.Spec.DUT.Software = "firmware 2.1"
	tt.Spec.Priority = 5
	if err := k8sClient.Update(ctx, tt); err != nil {
		t.Fatal(err)
	}
	waitTest(t, ns, "live", "edit seen", func(tt *v1alpha1.TrafficTest) bool { return tt.Status.ObservedGeneration == tt.Generation })
	writeResults(t, ns, "live", testerWrites{results: sampleResults(64, 1518), state: &results.State{State: results.StateSucceeded}})
	kubelet(t, pod, corev1.PodSucceeded, 0, "Completed")
	waitTest(t, ns, "live", "done", phaseIs(v1alpha1.PhaseSucceeded))
	time.Sleep(2 * time.Second)
	if tt := getTest(t, ns, "live"); tt.Status.Phase != v1alpha1.PhaseSucceeded || len(tt.Status.PreviousRuns) != 0 {
		t.Fatalf("an edit made during the run started another after it: phase %s, previous runs %+v", tt.Status.Phase, tt.Status.PreviousRuns)
	}
}

func TestCalibrationConfigMapIsWaitedForCheckedAndPlanned(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	ctx := context.Background()
	newTest(t, ns, "cal", sriovTest(func(tt *v1alpha1.TrafficTest) {
		tt.Spec.Tester.Calibration = &v1alpha1.TesterCalibration{ConfigMapName: "testbed-1", CeilingMargin: "5"}
	}))
	tt := waitTest(t, ns, "cal", "CalibrationMissing", func(tt *v1alpha1.TrafficTest) bool {
		c := condition(tt, v1alpha1.ConditionPlanReady)
		return c != nil && c.Reason == v1alpha1.ReasonCalibrationMissing
	})
	if c := condition(tt, v1alpha1.ConditionPlanReady); !strings.Contains(c.Message, `"testbed-1"`) || tt.Status.Phase != v1alpha1.PhasePending {
		t.Errorf("condition %+v phase %s", c, tt.Status.Phase)
	}
	// a results file in the calibration's place is refused, naming the field
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "testbed-1"},
		Data: map[string]string{calibration.ConfigMapKey: `{"results":{"throughput":[]}}`}}
	if err := k8sClient.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	tt = waitTest(t, ns, "cal", "CalibrationInvalid", func(tt *v1alpha1.TrafficTest) bool {
		c := condition(tt, v1alpha1.ConditionPlanReady)
		return c != nil && c.Reason == v1alpha1.ReasonCalibrationInvalid
	})
	if c := condition(tt, v1alpha1.ConditionPlanReady); !strings.Contains(c.Message, "spec.tester.calibration") || !strings.Contains(c.Message, "not a calibration") {
		t.Errorf("condition %+v", c)
	}
	// the calibration linerate calibrate wrote: the test goes on, with it in its plan
	// of other traffic: refused, naming what differs
	p0, err := plan.Resolve(tt, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := &calibration.Calibration{Kind: calibration.Kind, ResolutionPercent: 0.5, Shape: p0.CalibrationShape(),
		Ports:    []calibration.Port{{Name: "west", Driver: "net_ixgbe_vf"}, {Name: "east", Driver: "net_ixgbe_vf"}},
		Ceilings: []calibration.Ceiling{{FrameSize: 64, Direction: "west->east", FramesPerSecond: 9e6, PercentOfLineRate: "60.5"}}}
	other := *want
	other.Shape.Flows = 4096
	setCalibration := func(c *calibration.Calibration) {
		t.Helper()
		raw, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		cm.Data[calibration.ConfigMapKey] = string(raw)
		if err := k8sClient.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	setCalibration(&other)
	tt = waitTest(t, ns, "cal", "CalibrationMismatch", func(tt *v1alpha1.TrafficTest) bool {
		c := condition(tt, v1alpha1.ConditionPlanReady)
		return c != nil && c.Reason == v1alpha1.ReasonCalibrationMismatch
	})
	if c := condition(tt, v1alpha1.ConditionPlanReady); !strings.Contains(c.Message, "flows 1, calibrated with 4096") {
		t.Errorf("condition %+v", c)
	}
	setCalibration(want)
	waitPod(t, ns, "cal-tester")
	planCM := &corev1.ConfigMap{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cal-plan"}, planCM); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Unmarshal([]byte(planCM.Data[plan.ConfigMapKey]))
	if err != nil {
		t.Fatal(err)
	}
	if p.Calibration == nil || len(p.Calibration.Ceilings) != 1 || p.Calibration.Ceilings[0].FramesPerSecond != 9e6 || p.CeilingMarginPercent != 5 {
		t.Errorf("plan calibration %+v margin %v", p.Calibration, p.CeilingMarginPercent)
	}
	// once the run started, its calibration is its own: the ConfigMap going changes nothing of it
	pod := waitPod(t, ns, "cal-tester")
	kubelet(t, pod, corev1.PodRunning, 0, "")
	waitTest(t, ns, "cal", "Running", phaseIs(v1alpha1.PhaseRunning))
	if err := k8sClient.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	writeResults(t, ns, "cal", testerWrites{results: sampleResults(64)})
	tt = waitTest(t, ns, "cal", "results after the ConfigMap went", func(tt *v1alpha1.TrafficTest) bool {
		return tt.Status.Results != nil && len(tt.Status.Results.Throughput) == 1
	})
	if c := condition(tt, v1alpha1.ConditionPlanReady); c == nil || c.Status != metav1.ConditionTrue || tt.Status.Phase != v1alpha1.PhaseRunning {
		t.Errorf("a running test lost its calibration with the ConfigMap: %+v, phase %s", c, tt.Status.Phase)
	}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cal-plan"}, planCM); err != nil {
		t.Fatal(err)
	}
	if p, err := plan.Unmarshal([]byte(planCM.Data[plan.ConfigMapKey])); err != nil || p.Calibration == nil {
		t.Errorf("the running test's plan lost its calibration: %v", err)
	}
	// nor through a suspension: resumed, the run goes on with the calibration it started with
	for _, suspend := range []bool{true, false} {
		tt = waitTest(t, ns, "cal", "latest", func(*v1alpha1.TrafficTest) bool { return true })
		tt.Spec.Suspend = suspend
		if err := k8sClient.Update(ctx, tt); err != nil {
			t.Fatal(err)
		}
		if suspend {
			waitTest(t, ns, "cal", "Suspended", phaseIs(v1alpha1.PhaseSuspended))
		}
	}
	waitPod(t, ns, "cal-tester")
	tt = waitTest(t, ns, "cal", "resumed", func(tt *v1alpha1.TrafficTest) bool { return tt.Status.Phase != v1alpha1.PhaseSuspended })
	if c := condition(tt, v1alpha1.ConditionPlanReady); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("the resumed run lost its calibration with the ConfigMap: %+v", c)
	}
}

// checkNetworkStatusFile checks that the tester reads which VF is whose from Multus' network-status,
// mounted through the downward API and named to the runner.
func checkNetworkStatusFile(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	c := pod.Spec.Containers[0]
	var statusFile string
	for _, v := range pod.Spec.Volumes {
		if v.DownwardAPI != nil && len(v.DownwardAPI.Items) == 1 && v.DownwardAPI.Items[0].FieldRef != nil &&
			v.DownwardAPI.Items[0].FieldRef.FieldPath == "metadata.annotations['k8s.v1.cni.cncf.io/network-status']" {
			for _, m := range c.VolumeMounts {
				if m.Name == v.Name {
					statusFile = m.MountPath + "/" + v.DownwardAPI.Items[0].Path
				}
			}
		}
	}
	if statusFile == "" || !strings.Contains(strings.Join(c.Args, " "), "--network-status "+statusFile) {
		t.Errorf("network-status file %q, args %v", statusFile, c.Args)
	}
}

// A test states what its run will cost before it starts: queued behind another on its DUT, its status
// already carries the plan's estimate, from the model the runner goes on to update as trials complete.
func TestQueuedTestStatesItsEstimate(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	newTest(t, ns, "holder", sriovTest())
	time.Sleep(1100 * time.Millisecond) // creation order is by the second
	waiting := newTest(t, ns, "waiting", sriovTest(func(tt *v1alpha1.TrafficTest) {
		tt.Spec.Tests = []v1alpha1.TestKind{v1alpha1.TestThroughput, v1alpha1.TestLatency}
	}))
	waitPod(t, ns, "holder-tester")
	p, err := plan.Resolve(waiting, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := int64(math.Ceil(rfc2544.New(p, nil, nil, rfc2544.Options{}).Estimate().Total.Seconds()))
	tt := waitTest(t, ns, "waiting", "queued with an estimate", func(tt *v1alpha1.TrafficTest) bool {
		return tt.Status.Phase == v1alpha1.PhaseQueued && tt.Status.Progress != nil && tt.Status.Progress.EstimatedTotalSeconds > 0
	})
	pg := tt.Status.Progress
	if pg.EstimatedTotalSeconds != want || pg.EstimatedSecondsLeft != want || !strings.Contains(pg.Summary, "expected to take") {
		t.Errorf("progress %+v, want an estimate of %d s", pg, want)
	}
}
