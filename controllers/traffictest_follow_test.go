package controllers

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/results"
)

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
	// the operator may have read the runner's failure and deleted the running pod already (it did on a
	// busy host, make test-busy): a kubelet then has no pod to report on, and the reason is the runner's
	// either way
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error { return kubeletOnce(pod, corev1.PodFailed, 3, "Error") })
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	tt := waitTest(t, ns, "stall", "Failed", phaseIs(v1alpha1.PhaseFailed))
	if c := condition(tt, v1alpha1.ConditionFailed); c.Reason != v1alpha1.ReasonDUTStalled || !strings.Contains(c.Message, "DUT stopped forwarding") {
		t.Errorf("want reason DUTStalled, got %+v", c)
	}
}

// The pass that reads the runner's end deletes the pods still running, then writes the status; when the
// API server refuses that write (a conflict, frequent on a busy host), the next pass finds the phase of
// before and no pods. The runner's own word on its end (state.json) is then the end, whatever that phase
// was: not a lost pod, and not a run started again over the state it would wipe.
func TestAnEndWhoseStatusWriteWasLostIsTheRunnersEnd(t *testing.T) {
	for _, tc := range []struct {
		name    string
		running bool // the status said Running before the lost write
	}{
		{name: "pending", running: false},
		{name: "running", running: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := startManager(t)
			ns := namespace(t)
			newTest(t, ns, "lostend", sriovTest())
			pod := waitPod(t, ns, "lostend-tester")
			if tc.running {
				kubelet(t, pod, corev1.PodRunning, 0, "")
				waitTest(t, ns, "lostend", "Running", phaseIs(v1alpha1.PhaseRunning))
			} else {
				waitTest(t, ns, "lostend", "Pending with its pods", func(tt *v1alpha1.TrafficTest) bool {
					return tt.Status.Phase == v1alpha1.PhasePending && len(tt.Status.TesterPods) == 1 && tt.Status.StartTime != nil
				})
			}
			m.stop()
			// what the refused pass left behind: the runner's end in the ConfigMap, its pods deleted
			writeResults(t, ns, "lostend", testerWrites{results: sampleResults(64), trials: trialsN(3), state: &results.State{State: results.StateFailed,
				Reason: v1alpha1.ReasonDUTStalled, Message: "nothing received on east for 2s at 64 B (DUT stopped forwarding)"}})
			if err := k8sClient.Delete(context.Background(), pod, client.GracePeriodSeconds(0)); err != nil {
				t.Fatal(err)
			}
			startManager(t)
			tt := waitTest(t, ns, "lostend", "Failed", phaseIs(v1alpha1.PhaseFailed))
			if c := condition(tt, v1alpha1.ConditionFailed); c.Reason != v1alpha1.ReasonDUTStalled || !strings.Contains(c.Message, "DUT stopped forwarding") {
				t.Errorf("want the runner's reason DUTStalled, got %+v", c)
			}
			if tt.Status.Results == nil || tt.Status.TrialsMeasured != 3 {
				t.Errorf("measured results lost: %+v", tt.Status)
			}
			var pods corev1.PodList
			if err := k8sClient.List(context.Background(), &pods, client.InNamespace(ns)); err != nil || len(pods.Items) != 0 {
				t.Errorf("an ended run was started again: %d pods (%v)", len(pods.Items), err)
			}
		})
	}
}
