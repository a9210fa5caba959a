package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/results"
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
	// a runner stopped by its pod's deletion (SIGTERM) says so as its last word: not an end of its own
	writeResults(t, ns, "lost", testerWrites{results: sampleResults(64), state: &results.State{State: results.StateFailed,
		Reason: v1alpha1.ReasonCancelled, Message: "context canceled"}})
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
