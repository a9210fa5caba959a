package controllers

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"linerate.dev/linerate/api/v1alpha1"
)

// event records an event of this pass; Reconcile emits it once the status it describes is written.
func (r *TrafficTestReconciler) event(tt *v1alpha1.TrafficTest, typ, reason, action, note string, args ...any) {
	if r.Recorder == nil {
		return
	}
	r.eventsMu.Lock()
	defer r.eventsMu.Unlock()
	if r.pending == nil {
		r.pending = map[types.UID][]pendingEvent{}
	}
	r.pending[tt.UID] = append(r.pending[tt.UID], pendingEvent{typ, reason, action, fmt.Sprintf(note, args...)})
}

// takeEvents hands over the events of this pass (controller-runtime never reconciles one object twice at
// once, so a pass's events are its own).
func (r *TrafficTestReconciler) takeEvents(tt *v1alpha1.TrafficTest) []pendingEvent {
	r.eventsMu.Lock()
	defer r.eventsMu.Unlock()
	ev := r.pending[tt.UID]
	delete(r.pending, tt.UID)
	return ev
}

type pendingEvent struct{ typ, reason, action, note string }
