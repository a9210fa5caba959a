package controllers

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"

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
