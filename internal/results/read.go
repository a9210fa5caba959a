package results

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"linerate.dev/linerate/api/v1alpha1"
)

// Stored is what a run has written into its results ConfigMap (and its trial segments), as read at one
// moment: the reading side of the runner's ConfigMapSink, for whoever reports on a run from the cluster.
type Stored struct {
	// Results are the tables of the complete steps; nil before the first step completed.
	Results *v1alpha1.Results
	// Progress is where the runner last said it was; nil before it said anything.
	Progress *v1alpha1.Progress
	// State is the runner's own view of how the run ends; nil before the runner started.
	State *State
	// Trials are every trial record, the sealed segments' first.
	Trials []Trial
}

// Empty says the tester has written nothing yet.
func (s *Stored) Empty() bool {
	return s.Results == nil && s.Progress == nil && s.State == nil && len(s.Trials) == 0
}

// Read reads a run's results ConfigMap and every trial segment it lists. The ConfigMap is read once, so
// the tables, the state and the segment list belong together; a key that does not decode is an error
// naming it, as is a listed segment the cluster lacks.
func Read(ctx context.Context, c client.Reader, key types.NamespacedName) (*Stored, error) {
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, key, cm); err != nil {
		return nil, err
	}
	out := &Stored{}
	for k, into := range map[string]any{KeyResults: &out.Results, KeyProgress: &out.Progress, KeyState: &out.State} {
		if s := cm.Data[k]; s != "" {
			if err := json.Unmarshal([]byte(s), into); err != nil {
				return nil, fmt.Errorf("%s in ConfigMap %s: %w", k, key, err)
			}
		}
	}
	trials, err := TrialsOf(ctx, c, cm)
	if err != nil {
		return nil, fmt.Errorf("ConfigMap %s: %w", key, err)
	}
	out.Trials = trials
	return out, nil
}
