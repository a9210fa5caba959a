package controllers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/results"
)

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
