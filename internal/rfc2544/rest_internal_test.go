package rfc2544

import (
	"strings"
	"testing"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/results"
)

// What a trial's records and notes say of the DUT's rest before it: how much longer it rested, and the
// frames of earlier trials that still arrived on the direction's own receiving port. A DUT still forwarding
// after the longest rest is measured as it is (its backlog is its own), and the note says so.
func TestTheRestBeforeATrialIsRecorded(t *testing.T) {
	result := func(waited time.Duration, missed bool, staleOn1 int64) *engine.TrialResult {
		return &engine.TrialResult{QuietWaitNs: int64(waited), QuietMissed: missed,
			Ports: []engine.PortCounters{{ID: 0, RxStale: 99}, {ID: 1, RxStale: staleOn1}}}
	}
	for _, tc := range []struct {
		name     string
		rest     time.Duration
		res      *engine.TrialResult
		extended float64
		stale    int64
		notes    []string
	}{
		{name: "a DUT that fell quiet in the drain", rest: time.Second, res: result(0, false, 0)},
		{name: "less than a millisecond is no extension", rest: time.Second, res: result(999*time.Microsecond, false, 0)},
		{name: "rested longer", rest: time.Second, res: result(700*time.Millisecond, false, 0), extended: 0.7,
			notes: []string{"still forwarding frames of an earlier trial when the next one was due (the first: 0.7 s more before trial 1)"}},
		{name: "stale frames on its own port, not the other's", rest: time.Second, res: result(0, false, 5), stale: 5,
			notes: []string{"5 frames in trial 1, west->east; it began when the DUT had been quiet"}},
		{name: "no rest asked", res: result(0, false, 5), stale: 5, notes: []string{"spec.durations.dutRest is 0: the DUT was not rested"}},
		{name: "never settled: measured as it is, and said", rest: time.Second, res: result(quietMax, true, 7), extended: quietMax.Seconds(), stale: 7,
			notes: []string{"10.0 s more before trial 1", "still forwarding after 10s of waiting"}},
		{name: "never settled, nothing arrived during it", rest: time.Second, res: result(quietMax, true, 0), extended: quietMax.Seconds(),
			notes: []string{"10.0 s more before trial 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Runner{plan: &plan.Plan{Durations: plan.Durations{DUTRest: tc.rest}}, res: &v1alpha1.Results{}}
			rec := results.Trial{Seq: 1}
			r.noteRest(tc.res, &rec, 1, "west->east")
			if rec.RestExtendedS != tc.extended || rec.Stale != tc.stale || len(rec.TesterFaults) > 0 {
				t.Errorf("restExtendedS %g stale %d faults %q; want %g, %d, no fault", rec.RestExtendedS, rec.Stale, rec.TesterFaults, tc.extended, tc.stale)
			}
			if len(r.res.Notes) != len(tc.notes) {
				t.Fatalf("notes %q, want %d", r.res.Notes, len(tc.notes))
			}
			for i, n := range tc.notes {
				if !strings.Contains(r.res.Notes[i], n) {
					t.Errorf("note %q lacks %q", r.res.Notes[i], n)
				}
			}
			// each note once: the next trial like it adds none
			again := results.Trial{Seq: 2}
			r.noteRest(tc.res, &again, 1, "west->east")
			if len(r.res.Notes) != len(tc.notes) {
				t.Errorf("a second trial added notes: %q", r.res.Notes)
			}
		})
	}
}
