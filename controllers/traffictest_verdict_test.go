package controllers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/results"
)

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
