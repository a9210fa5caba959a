package results

import "linerate.dev/linerate/api/v1alpha1"

// KeyCheckpoint holds the runner's Checkpoint (JSON).
const KeyCheckpoint = "checkpoint.json"

// Checkpoint is where a run stood after its last complete step (one test at one frame size, both
// directions, or the IMIX test): what a runner started after a suspension needs to go on from there
// instead of from the beginning. A step interrupted half-way is measured again from its start: the
// trials of a search belong together, and the DUT may have changed while the run was suspended. Its
// trials stay in the records.
type Checkpoint struct {
	// PlanHash is the plan the checkpoint belongs to; a runner given another plan starts afresh.
	PlanHash string `json:"planHash"`
	// StepsDone counts the complete steps, in the plan's order.
	StepsDone int `json:"stepsDone"`
	// LastSeq is the sequence number of the last trial record at the checkpoint.
	LastSeq int `json:"lastSeq"`
	// NDR is each measured NDR, the rate the latency, frame-loss and back-to-back tests start from.
	NDR []NDRPoint `json:"ndr,omitempty"`
	// Results are the result tables of the complete steps.
	Results *v1alpha1.Results `json:"results"`
	// Resumes counts how often the run was resumed before this checkpoint.
	Resumes int `json:"resumes,omitempty"`
}

// NDRPoint is the NDR found at one frame size in one direction (its index in the plan's directions).
type NDRPoint struct {
	FrameSize int     `json:"frameSize"`
	Direction int     `json:"direction"`
	Percent   float64 `json:"percent"`
	Found     bool    `json:"found"`
	// TesterLimited: the NDR is the tester's limit (a later step must not read it as the DUT's); nil in a
	// checkpoint written before it was kept, whose throughput rows then say it
	TesterLimited *bool `json:"testerLimited,omitempty"`
}
