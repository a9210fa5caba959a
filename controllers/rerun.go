package controllers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/tester"
)

// A finished TrafficTest whose spec is edited (in Git, synced by Argo CD or Flux) runs again: editing is
// how a GitOps user asks for a new measurement. The earlier run is not lost: its tables move to a
// ConfigMap of their own and status.previousRuns names it; its trial records stay in the chain, and the
// new run's records follow them. An edit of what only judges the run (expectations, baseline,
// previousRun) or controls it judges the same results again instead.

// maxPreviousRuns bounds status.previousRuns (and the ConfigMaps they name).
const maxPreviousRuns = 10

// measuredSpec digests what a run measures: the spec without the fields that only judge or control it.
func measuredSpec(spec *v1alpha1.TrafficTestSpec) string {
	s := spec.DeepCopy()
	s.Expectations, s.Baseline, s.PreviousRun, s.Priority = nil, nil, nil, 0
	s.Suspend, s.Cancel, s.ActiveDeadlineSeconds, s.TTLSecondsAfterFinished = false, false, nil, nil
	csit := s.Throughput.Goal != nil && s.Throughput.Goal.Preset == v1alpha1.GoalCSIT
	if !csit && slices.Equal(s.Latency.PercentOfNDR, []v1alpha1.Percent{"100"}) {
		s.Latency.PercentOfNDR = nil // the default written out measures the same (CSIT's default is its curve)
	}
	b, _ := json.Marshal(s)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// comparableSpec digests what makes two runs' results comparable: the measurement on the same device,
// whatever software it runs now (the point of comparing) and whatever tester resources measured it.
func comparableSpec(spec *v1alpha1.TrafficTestSpec) string {
	s := spec.DeepCopy()
	s.DUT = v1alpha1.DUTSpec{Name: s.DUT.Name, MaxFrameSize: s.DUT.MaxFrameSize}
	s.Tester = v1alpha1.TesterSpec{}
	// a comparison takes the NDR and the latency at the NDR: the loads below it do not change either
	s.Latency.PercentOfNDR = nil
	return measuredSpec(s)
}

// afterSpecChange handles an edited finished test: rerun, or judge again. done is false when the
// finished test stays finished (judged again or not). ObservedGeneration, set at the end of every pass,
// tells an edit from a pass that has seen it already; RunGeneration stays the generation that was measured.
func (r *TrafficTestReconciler) afterSpecChange(ctx context.Context, tt *v1alpha1.TrafficTest) (res ctrl.Result, done bool, err error) {
	st := &tt.Status
	want := measuredSpec(&tt.Spec)
	if st.MeasuredSpec == "" {
		// finished before this operator recorded what it measured: taken as measuring this spec
		st.MeasuredSpec, st.RunGeneration = want, tt.Generation
		return ctrl.Result{}, false, nil
	}
	if st.ObservedGeneration == tt.Generation {
		return ctrl.Result{}, false, nil
	}
	if st.MeasuredSpec != want && !tt.Spec.Cancel && !tt.Spec.Suspend {
		return r.rerun(ctx, tt, want)
	}
	// only what judges it changed (or the test is held by cancel or suspend): the same results, judged
	// again; a comparison whose run is gone stays as it was computed
	if err := r.judge(ctx, tt); err != nil {
		return ctrl.Result{}, true, err
	}
	r.event(tt, corev1.EventTypeNormal, v1alpha1.ReasonSpecChanged, "Judge",
		"Spec generation %d changes only how the run is judged: the same results judged again, verdict %s", tt.Generation, st.Verdict)
	return ctrl.Result{}, false, nil // and its TTL still applies
}

// rerun keeps the finished run's tables and starts a new run of the edited spec.
func (r *TrafficTestReconciler) rerun(ctx context.Context, tt *v1alpha1.TrafficTest, want string) (ctrl.Result, bool, error) {
	st := &tt.Status
	cur := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: tt.Namespace, Name: results.ConfigMapName(tt.Name)}}
	if err := r.Get(ctx, client.ObjectKeyFromObject(cur), cur); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, true, err
	}
	keep := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: tt.Namespace, Name: results.PreviousRunConfigMapName(tt.Name, st.RunGeneration),
		Labels: tester.Labels(tt, "")}, Data: map[string]string{}}
	for _, k := range []string{results.KeyResults, results.KeyState, results.KeyCheckpoint} {
		if v, ok := cur.Data[k]; ok {
			keep.Data[k] = v
		}
	}
	if err := r.createOwned(ctx, tt, keep); err != nil {
		return ctrl.Result{}, true, err
	}
	if err := r.deletePods(ctx, tt); err != nil {
		return ctrl.Result{}, true, err
	}
	// the new runner starts from nothing but the records: no tables, no checkpoint, no end
	patch := []byte(`{"data":{"` + results.KeyResults + `":null,"` + results.KeyCheckpoint + `":null,"` + results.KeyState + `":null,"` + results.KeyProgress + `":null}}`)
	if err := r.Patch(ctx, cur, client.RawPatch(types.MergePatchType, patch)); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, true, fmt.Errorf("results ConfigMap: %w", err)
	}
	st.PreviousRuns = append(st.PreviousRuns, v1alpha1.PreviousRun{
		Generation: st.RunGeneration, Phase: st.Phase, Verdict: st.Verdict, Headline: st.Headline,
		StartTime: st.StartTime, CompletionTime: st.CompletionTime, ConfigMap: keep.Name, LastTrial: st.TrialsMeasured,
	})
	for len(st.PreviousRuns) > maxPreviousRuns {
		old := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: tt.Namespace, Name: st.PreviousRuns[0].ConfigMap}}
		if err := r.Delete(ctx, old); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, true, err
		}
		st.PreviousRuns = st.PreviousRuns[1:]
	}
	prev := st.PreviousRuns[len(st.PreviousRuns)-1]
	st.Phase, st.StartTime, st.CompletionTime, st.Progress = v1alpha1.PhasePending, nil, nil, nil
	st.Headline, st.Results, st.Verdict, st.Failures, st.TesterPods = "", nil, "", nil, nil
	st.RunGeneration, st.MeasuredSpec = tt.Generation, want
	for _, c := range []string{v1alpha1.ConditionComplete, v1alpha1.ConditionFailed, v1alpha1.ConditionExpectationsMet, v1alpha1.ConditionTesterReady,
		v1alpha1.ConditionTesterPlacement} {
		meta.RemoveStatusCondition(&st.Conditions, c)
	}
	r.event(tt, corev1.EventTypeNormal, v1alpha1.ReasonSpecChanged, "Rerun",
		"Spec generation %d changes what is measured: a new run starts; the run of generation %d (%s, verdict %s) is kept in ConfigMap %s, its trial records up to seq %d",
		tt.Generation, prev.Generation, prev.Phase, prev.Verdict, prev.ConfigMap, prev.LastTrial)
	return ctrl.Result{RequeueAfter: time.Millisecond}, true, nil
}

// addNote adds a note once: a test judged again says the same things again.
func addNote(r *v1alpha1.Results, note string) {
	if !slices.Contains(r.Notes, note) {
		r.Notes = append(r.Notes, note)
	}
}
