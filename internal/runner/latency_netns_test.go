package runner_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/testenv"
)

// Latency per RFC 8219 through the real engine: a repetition at a rate where the DUT loses more than the
// tolerance is invalid, and the summary over the repetitions is the medians of their typical and worst-case
// latencies.
func TestLatencyFollowsRFC8219(t *testing.T) {
	eng := need(t)
	withLatency := func(reps int32, trial time.Duration) func(*v1alpha1.TrafficTest) {
		return func(tt *v1alpha1.TrafficTest) {
			tt.Spec.Tests = []v1alpha1.TestKind{v1alpha1.TestThroughput, v1alpha1.TestLatency}
			tt.Spec.Latency.Repetitions = reps
			tt.Spec.Durations.LatencyTrial = dur(trial)
		}
	}

	t.Run("a lossy rate is no latency", func(t *testing.T) {
		tns, rns := router(t, "lq")
		// A bucket of 600 frames refilled at 1000 frames/s: a 1.2 s validation trial (warm-up included)
		// passes up to about 1500 frames/s, which a 4.2 s latency trial at the same rate overflows by
		// hundreds of frames. The NDR is this DUT's, and at it the DUT loses in a longer trial.
		rules := `table inet lrt {
  chain lrfwd { type filter hook forward priority 0; policy accept;
    ip daddr 198.19.1.0/24 limit rate over 1000/second burst 600 packets drop
  }
}`
		nft(t, rns, rules)
		// What is shown is the loss rule, not the latency's precision: the tester may fall 20 ms behind and
		// pause 20 ms (a loaded host does). What it then owes, at most 50 frames at these rates, fits in the
		// bucket's 600, and a bucket admits by count, not by timing: a trial stretched by a lag at its end
		// gains at most 20 tokens (an NDR one step higher), and its latency trials only lose more.
		relaxed := func(tt *v1alpha1.TrafficTest) {
			withLatency(2, 4*time.Second)(tt)
			tt.Spec.Tester.Validity = v1alpha1.TrialValidity{MaxTxLag: dur(20 * time.Millisecond), MaxWorkerGap: dur(20 * time.Millisecond)}
		}
		o := runCLI(t, eng, tns, routedTest("lossylat", nil, []int32{512}, "0.01", "1", relaxed))
		defer logTrialsIfFailed(t, o)
		if o.Error != "" || len(o.Results.Throughput) != 1 {
			t.Fatalf("run: %q throughput %+v", o.Error, o.Results.Throughput)
		}
		bounds := lowerBounds(t, o)
		if len(o.Results.Latency) == 0 && len(bounds) > 0 {
			// no NDR, or an undetermined one: no rate to measure latency at
			skipForLowerBounds(t, bounds, o)
		}
		if len(o.Results.Latency) != 1 || len(o.Results.Latency[0].Repetitions) != 2 {
			t.Fatalf("latency %+v", o.Results.Latency)
		}
		row := o.Results.Latency[0]
		// each repetition's last try decides it (a spoiled try is repeated, under the same number)
		last := map[int]results.Trial{}
		for _, tr := range o.Trials {
			if tr.Test == v1alpha1.TestLatency && tr.Seq > last[tr.Repetition].Seq {
				last[tr.Repetition] = tr
			}
		}
		if len(bounds) > 0 {
			// The tester spoiled the trials near the DUT's NDR even so relaxed: the rate found is a lower
			// bound, at which a latency trial may lose nothing. The loss rule is checked where it applies: a
			// repetition is valid only where its trial lost nothing, and invalid for its loss where it lost.
			for i, rep := range row.Repetitions {
				tr := last[i+1]
				switch {
				case rep.Valid && (tr.Lost != 0 || !tr.Pass || tr.TesterLimited):
					t.Errorf("repetition %d: %+v valid, from trial %d that lost %d (pass %v, spoiled %v)", i+1, rep, tr.Seq, tr.Lost, tr.Pass, tr.TesterLimited)
				case !tr.TesterLimited && tr.Lost != 0 && !strings.Contains(rep.Reason, "loss tolerance"):
					t.Errorf("repetition %d: %+v, from trial %d that lost %d: want invalid for its loss", i+1, rep, tr.Seq, tr.Lost)
				}
			}
			skipForLowerBounds(t, bounds, o)
			return
		}
		for _, tr := range o.Trials {
			// (a try the tester spoiled is held to its own rule below: a short one may not overflow the bucket)
			if tr.Test == v1alpha1.TestLatency && !tr.TesterLimited && (tr.Pass || tr.Lost == 0) {
				t.Errorf("latency trial %d at %.3f%%: lost %d of %d, pass %v: the 4 s trial should overflow the bucket and fail", tr.Seq, tr.OfferedPercent, tr.Lost, tr.TxFrames, tr.Pass)
			}
		}
		if row.Aggregate.Valid || row.RFC8219 != nil {
			t.Errorf("latency of lossy repetitions reported: aggregate %+v, RFC 8219 %+v", row.Aggregate, row.RFC8219)
		}
		// Each repetition is invalid for its loss. On a host so loaded that the tester falls 20 ms behind
		// in every try of a repetition, that repetition is invalid for the tester's reason instead, and its
		// last try must show a fault load explains (spoiledTrials checks every fault of the run).
		spoiled := spoiledTrials(t, o, v1alpha1.TestLatency)
		lossy := 0
		for i, rep := range row.Repetitions {
			tr := last[i+1]
			switch {
			case rep.Valid:
				t.Errorf("repetition %d: %+v, want invalid for its loss", i+1, rep)
			case strings.Contains(rep.Reason, "loss tolerance"):
				lossy++
			case !strings.HasPrefix(rep.Reason, "the tester spoiled it") || !tr.TesterLimited || len(tr.TesterFaults) == 0:
				t.Errorf("repetition %d: %+v (last try %d, spoiled %v %q), want invalid for its loss, or spoiled by the tester in its last try",
					i+1, rep, tr.Seq, tr.TesterLimited, tr.TesterFaults)
			}
		}
		if lossy == 0 && !t.Failed() {
			testenv.SkipForLoad(t, "the tester spoiled every try of both repetitions on this loaded host (%v): invalid, as they must be, but the loss rule was not reached", spoiled)
		}
	})

	t.Run("twenty repetitions summarised", func(t *testing.T) {
		tns, _ := router(t, "lr")
		o := runCLI(t, eng, tns, routedTest("lat20", nil, []int32{512}, "0.5", "1", withLatency(20, 300*time.Millisecond)))
		defer logTrialsIfFailed(t, o)
		if bounds := lowerBounds(t, o); len(o.Results.Latency) == 0 && len(bounds) > 0 {
			// no NDR, or an undetermined one: no rate to measure latency at
			skipForLowerBounds(t, bounds, o)
		}
		if o.Error != "" || len(o.Results.Latency) != 1 {
			t.Fatalf("run: %q latency %+v", o.Error, o.Results.Latency)
		}
		row := o.Results.Latency[0]
		s := row.RFC8219
		if s == nil && len(row.Repetitions) == 20 && !slices.ContainsFunc(row.Repetitions, func(r v1alpha1.LatencySummary) bool {
			return r.Valid || !strings.HasPrefix(r.Reason, "the tester spoiled it")
		}) {
			_ = spoiledTrials(t, o, v1alpha1.TestLatency)
			if !t.Failed() {
				testenv.SkipForLoad(t, "the tester spoiled all 20 repetitions on this loaded host: no summary, as it must be")
			}
		}
		if s == nil || s.Repetitions+s.Invalid != 20 || s.Repetitions < 1 {
			t.Fatalf("RFC 8219 summary %+v of %d repetitions", s, len(row.Repetitions))
		}
		// a router at 1 % of line rate loses nothing: only the tester (a worker paused on this loaded host)
		// makes a repetition invalid, and it must say so
		for i, rep := range row.Repetitions {
			if !rep.Valid && !strings.HasPrefix(rep.Reason, "the tester spoiled it") {
				t.Errorf("repetition %d: %+v, invalid for a reason no load explains", i+1, rep)
			}
		}
		_ = spoiledTrials(t, o, v1alpha1.TestLatency)
		// by hand, from the repetitions reported
		var typical, worst []int64
		for _, rep := range row.Repetitions {
			if !rep.Valid {
				continue
			}
			typical = append(typical, rep.P50Ns)
			// a repetition of fewer than 1,000 frames has no p99.9 (left out): no worst case of its own
			if rep.P999Ns > 0 {
				worst = append(worst, rep.P999Ns)
			} else if rep.Frames >= 1000 {
				t.Errorf("a repetition of %d frames left out its p99.9", rep.Frames)
			}
		}
		slices.Sort(typical)
		slices.Sort(worst)
		mid := func(v []int64) int64 {
			if len(v) == 0 {
				return 0
			}
			if len(v)%2 == 1 {
				return v[len(v)/2]
			}
			return (v[len(v)/2-1] + v[len(v)/2] + 1) / 2
		}
		// with fewer than 100 repetitions the nearest-rank 1st and 99th percentiles are the extremes
		want := [6]int64{mid(typical), typical[0], typical[len(typical)-1]}
		if len(worst) > 0 {
			want[3], want[4], want[5] = mid(worst), worst[0], worst[len(worst)-1]
		}
		got := [6]int64{s.TypicalNs, s.TypicalP1Ns, s.TypicalP99Ns, s.WorstCaseNs, s.WorstCaseP1Ns, s.WorstCaseP99Ns}
		if got != want {
			t.Errorf("typical %d [%d, %d], worst case %d [%d, %d]; by hand %v", got[0], got[1], got[2], got[3], got[4], got[5], want)
		}
		if s.TypicalNs <= 0 || (len(worst) > 0 && s.WorstCaseNs < s.TypicalNs) {
			t.Errorf("implausible: typical %d ns, worst case %d ns", s.TypicalNs, s.WorstCaseNs)
		}
		if s.Invalid > 5 && !t.Failed() {
			testenv.SkipForLoad(t, "the summary of the %d valid repetitions is exact; the tester spoiled %d of 20 on this loaded host", s.Repetitions, s.Invalid)
		}
	})
}
