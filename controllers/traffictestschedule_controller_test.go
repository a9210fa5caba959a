package controllers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/results"
)

// nightly is a schedule that runs sriovTest every night at 02:00 UTC and fails a run that lost more than
// 5% of the last passed run's NDR.
func nightly(ns, name string) *v1alpha1.TrafficTestSchedule {
	tmpl := sriovTest(unidirectional, func(tt *v1alpha1.TrafficTest) {
		tt.Spec.Expectations = &v1alpha1.Expectations{MaxNDRDrop: "5"}
	})
	return &v1alpha1.TrafficTestSchedule{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.TrafficTestScheduleSpec{
			Schedule: "0 2 * * *", PassedRunsHistoryLimit: ptr(int32(1)), FailedRunsHistoryLimit: ptr(int32(1)),
			Template: v1alpha1.TrafficTestTemplate{Metadata: v1alpha1.TemplateMetadata{Labels: map[string]string{"suite": "nightly"}}, Spec: tmpl.Spec},
		},
	}
}

func getSchedule(t *testing.T, ns, name string) *v1alpha1.TrafficTestSchedule {
	t.Helper()
	s := &v1alpha1.TrafficTestSchedule{}
	if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
		t.Fatal(err)
	}
	return s
}

// editSchedule changes the schedule's spec as a user's patch does (the operator writes its status meanwhile).
func editSchedule(t *testing.T, ns, name string, edit func(*v1alpha1.TrafficTestSchedule)) {
	t.Helper()
	s := getSchedule(t, ns, name)
	patch := client.MergeFrom(s.DeepCopy())
	edit(s)
	if err := k8sClient.Patch(context.Background(), s, patch); err != nil {
		t.Fatal(err)
	}
}

// poke makes the operator look at the schedule now: the fake clock moved, the real one did not.
func poke(t *testing.T, ns, name string) {
	t.Helper()
	s := getSchedule(t, ns, name)
	patch := client.MergeFrom(s.DeepCopy())
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Annotations["test/poked"] = fmt.Sprint(time.Now().UnixNano())
	if err := k8sClient.Patch(context.Background(), s, patch); err != nil {
		t.Fatal(err)
	}
}

// argoScheduleHealth runs the chart's Argo CD health check of a schedule on the object the operator wrote.
func argoScheduleHealth(t *testing.T, ns, name string) string {
	t.Helper()
	status, _ := runHealthCheck(t, "argocd-health-traffictestschedule.lua", getSchedule(t, ns, name))
	return status
}

func runsOfSchedule(t *testing.T, ns, name string) []string {
	t.Helper()
	var list v1alpha1.TrafficTestList
	if err := k8sClient.List(context.Background(), &list, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelSchedule: name}); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tt := range list.Items {
		if tt.DeletionTimestamp.IsZero() {
			out = append(out, tt.Name)
		}
	}
	return out
}

// finishRun plays the tester and the kubelet for one run: results at ndrShare of sampleResults' NDR.
func finishRun(t *testing.T, ns, name string, ndrShare float64) *v1alpha1.TrafficTest {
	t.Helper()
	pod := waitPod(t, ns, name+"-tester")
	res := sampleResults(getTest(t, ns, name).Spec.FrameSizes...)
	for i := range res.Throughput {
		res.Throughput[i].NDR.L2BitsPerSecond = int64(float64(res.Throughput[i].NDR.L2BitsPerSecond) * ndrShare)
	}
	writeResults(t, ns, name, testerWrites{results: res, state: &results.State{State: results.StateSucceeded}})
	kubelet(t, pod, corev1.PodSucceeded, 0, "Completed")
	return waitTest(t, ns, name, name+" finished", func(tt *v1alpha1.TrafficTest) bool { return finished(tt.Status.Phase) && tt.Status.Verdict != "" })
}

// createNightly makes the nightly schedule and says when it is first due (the next 02:00 UTC).
func createNightly(t *testing.T, ns, name string) (*v1alpha1.TrafficTestSchedule, time.Time) {
	t.Helper()
	return createSchedule(t, nightly(ns, name))
}

// createSchedule makes a schedule of nightly's cron line and says when it is first due.
func createSchedule(t *testing.T, s *v1alpha1.TrafficTestSchedule) (*v1alpha1.TrafficTestSchedule, time.Time) {
	t.Helper()
	if err := k8sClient.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	s = getSchedule(t, s.Namespace, s.Name)
	first := s.CreationTimestamp.UTC().Truncate(24 * time.Hour).Add(2 * time.Hour)
	if !first.After(s.CreationTimestamp.Time) {
		first = first.Add(24 * time.Hour)
	}
	return s, first
}

func TestScheduleRunsNightlyAndComparesWithTheLastPassedRun(t *testing.T) {
	m := startManager(t)
	ns := namespace(t)
	s, first := createNightly(t, ns, "ipsec-nightly")
	// nothing is due before 02:00
	eventually(t, "next run announced", func() (bool, string) {
		s := getSchedule(t, ns, s.Name)
		return s.Status.NextScheduleTime != nil && s.Status.NextScheduleTime.Equal(&metav1.Time{Time: first}), fmt.Sprint(s.Status)
	})
	if runs := runsOfSchedule(t, ns, s.Name); len(runs) != 0 {
		t.Fatalf("runs before the schedule was due: %v", runs)
	}
	advanceTo := func(when time.Time) {
		m.clock.Advance(when.Sub(m.clock.Now()))
		poke(t, ns, s.Name)
	}
	runAt := func(due time.Time) string { return fmt.Sprintf("%s-%d", s.Name, due.Unix()/60) }
	waitRun := func(due time.Time) *v1alpha1.TrafficTest {
		name := runAt(due)
		return waitTest(t, ns, name, "run "+name, func(*v1alpha1.TrafficTest) bool { return true })
	}

	// night 1: the first run has nothing to compare with, and passes
	advanceTo(first.Add(30 * time.Second))
	run1 := waitRun(first)
	if run1.Spec.PreviousRun != nil || run1.Labels["suite"] != "nightly" || !metav1.IsControlledBy(run1, s) {
		t.Fatalf("run 1: previousRun %v, labels %v, owners %v", run1.Spec.PreviousRun, run1.Labels, run1.OwnerReferences)
	}
	run1 = finishRun(t, ns, run1.Name, 1)
	if run1.Status.Verdict != v1alpha1.VerdictPassed || run1.Status.Results.ComparedWith != "" {
		t.Fatalf("run 1: verdict %s, compared with %q, failures %v", run1.Status.Verdict, run1.Status.Results.ComparedWith, run1.Status.Failures)
	}

	eventually(t, "healthy after a passed run", func() (bool, string) {
		h := argoScheduleHealth(t, ns, s.Name)
		return h == "Healthy", h
	})

	// night 2: 10% less throughput than night 1 fails maxNDRDrop 5
	advanceTo(first.Add(24*time.Hour + 30*time.Second))
	run2 := waitRun(first.Add(24 * time.Hour))
	if run2.Spec.PreviousRun == nil || run2.Spec.PreviousRun.Name != run1.Name {
		t.Fatalf("run 2 compares with %v, want %s", run2.Spec.PreviousRun, run1.Name)
	}
	run2 = finishRun(t, ns, run2.Name, 0.9)
	if run2.Status.Verdict != v1alpha1.VerdictFailed || len(run2.Status.Results.Change) != 2 || run2.Status.Results.Change[0].NDRPercent != "-10.00" ||
		!strings.Contains(strings.Join(run2.Status.Failures, ";"), "maxNDRDrop: 64 B west->east NDR changed -10.00% against "+run1.Name) {
		t.Fatalf("run 2: verdict %s, change %+v, failures %v", run2.Status.Verdict, run2.Status.Results.Change, run2.Status.Failures)
	}
	eventually(t, "schedule says the last run failed", func() (bool, string) {
		s := getSchedule(t, ns, s.Name)
		c := meta.FindStatusCondition(s.Status.Conditions, v1alpha1.ConditionLastRunPassed)
		return c != nil && c.Status == metav1.ConditionFalse && s.Status.LastPassedRun == run1.Name && strings.Contains(c.Message, "maxNDRDrop"), fmt.Sprint(s.Status)
	})

	if h := argoScheduleHealth(t, ns, s.Name); h != "Degraded" {
		t.Errorf("Argo CD health after a failed run: %s, want Degraded", h)
	}

	// night 3 is compared with night 1 again (the last passed run), not with the failed night 2
	advanceTo(first.Add(48*time.Hour + 30*time.Second))
	run3 := waitRun(first.Add(48 * time.Hour))
	if run3.Spec.PreviousRun == nil || run3.Spec.PreviousRun.Name != run1.Name {
		t.Fatalf("run 3 compares with %v, want %s", run3.Spec.PreviousRun, run1.Name)
	}
	// night 4 is due while night 3 still runs: Forbid lets it wait
	advanceTo(first.Add(72*time.Hour + 30*time.Second))
	eventually(t, "night 4 waits", func() (bool, string) {
		s := getSchedule(t, ns, s.Name)
		c := meta.FindStatusCondition(s.Status.Conditions, v1alpha1.ConditionReady)
		return c != nil && c.Reason == v1alpha1.ReasonRunWaits && strings.Contains(c.Message, run3.Name), fmt.Sprint(s.Status)
	})
	if runs := runsOfSchedule(t, ns, s.Name); len(runs) != 3 {
		t.Fatalf("runs while night 3 runs: %v", runs)
	}
	run3 = finishRun(t, ns, run3.Name, 0.98)
	if run3.Status.Verdict != v1alpha1.VerdictPassed || run3.Status.Results.Change[1].NDRPercent != "-2.00" {
		t.Fatalf("run 3: verdict %s, change %+v, failures %v", run3.Status.Verdict, run3.Status.Results.Change, run3.Status.Failures)
	}
	// its end starts the waiting night 4, compared with night 3; night 1 is pruned (one passed run kept)
	run4 := waitRun(first.Add(72 * time.Hour))
	if run4.Spec.PreviousRun == nil || run4.Spec.PreviousRun.Name != run3.Name {
		t.Fatalf("run 4 compares with %v, want %s", run4.Spec.PreviousRun, run3.Name)
	}
	eventually(t, "history limits", func() (bool, string) {
		runs := runsOfSchedule(t, ns, s.Name)
		s := getSchedule(t, ns, s.Name)
		want := fmt.Sprint([]string{run2.Name, run3.Name, run4.Name})
		return fmt.Sprint(runs) == want && s.Status.RunsStarted == 4 && len(s.Status.Runs) == 3 && s.Status.Runs[0].Name == run4.Name,
			fmt.Sprintf("runs %v (want %s), status %+v", runs, want, s.Status)
	})

	// suspended: nothing starts, however late it gets
	editSchedule(t, ns, s.Name, func(s *v1alpha1.TrafficTestSchedule) { s.Spec.Suspend = true })
	finishRun(t, ns, run4.Name, 1)
	advanceTo(first.Add(96*time.Hour + 30*time.Second))
	eventually(t, "suspended", func() (bool, string) {
		s := getSchedule(t, ns, s.Name)
		c := meta.FindStatusCondition(s.Status.Conditions, v1alpha1.ConditionReady)
		return c != nil && c.Reason == v1alpha1.ReasonSuspended && s.Status.NextScheduleTime == nil && s.Status.ObservedGeneration == s.Generation, fmt.Sprint(s.Status)
	})
	if h := argoScheduleHealth(t, ns, s.Name); h != "Suspended" {
		t.Errorf("Argo CD health when suspended: %s", h)
	}
	time.Sleep(time.Second)
	if runs := runsOfSchedule(t, ns, s.Name); fmt.Sprint(runs) != fmt.Sprint([]string{run2.Name, run4.Name}) {
		t.Fatalf("a suspended schedule made a run: %v", runs)
	}
}

func TestScheduleWithADeadlineSkipsALateRunAndReplaceCancels(t *testing.T) {
	m := startManager(t)
	ns := namespace(t)
	ctx := context.Background()
	s := nightly(ns, "late")
	s.Spec.Schedule = "*/10 * * * *"
	s.Spec.StartingDeadlineSeconds = ptr(int64(60))
	s.Spec.ConcurrencyPolicy = v1alpha1.ReplaceConcurrent
	if err := k8sClient.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	s = getSchedule(t, ns, s.Name)
	slot := s.CreationTimestamp.UTC().Truncate(10 * time.Minute).Add(10 * time.Minute)
	// the operator looks 5 minutes after the slot: past the 60 s deadline, the slot is missed
	m.clock.Advance(slot.Add(5 * time.Minute).Sub(m.clock.Now()))
	poke(t, ns, s.Name)
	eventually(t, "missed", func() (bool, string) {
		s := getSchedule(t, ns, s.Name)
		c := meta.FindStatusCondition(s.Status.Conditions, v1alpha1.ConditionReady)
		return c != nil && c.Reason == v1alpha1.ReasonRunMissed, fmt.Sprint(s.Status)
	})
	if runs := runsOfSchedule(t, ns, s.Name); len(runs) != 0 {
		t.Fatalf("a run past its deadline started: %v", runs)
	}
	// the next slot in time starts; the one after replaces it (cancelled, kept)
	m.clock.Advance(slot.Add(10*time.Minute + 10*time.Second).Sub(m.clock.Now()))
	poke(t, ns, s.Name)
	a := fmt.Sprintf("late-%d", slot.Add(10*time.Minute).Unix()/60)
	eventually(t, "run "+a, func() (bool, string) {
		runs := runsOfSchedule(t, ns, s.Name)
		return len(runs) == 1 && runs[0] == a, fmt.Sprint(runs, getSchedule(t, ns, s.Name).Status)
	})
	waitTest(t, ns, a, a+" started", func(tt *v1alpha1.TrafficTest) bool { return len(tt.Status.TesterPods) > 0 })
	// a's tester runs, and will take a while to stop (the kubelet has not confirmed its end yet)
	pod := waitPod(t, ns, a+"-tester")
	kubelet(t, pod, corev1.PodRunning, 0, "")
	pod = waitPod(t, ns, a+"-tester")
	pod.Finalizers = []string{"linerate.dev/test-kubelet-still-stopping"}
	if err := k8sClient.Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	m.clock.Advance(slot.Add(20*time.Minute + 10*time.Second).Sub(m.clock.Now()))
	poke(t, ns, s.Name)
	b := fmt.Sprintf("late-%d", slot.Add(20*time.Minute).Unix()/60)
	waitTest(t, ns, a, a+" cancelled", func(tt *v1alpha1.TrafficTest) bool {
		return tt.Spec.Cancel && tt.Status.Phase == v1alpha1.PhaseFailed
	})
	// the replacing run waits while the cancelled one's tester still sends through the DUT
	waitTest(t, ns, b, b+" queued behind the stopping tester", func(tt *v1alpha1.TrafficTest) bool {
		return tt.Status.Phase == v1alpha1.PhaseQueued && strings.Contains(strings.Join(tt.Status.Queue.WaitingFor, ";"), a+" runs on DUT gw-1")
	})
	if tt := getTest(t, ns, b); len(tt.Status.TesterPods) != 0 {
		t.Fatalf("%s started while %s's tester was still up: %v", b, a, tt.Status.TesterPods)
	}
	// a replaced run neither passed nor failed
	if c := meta.FindStatusCondition(getSchedule(t, ns, s.Name).Status.Conditions, v1alpha1.ConditionLastRunPassed); c == nil || c.Status != metav1.ConditionUnknown {
		t.Errorf("LastRunPassed after a replacement: %+v", c)
	}
	pod = waitPod(t, ns, a+"-tester")
	pod.Finalizers = nil
	if err := k8sClient.Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	waitPod(t, ns, b+"-tester")
}

// A template that measures something else starts a fresh comparison: its first run is compared with no
// run of the old template. A new DUT software version is what comparisons are for: still compared.
func TestAChangedTemplateIsNotComparedWithTheOldOne(t *testing.T) {
	m := startManager(t)
	ns := namespace(t)
	s, first := createNightly(t, ns, "tmpl")
	night := func(n int, edit func(*v1alpha1.TrafficTestSpec)) *v1alpha1.TrafficTest {
		t.Helper()
		if edit != nil {
			editSchedule(t, ns, s.Name, func(s *v1alpha1.TrafficTestSchedule) { edit(&s.Spec.Template.Spec) })
		}
		due := first.Add(time.Duration(n) * 24 * time.Hour)
		m.clock.Advance(due.Add(30 * time.Second).Sub(m.clock.Now()))
		poke(t, ns, s.Name)
		name := fmt.Sprintf("%s-%d", s.Name, due.Unix()/60)
		waitTest(t, ns, name, "run "+name, func(*v1alpha1.TrafficTest) bool { return true })
		return finishRun(t, ns, name, 1)
	}
	run1 := night(0, nil)
	run2 := night(1, func(sp *v1alpha1.TrafficTestSpec) { sp.FrameSizes = []int32{64, 512, 1518} })
	if run2.Spec.PreviousRun != nil || run2.Status.Verdict != v1alpha1.VerdictPassed {
		t.Fatalf("the first run of a new template compared with %v (a run of 64 and 1518 B); verdict %s %v", run2.Spec.PreviousRun, run2.Status.Verdict, run2.Status.Failures)
	}
	run3 := night(2, func(sp *v1alpha1.TrafficTestSpec) { sp.DUT.Software = "firmware 2.1" })
	if run3.Spec.PreviousRun == nil || run3.Spec.PreviousRun.Name != run2.Name || run3.Status.Results.ComparedWith != run2.Name {
		t.Fatalf("new DUT software must be compared with the last run: previousRun %v, results %+v (run 1 %s)", run3.Spec.PreviousRun, run3.Status.Results, run1.Name)
	}
}

func TestInvalidScheduleIsStalledNamingTheField(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	s := nightly(ns, "typo")
	s.Spec.Schedule = "0 26 * * *"
	if err := k8sClient.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	eventually(t, "stalled", func() (bool, string) {
		s := getSchedule(t, ns, s.Name)
		c := meta.FindStatusCondition(s.Status.Conditions, v1alpha1.ConditionStalled)
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == v1alpha1.ReasonInvalidSchedule && strings.Contains(c.Message, "spec.schedule"), fmt.Sprint(s.Status)
	})
	if h := argoScheduleHealth(t, ns, s.Name); h != "Degraded" {
		t.Errorf("Argo CD health of an unreadable schedule: %s", h)
	}
}

// A template that cannot be planned makes no run: every run of it would end Failed before measuring
// anything, one per due time. The schedule is Stalled (InvalidPlan, naming why) until the template is
// fixed; the run it missed then starts, as a missed run does.
func TestAnUnplannableTemplateStallsTheScheduleUntilFixed(t *testing.T) {
	m := startManager(t)
	ns := namespace(t)
	s := nightly(ns, "unreachable")
	l2 := resource.MustParse("100G") // the 10G line carries at most 9.87 Gbit/s L2
	s.Spec.Template.Spec.Expectations = &v1alpha1.Expectations{MinThroughput: []v1alpha1.ThroughputExpectation{{L2BitsPerSecond: &l2}}}
	s, first := createSchedule(t, s)
	stalled := func(what string) {
		t.Helper()
		eventually(t, what, func() (bool, string) {
			s := getSchedule(t, ns, s.Name)
			c := meta.FindStatusCondition(s.Status.Conditions, v1alpha1.ConditionStalled)
			return c != nil && c.Status == metav1.ConditionTrue && c.Reason == v1alpha1.ReasonInvalidPlan &&
				strings.Contains(c.Message, "spec.template cannot be planned") && strings.Contains(c.Message, "no DUT can meet it") &&
				strings.Contains(c.Message, "spec.template.spec.expectations.minThroughput[0]") &&
				s.Status.NextScheduleTime == nil && c.ObservedGeneration == s.Generation, fmt.Sprint(s.Status)
		})
	}
	stalled("stalled before its first run")
	if h := argoScheduleHealth(t, ns, s.Name); h != "Degraded" {
		t.Errorf("Argo CD health of a schedule whose template cannot be planned: %s", h)
	}
	// its due time passes: no run is made (an edit of the spec makes a pass that must have seen the clock
	// moved, which the condition's observedGeneration shows)
	m.clock.Advance(first.Add(30 * time.Second).Sub(m.clock.Now()))
	editSchedule(t, ns, s.Name, func(s *v1alpha1.TrafficTestSchedule) { s.Spec.FailedRunsHistoryLimit = ptr(int32(2)) })
	stalled("still stalled at its due time")
	if runs := runsOfSchedule(t, ns, s.Name); len(runs) != 0 {
		t.Fatalf("runs %v made of a template that cannot be planned", runs)
	}
	// the template fixed, the run due at the first night starts
	editSchedule(t, ns, s.Name, func(s *v1alpha1.TrafficTestSchedule) { s.Spec.Template.Spec.Expectations = nil })
	waitTest(t, ns, fmt.Sprintf("%s-%d", s.Name, first.Unix()/60), "the missed run", func(*v1alpha1.TrafficTest) bool { return true })
	eventually(t, "no longer stalled", func() (bool, string) {
		s := getSchedule(t, ns, s.Name)
		ready := meta.FindStatusCondition(s.Status.Conditions, v1alpha1.ConditionReady)
		return meta.FindStatusCondition(s.Status.Conditions, v1alpha1.ConditionStalled) == nil && ready != nil &&
			ready.Status == metav1.ConditionTrue && ready.Reason == v1alpha1.ReasonRunStarted, fmt.Sprint(s.Status)
	})
}

// A run whose spec cannot be planned once it exists (here the ImixProfile its template names, missing
// when the run was made, arrives with a frame its DUT cannot take) ends Failed, reason InvalidPlan: nobody
// edits a run, so it would wait for ever, and a Forbid schedule would start no run after it. The schedule
// says why in LastRunPassed, is Stalled while the profile stays so, and runs again once it is fixed.
func TestAnUnplannableRunEndsAndTheNextOneStarts(t *testing.T) {
	m := startManager(t)
	ns := namespace(t)
	s := nightly(ns, "imix")
	s.Spec.Template.Spec.Tests = []v1alpha1.TestKind{v1alpha1.TestImixThroughput}
	s.Spec.Template.Spec.FrameSizes = nil
	s.Spec.Template.Spec.Imix = &v1alpha1.ImixSource{ProfileRef: &v1alpha1.LocalObjectReference{Name: "mix"}}
	s.Spec.Template.Spec.DUT.MaxFrameSize = ptr(int32(1000))
	s, first := createSchedule(t, s)
	advanceTo := func(when time.Time) {
		m.clock.Advance(when.Sub(m.clock.Now()))
		poke(t, ns, s.Name)
	}
	runAt := func(due time.Time) string { return fmt.Sprintf("%s-%d", s.Name, due.Unix()/60) }

	// the profile is missing: the run is made and waits for it, as a test a user made does
	advanceTo(first.Add(30 * time.Second))
	waitTest(t, ns, runAt(first), "run 1 waits for its profile", func(tt *v1alpha1.TrafficTest) bool {
		c := condition(tt, v1alpha1.ConditionPlanReady)
		return c != nil && c.Reason == v1alpha1.ReasonImixProfileMissing
	})
	profile := &v1alpha1.ImixProfile{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mix"}, Spec: v1alpha1.ImixSpec{Entries: []v1alpha1.ImixEntry{
		{FrameSize: 64, Weight: 7}, {FrameSize: 1518, Weight: 1}}}}
	if err := k8sClient.Create(context.Background(), profile); err != nil {
		t.Fatal(err)
	}
	run1 := waitTest(t, ns, runAt(first), "run 1 ended", func(tt *v1alpha1.TrafficTest) bool { return finished(tt.Status.Phase) })
	failed := condition(run1, v1alpha1.ConditionFailed)
	if run1.Status.Phase != v1alpha1.PhaseFailed || failed == nil || failed.Reason != v1alpha1.ReasonInvalidPlan ||
		!strings.Contains(failed.Message, "the run cannot be planned") || !strings.Contains(failed.Message, "spec.template") ||
		run1.Status.Verdict != v1alpha1.VerdictFailed || len(run1.Status.TesterPods) != 0 {
		t.Fatalf("run 1: phase %s, verdict %s, failed %+v, pods %v", run1.Status.Phase, run1.Status.Verdict, failed, run1.Status.TesterPods)
	}
	eventually(t, "the schedule says why its last run failed, and is stalled on its profile", func() (bool, string) {
		s := getSchedule(t, ns, s.Name)
		last := meta.FindStatusCondition(s.Status.Conditions, v1alpha1.ConditionLastRunPassed)
		st := meta.FindStatusCondition(s.Status.Conditions, v1alpha1.ConditionStalled)
		return last != nil && last.Status == metav1.ConditionFalse && strings.Contains(last.Message, "cannot be planned") && len(s.Status.Active) == 0 &&
			st != nil && st.Reason == v1alpha1.ReasonInvalidPlan && strings.Contains(st.Message, "1518") &&
			strings.Contains(st.Message, "ImixProfile mix (spec.template.spec.imix.profileRef): spec.template.spec.imix"), fmt.Sprint(s.Status)
	})
	// the same spec in a test a user made waits for the user to fix it, as before
	newTest(t, ns, "by-hand", sriovTest(unidirectional, func(tt *v1alpha1.TrafficTest) { tt.Spec = *s.Spec.Template.Spec.DeepCopy() }))
	byHand := waitTest(t, ns, "by-hand", "InvalidPlan", func(tt *v1alpha1.TrafficTest) bool {
		c := condition(tt, v1alpha1.ConditionPlanReady)
		return c != nil && c.Reason == v1alpha1.ReasonInvalidPlan && tt.Status.ObservedGeneration == tt.Generation
	})
	if byHand.Status.Phase != v1alpha1.PhasePending {
		t.Errorf("a test a user made that cannot be planned: phase %s, want Pending", byHand.Status.Phase)
	}
	// the profile fixed (the schedule watches it): Forbid, the next night's run starts, nothing holds it
	fixed := &v1alpha1.ImixProfile{}
	if err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(profile), fixed); err != nil {
		t.Fatal(err)
	}
	fixed.Spec.Entries[1].FrameSize = 900
	if err := k8sClient.Update(context.Background(), fixed); err != nil {
		t.Fatal(err)
	}
	eventually(t, "no longer stalled", func() (bool, string) {
		s := getSchedule(t, ns, s.Name)
		return meta.FindStatusCondition(s.Status.Conditions, v1alpha1.ConditionStalled) == nil && s.Status.NextScheduleTime != nil, fmt.Sprint(s.Status)
	})
	advanceTo(first.Add(24*time.Hour + 30*time.Second))
	waitTest(t, ns, runAt(first.Add(24*time.Hour)), "run 2 planned", func(tt *v1alpha1.TrafficTest) bool {
		c := condition(tt, v1alpha1.ConditionPlanReady)
		return c != nil && c.Status == metav1.ConditionTrue
	})
}

// Allow starts a due run while the last one still runs (on a shared testbed it then waits its turn in the
// queue), and the history limits prune failed and passed runs apart: a failed run never pushes out the
// passed run the next one is compared with.
func TestAllowOverlapsRunsAndHistoryKeepsFailedAndPassedApart(t *testing.T) {
	m := startManager(t)
	ns := namespace(t)
	allowed := nightly(ns, "allowed")
	allowed.Spec.ConcurrencyPolicy = v1alpha1.AllowConcurrent
	s, first := createSchedule(t, allowed)
	night := func(n int) string {
		due := first.Add(time.Duration(n-1) * 24 * time.Hour)
		m.clock.Advance(due.Add(30 * time.Second).Sub(m.clock.Now()))
		poke(t, ns, s.Name)
		name := fmt.Sprintf("%s-%d", s.Name, due.Unix()/60)
		waitTest(t, ns, name, "run "+name, func(*v1alpha1.TrafficTest) bool { return true })
		return name
	}
	crash := func(name string) {
		kubelet(t, waitPod(t, ns, name+"-tester"), corev1.PodFailed, 1, "Error")
		waitTest(t, ns, name, name+" failed", phaseIs(v1alpha1.PhaseFailed))
	}

	run1 := night(1)
	waitPod(t, ns, run1+"-tester")
	run2 := night(2) // made while run 1 runs: Allow
	waitTest(t, ns, run2, "run 2 queued behind run 1", func(tt *v1alpha1.TrafficTest) bool {
		return tt.Status.Phase == v1alpha1.PhaseQueued && strings.Contains(strings.Join(tt.Status.Queue.WaitingFor, ";"), run1+" runs on")
	})
	crash(run1)
	crash(run2)
	run3 := night(3)
	finishRun(t, ns, run3, 1)
	run4 := night(4)
	crash(run4)
	// one failed and one passed run kept: run 4 pushed out runs 2 and 1, not the passed run 3
	eventually(t, "history limits apart", func() (bool, string) {
		runs := runsOfSchedule(t, ns, s.Name)
		want := fmt.Sprint([]string{run3, run4})
		return fmt.Sprint(runs) == want, fmt.Sprintf("runs %v, want %s", runs, want)
	})
	if got := getSchedule(t, ns, s.Name).Status.LastPassedRun; got != run3 {
		t.Errorf("last passed run %q, want %s", got, run3)
	}
}
