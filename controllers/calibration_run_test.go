package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/calibration"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/results"
)

// A calibration run from the cluster: a TrafficTest with tester.calibration.measure does not wait for the
// ConfigMap it names, it makes it. Applied with a test that names the same ConfigMap, the test waits
// (CalibrationMissing) until the calibration run succeeded and its calibration was copied there, then
// runs with it. A calibration without a ceiling for a row, or one told to write into linerate's own
// ConfigMap, is not published: the run fails and the ConfigMap keeps what it held.
func TestCalibrationRunWritesTheConfigMapOthersWaitFor(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	ctx := context.Background()
	measure := func(tt *v1alpha1.TrafficTest) {
		tt.Spec.Tester.Calibration = &v1alpha1.TesterCalibration{ConfigMapName: "tb-ceiling", Measure: true}
	}
	newTest(t, ns, "ceiling", sriovTest(measure))
	user := newTest(t, ns, "dut-run", sriovTest(func(tt *v1alpha1.TrafficTest) {
		tt.Spec.Tester.Calibration = &v1alpha1.TesterCalibration{ConfigMapName: "tb-ceiling"}
	}))
	waitTest(t, ns, "dut-run", "waiting for the calibration", func(tt *v1alpha1.TrafficTest) bool {
		c := condition(tt, v1alpha1.ConditionPlanReady)
		return c != nil && c.Reason == v1alpha1.ReasonCalibrationMissing
	})
	pod := waitPod(t, ns, "ceiling-tester")
	planCM := &corev1.ConfigMap{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: results.PlanConfigMapName("ceiling")}, planCM); err != nil {
		t.Fatal(err)
	}
	if p, err := plan.Unmarshal([]byte(planCM.Data[plan.ConfigMapKey])); err != nil || p.CalibrationRepetitions != 3 || p.Calibration != nil {
		t.Fatalf("the calibration run's plan: repetitions %d, calibration %v (%v); want 3 and none", p.CalibrationRepetitions, p.Calibration, err)
	}
	kubelet(t, pod, corev1.PodRunning, 0, "")

	// the runner writes what it measured, as writeCalibration does: first an interrupted one
	p, err := plan.Resolve(user, nil)
	if err != nil {
		t.Fatal(err)
	}
	measured := &calibration.Calibration{Kind: calibration.Kind, Test: "ceiling", ResolutionPercent: 0.5, Shape: p.CalibrationShape(),
		MeasuredAt: time.Now().UTC(), Ports: []calibration.Port{{Name: "west", Driver: "net_ixgbe_vf"}, {Name: "east", Driver: "net_ixgbe_vf"}},
		Ceilings: []calibration.Ceiling{{FrameSize: 64, Direction: "west->east", FramesPerSecond: 9e6, PercentOfLineRate: "60.5"}}}
	raw, err := measured.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	writeResults(t, ns, "ceiling", testerWrites{results: sampleResults(64, 1518), state: &results.State{State: results.StateSucceeded}})
	putKey(t, ns, results.ConfigMapName("ceiling"), calibration.ConfigMapKey, string(raw))
	kubelet(t, pod, corev1.PodSucceeded, 0, "Completed")
	tt := waitTest(t, ns, "ceiling", "calibrated", phaseIs(v1alpha1.PhaseSucceeded))
	if c := condition(tt, v1alpha1.ConditionComplete); c == nil || c.Reason != v1alpha1.ReasonCalibrated || !strings.Contains(c.Message, "tb-ceiling") {
		t.Errorf("Complete condition %+v", c)
	}
	got := &corev1.ConfigMap{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "tb-ceiling"}, got); err != nil {
		t.Fatal(err)
	}
	if got.Data[calibration.ConfigMapKey] != string(raw) || got.Labels[LabelCalibratedBy] != "ceiling" || len(got.OwnerReferences) != 0 {
		t.Errorf("calibration ConfigMap: labels %v, owners %v, data %q", got.Labels, got.OwnerReferences, got.Data)
	}
	// the waiting test goes on with it
	userPod := waitPod(t, ns, "dut-run-tester")
	userPlan := &corev1.ConfigMap{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: results.PlanConfigMapName("dut-run")}, userPlan); err != nil {
		t.Fatal(err)
	}
	if p, err := plan.Unmarshal([]byte(userPlan.Data[plan.ConfigMapKey])); err != nil || p.Calibration == nil || p.Calibration.Test != "ceiling" {
		t.Errorf("the test's plan has no calibration of the run (%v)", err)
	}

	// it ends (its tester crashed): the testbed (the VF networks) is free for another calibration run
	kubelet(t, userPod, corev1.PodFailed, 1, "Error")
	waitTest(t, ns, "dut-run", "ended", phaseIs(v1alpha1.PhaseFailed))

	// a second calibration run in which the tester spoiled every rate at 1518 B: no ceiling there, so a
	// test could not tell the tester's limit from the DUT's; not published, and the ConfigMap keeps the first
	newTest(t, ns, "ceiling-2", sriovTest(measure, func(tt *v1alpha1.TrafficTest) { tt.Spec.DUT.Name = "gw-2" }))
	pod = waitPod(t, ns, "ceiling-2-tester")
	kubelet(t, pod, corev1.PodRunning, 0, "")
	broken := *measured
	broken.Ceilings = append(append([]calibration.Ceiling{}, measured.Ceilings...),
		calibration.Ceiling{FrameSize: 1518, Direction: "west->east", Unknown: "no rate passed through the joined ports"})
	rawBroken, err := broken.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	writeResults(t, ns, "ceiling-2", testerWrites{results: sampleResults(64), state: &results.State{State: results.StateSucceeded}})
	putKey(t, ns, results.ConfigMapName("ceiling-2"), calibration.ConfigMapKey, string(rawBroken))
	kubelet(t, pod, corev1.PodSucceeded, 0, "Completed")
	tt = waitTest(t, ns, "ceiling-2", "refused", phaseIs(v1alpha1.PhaseFailed))
	if c := condition(tt, v1alpha1.ConditionComplete); c == nil || c.Reason != v1alpha1.ReasonCalibrationInvalid ||
		!strings.Contains(c.Message, "no ceiling at 1518 B west->east") || !strings.Contains(c.Message, "left as it was") {
		t.Errorf("Complete condition %+v", c)
	}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "tb-ceiling"}, got); err != nil || got.Data[calibration.ConfigMapKey] != string(raw) {
		t.Errorf("the refused calibration replaced the good one (%v)", err)
	}

	// a calibration run told to write into a test's results ConfigMap: refused, that ConfigMap untouched
	newTest(t, ns, "ceiling-3", sriovTest(func(tt *v1alpha1.TrafficTest) {
		tt.Spec.DUT.Name = "gw-3"
		tt.Spec.Tester.Calibration = &v1alpha1.TesterCalibration{ConfigMapName: results.ConfigMapName("dut-run"), Measure: true}
	}))
	pod = waitPod(t, ns, "ceiling-3-tester")
	kubelet(t, pod, corev1.PodRunning, 0, "")
	writeResults(t, ns, "ceiling-3", testerWrites{results: sampleResults(64), state: &results.State{State: results.StateSucceeded}})
	putKey(t, ns, results.ConfigMapName("ceiling-3"), calibration.ConfigMapKey, string(raw))
	kubelet(t, pod, corev1.PodSucceeded, 0, "Completed")
	tt = waitTest(t, ns, "ceiling-3", "refused", phaseIs(v1alpha1.PhaseFailed))
	if c := condition(tt, v1alpha1.ConditionComplete); c == nil || !strings.Contains(c.Message, "holds the results or plan of TrafficTest dut-run") {
		t.Errorf("Complete condition %+v", c)
	}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: results.ConfigMapName("dut-run")}, got); err != nil || got.Data[calibration.ConfigMapKey] != "" {
		t.Errorf("the calibration was written into a results ConfigMap (%v)", err)
	}

	// a calibration run expects nothing of a DUT: the API server says so
	bad := sriovTest(measure, minThroughput(64, "50"))
	bad.Namespace, bad.Name = ns, "ceiling-judged"
	if err := k8sClient.Create(ctx, bad); err == nil || !strings.Contains(err.Error(), "tester.calibration.measure") {
		t.Errorf("a calibration run with expectations: %v", err)
	}
}

// putKey sets one key of a ConfigMap's data, as the runner's merge patch does.
func putKey(t *testing.T, ns, name, key, value string) {
	t.Helper()
	patch, err := json.Marshal(map[string]any{"data": map[string]string{key: value}})
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := k8sClient.Patch(context.Background(), cm, client.RawPatch("application/merge-patch+json", patch)); err != nil {
		t.Fatal(err)
	}
}

// A schedule of calibration runs (recalibrate every night) compares no run with the last: a calibration
// measures the tester, and the API server refuses a previousRun on it, so every run after the first
// would be refused.
func TestScheduledCalibrationRunsCompareWithNothing(t *testing.T) {
	scheme := testScheme(t)
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	r := &TrafficTestScheduleReconciler{Client: c, Scheme: scheme}
	for _, measure := range []bool{false, true} {
		s := &v1alpha1.TrafficTestSchedule{ObjectMeta: metav1.ObjectMeta{Namespace: "lab", Name: fmt.Sprintf("nightly-%v", measure), UID: "u1"}}
		s.Spec.Template.Spec = sriovTest().Spec
		s.Spec.Template.Spec.Tester.Calibration = &v1alpha1.TesterCalibration{ConfigMapName: "tb", Measure: measure}
		s.Status.LastPassedRun = "nightly-1"
		name, err := r.startRun(context.Background(), s, time.Date(2026, 11, 25, 2, 0, 0, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		run := &v1alpha1.TrafficTest{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: "lab", Name: name}, run); err != nil {
			t.Fatal(err)
		}
		if compared := run.Spec.PreviousRun != nil; compared == measure {
			t.Errorf("measure %v: previousRun %v", measure, run.Spec.PreviousRun)
		}
	}
}
