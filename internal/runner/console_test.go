package runner

import (
	"bytes"
	"strings"
	"testing"

	"linerate.dev/linerate/api/v1alpha1"
)

// The console says the time left as each step starts, once per step, from the estimate the progress
// carries; trials within a step say nothing more of it.
func TestTheConsoleSaysTheTimeLeftAtEachStep(t *testing.T) {
	var out bytes.Buffer
	c := &consoleSink{w: &out}
	for _, p := range []v1alpha1.Progress{
		{StepsTotal: 3, EstimatedTotalSeconds: 310, EstimatedSecondsLeft: 310}, // setting up: no step yet
		{Test: v1alpha1.TestThroughput, FrameSize: 64, StepsDone: 0, StepsTotal: 3, Trial: 1, EstimatedSecondsLeft: 300},
		{Test: v1alpha1.TestThroughput, FrameSize: 64, StepsDone: 0, StepsTotal: 3, Trial: 2, EstimatedSecondsLeft: 290},
		{Test: v1alpha1.TestThroughput, FrameSize: 1518, StepsDone: 1, StepsTotal: 3, Trial: 7, EstimatedSecondsLeft: 185},
		{Test: v1alpha1.TestLatency, FrameSize: 64, StepsDone: 2, StepsTotal: 3, Trial: 12, EstimatedSecondsLeft: 61},
		{StepsDone: 3, StepsTotal: 3, Trial: 33},
	} {
		c.OnProgress(p)
	}
	want := "linerate: step 1/3 (throughput 64B): about 5m0s left\n" +
		"linerate: step 2/3 (throughput 1518B): about 3m5s left\n" +
		"linerate: step 3/3 (latency 64B): about 1m1s left\n"
	if got := out.String(); got != want {
		t.Errorf("console:\n%s\nwant:\n%s", got, want)
	}
	if strings.Count(out.String(), "step 1/3") != 1 {
		t.Error("a step said twice")
	}
}
