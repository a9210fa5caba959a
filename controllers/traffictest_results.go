package controllers

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/tester"
	"linerate.dev/linerate/internal/units"
)

// harvest copies what the tester has written into the status. It never drops results already in the
// status when the ConfigMap is gone or unreadable.
func (r *TrafficTestReconciler) harvest(ctx context.Context, tt *v1alpha1.TrafficTest) (*results.State, error) {
	cm := &corev1.ConfigMap{}
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	err := reader.Get(ctx, types.NamespacedName{Namespace: tt.Namespace, Name: results.ConfigMapName(tt.Name)}, cm)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	log := logf.FromContext(ctx)
	st := &tt.Status
	if s := cm.Data[results.KeyResults]; s != "" {
		var res v1alpha1.Results
		if err := json.Unmarshal([]byte(s), &res); err != nil {
			log.Error(err, "unreadable results.json in the results ConfigMap; keeping the previous results")
		} else {
			st.Results = forStatus(&res, &tt.Spec.DUT)
			st.Headline = headline(&res)
			r.judgePlacement(tt)
		}
	}
	if s := cm.Data[results.KeyProgress]; s != "" {
		var p v1alpha1.Progress
		if err := json.Unmarshal([]byte(s), &p); err == nil {
			if p.Summary == "" {
				p.Summary = fmt.Sprintf("%d/%d %s %dB", p.StepsDone, p.StepsTotal, p.Test, p.FrameSize)
			}
			st.Progress = &p
		}
	}
	// Counted from the segment list and the open segment alone: the sealed segments are not read again.
	segments, err := results.Segments(cm)
	if err != nil {
		log.Error(err, "unreadable list of trial segments in the results ConfigMap")
	}
	open, err := results.DecodeTrialLines(cm.BinaryData[results.KeyTrials])
	if err != nil {
		log.Error(err, "unreadable trial records in the results ConfigMap")
	}
	if segments != nil || open != nil {
		n := len(open)
		st.TrialConfigMaps = nil
		for _, s := range segments {
			n += s.Trials
			st.TrialConfigMaps = append(st.TrialConfigMaps, s.ConfigMap)
		}
		st.TrialsMeasured = int32(n)
	}
	if err := r.ensureSpareSegment(ctx, tt, len(segments), results.OpenBytes(open)); err != nil {
		return nil, err
	}
	var state *results.State
	if s := cm.Data[results.KeyState]; s != "" {
		state = &results.State{}
		if err := json.Unmarshal([]byte(s), state); err != nil {
			state = nil
		}
	}
	return state, nil
}

// forStatus keeps the status small: the per-repetition latency lists stay in the results ConfigMap.
func forStatus(res *v1alpha1.Results, dut *v1alpha1.DUTSpec) *v1alpha1.Results {
	out := res.DeepCopy()
	for i := range out.Latency {
		out.Latency[i].Repetitions = nil
	}
	if out.DUT == nil {
		out.DUT = dut.DeepCopy()
	}
	return out
}

// headline picks the NDR at the largest frame size (the slowest direction), or the IMIX NDR.
func headline(res *v1alpha1.Results) string {
	var best *v1alpha1.ThroughputResult
	for i := range res.Throughput {
		t := &res.Throughput[i]
		if best == nil || t.FrameSize > best.FrameSize ||
			(t.FrameSize == best.FrameSize && t.NDR.L2BitsPerSecond < best.NDR.L2BitsPerSecond) {
			best = t
		}
	}
	if best != nil {
		return fmt.Sprintf("NDR %dB %s (%s%%)", best.FrameSize, units.FormatBits(best.NDR.L2BitsPerSecond), best.NDR.PercentOfLineRate)
	}
	if len(res.Imix) > 0 {
		m := res.Imix[0]
		return fmt.Sprintf("IMIX NDR %s (%s%%)", units.FormatBits(m.NDR.L2BitsPerSecond), m.NDR.PercentOfLineRate)
	}
	return ""
}

// ensureSpareSegment makes the ConfigMap the runner seals the open segment of trial records into next,
// once it is half full: the runner may write ConfigMaps named for its test, not create any.
func (r *TrafficTestReconciler) ensureSpareSegment(ctx context.Context, tt *v1alpha1.TrafficTest, sealed, openBytes int) error {
	name := results.SpareSegment(tt.Name, sealed, openBytes)
	if name == "" || finished(tt.Status.Phase) {
		return nil
	}
	if err := r.Get(ctx, types.NamespacedName{Namespace: tt.Namespace, Name: name}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		return err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tt.Namespace, Labels: tester.Labels(tt, "")}}
	return r.createOwned(ctx, tt, cm)
}

// forgetEndedRunner removes what an earlier runner of this test said about its own end and position (a
// suspended runner ends "Failed: Cancelled"): read as the new runner's, it would end the resumed run at
// once. The records, tables and checkpoint stay; the new runner goes on from them.
func (r *TrafficTestReconciler) forgetEndedRunner(ctx context.Context, tt *v1alpha1.TrafficTest) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: tt.Namespace, Name: results.ConfigMapName(tt.Name)}}
	patch := []byte(`{"data":{"` + results.KeyState + `":null,"` + results.KeyProgress + `":null}}`)
	if err := r.Patch(ctx, cm, client.RawPatch(types.MergePatchType, patch)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("results ConfigMap: %w", err)
	}
	tt.Status.Progress = nil
	return nil
}
