package controllers

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/results"
)

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

// The latency loads: the default written out ("100") measures what an unset list does, so it reruns nothing;
// another load is another measurement, but not another comparison (a comparison takes the NDR and the
// latency at the NDR, which the loads below it do not change).
func TestLatencyLoadsInTheSpecDigests(t *testing.T) {
	spec := func(loads ...v1alpha1.Percent) *v1alpha1.TrafficTestSpec {
		return &v1alpha1.TrafficTestSpec{DUT: v1alpha1.DUTSpec{Name: "gw"}, Latency: v1alpha1.LatencyParams{PercentOfNDR: loads}}
	}
	csit := func(s *v1alpha1.TrafficTestSpec) *v1alpha1.TrafficTestSpec {
		s.Throughput.Goal = &v1alpha1.SearchGoal{Preset: v1alpha1.GoalCSIT}
		return s
	}
	for _, c := range []struct {
		name              string
		a, b              *v1alpha1.TrafficTestSpec
		measured, compare bool // the same
	}{
		{"unset and the default written out", spec(), spec("100"), true, true},
		{"a curve added", spec(), spec("0", "50", "100"), false, true},
		{"the curve without the NDR", spec("100"), spec("0", "50"), false, true},
		{"the same curve", spec("0", "100"), spec("0", "100"), true, true},
		{"under CSIT, unset is its curve, not the NDR alone", csit(spec()), csit(spec("100")), false, true},
	} {
		if got := measuredSpec(c.a) == measuredSpec(c.b); got != c.measured {
			t.Errorf("%s: measures the same %v, want %v", c.name, got, c.measured)
		}
		if got := comparableSpec(c.a) == comparableSpec(c.b); got != c.compare {
			t.Errorf("%s: comparable %v, want %v", c.name, got, c.compare)
		}
	}
}
