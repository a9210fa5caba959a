package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/runner"
	"linerate.dev/linerate/internal/testenv"
)

// podRun is a tester pod's runner against the real API server and the real engine in a test namespace.
type podRun struct {
	c        client.Client
	planFile string
	engine   string
	dir      string
	test     string
	// metricsAddr serves the runner's live metrics when set.
	metricsAddr string
}

func newPodRun(t *testing.T, eng, tns string, tt *v1alpha1.TrafficTest) *podRun {
	t.Helper()
	name := tt.Name
	tt.Namespace = "default"
	p, err := plan.Resolve(tt, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	planFile := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(planFile, []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	wrapper := filepath.Join(dir, "engine-in-netns")
	if err := os.WriteFile(wrapper, []byte(fmt.Sprintf("#!/bin/sh\nexec ip netns exec %s %s \"$@\"\n", tns, eng)), 0o755); err != nil {
		t.Fatal(err)
	}
	_, c := testenv.ForTest(t)
	cm := &corev1.ConfigMap{}
	cm.Namespace, cm.Name = "default", results.ConfigMapName(name)
	if err := c.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	return &podRun{c: c, planFile: planFile, engine: wrapper, dir: dir, test: name}
}

func (r *podRun) run(ctx context.Context, log *strings.Builder) error {
	return runner.RunPod(ctx, runner.PodOptions{PlanFile: r.planFile, Namespace: "default",
		ResultsConfigMap: results.ConfigMapName(r.test), RunDir: r.dir, Engine: r.engine, MetricsAddr: r.metricsAddr, Client: r.c, Log: &syncWriter{w: log}})
}

func (r *podRun) configMap(t *testing.T) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := r.c.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: results.ConfigMapName(r.test)}, cm); err != nil {
		t.Fatal(err)
	}
	return cm
}

// A run suspended in its second step (the pod is stopped: its runner's context ends) and resumed by a new
// runner keeps every trial record measured before, does not measure the complete step again, measures
// the interrupted step from its start, and completes.
func TestSuspendedRunResumesAfterItsLastCompleteStep(t *testing.T) {
	eng := need(t)
	if why := testenv.Missing(); why != "" {
		t.Skip(why)
	}
	tns, _ := router(t, "rs")
	pr := newPodRun(t, eng, tns, routedTest("resume", throughput, []int32{64, 128, 256}, "0.25", "1"))

	// First runner: stopped once the 64 B step is checkpointed and a 128 B trial is recorded.
	ctx, suspend := context.WithTimeout(context.Background(), 4*time.Minute)
	defer suspend()
	go func() {
		for ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
			cm := &corev1.ConfigMap{}
			if pr.c.Get(ctx, types.NamespacedName{Namespace: "default", Name: results.ConfigMapName("resume")}, cm) != nil {
				continue
			}
			var cp results.Checkpoint
			if json.Unmarshal([]byte(cm.Data[results.KeyCheckpoint]), &cp) != nil || cp.StepsDone != 1 {
				continue
			}
			trials, _ := results.DecodeTrials(cm.BinaryData[results.KeyTrials])
			if len(trials) > 0 && trials[len(trials)-1].FrameSize == 128 {
				suspend()
			}
		}
	}()
	var log1 strings.Builder
	if err := pr.run(ctx, &log1); err == nil {
		t.Fatalf("the first runner was not stopped in its second step:\n%s", log1.String())
	}
	before, err := results.ReadTrials(context.Background(), pr.c, "default", "resume")
	if err != nil {
		t.Fatal(err)
	}
	var cp results.Checkpoint
	if err := json.Unmarshal([]byte(pr.configMap(t).Data[results.KeyCheckpoint]), &cp); err != nil || cp.StepsDone != 1 || len(cp.Results.Throughput) != 1 {
		t.Fatalf("checkpoint after the first runner: %+v (%v)", cp, err)
	}

	// Second runner, as the operator starts it on resume.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel2()
	var log2 strings.Builder
	if err := pr.run(ctx2, &log2); err != nil {
		t.Fatalf("resumed run: %v\n%s", err, log2.String())
	}
	after, err := results.ReadTrials(context.Background(), pr.c, "default", "resume")
	if err != nil {
		t.Fatal(err)
	}
	if len(after) <= len(before) {
		t.Fatalf("%d trial records after resuming, %d before", len(after), len(before))
	}
	for i := range after {
		if after[i].Seq != i+1 {
			t.Fatalf("record %d has seq %d: records were overwritten or numbered again", i, after[i].Seq)
		}
		if i < len(before) {
			a, _ := json.Marshal(before[i])
			b, _ := json.Marshal(after[i])
			if string(a) != string(b) {
				t.Errorf("record %d changed on resume:\n%s\n%s", i+1, a, b)
			}
		} else if after[i].FrameSize == 64 {
			t.Errorf("record %d: the complete 64 B step was measured again after resuming", after[i].Seq)
		}
	}
	resumed128 := 0
	for _, tr := range after[len(before):] {
		if tr.FrameSize == 128 {
			resumed128++
		}
	}
	if resumed128 == 0 || before[len(before)-1].FrameSize != 128 {
		t.Errorf("the interrupted 128 B step was not measured again from its start")
	}

	cm := pr.configMap(t)
	var st results.State
	var res v1alpha1.Results
	if json.Unmarshal([]byte(cm.Data[results.KeyState]), &st) != nil || st.State != results.StateSucceeded {
		t.Errorf("state %q", cm.Data[results.KeyState])
	}
	if err := json.Unmarshal([]byte(cm.Data[results.KeyResults]), &res); err != nil || len(res.Throughput) != 3 {
		t.Fatalf("results %q (%v)", cm.Data[results.KeyResults], err)
	}
	if res.Throughput[0].FrameSize != 64 || res.Throughput[0].NDR != cp.Results.Throughput[0].NDR ||
		res.Throughput[0].Trials != cp.Results.Throughput[0].Trials {
		t.Errorf("the 64 B row changed on resume: %+v, checkpoint %+v", res.Throughput[0], cp.Results.Throughput[0])
	}
	if res.Throughput[1].FrameSize != 128 || res.Throughput[2].FrameSize != 256 {
		t.Errorf("rows %+v", res.Throughput)
	}
	want := fmt.Sprintf("its earlier trials (seq %d-%d) are kept", cp.LastSeq+1, len(before))
	if !strings.Contains(strings.Join(res.Notes, "\n"), want) {
		t.Errorf("no note %q in %q", want, res.Notes)
	}
	t.Logf("%d records before the suspension (checkpoint at seq %d), %d after; notes: %q", len(before), cp.LastSeq, len(after), res.Notes)
}
