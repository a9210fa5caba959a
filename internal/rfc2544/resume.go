package rfc2544

import (
	"fmt"
	"slices"

	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/results"
)

// stepDone closes a complete step: its checkpoint (or, to a sink that keeps none, the tables) goes out,
// and a resumed run passes over it from here.
func (r *Runner) stepDone() {
	r.applyCalibration()
	r.stepsDone++
	r.progress.StepsDone = int32(r.stepsDone)
	if c, ok := r.sink.(Checkpointer); ok {
		c.OnCheckpoint(r.checkpoint())
		return
	}
	r.sink.OnResults(r.res)
}

// checkpointWithinStep checkpoints a long step part of the way (a latency step after each of its loads):
// the step is not done, but a resumed run finds the parts' rows in the results and passes over them.
func (r *Runner) checkpointWithinStep() {
	if c, ok := r.sink.(Checkpointer); ok {
		c.OnCheckpoint(r.checkpoint())
	}
}

// skipStep passes over a step a checkpoint says is done.
func (r *Runner) skipStep() bool {
	if r.skipSteps == 0 {
		return false
	}
	r.skipSteps--
	return true
}

// checkpoint is where the run stands after a complete step.
func (r *Runner) checkpoint() results.Checkpoint {
	cp := results.Checkpoint{PlanHash: r.opt.PlanHash, StepsDone: r.stepsDone, LastSeq: r.seq,
		Results: r.res.DeepCopy(), Resumes: r.resumes}
	for k, v := range r.ndr {
		cp.NDR = append(cp.NDR, results.NDRPoint{FrameSize: k.size, Direction: k.dir, Percent: v.percent, Found: v.found,
			TesterLimited: &v.testerLimited})
	}
	slices.SortFunc(cp.NDR, func(a, b results.NDRPoint) int {
		if a.FrameSize != b.FrameSize {
			return a.FrameSize - b.FrameSize
		}
		return a.Direction - b.Direction
	})
	return cp
}

// resume takes up a checkpoint of an earlier runner of the same plan: its tables and NDRs stand, its
// complete steps are passed over, and the notes say what was kept and what was measured again.
func (r *Runner) resume(cp *results.Checkpoint) {
	if cp.PlanHash != r.opt.PlanHash || cp.Results == nil || cp.StepsDone > r.stepsTotal {
		r.note(fmt.Sprintf("the results ConfigMap held a checkpoint of another plan (spec changed while suspended): the run started from the beginning; the earlier trial records (seq 1-%d) are kept", r.opt.LastSeq))
		r.sink.OnResults(r.res) // the old plan's tables are not this run's
		return
	}
	r.res = cp.Results.DeepCopy()
	r.resumedLatency = map[latencyLoad]bool{}
	for _, l := range r.res.Latency {
		r.resumedLatency[latencyLoad{int(l.FrameSize), plan.RowLoad(l)}] = true
	}
	rowLimited := map[key]bool{} // a checkpoint written before NDRPoint had the flag says it in its rows
	for _, t := range r.res.Throughput {
		for d, dir := range r.plan.Directions() {
			if dir.Name == t.Direction {
				rowLimited[key{int(t.FrameSize), d}] = t.TesterLimited
			}
		}
	}
	for _, n := range cp.NDR {
		k := key{n.FrameSize, n.Direction}
		limited := rowLimited[k]
		if n.TesterLimited != nil {
			limited = *n.TesterLimited
		}
		r.ndr[k] = ndrInfo{percent: n.Percent, found: n.Found, testerLimited: limited}
	}
	r.stepsDone, r.skipSteps, r.resumes = cp.StepsDone, cp.StepsDone, cp.Resumes+1
	r.progress.StepsDone = int32(r.stepsDone)
	msg := fmt.Sprintf("resumed after a suspension (resumption %d): the %d of %d steps complete then were not measured again", r.resumes, cp.StepsDone, r.stepsTotal)
	if r.opt.LastSeq > cp.LastSeq {
		msg += fmt.Sprintf("; the step under way then was measured again from its start (a latency step from its first load not complete then), its earlier trials (seq %d-%d) are kept in the records but count for nothing", cp.LastSeq+1, r.opt.LastSeq)
	}
	r.note(msg)
	r.sink.OnResults(r.res)
}
