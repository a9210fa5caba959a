// Package runner drives an RFC 2544 run end to end: it starts the engine on the plan's ports, runs the
// procedures of internal/rfc2544 and delivers what they measure — to the terminal for `linerate run`,
// and to the results ConfigMap (internal/results) inside the tester pod.
package runner

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/results"
)

// ConfigMapSink writes the run into the results ConfigMap: every trial record as soon as it is measured
// (so a crash of the pod loses nothing), the result tables after every step, progress at most every
// ProgressEvery, and the run's state at the end.
type ConfigMapSink struct {
	Client        client.Client
	Key           types.NamespacedName
	ProgressEvery time.Duration
	// Log receives write failures (the run goes on; the next write carries everything again).
	Log func(format string, args ...any)

	mu           sync.Mutex
	trials       []results.Trial
	lastProgress time.Time
	progress     *v1alpha1.Progress // the latest, written or not
	dirty        bool               // progress holds news not yet written
	live         *Live
	// wmu orders progress writes: an older snapshot must never overwrite a newer one.
	wmu sync.Mutex
}

// patch merges the given keys into the ConfigMap; a merge patch never conflicts with the operator.
func (s *ConfigMapSink) patch(ctx context.Context, data map[string]string, binary map[string][]byte) error {
	body := map[string]any{}
	if len(data) > 0 {
		body["data"] = data
	}
	if len(binary) > 0 {
		b := map[string]string{}
		for k, v := range binary {
			b[k] = base64.StdEncoding.EncodeToString(v)
		}
		body["binaryData"] = b
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{}
	cm.Namespace, cm.Name = s.Key.Namespace, s.Key.Name
	var last error
	for attempt := 0; attempt < 5; attempt++ {
		wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		last = s.Client.Patch(wctx, cm, client.RawPatch(types.MergePatchType, raw))
		cancel()
		if last == nil {
			return nil
		}
		time.Sleep(time.Duration(attempt+1) * 500 * time.Millisecond)
	}
	return fmt.Errorf("writing %s: %w", s.Key, last)
}

func (s *ConfigMapSink) logf(format string, args ...any) {
	if s.Log != nil {
		s.Log(format, args...)
	}
}

// OnTrial appends the record and writes all records so far.
func (s *ConfigMapSink) OnTrial(t results.Trial) {
	s.mu.Lock()
	s.trials = append(s.trials, t)
	data, err := results.EncodeTrials(s.trials)
	s.mu.Unlock()
	if s.live != nil {
		s.live.Trial(t)
	}
	if err == nil {
		err = s.patch(context.Background(), nil, map[string][]byte{results.KeyTrials: data})
	}
	if err != nil {
		s.logf("trial %d: %v", t.Seq, err)
	}
}

func (s *ConfigMapSink) every() time.Duration {
	if s.ProgressEvery <= 0 {
		return 5 * time.Second
	}
	return s.ProgressEvery
}

// OnProgress writes progress, at most every ProgressEvery (the operator refreshes the status from it);
// what falls between two writes is written by Heartbeat.
func (s *ConfigMapSink) OnProgress(p v1alpha1.Progress) {
	if s.live != nil {
		s.live.Progress(p)
	}
	s.mu.Lock()
	s.progress, s.dirty = &p, true
	due := time.Since(s.lastProgress) >= s.every()
	s.mu.Unlock()
	if due {
		s.writeProgress(false)
	}
}

// writeProgress writes the latest progress if it holds news, or, with refresh, in any case with a new
// UpdateTime, so that the status shows the tester is alive while nothing else happens (set-up, a DUT rest).
func (s *ConfigMapSink) writeProgress(refresh bool) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	if s.progress == nil || (!s.dirty && !refresh) {
		s.mu.Unlock()
		return
	}
	p := *s.progress
	s.dirty, s.lastProgress = false, time.Now()
	s.mu.Unlock()
	if refresh {
		now := metav1.Now()
		p.UpdateTime = &now
	}
	b, _ := json.Marshal(p)
	if err := s.patch(context.Background(), map[string]string{results.KeyProgress: string(b)}, nil); err != nil {
		s.logf("progress: %v", err)
	}
}

// Heartbeat writes progress until ctx ends: news within ProgressEvery of its arrival, and the last
// progress again with a fresh UpdateTime when nothing was written for two periods (10 s by default).
func (s *ConfigMapSink) Heartbeat(ctx context.Context) {
	t := time.NewTicker(s.every())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.mu.Lock()
			stale := time.Since(s.lastProgress) >= 2*s.every()
			s.mu.Unlock()
			s.writeProgress(stale)
		}
	}
}

// OnResults writes the result tables.
func (s *ConfigMapSink) OnResults(r *v1alpha1.Results) {
	b, _ := json.Marshal(r)
	if err := s.patch(context.Background(), map[string]string{results.KeyResults: string(b)}, nil); err != nil {
		s.logf("results: %v", err)
	}
}

// Finish writes the final tables and the state together.
func (s *ConfigMapSink) Finish(ctx context.Context, r *v1alpha1.Results, st results.State) error {
	data := map[string]string{}
	if r != nil {
		b, _ := json.Marshal(r)
		data[results.KeyResults] = string(b)
	}
	b, _ := json.Marshal(st)
	data[results.KeyState] = string(b)
	return s.patch(ctx, data, nil)
}

// State writes only the state (e.g. Running at start).
func (s *ConfigMapSink) State(ctx context.Context, st results.State) error {
	b, _ := json.Marshal(st)
	return s.patch(ctx, map[string]string{results.KeyState: string(b)}, nil)
}
