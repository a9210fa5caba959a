package runner

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/results"
)

// The sink against a real API server: every trial is in the ConfigMap as soon as it is measured, and the
// operator's keys decode into what it expects.
func TestConfigMapSinkAgainstAPIServer(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set: make test builds a real kube-apiserver and etcd")
	}
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop()
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
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
}
