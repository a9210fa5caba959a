package results

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A ConfigMap holds at most 1 MiB, and a long run (a full suite with repetitions, a soak of frame-loss
// curves) writes more trial records than that even compressed. The records are therefore kept in
// segments: the results ConfigMap holds the open segment (KeyTrials) and the list of sealed ones
// (KeySegments); each sealed segment is a ConfigMap of its own, "<test>-trials-<n>", which the runner
// fills once, when the open segment passes SealBytes. The operator makes each one, empty and owned by the
// TrafficTest, when the open segment is half full (SpareSegment): the tester's Role may then write only
// ConfigMaps named for its test, and create none.

// KeySegments lists the sealed trial segments, oldest first (JSON, []Segment).
const KeySegments = "trial-segments.json"

// SealBytes is the size of the JSON lines at which the open segment is sealed into a ConfigMap of its
// own. Trial records compress about fivefold (83 B a record in TestThousandsOfTrialsSpillIntoSealedSegments),
// so a segment takes some 170 KiB of a ConfigMap's 1 MiB, and even an incompressible one would fit.
const SealBytes = 768 << 10

// MaxOpenBytes bounds the open segment while the next sealed segment is not there yet (the operator is
// late): records beyond it wait in the runner. Kept at the seal size, so the results ConfigMap's 1 MiB never
// depends on how well the records compress.
const MaxOpenBytes = SealBytes

// MaxSegments bounds the sealed segments of one run (the tester's Role names each of them). At about
// 2,000 records a segment that is some 400,000 trials, days of trials at one per second.
const MaxSegments = 200

// Segment is one sealed segment of trial records.
type Segment struct {
	ConfigMap string `json:"configMap"`
	Trials    int    `json:"trials"`
	FirstSeq  int    `json:"firstSeq"`
	LastSeq   int    `json:"lastSeq"`
}

// SegmentConfigMapName is the n-th (from 1) sealed segment of a TrafficTest's trial records.
func SegmentConfigMapName(test string, n int) string { return fmt.Sprintf("%s-trials-%d", test, n) }

// TestOf is the TrafficTest whose results ConfigMap this is.
func TestOf(resultsConfigMap string) string {
	return strings.TrimSuffix(resultsConfigMap, resultsSuffix)
}

// SegmentConfigMapNames are the names the sealed segments of a test may take, for the tester's Role.
func SegmentConfigMapNames(test string) []string {
	out := make([]string, MaxSegments)
	for i := range out {
		out[i] = SegmentConfigMapName(test, i+1)
	}
	return out
}

// SpareSegment names the segment ConfigMap the operator makes next, once the open segment (its JSON lines
// openBytes long) is half way to being sealed; "" while none is needed.
func SpareSegment(test string, sealed, openBytes int) string {
	if openBytes < SealBytes/2 || sealed >= MaxSegments {
		return ""
	}
	return SegmentConfigMapName(test, sealed+1)
}

// OpenBytes is the size of the open segment's JSON lines as the sink measures it.
func OpenBytes(lines [][]byte) int {
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	return n
}

// Segments reads the list of sealed segments from the results ConfigMap.
func Segments(cm *corev1.ConfigMap) ([]Segment, error) {
	s := cm.Data[KeySegments]
	if s == "" {
		return nil, nil
	}
	var out []Segment
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, fmt.Errorf("%s: %w", KeySegments, err)
	}
	return out, nil
}

// ReadTrials reads every trial record of a test from the cluster: the sealed segments in order, then the
// open one. It is how anything outside the runner (the operator, the e2e suite, a user's script through
// the same keys) reads a run's trials.
func ReadTrials(ctx context.Context, c client.Reader, namespace, test string) ([]Trial, error) {
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ConfigMapName(test)}, cm); err != nil {
		return nil, err
	}
	return TrialsOf(ctx, c, cm)
}

// TrialsOf reads every trial record of the results ConfigMap cm, as read once: the sealed segments it
// lists, in order, then its open segment. A segment the list names but the cluster lacks is an error
// that names it: the records are never returned with a gap.
func TrialsOf(ctx context.Context, c client.Reader, cm *corev1.ConfigMap) ([]Trial, error) {
	segs, err := Segments(cm)
	if err != nil {
		return nil, err
	}
	test := TestOf(cm.Name)
	var out []Trial
	for i, s := range segs {
		// the list is the runner's to write: only this test's segment names, in order, are read
		if want := SegmentConfigMapName(test, i+1); s.ConfigMap != want {
			return out, fmt.Errorf("%s names %q as segment %d, want %q", KeySegments, s.ConfigMap, i+1, want)
		}
		sc := &corev1.ConfigMap{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: cm.Namespace, Name: s.ConfigMap}, sc); err != nil {
			if apierrors.IsNotFound(err) {
				return out, fmt.Errorf("trial segment %s (the trials seq %d to %d, segment %d of the %d that %s lists) is missing",
					s.ConfigMap, s.FirstSeq, s.LastSeq, i+1, len(segs), cm.Name)
			}
			return out, fmt.Errorf("trial segment %s: %w", s.ConfigMap, err)
		}
		trials, err := DecodeTrials(sc.BinaryData[KeyTrials])
		if err != nil {
			return out, fmt.Errorf("trial segment %s: %w", s.ConfigMap, err)
		}
		if len(trials) != s.Trials {
			return out, fmt.Errorf("trial segment %s holds %d records, %s says %d", s.ConfigMap, len(trials), KeySegments, s.Trials)
		}
		out = append(out, trials...)
	}
	open, err := DecodeTrials(cm.BinaryData[KeyTrials])
	if err != nil {
		return out, err
	}
	return append(out, open...), nil
}
