package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
		if err := sink.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		trials, err := results.DecodeTrials(read().BinaryData[results.KeyTrials])
		if err != nil || len(trials) != i || trials[i-1].Seq != i {
			t.Fatalf("after trial %d the ConfigMap holds %d trials (%v)", i, len(trials), err)
		}
	}
	sink.OnProgress(v1alpha1.Progress{Test: v1alpha1.TestThroughput, FrameSize: 64, Trial: 3, Summary: "x"})
	sink.writeProgress(false) // as RunPod does at the end: waits for a write under way
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
	// written at once, off the caller's goroutine (the newest it has by then: 10 or 11)
	for deadline := time.Now().Add(2 * time.Second); progress().Trial < 10; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("progress %+v, want it written at once", progress())
		}
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

// realisticTrials are records as a full suite writes them: searches, validations, latency trials with a
// summary, frame-loss steps, bursts, a few spoiled by the tester; numbers vary as measured ones do, so
// they compress as real records do, not as copies of one line.
func realisticTrials(n int) []results.Trial {
	rng := rand.New(rand.NewPCG(7, 2544))
	sizes := []int{64, 128, 256, 512, 1024, 1280, 1518}
	purposes := []string{"search", "search", "search", "validation", "latency", "step", "burst"}
	start := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	out := make([]results.Trial, n)
	for i := range out {
		size := sizes[rng.IntN(len(sizes))]
		line := 10e9 / float64((size+20)*8)
		pct := 100 * rng.Float64()
		target := line * pct / 100
		tx := int64(target * 60)
		lost := int64(0)
		if rng.IntN(3) == 0 {
			lost = rng.Int64N(tx/100 + 1)
		}
		tr := results.Trial{Seq: i + 1, Time: start.Add(time.Duration(i) * 61 * time.Second), Test: v1alpha1.TestThroughput,
			FrameSize: size, Direction: []string{"west->east", "east->west"}[i%2], Purpose: purposes[rng.IntN(len(purposes))],
			Repetition: 1 + rng.IntN(3), DurationS: 60 + rng.Float64()/1000, OfferedPercent: pct, TargetFPS: target,
			AchievedFPS: target * (1 - rng.Float64()/1e4), TxFrames: tx, RxFrames: tx - lost, Lost: lost,
			LossPercent: 100 * float64(lost) / float64(tx+1), Pass: lost == 0}
		if tr.Purpose == "latency" || rng.IntN(4) == 0 {
			base := 4000 + rng.Int64N(40000)
			tr.Latency = &v1alpha1.LatencySummary{Valid: true, Frames: tx, MinNs: base, MeanNs: base * 2, P50Ns: base * 2,
				P90Ns: base * 3, P99Ns: base * 5, P999Ns: base * 9, P9999Ns: base * 12, MaxNs: base * 40}
		}
		if rng.IntN(50) == 0 {
			tr.TesterLimited, tr.Pass = true, false
			tr.TesterFaults = []string{fmt.Sprintf("port west: the tester's own receive path dropped %d frames (rx_kernel_drops)", rng.IntN(10000))}
		}
		out[i] = tr
	}
	return out
}

// A run of tens of thousands of trials outgrows one ConfigMap (1 MiB) even compressed. Every record stays
// readable from the cluster, in order, through the sealed segments; no ConfigMap comes near the limit;
// and a runner started later (a resumed run) extends the records without rewriting one.
func TestThousandsOfTrialsSpillIntoSealedSegments(t *testing.T) {
	_, c := testenv.ForTest(t)
	ctx := context.Background()
	main := &corev1.ConfigMap{}
	main.Namespace, main.Name = "default", results.ConfigMapName("soak")
	main.Labels = map[string]string{"linerate.dev/test": "soak"}
	if err := c.Create(ctx, main); err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: "default", Name: main.Name}
	// the operator's part: it makes the next segment's ConfigMap once the open segment is half full
	opCtx, stopOperator := context.WithCancel(ctx)
	defer stopOperator()
	go func() {
		for opCtx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
			cm := &corev1.ConfigMap{}
			if c.Get(opCtx, key, cm) != nil {
				continue
			}
			segs, _ := results.Segments(cm)
			open, _ := results.DecodeTrialLines(cm.BinaryData[results.KeyTrials])
			if name := results.SpareSegment("soak", len(segs), results.OpenBytes(open)); name != "" {
				spare := &corev1.ConfigMap{}
				spare.Namespace, spare.Name, spare.Labels = "default", name, main.Labels
				_ = c.Create(opCtx, spare)
			}
		}
	}()
	const n = 30000
	trials := realisticTrials(n)
	// a burst of 30,000 records at once: the last seals may wait on the test's "operator" longer than a pod would
	sink := &ConfigMapSink{Client: c, Key: key, FlushWithin: 2 * time.Minute}
	for _, tr := range trials[:n-500] {
		sink.OnTrial(tr)
	}
	if err := sink.Finish(ctx, nil, results.State{State: results.StateFailed, Reason: "Cancelled", Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	// The rest comes from a second runner, as after a suspension.
	later := &ConfigMapSink{Client: c, Key: key, FlushWithin: 2 * time.Minute}
	if _, lastSeq, err := later.Resume(ctx); err != nil || lastSeq != n-500 {
		t.Fatalf("resume: last seq %d (%v), want %d", lastSeq, err, n-500)
	}
	for _, tr := range trials[n-500:] {
		later.OnTrial(tr)
	}
	if err := later.Finish(ctx, nil, results.State{State: results.StateSucceeded, Time: time.Now()}); err != nil {
		t.Fatal(err)
	}

	got, err := results.ReadTrials(ctx, c, "default", "soak")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d records readable, %d written", len(got), n)
	}
	for i := range got {
		a, _ := json.Marshal(trials[i])
		b, _ := json.Marshal(got[i])
		if string(a) != string(b) {
			t.Fatalf("record %d differs:\n%s\n%s", i+1, a, b)
		}
	}
	var all corev1.ConfigMapList
	if err := c.List(ctx, &all, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	total, segments := 0, 0
	for _, cm := range all.Items {
		if cm.Name != main.Name && !strings.HasPrefix(cm.Name, "soak-trials-") {
			continue
		}
		size := 0
		for k, v := range cm.Data {
			size += len(k) + len(v)
		}
		for k, v := range cm.BinaryData {
			size += len(k) + len(v)
		}
		total += size
		if size > 512<<10 {
			t.Errorf("ConfigMap %s holds %d bytes, too close to the 1 MiB limit", cm.Name, size)
		}
		if cm.Name == main.Name {
			continue
		}
		segments++
	}
	if total <= 1<<20 || segments < 2 {
		t.Errorf("%d bytes in %d segments and the results ConfigMap: the test must take the records past one ConfigMap", total, segments)
	}
	t.Logf("%d records: %d bytes compressed in the results ConfigMap and %d sealed segments", n, total, segments)
}
