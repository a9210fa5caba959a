package controllers

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/tester"
)

// sendingTests are the tests of a namespace whose tester pods have not ended.
func sendingTests(t *testing.T, ns string) []string {
	t.Helper()
	var pods corev1.PodList
	if err := k8sClient.List(context.Background(), &pods, client.InNamespace(ns), client.HasLabels{tester.LabelTest}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			seen[p.Labels[tester.LabelTest]] = true
		}
	}
	var out []string
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// A suite applied at once (as Argo CD or Flux sync a directory) creates its tests within one second, and
// the operator sees them in any order: they still take turns, never two on the testbed at once.
func TestTestsCreatedTogetherTakeTurns(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	names := []string{"s5", "s4", "s3", "s2", "s1"} // created in the reverse of their name order
	for _, n := range names {
		newTest(t, ns, n, sriovTest())
	}
	var order []string
	for range names {
		var running []string
		eventually(t, "a test on the testbed", func() (bool, string) {
			running = sendingTests(t, ns)
			return len(running) > 0, fmt.Sprint(running)
		})
		// give a wrongly started second test the time to show its pods
		for range 10 {
			time.Sleep(100 * time.Millisecond)
			if running = sendingTests(t, ns); len(running) != 1 {
				t.Fatalf("tests on one testbed at once: %v", running)
			}
		}
		order = append(order, running[0])
		finishRun(t, ns, running[0], 1)
	}
	// after the first (which may start before the others exist), the queue goes by creation time, which is
	// to the second, and by name among tests created in the same second
	rest := slices.Clone(order[1:])
	slices.SortFunc(rest, func(a, b string) int {
		ta, tb := getTest(t, ns, a).CreationTimestamp.Time, getTest(t, ns, b).CreationTimestamp.Time
		if c := ta.Compare(tb); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	if !slices.Equal(rest, order[1:]) {
		t.Errorf("ran in the order %v, want %v after %s (creation second, then name)", order[1:], rest, order[0])
	}
}

// A test that cannot start (its ImixProfile is missing) keeps no place ahead of the others; the queue is
// worked out from the objects, so a new operator finds it as the old one left it; a test that stops
// waiting (cancelled) keeps no place in the queue either.
func TestQueueSkipsTestsThatCannotStartAndSurvivesARestart(t *testing.T) {
	m := startManager(t)
	ns := namespace(t)
	ctx := context.Background()
	newTest(t, ns, "stuck", sriovTest(func(tt *v1alpha1.TrafficTest) {
		tt.Spec.Tests = append(tt.Spec.Tests, v1alpha1.TestImixThroughput)
		tt.Spec.Imix = &v1alpha1.ImixSource{ProfileRef: &v1alpha1.LocalObjectReference{Name: "not-yet"}}
	}))
	time.Sleep(1100 * time.Millisecond) // creation order is by the second
	newTest(t, ns, "first", sriovTest())
	time.Sleep(1100 * time.Millisecond)
	newTest(t, ns, "second", sriovTest())
	waitPod(t, ns, "first-tester")
	waitTest(t, ns, "second", "second queued behind first only", func(tt *v1alpha1.TrafficTest) bool {
		return tt.Status.Phase == v1alpha1.PhaseQueued && tt.Status.Queue.Position == 1 &&
			strings.Join(tt.Status.Queue.WaitingFor, ";") == "first runs on DUT gw-1, network "+ns+"/sriov-west, resource intel.com/sriov_82599, network "+ns+"/sriov-east"
	})
	stuck := waitTest(t, ns, "stuck", "stuck waits for its profile", func(tt *v1alpha1.TrafficTest) bool {
		c := condition(tt, v1alpha1.ConditionPlanReady)
		return c != nil && c.Reason == v1alpha1.ReasonImixProfileMissing
	})
	if stuck.Status.Phase != v1alpha1.PhasePending || len(stuck.Status.TesterPods) != 0 {
		t.Fatalf("stuck: %+v", stuck.Status)
	}

	m.stop()
	startManager(t)
	time.Sleep(time.Second)
	if got := sendingTests(t, ns); strings.Join(got, ",") != "first" {
		t.Fatalf("after a restart, on the testbed: %v", got)
	}
	if tt := getTest(t, ns, "second"); tt.Status.Phase != v1alpha1.PhaseQueued || tt.Status.Queue.Position != 1 {
		t.Fatalf("after a restart, second: %+v", tt.Status)
	}

	newTest(t, ns, "third", sriovTest())
	waitTest(t, ns, "third", "third queued at 2", func(tt *v1alpha1.TrafficTest) bool {
		return tt.Status.Phase == v1alpha1.PhaseQueued && tt.Status.Queue.Position == 2
	})
	third := getTest(t, ns, "third")
	third.Spec.Cancel = true
	if err := k8sClient.Update(ctx, third); err != nil {
		t.Fatal(err)
	}
	waitTest(t, ns, "third", "cancelled third out of the queue", func(tt *v1alpha1.TrafficTest) bool {
		return tt.Status.Phase == v1alpha1.PhaseFailed && tt.Status.Queue == nil
	})
	finishRun(t, ns, "first", 1)
	finishRun(t, ns, "second", 1)
	if c := condition(getTest(t, ns, "stuck"), v1alpha1.ConditionPlanReady); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("stuck: %+v", c)
	}
}

// A pass whose status write was refused after it made the pods leaves them unnamed in the status: the
// next pass names them, with the start and the spec they measure, or the deadline would never count and a
// lost pod would be made again instead of failing the run.
func TestRecoverStartFromThePods(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 11, 25, 20, 0, 0, 0, time.UTC))
	tt := sriovTest()
	tt.Generation = 3
	pods := []corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "x-receiver", CreationTimestamp: metav1.NewTime(t0.Add(time.Second))}},
		{ObjectMeta: metav1.ObjectMeta{Name: "x-generator", CreationTimestamp: t0}},
	}
	if !recoverStart(tt, pods) {
		t.Error("nothing recovered")
	}
	st := tt.Status
	if strings.Join(st.TesterPods, ",") != "x-generator,x-receiver" || st.StartTime == nil || !st.StartTime.Equal(&t0) ||
		st.RunGeneration != 3 || st.MeasuredSpec != measuredSpec(&tt.Spec) {
		t.Errorf("recovered %+v", st)
	}
	// a status that names its pods is left as it is
	later := metav1.NewTime(t0.Add(time.Hour))
	tt.Status.StartTime, tt.Status.TesterPods = &later, []string{"x-generator"}
	if recoverStart(tt, pods) || !tt.Status.StartTime.Equal(&later) || len(tt.Status.TesterPods) != 1 {
		t.Errorf("overwrote %+v", tt.Status)
	}
}

// A test whose tester pods the API server refuses (here a quota) keeps no place ahead of others and says
// why; once the refusal is lifted it queues and runs in turn.
func TestRefusedPodsDoNotHoldTheQueue(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	quotaNS, ns := namespace(t), namespace(t)
	// an admission policy in the API server itself refuses pods in that namespace (as a quota or a pod
	// security level would, which need controllers envtest does not run)
	policy := &admissionv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "no-pods-" + quotaNS},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{Operations: []admissionv1.OperationType{admissionv1.Create},
					Rule: admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}}}},
			Validations: []admissionv1.Validation{{Expression: "object.metadata.namespace != '" + quotaNS + "'", Message: "no pods here"}},
		}}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "no-pods-" + quotaNS},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy.Name, ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny}}}
	for _, o := range []client.Object{policy, binding} {
		if err := k8sClient.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = k8sClient.Delete(ctx, binding); _ = k8sClient.Delete(ctx, policy) })
	eventually(t, "the policy in force", func() (bool, string) {
		probe := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: quotaNS, Name: "probe"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
		err := k8sClient.Create(ctx, probe, client.DryRunAll)
		return err != nil, fmt.Sprint(err)
	})
	newTest(t, quotaNS, "refused", sriovTest())
	waitTest(t, quotaNS, "refused", "pods refused", func(tt *v1alpha1.TrafficTest) bool {
		c := condition(tt, v1alpha1.ConditionTesterReady)
		return c != nil && c.Reason == v1alpha1.ReasonPodsRefused && strings.Contains(c.Message, "refused the tester pods")
	})
	time.Sleep(1100 * time.Millisecond) // created after it
	newTest(t, ns, "next", sriovTest())
	waitPod(t, ns, "next-tester")
	if got := sendingTests(t, quotaNS); len(got) != 0 {
		t.Fatalf("pods of the refused test: %v", got)
	}
	if err := k8sClient.Delete(ctx, binding); err != nil {
		t.Fatal(err)
	}
	waitTest(t, quotaNS, "refused", "refused queued behind next", func(tt *v1alpha1.TrafficTest) bool {
		return tt.Status.Phase == v1alpha1.PhaseQueued && strings.Contains(strings.Join(tt.Status.Queue.WaitingFor, ";"), ns+"/next runs on")
	})
	finishRun(t, ns, "next", 1)
	waitPod(t, quotaNS, "refused-tester")
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
