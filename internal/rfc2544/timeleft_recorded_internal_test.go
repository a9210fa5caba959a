package rfc2544

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/engine/sim"
	"linerate.dev/linerate/internal/estimate"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/results"
)

// The time left that `make demo` states, as the demo really ran. Each directory of testdata/demo-runs
// holds the TrafficTest `make demo` applied and the trial records of that run (its results ConfigMap's
// trials.jsonl.gz). The runner runs the plan again with every trial answered by what the real one
// measured, its clock standing at the time each record was written: it reaches every state the real run
// did and states the time left as it did then. The truth is when the real run's last trial ended.
//
// The real gateways are what no simulated DUT of TestTheTimeLeftHoldsOnTheDemosPlan was made to be: a 5 s
// trial at their own NDR loses now and then (they share a CPU with the cluster), their directions forward
// differently from size to size, and their searches take from 11 to 66 trials at one size. After the
// first step the range stated holds the truth in nine reports of ten, as on the simulated DUTs. The figure
// itself does not hold: its median report is off by a quarter to a third (mostly short: a search that
// takes twice the trials the model expects), where the simulated DUTs' is within a quarter. Issue 28 is
// open on it; here the median is only kept from growing past maxRecordedMedianOff.
// `go test ./internal/rfc2544 -run TestTheTimeLeftsRangeHoldsOnRecordedDemos -v` prints every report off
// by more than a quarter.
//
// A recording is of the search as it was: a change to what the runner asks of the engine makes the replay
// leave the recording, and the test says so. Record again with `make demo`, then
// `kubectl get configmap ipsec-demo-results -o jsonpath='{.binaryData.trials\.jsonl\.gz}' | base64 -d >
// trials.jsonl.gz` beside a copy of config/samples/throughput-test-demo.yaml.
func TestTheTimeLeftsRangeHoldsOnRecordedDemos(t *testing.T) {
	dirs, err := filepath.Glob("testdata/demo-runs/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no recorded demo runs: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			reports, end := replayRecordedRun(t, dir)
			var offs []float64
			covered, worst, worstAt := 0, 0.0, ""
			var table strings.Builder
			lastStep := int32(-1)
			for _, rp := range reports {
				truth := end.Sub(rp.at)
				if rp.stepsDone < 1 || truth <= 0 {
					continue // the first step: nothing of the DUT is known yet
				}
				off := (rp.left.Seconds() - truth.Seconds()) / truth.Seconds()
				offs = append(offs, math.Abs(off))
				if truth >= rp.low-time.Second && truth <= rp.high+time.Second {
					covered++
				}
				line := fmt.Sprintf("%6s into the run, step %d: said %7s (%s to %s), took %7s, off %+4.0f%%",
					rp.at.Sub(reports[0].at).Round(time.Second), rp.stepsDone+1, rp.left, rp.low, rp.high, truth.Round(time.Second), 100*off)
				if rp.stepsDone != lastStep || math.Abs(off) > 0.25 {
					table.WriteString(line + "\n")
					lastStep = rp.stepsDone
				}
				if math.Abs(off) > math.Abs(worst) {
					worst, worstAt = off, line
				}
			}
			if len(offs) == 0 {
				t.Fatal("no report after the first step")
			}
			slices.Sort(offs)
			median := offs[len(offs)/2]
			within := 0
			for _, o := range offs {
				if o <= 0.25 {
					within++
				}
			}
			t.Logf("each step's first report, and every one off by more than a quarter:\n%s", table.String())
			t.Logf("after the first step: median off %.0f%%, worst %+.0f%%; within a quarter %d of %d reports; the truth in the stated range %d of %d",
				100*median, 100*worst, within, len(offs), covered, len(offs))
			if median > maxRecordedMedianOff {
				t.Errorf("the median report of the time left was off by %.0f%%, more than the %.0f%% it was when recorded; the worst: %s",
					100*median, 100*maxRecordedMedianOff, worstAt)
			}
			if covered*10 < len(offs)*9 {
				t.Errorf("the range stated held the truth in only %d of %d reports; the report furthest off: %s", covered, len(offs), worstAt)
			}
		})
	}
}

// maxRecordedMedianOff is the most the median report of a recorded run may be off: the recordings' own
// figures (25 % and 33 %) and a little, so that the estimate gets no worse on them while issue 28 is open.
const maxRecordedMedianOff = 0.4

// recordedReport is a progress report of a replayed run: when it was made on the recorded clock, how many
// steps were done, and the time left it stated with its range.
type recordedReport struct {
	at              time.Time
	stepsDone       int32
	left, low, high time.Duration
}

type recordedSink struct {
	now     *time.Time
	reports []recordedReport
}

func (s *recordedSink) OnTrial(results.Trial)       {}
func (s *recordedSink) OnResults(*v1alpha1.Results) {}
func (s *recordedSink) OnProgress(pg v1alpha1.Progress) {
	if pg.Test == "" {
		return // setting up
	}
	left := time.Duration(pg.EstimatedSecondsLeft) * time.Second
	low, high := StatedRange(TimeLeft(pg), left)
	s.reports = append(s.reports, recordedReport{at: *s.now, stepsDone: pg.StepsDone, left: left, low: low, high: high})
}

// StatedRange is the range a time-left phrase states, "about 3m left (2m to 4m: ...)"; when it states
// none, an eighth either side of the estimate (a narrower range is not stated). Exported for the tests of
// rfc2544_test.
func StatedRange(phrase string, left time.Duration) (time.Duration, time.Duration) {
	// a range the DUT decides, the tester, or both ("(1m to 3m: the tester decides ...)")
	i := strings.Index(phrase, " (")
	j := strings.Index(phrase, ": the ")
	if i < 0 || j < i {
		return left - left/8, left + left/8
	}
	low, high, ok := strings.Cut(phrase[i+2:j], " to ")
	if !ok {
		return left - left/8, left + left/8
	}
	l, err1 := time.ParseDuration(low)
	h, err2 := time.ParseDuration(high)
	if err1 != nil || err2 != nil {
		return left - left/8, left + left/8
	}
	return l, h
}

// clockedReplay answers the run's trials with the recorded ones and moves the clock to when each was
// written.
type clockedReplay struct {
	replayEngine
	now *time.Time
}

func (e *clockedReplay) RunTrial(ctx context.Context, cfg engine.TrialConfig, progress func(engine.Progress)) (*engine.TrialResult, error) {
	if e.replayed >= len(e.trials) {
		return nil, fmt.Errorf("the run asked for trial %d; the recording has %d", e.replayed+1, len(e.trials))
	}
	rec := e.trials[e.replayed][0]
	res, err := e.replayEngine.RunTrial(ctx, cfg, progress)
	if err != nil {
		return nil, fmt.Errorf("trial %d (%s %d B at %.4g%% in the recording): %w; the runner no longer asks what it asked when this was recorded: record the demo again",
			e.replayed+1, rec.Test, rec.FrameSize, rec.OfferedPercent, err)
	}
	*e.now = rec.Time
	return res, nil
}

// replayRecordedRun runs the recorded TrafficTest of dir on its recorded trials: every progress report, and
// when its last trial's record was written.
func replayRecordedRun(t *testing.T, dir string) ([]recordedReport, time.Time) {
	t.Helper()
	p := PlanOfFile(t, filepath.Join(dir, "traffictest.yaml"))
	trials := readRecordedTrials(t, filepath.Join(dir, "trials.jsonl.gz"))
	// the clock stands at the end of the trial before; the first trial starts its phases before its end
	first := trials[0][0]
	now := first.Time.Add(-estimate.Phases(p.Durations, time.Duration(first.DurationS*float64(time.Second)), first.Burst > 0))
	eng := &clockedReplay{replayEngine: replayEngine{Engine: sim.New(sim.DUT{LineRateBps: float64(p.Traffic.LineRateBps)}),
		trials: trials, limits: limitsOf(p.Validity)}, now: &now}
	sink := &recordedSink{now: &now}
	r := New(p, eng, sink, Options{Sleep: func(context.Context, time.Duration) error { return nil }, Now: func() time.Time { return now }})
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatalf("the replayed run did not follow the recording: %v", err)
	}
	if eng.replayed != len(trials) {
		t.Fatalf("the replayed run ran %d of the %d recorded trials", eng.replayed, len(trials))
	}
	return sink.reports, trials[len(trials)-1][0].Time
}

// PlanOfFile is the plan of the TrafficTest in a YAML file. Exported for the tests of rfc2544_test.
func PlanOfFile(t *testing.T, path string) *plan.Plan {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tt v1alpha1.TrafficTest
	if err := yaml.Unmarshal(b, &tt); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Resolve(&tt, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// readRecordedTrials reads a run's trial records, by trial (a trial's records share their time).
func readRecordedTrials(t *testing.T, path string) [][]results.Trial {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]results.Trial
	sc := bufio.NewScanner(z)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec results.Trial
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		if n := len(out); n > 0 && out[n-1][0].Time.Equal(rec.Time) {
			out[n-1] = append(out[n-1], rec)
			continue
		}
		out = append(out, []results.Trial{rec})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s holds no trial records", path)
	}
	return out
}
