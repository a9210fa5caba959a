package rfc2544

import (
	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/results"
)

// Sink receives what the run measures.
type Sink interface {
	// OnTrial is called once per direction of every trial.
	OnTrial(results.Trial)
	// OnProgress is called at every trial start and with live counters during trials.
	OnProgress(v1alpha1.Progress)
	// OnResults is called with the result tables after every completed step.
	OnResults(*v1alpha1.Results)
}

// Checkpointer is a Sink that keeps checkpoints: after every complete step it gets one (with the result
// tables) instead of OnResults, so that a suspended run can go on from there.
type Checkpointer interface {
	OnCheckpoint(results.Checkpoint)
}

// NopSink discards everything.
type NopSink struct{}

func (NopSink) OnTrial(results.Trial)        {}
func (NopSink) OnProgress(v1alpha1.Progress) {}
func (NopSink) OnResults(*v1alpha1.Results)  {}
