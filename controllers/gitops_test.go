package controllers

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/results"
)

// argoHealth runs the chart's Argo CD health check on a TrafficTest as Argo CD does: the object, as JSON
// decoded into Lua tables, is the global obj; the script returns {status, message}.
func argoHealth(t *testing.T, tt *v1alpha1.TrafficTest) (status, message string) {
	t.Helper()
	return runHealthCheck(t, "argocd-health-traffictest.lua", tt)
}

func runHealthCheck(t *testing.T, file string, tt any) (status, message string) {
	t.Helper()
	script, err := os.ReadFile(filepath.Join("..", "charts", "linerate", "files", file))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(tt)
	if err != nil {
		t.Fatal(err)
	}
	var obj any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	L := lua.NewState()
	defer L.Close()
	L.SetGlobal("obj", toLua(L, obj))
	if err := L.DoString(string(script)); err != nil {
		t.Fatalf("health check: %v", err)
	}
	hs, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("health check returned %s, not a table", L.Get(-1).Type())
	}
	return hs.RawGetString("status").String(), hs.RawGetString("message").String()
}

func toLua(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case map[string]any:
		tb := L.NewTable()
		for k, e := range x {
			tb.RawSetString(k, toLua(L, e))
		}
		return tb
	case []any:
		tb := L.NewTable()
		for _, e := range x {
			tb.Append(toLua(L, e))
		}
		return tb
	case string:
		return lua.LString(x)
	case float64:
		return lua.LNumber(x)
	case bool:
		return lua.LBool(x)
	}
	return lua.LNil
}

func first(s, _ string) string { return s }

// gitOpsView is what kubectl wait (the conditions), Flux (kstatus, computed by the kstatus library itself)
// and Argo CD (the chart's Lua) see of a TrafficTest.
type gitOpsView struct{ ready, reconciling, stalled, kstatus, argo string }

// kstatusOf is the status kstatus computes for the object, as Flux's health checks and `kubectl wait`-style
// pollers built on cli-utils do.
func kstatusOf(t *testing.T, tt *v1alpha1.TrafficTest) string {
	t.Helper()
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(tt)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("TrafficTest"))
	res, err := status.Compute(u)
	if err != nil {
		t.Fatalf("kstatus: %v", err)
	}
	return string(res.Status)
}

func viewOf(t *testing.T, tt *v1alpha1.TrafficTest) gitOpsView {
	t.Helper()
	status := func(typ string) string {
		c := meta.FindStatusCondition(tt.Status.Conditions, typ)
		if c == nil {
			return "absent"
		}
		if c.ObservedGeneration != tt.Generation {
			t.Errorf("%s describes generation %d, the object is at %d", typ, c.ObservedGeneration, tt.Generation)
		}
		return string(c.Status)
	}
	argo, _ := argoHealth(t, tt)
	return gitOpsView{status(v1alpha1.ConditionReady), status(v1alpha1.ConditionReconciling), status(v1alpha1.ConditionStalled), kstatusOf(t, tt), argo}
}

// A TrafficTest tells GitOps tools where it is, in the conditions kstatus reads (and kstatus itself, the
// library Flux uses, computes from them) and through the chart's Argo CD health check, run here on the
// objects the operator wrote: on its way it is in progress, a run that passed is ready, current and
// healthy, one that failed or missed its expectations is stalled, failed and degraded, a suspended one is
// in progress to kstatus (it has no "suspended") and suspended to Argo CD.
func TestGitOpsToolsReadTheRun(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	inProgress := gitOpsView{"False", "True", "False", "InProgress", "Progressing"}

	newTest(t, ns, "pass", sriovTest(unidirectional, minThroughput(64, "40")))
	pod := waitPod(t, ns, "pass-tester")
	if got := viewOf(t, waitTest(t, ns, "pass", "Pending", phaseIs(v1alpha1.PhasePending))); got != inProgress {
		t.Errorf("pending: %+v, want %+v", got, inProgress)
	}
	kubelet(t, pod, corev1.PodRunning, 0, "")
	if got := viewOf(t, waitTest(t, ns, "pass", "Running", phaseIs(v1alpha1.PhaseRunning))); got != inProgress {
		t.Errorf("running: %+v, want %+v", got, inProgress)
	}
	writeResults(t, ns, "pass", testerWrites{results: sampleResults(64, 1518), state: &results.State{State: results.StateSucceeded}})
	kubelet(t, pod, corev1.PodSucceeded, 0, "Completed")
	passed := waitTest(t, ns, "pass", "Succeeded", phaseIs(v1alpha1.PhaseSucceeded))
	if got, want := viewOf(t, passed), (gitOpsView{"True", "False", "False", "Current", "Healthy"}); got != want {
		t.Errorf("passed: %+v, want %+v", got, want)
	}

	newTest(t, ns, "miss", sriovTest(unidirectional, minThroughput(64, "90")))
	pod = waitPod(t, ns, "miss-tester")
	writeResults(t, ns, "miss", testerWrites{results: sampleResults(64, 1518), state: &results.State{State: results.StateSucceeded}})
	kubelet(t, pod, corev1.PodSucceeded, 0, "Completed")
	missed := waitTest(t, ns, "miss", "Succeeded", phaseIs(v1alpha1.PhaseSucceeded))
	if got, want := viewOf(t, missed), (gitOpsView{"False", "False", "True", "Failed", "Degraded"}); got != want {
		t.Errorf("expectation missed: %+v, want %+v", got, want)
	}
	if _, msg := argoHealth(t, missed); msg == "" {
		t.Error("a degraded run must say why")
	}

	newTest(t, ns, "crash", sriovTest())
	kubelet(t, waitPod(t, ns, "crash-tester"), corev1.PodFailed, 139, "Error")
	crashed := waitTest(t, ns, "crash", "Failed", phaseIs(v1alpha1.PhaseFailed))
	if got, want := viewOf(t, crashed), (gitOpsView{"False", "False", "True", "Failed", "Degraded"}); got != want {
		t.Errorf("tester crashed: %+v, want %+v", got, want)
	}

	newTest(t, ns, "held", sriovTest(func(tt *v1alpha1.TrafficTest) { tt.Spec.Suspend = true }))
	held := waitTest(t, ns, "held", "Suspended", phaseIs(v1alpha1.PhaseSuspended))
	if got, want := viewOf(t, held), (gitOpsView{"False", "False", "False", "InProgress", "Suspended"}); got != want {
		t.Errorf("suspended: %+v, want %+v", got, want)
	}

	// a spec that cannot be planned (an expectation the line cannot carry) is stalled at once: failed to
	// kstatus, degraded to Argo CD, and no tester pod holds the testbed
	newTest(t, ns, "unplannable", sriovTest(func(tt *v1alpha1.TrafficTest) {
		l2 := resource.MustParse("100G")
		tt.Spec.Expectations = &v1alpha1.Expectations{MinThroughput: []v1alpha1.ThroughputExpectation{{L2BitsPerSecond: &l2}}}
	}))
	unplannable := waitTest(t, ns, "unplannable", "InvalidPlan", func(tt *v1alpha1.TrafficTest) bool {
		c := condition(tt, v1alpha1.ConditionPlanReady)
		return c != nil && c.Reason == v1alpha1.ReasonInvalidPlan && tt.Status.ObservedGeneration == tt.Generation
	})
	if got, want := viewOf(t, unplannable), (gitOpsView{"False", "False", "True", "Failed", "Degraded"}); got != want || len(unplannable.Status.TesterPods) != 0 {
		t.Errorf("unplannable: %+v, want %+v; pods %v", got, want, unplannable.Status.TesterPods)
	}

	// a spec the operator has not yet looked at is in progress whatever the conditions say
	stale := passed.DeepCopy()
	stale.Generation++
	if health, _ := argoHealth(t, stale); health != "Progressing" {
		t.Errorf("unobserved generation: Argo CD %s", health)
	}
	if ks := kstatusOf(t, stale); ks != string(status.InProgressStatus) {
		t.Errorf("unobserved generation: kstatus %s", ks)
	}
	// a test just created, before the operator wrote any status, is Current to kstatus (no conditions, no
	// observedGeneration: the library's reading of an unknown resource), which the chart README warns of;
	// Argo CD's check calls it Progressing
	fresh := passed.DeepCopy()
	fresh.Status = v1alpha1.TrafficTestStatus{}
	if ks, argo := kstatusOf(t, fresh), first(argoHealth(t, fresh)); ks != string(status.CurrentStatus) || argo != "Progressing" {
		t.Errorf("no status yet: kstatus %s (the README says Current), Argo CD %s", ks, argo)
	}
}
