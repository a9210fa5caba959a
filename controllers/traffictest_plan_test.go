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

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/calibration"
	"linerate.dev/linerate/internal/estimate"
	"linerate.dev/linerate/internal/plan"
)

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

// A test states what its run will cost before it starts: queued behind another on its DUT, its status
// already carries the plan's estimate (counted from the plan alone), which the runner replaces with its
// own and updates as trials complete.
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
	want := estimate.Planned(p).EstimatedTotalSeconds
	tt := waitTest(t, ns, "waiting", "queued with an estimate", func(tt *v1alpha1.TrafficTest) bool {
		return tt.Status.Phase == v1alpha1.PhaseQueued && tt.Status.Progress != nil && tt.Status.Progress.EstimatedTotalSeconds > 0
	})
	pg := tt.Status.Progress
	if pg.EstimatedTotalSeconds != want || pg.EstimatedSecondsLeft != want || !strings.Contains(pg.Summary, "expected to take") {
		t.Errorf("progress %+v, want an estimate of %d s", pg, want)
	}
}
