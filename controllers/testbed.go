package controllers

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/tester"
)

// A testbed is what a run needs alone: its DUT (spec.dut.name), each port's network and each port's
// device resource. Two runs that share any of it would measure each other's traffic, so they take turns:
// the one of highest spec.priority, then the one created first, goes first, and one that already runs
// keeps its place. The queue is worked out
// from the TrafficTests themselves on every pass, so it survives a restart of the operator.

// annotationTestbed on a tester pod lists its test's testbed, a line each: a pod whose test was deleted
// still sends while it stops, and holds that testbed until it is gone.
const annotationTestbed = "linerate.dev/testbed"

// testbedOf lists what a test needs alone, as "DUT x", "network ns/n" and "resource r".
func testbedOf(tt *v1alpha1.TrafficTest) []string {
	var out []string
	add := func(k string) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	if n := tt.Spec.DUT.Name; n != "" {
		add("DUT " + n)
	}
	for _, p := range tt.Spec.Ports {
		if n := p.Network; n != "" {
			if !strings.Contains(n, "/") {
				n = tt.Namespace + "/" + n
			}
			add("network " + n)
		}
		if p.Resource != "" {
			add("resource " + p.Resource)
		}
	}
	return out
}

// holdsTestbed says whether a test has, or is about to have, tester pods on its testbed.
func holdsTestbed(tt *v1alpha1.TrafficTest) bool {
	return len(tt.Status.TesterPods) > 0 && (tt.Status.Phase == v1alpha1.PhasePending || tt.Status.Phase == v1alpha1.PhaseRunning)
}

// contends says whether a test still wants its testbed: not finished, suspended, cancelled or deleted.
func contends(tt *v1alpha1.TrafficTest) bool {
	return !finished(tt.Status.Phase) && !tt.Spec.Suspend && !tt.Spec.Cancel && tt.DeletionTimestamp.IsZero()
}

// readyToRun says whether a test that waits could start once its testbed is free: one found unable to (an
// invalid spec, a missing ImixProfile or calibration, refused pods, at its current generation) keeps no place ahead of
// others, or a test nobody fixes would hold its testbed's queue forever. One not looked at yet keeps its
// place: a suite applied at once is queued in its order, not in the order the operator first sees it.
func readyToRun(tt *v1alpha1.TrafficTest) bool {
	failed := func(typ, reason string) bool {
		c := meta.FindStatusCondition(tt.Status.Conditions, typ)
		return c != nil && c.Status == metav1.ConditionFalse && c.ObservedGeneration == tt.Generation && (reason == "" || c.Reason == reason)
	}
	// nor one whose tester pods the API server refused (it retries, and starts when its testbed is free)
	return !failed(v1alpha1.ConditionPlanReady, "") && !failed(v1alpha1.ConditionTesterReady, v1alpha1.ReasonPodsRefused)
}

// before is the queue's order: priority, creation time, then namespace and name.
func before(a, b *v1alpha1.TrafficTest) bool {
	if a.Spec.Priority != b.Spec.Priority {
		return a.Spec.Priority > b.Spec.Priority
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

// queueFor is the test's place in the queue of its testbed: nil when it may start. It reads through
// reader: the cache to decide whether to wait, the API server before a start, since a test started a
// moment ago may not be in the cache yet with its pods and status.
func (r *TrafficTestReconciler) queueFor(ctx context.Context, tt *v1alpha1.TrafficTest, reader client.Reader) (*v1alpha1.QueueStatus, error) {
	mine := map[string]bool{}
	for _, k := range testbedOf(tt) {
		mine[k] = true
	}
	if len(mine) == 0 {
		return nil, nil
	}
	var all v1alpha1.TrafficTestList
	if err := reader.List(ctx, &all); err != nil {
		return nil, err
	}
	// a test that ended (cancelled, replaced, failed) or was deleted may still have tester pods sending
	// while they stop: its testbed is free only when they are gone
	var pods corev1.PodList
	if err := reader.List(ctx, &pods, client.HasLabels{tester.LabelTest}); err != nil {
		return nil, err
	}
	listed := map[types.UID]bool{}
	for i := range all.Items {
		listed[all.Items[i].UID] = true
	}
	// a pod holds the testbed it was made for (its annotation), which its test's spec may no longer name:
	// edited once the run ended, while the pod still stops
	podsUp := map[types.UID][]string{}
	q := &v1alpha1.QueueStatus{Position: 1}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue // ended: kept for its logs, sends nothing
		}
		made, known := p.Annotations[annotationTestbed]
		testbed := strings.Split(made, "\n")
		if ref := metav1.GetControllerOf(p); ref != nil && listed[ref.UID] {
			podsUp[ref.UID] = append(podsUp[ref.UID], testbed...)
			continue
		}
		// its test is gone (or it was orphaned); one made by an older operator, without the annotation,
		// sends to a testbed nobody knows: it holds every one until it ends
		shared := sharedWith(mine, testbed)
		if !known {
			shared = []string{"a testbed it does not name (made by an older operator)"}
		}
		if len(shared) > 0 {
			q.WaitingFor = append(q.WaitingFor, fmt.Sprintf("pod %s/%s of deleted test %s still runs on %s",
				p.Namespace, p.Name, p.Labels[tester.LabelTest], strings.Join(shared, ", ")))
		}
	}
	sort.Slice(all.Items, func(i, j int) bool { return before(&all.Items[i], &all.Items[j]) })
	for i := range all.Items {
		o := &all.Items[i]
		_, up := podsUp[o.UID]
		if o.UID == tt.UID || (!contends(o) && !up) {
			continue
		}
		shared := sharedWith(mine, append(testbedOf(o), podsUp[o.UID]...))
		if len(shared) == 0 {
			continue
		}
		holds := holdsTestbed(o) || up
		if !holds && (!before(o, tt) || !readyToRun(o)) {
			continue
		}
		what := "runs on"
		if !holds {
			what = "is ahead for"
			q.Position++
		}
		name := o.Name
		if o.Namespace != tt.Namespace {
			name = o.Namespace + "/" + o.Name
		}
		q.WaitingFor = append(q.WaitingFor, fmt.Sprintf("%s %s %s", name, what, strings.Join(shared, ", ")))
	}
	if len(q.WaitingFor) == 0 {
		return nil, nil
	}
	return q, nil
}

// sharedWith is what of a testbed is also in mine, each once.
func sharedWith(mine map[string]bool, testbed []string) []string {
	var shared []string
	for _, k := range testbed {
		if mine[k] && !slices.Contains(shared, k) {
			shared = append(shared, k)
		}
	}
	return shared
}

// wait keeps a test in the queue for its testbed; it is looked at again when any TrafficTest changes.
func (r *TrafficTestReconciler) wait(tt *v1alpha1.TrafficTest, q *v1alpha1.QueueStatus, wasQueued bool) (ctrl.Result, error) {
	st := &tt.Status
	if !wasQueued {
		r.event(tt, corev1.EventTypeNormal, v1alpha1.ReasonQueued, "Queue", "Queued at position %d: %s", q.Position, strings.Join(q.WaitingFor, "; "))
	}
	st.Phase, st.Queue = v1alpha1.PhaseQueued, q
	r.setCondition(tt, v1alpha1.ConditionTesterReady, metav1.ConditionFalse, v1alpha1.ReasonQueued,
		fmt.Sprintf("queued at position %d for its testbed: %s", q.Position, strings.Join(q.WaitingFor, "; ")))
	return ctrl.Result{RequeueAfter: runningRequeue}, nil
}

// waitingTests are the queued TrafficTests, looked at again whenever any TrafficTest changes or goes: a
// testbed is free the moment its holder ends.
func (r *TrafficTestReconciler) waitingTests(ctx context.Context, _ client.Object) []reconcile.Request {
	var all v1alpha1.TrafficTestList
	if err := r.List(ctx, &all); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, o := range all.Items {
		if o.Status.Phase == v1alpha1.PhaseQueued {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.Namespace, Name: o.Name}})
		}
	}
	return out
}
