package runner

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/results"
)

// ConfigMapSink writes the run into the results ConfigMap: every trial record as soon as it is measured
// (so a crash of the pod loses nothing), the result tables after every step with a checkpoint to resume
// from, progress at most every ProgressEvery, and the run's state at the end. Trial records past
// results.SealBytes move into sealed segment ConfigMaps (internal/results/segments.go), so no run
// outgrows the 1 MiB of a ConfigMap.
type ConfigMapSink struct {
	Client        client.Client
	Key           types.NamespacedName
	ProgressEvery time.Duration
	// Log receives write failures (the run goes on; the next write carries everything again).
	Log func(format string, args ...any)
	// FlushWithin bounds Finish's wait for the last records (default 5 s, inside the pod's grace period).
	FlushWithin time.Duration

	mu           sync.Mutex
	open         [][]byte // the open segment's records, each a JSON line encoded once
	openSeqs     []int
	segments     []results.Segment
	written      int // records (sealed and open) known to be in the cluster
	lastProgress time.Time
	progress     *v1alpha1.Progress // the latest, written or not
	dirty        bool               // progress holds news not yet written
	live         *Live
	// wmu orders progress writes: an older snapshot must never overwrite a newer one.
	wmu sync.Mutex
	// twmu lets one goroutine at a time write trial records; the others leave the work to it.
	twmu sync.Mutex
	// testUID is the TrafficTest that owns the results ConfigMap, and so must own every segment (once read).
	testUID *types.UID
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

// OnTrial appends the record and has it written at once, without holding up the run: a write that is
// under way when the record arrives takes it along, or writes again after it is done.
func (s *ConfigMapSink) OnTrial(t results.Trial) {
	line, err := json.Marshal(&t)
	if err != nil {
		s.logf("trial %d: %v", t.Seq, err)
		return
	}
	s.mu.Lock()
	s.open = append(s.open, line)
	s.openSeqs = append(s.openSeqs, t.Seq)
	s.mu.Unlock()
	if s.live != nil {
		s.live.Trial(t)
	}
	go s.drain()
}

func (s *ConfigMapSink) behind() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.written < s.sealedTrials()+len(s.open)
}

// sealedTrials counts the records in sealed segments (s.mu held).
func (s *ConfigMapSink) sealedTrials() int {
	n := 0
	for _, seg := range s.segments {
		n += seg.Trials
	}
	return n
}

// drain writes trial records until none is left unwritten, unless another goroutine is at it; after
// letting go it looks again, so a record that arrived during its last write is not left behind.
func (s *ConfigMapSink) drain() {
	for s.twmu.TryLock() {
		err := s.writeTrials(context.Background())
		s.twmu.Unlock()
		if err != nil {
			s.logf("trial records: %v", err)
			return // the next record or Flush tries again
		}
		if !s.behind() {
			return
		}
	}
}

// Flush writes every record handed over so far and returns when they are in the cluster, or ctx ends.
func (s *ConfigMapSink) Flush(ctx context.Context) error {
	s.twmu.Lock()
	defer s.twmu.Unlock()
	for {
		err := s.writeTrials(ctx)
		if !errors.Is(err, errNoSpareSegment) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// errNoSpareSegment says the next sealed segment's ConfigMap is not there yet: the operator makes it
// when the open segment is half full.
var errNoSpareSegment = errors.New("waiting for the operator to make the next trial segment ConfigMap")

// writeTrials writes the open segment, first sealing from it as many segments as it holds beyond the
// limit (twmu held). A sealed segment is written before the results ConfigMap names it: a crash in
// between leaves the records in the open segment, and the next runner seals them again.
func (s *ConfigMapSink) writeTrials(ctx context.Context) error {
	for {
		s.mu.Lock()
		sealed := s.sealedTrials()
		lines, seqs := s.open, s.openSeqs
		segments := slices.Clone(s.segments)
		done := s.written == sealed+len(lines)
		s.mu.Unlock()
		if done {
			return nil
		}

		// seal full segments off the front until the rest fits the open segment
		n := 0
		var waiting error
		for {
			fit := fitting(lines[n:], results.SealBytes)
			if n+fit == len(lines) {
				break
			}
			fit = max(fit, 1)
			if len(segments) >= results.MaxSegments {
				waiting = fmt.Errorf("%d trial segments are full: records from seq %d on stay in the open segment", results.MaxSegments, seqs[n])
				break
			}
			seg := results.Segment{ConfigMap: results.SegmentConfigMapName(results.TestOf(s.Key.Name), len(segments)+1),
				Trials: fit, FirstSeq: seqs[n], LastSeq: seqs[n+fit-1]}
			err := s.writeSegment(ctx, seg.ConfigMap, lines[n:n+fit])
			if apierrors.IsNotFound(err) {
				waiting = fmt.Errorf("%w %s", errNoSpareSegment, seg.ConfigMap)
				break
			}
			if err != nil {
				return err
			}
			segments = append(segments, seg)
			n += fit
		}
		// what cannot be sealed yet stays open, up to a size a ConfigMap surely holds
		upto := n + fitting(lines[n:], results.MaxOpenBytes)
		data := map[string]string{}
		if n > 0 {
			b, _ := json.Marshal(segments)
			data[results.KeySegments] = string(b)
		}
		open, err := results.EncodeTrialLines(lines[n:upto])
		if err != nil {
			return err
		}
		if err := s.patch(ctx, data, map[string][]byte{results.KeyTrials: open}); err != nil {
			return err
		}
		s.mu.Lock()
		s.segments = segments
		s.open, s.openSeqs = s.open[n:], s.openSeqs[n:]
		s.written = sealed + upto
		s.mu.Unlock()
		if waiting != nil {
			return waiting
		}
	}
}

// fitting counts the lines from the front that fit in limit bytes (with their newlines).
func fitting(lines [][]byte, limit int) int {
	n, size := 0, 0
	for n < len(lines) && size+len(lines[n])+1 <= limit {
		size += len(lines[n]) + 1
		n++
	}
	return n
}

// writeSegment fills a sealed segment's ConfigMap, made empty by the operator.
func (s *ConfigMapSink) writeSegment(ctx context.Context, name string, lines [][]byte) error {
	body, err := results.EncodeTrialLines(lines)
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{}
	if err := s.Client.Get(ctx, types.NamespacedName{Namespace: s.Key.Namespace, Name: name}, cm); err != nil {
		return err
	}
	// only a segment of this very test: one left by a deleted test of the same name, or anybody's
	// ConfigMap of that name, is not written over (its owner's garbage collection would take the records)
	if s.testUID == nil {
		parent := &corev1.ConfigMap{}
		if err := s.Client.Get(ctx, s.Key, parent); err != nil {
			return err
		}
		uid := controllerUID(parent)
		s.testUID = &uid
	}
	if controllerUID(cm) != *s.testUID {
		return fmt.Errorf("trial segment %s belongs to another object (controller %q, this test's %q): not written over", name, controllerUID(cm), *s.testUID)
	}
	// a segment left filled by a runner that crashed before naming it is filled again with the same records
	cm.BinaryData = map[string][]byte{results.KeyTrials: body}
	return s.Client.Update(ctx, cm)
}

func controllerUID(o metav1.Object) types.UID {
	if c := metav1.GetControllerOf(o); c != nil {
		return c.UID
	}
	return ""
}

func (s *ConfigMapSink) every() time.Duration {
	if s.ProgressEvery <= 0 {
		return 5 * time.Second
	}
	return s.ProgressEvery
}

// OnProgress has progress written, at most every ProgressEvery (the operator refreshes the status from
// it), without waiting for the write; what falls between two writes is written by Heartbeat.
func (s *ConfigMapSink) OnProgress(p v1alpha1.Progress) {
	if s.live != nil {
		s.live.Progress(p)
	}
	s.mu.Lock()
	s.progress, s.dirty = &p, true
	due := time.Since(s.lastProgress) >= s.every()
	if due {
		s.lastProgress = time.Now() // this write takes the period, though it lands a little later
	}
	s.mu.Unlock()
	if due {
		// off the trial's own goroutine: a slow API server must not hold up the measurement
		go s.writeProgress(false)
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

// OnCheckpoint writes the checkpoint after a complete step, with the result tables it holds, once the
// step's trial records are in the cluster: a runner resuming from it finds every record it counts on.
func (s *ConfigMapSink) OnCheckpoint(cp results.Checkpoint) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Flush(ctx); err != nil {
		s.logf("checkpoint after step %d: %v", cp.StepsDone, err)
		return
	}
	c, _ := json.Marshal(cp)
	r, _ := json.Marshal(cp.Results)
	if err := s.patch(ctx, map[string]string{results.KeyCheckpoint: string(c), results.KeyResults: string(r)}, nil); err != nil {
		s.logf("checkpoint after step %d: %v", cp.StepsDone, err)
	}
}

// Resume reads what an earlier runner of this test left in the results ConfigMap: its trial records,
// which this sink then extends (none is rewritten, sequence numbers go on from lastSeq), and its
// checkpoint, nil if it reached none.
func (s *ConfigMapSink) Resume(ctx context.Context) (cp *results.Checkpoint, lastSeq int, err error) {
	cm := &corev1.ConfigMap{}
	if err := s.Client.Get(ctx, s.Key, cm); err != nil {
		return nil, 0, err
	}
	segments, err := results.Segments(cm)
	if err != nil {
		return nil, 0, err
	}
	lines, err := results.DecodeTrialLines(cm.BinaryData[results.KeyTrials])
	if err != nil {
		return nil, 0, err
	}
	seqs := make([]int, len(lines))
	for i, l := range lines {
		var t struct {
			Seq int `json:"seq"`
		}
		if err := json.Unmarshal(l, &t); err != nil {
			return nil, 0, fmt.Errorf("%s record %d: %w", results.KeyTrials, i+1, err)
		}
		seqs[i] = t.Seq
	}
	if n := len(segments); n > 0 {
		lastSeq = segments[n-1].LastSeq
	}
	if n := len(seqs); n > 0 {
		lastSeq = max(lastSeq, seqs[n-1])
	}
	s.mu.Lock()
	s.segments, s.open, s.openSeqs = segments, lines, seqs
	s.written = s.sealedTrials() + len(lines)
	s.mu.Unlock()
	if c := cm.Data[results.KeyCheckpoint]; c != "" {
		cp = &results.Checkpoint{}
		if err := json.Unmarshal([]byte(c), cp); err != nil {
			return nil, lastSeq, fmt.Errorf("%s: %w", results.KeyCheckpoint, err)
		}
	}
	return cp, lastSeq, nil
}

// Finish writes the last trial records, then the final tables and the state together.
func (s *ConfigMapSink) Finish(ctx context.Context, r *v1alpha1.Results, st results.State) error {
	// within the pod's termination grace period (10 s): records a missing segment holds up stay open
	within := s.FlushWithin
	if within <= 0 {
		within = 5 * time.Second
	}
	fctx, cancel := context.WithTimeout(ctx, within)
	ferr := s.Flush(fctx)
	cancel()
	data := map[string]string{}
	if r != nil {
		b, _ := json.Marshal(r)
		data[results.KeyResults] = string(b)
	}
	b, _ := json.Marshal(st)
	data[results.KeyState] = string(b)
	return errors.Join(ferr, s.patch(ctx, data, nil))
}

// State writes only the state (e.g. Running at start).
func (s *ConfigMapSink) State(ctx context.Context, st results.State) error {
	b, _ := json.Marshal(st)
	return s.patch(ctx, map[string]string{results.KeyState: string(b)}, nil)
}
