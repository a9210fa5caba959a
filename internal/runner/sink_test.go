package runner

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/testenv"
)

// The sink against a real API server: every trial is in the ConfigMap as soon as it is measured, and the
// operator's keys decode into what it expects.
func TestConfigMapSinkAgainstAPIServer(t *testing.T) {
	_, c := testenv.ForTest(t)
	ctx := context.Background()
	cm := &corev1.ConfigMap{}
	cm.Namespace, cm.Name = "default", results.ConfigMapName("t")
	cm.Data = map[string]string{"owner-note": "created by the operator"}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: "default", Name: cm.Name}
	sink := &ConfigMapSink{Client: c, Key: key, ProgressEvery: time.Nanosecond, live: NewLive()}
	read := func() *corev1.ConfigMap {
		got := &corev1.ConfigMap{}
		if err := c.Get(ctx, key, got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	for i := 1; i <= 3; i++ {
		sink.OnTrial(results.Trial{Seq: i, Test: v1alpha1.TestThroughput, FrameSize: 64, TxFrames: 1000, RxFrames: 1000, Pass: true})
		trials, err := results.DecodeTrials(read().BinaryData[results.KeyTrials])
		if err != nil || len(trials) != i || trials[i-1].Seq != i {
			t.Fatalf("after trial %d the ConfigMap holds %d trials (%v)", i, len(trials), err)
		}
	}
	sink.OnProgress(v1alpha1.Progress{Test: v1alpha1.TestThroughput, FrameSize: 64, Trial: 3, Summary: "x"})
	sink.OnResults(&v1alpha1.Results{Throughput: []v1alpha1.ThroughputResult{{FrameSize: 64, Direction: "west->east"}}})
	if err := sink.Finish(ctx, nil, results.State{State: results.StateFailed, Reason: "DUTStalled", Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	got := read()
	var p v1alpha1.Progress
	var r v1alpha1.Results
	var s results.State
	if json.Unmarshal([]byte(got.Data[results.KeyProgress]), &p) != nil || p.Trial != 3 {
		t.Errorf("progress: %q", got.Data[results.KeyProgress])
	}
	if json.Unmarshal([]byte(got.Data[results.KeyResults]), &r) != nil || len(r.Throughput) != 1 {
		t.Errorf("results: %q", got.Data[results.KeyResults])
	}
	if json.Unmarshal([]byte(got.Data[results.KeyState]), &s) != nil || s.Reason != "DUTStalled" {
		t.Errorf("state: %q", got.Data[results.KeyState])
	}
	if got.Data["owner-note"] == "" {
		t.Error("the sink must merge its keys, not replace the operator's ConfigMap")
	}

	// The heartbeat: progress that arrived between two writes is written within a period, and when
	// nothing happens the last progress is written again with a fresh UpdateTime.
	hb := &ConfigMapSink{Client: c, Key: key, ProgressEvery: 300 * time.Millisecond}
	hb.OnProgress(v1alpha1.Progress{Trial: 10, Summary: "first"})
	hb.OnProgress(v1alpha1.Progress{Trial: 11, Summary: "second, too soon to be written at once"})
	progress := func() v1alpha1.Progress {
		var p v1alpha1.Progress
		if err := json.Unmarshal([]byte(read().Data[results.KeyProgress]), &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := progress(); p.Trial != 10 {
		t.Fatalf("progress %+v, want trial 10 written at once", p)
	}
	hctx, stop := context.WithCancel(ctx)
	defer stop()
	go hb.Heartbeat(hctx)
	time.Sleep(450 * time.Millisecond)
	if p := progress(); p.Trial != 11 {
		t.Errorf("progress %+v, want trial 11 written by the heartbeat", p)
	}
	// Nothing new arrives; the refresh must still write (UpdateTime has whole seconds only, so look at
	// the object's version too).
	rv := read().ResourceVersion
	time.Sleep(2500 * time.Millisecond)
	last := progress()
	if read().ResourceVersion == rv || last.Trial != 11 || last.UpdateTime == nil {
		t.Errorf("progress %+v: want trial 11 written again with an UpdateTime", last)
	}
}
