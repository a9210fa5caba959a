package expectations

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/plan"
)

func quantity(s string) *resource.Quantity { q := resource.MustParse(s); return &q }

func sampleResults() *v1alpha1.Results {
	return &v1alpha1.Results{
		Throughput: []v1alpha1.ThroughputResult{
			{FrameSize: 64, Direction: "west-east", NDR: v1alpha1.Rate{L2BitsPerSecond: 400e6, L1BitsPerSecond: 525e6, FramesPerSecond: 781250, PercentOfLineRate: "5.25"}},
			{FrameSize: 1518, Direction: "west-east", NDR: v1alpha1.Rate{L2BitsPerSecond: 3500e6, L1BitsPerSecond: 3546e6, FramesPerSecond: 288208, PercentOfLineRate: "35.46"}},
		},
		Latency: []v1alpha1.LatencyResult{
			{FrameSize: 64, Direction: "west-east", Aggregate: v1alpha1.LatencySummary{Valid: true, MinNs: 4000, P99Ns: 90_000, P999Ns: 400_000}},
			{FrameSize: 1518, Direction: "west-east", Aggregate: v1alpha1.LatencySummary{Valid: false, Reason: "clocks not synchronised"}},
		},
	}
}

// planned is what sampleResults measured in full: throughput at 64 and 1518 B and latency at 64 B,
// west-east (its 1518 B latency row says it could not be measured).
var planned = []plan.Row{
	{Test: v1alpha1.TestThroughput, FrameSize: 64, Direction: "west-east"}, {Test: v1alpha1.TestThroughput, FrameSize: 1518, Direction: "west-east"},
	{Test: v1alpha1.TestLatency, FrameSize: 64, Direction: "west-east", Load: "100"},
}

// A planned latency that could not be measured (every repetition invalid: lossy, spoiled, clocks apart)
// is not measured: no expectation on it is needed for the run to be inconclusive.
func TestAnUnmeasurableLatencyIsNeverPassed(t *testing.T) {
	exp := &v1alpha1.Expectations{MinThroughput: []v1alpha1.ThroughputExpectation{{FrameSize: 64, L2BitsPerSecond: quantity("100M")}}}
	withLatency := append(append([]plan.Row{}, planned...), plan.Row{Test: v1alpha1.TestLatency, FrameSize: 1518, Direction: "west-east", Load: "100"})
	if v, f := Evaluate(exp, sampleResults(), withLatency); v != v1alpha1.VerdictInconclusive || !strings.Contains(strings.Join(f, " "), "not measured: latency 1518 B") {
		t.Errorf("%s %q", v, f)
	}
}

// A run with a planned size missing never passes, even when every expectation it can check is met; with
// nothing failed it is inconclusive and names the row.
func TestAMissingRowIsNeverPassed(t *testing.T) {
	exp := &v1alpha1.Expectations{MinThroughput: []v1alpha1.ThroughputExpectation{{FrameSize: 64, L2BitsPerSecond: quantity("100M")}}}
	withMore := append(append([]plan.Row{}, planned...), plan.Row{Test: v1alpha1.TestThroughput, FrameSize: 512, Direction: "west-east"})
	for _, c := range []struct {
		name    string
		planned []plan.Row
		want    v1alpha1.Verdict
		mention string
	}{
		{"everything measured", planned, v1alpha1.VerdictPassed, ""},
		{"512 B planned, not measured", withMore, v1alpha1.VerdictInconclusive, "throughput 512 B west-east"},
		{"the plan unknown", nil, v1alpha1.VerdictInconclusive, "unknown"},
	} {
		v, f := Evaluate(exp, sampleResults(), c.planned)
		if v != c.want || (c.mention != "" && !strings.Contains(strings.Join(f, ";"), c.mention)) {
			t.Errorf("%s: %s %q, want %s naming %q", c.name, v, f, c.want, c.mention)
		}
	}
	// a measured failure still fails, and the missing row is reported beside it
	exp.MinThroughput[0].L2BitsPerSecond = quantity("1G")
	if v, f := Evaluate(exp, sampleResults(), withMore); v != v1alpha1.VerdictFailed || len(f) != 2 {
		t.Errorf("a failure and a missing row: %s %q", v, f)
	}
}

// A tester-limited throughput is a lower bound of the DUT's: an expectation at or below it is met, one
// above it is inconclusive (the DUT may be faster), never failed; a tester limit with no valid trial at
// all is a row not measured.
func TestTesterLimitedThroughputIsALowerBound(t *testing.T) {
	res := sampleResults()
	res.Throughput[0].TesterLimited = true // 400 Mbit/s at 64 B
	for _, c := range []struct {
		expect string
		want   v1alpha1.Verdict
	}{
		{"300M", v1alpha1.VerdictPassed},
		{"400M", v1alpha1.VerdictPassed},
		{"1G", v1alpha1.VerdictInconclusive},
	} {
		exp := &v1alpha1.Expectations{MinThroughput: []v1alpha1.ThroughputExpectation{{FrameSize: 64, L2BitsPerSecond: quantity(c.expect)}}}
		if v, f := Evaluate(exp, res, planned); v != c.want {
			t.Errorf("tester-limited 400 Mbit/s against %s: %s %q, want %s", c.expect, v, f, c.want)
		}
	}
	res.Throughput[0].NDR = v1alpha1.Rate{}
	exp := &v1alpha1.Expectations{MinThroughput: []v1alpha1.ThroughputExpectation{{FrameSize: 1518, L2BitsPerSecond: quantity("1M")}}}
	if v, f := Evaluate(exp, res, planned); v != v1alpha1.VerdictInconclusive || !strings.Contains(strings.Join(f, ";"), "not measured: throughput 64 B") {
		t.Errorf("a 64 B row the tester spoiled entirely: %s %q", v, f)
	}
}

func TestNoExpectationsIsNone(t *testing.T) {
	for _, exp := range []*v1alpha1.Expectations{nil, {}} {
		if v, f := Evaluate(exp, sampleResults(), planned); v != v1alpha1.VerdictNone || f != nil {
			t.Errorf("Evaluate(%v) = %s %v, want None", exp, v, f)
		}
	}
}

func TestThroughputPerSizeAndEverySize(t *testing.T) {
	res := sampleResults()
	v, f := Evaluate(&v1alpha1.Expectations{MinThroughput: []v1alpha1.ThroughputExpectation{{FrameSize: 1518, L2BitsPerSecond: quantity("3500M")}}}, res, planned)
	if v != v1alpha1.VerdictPassed {
		t.Fatalf("3.5 Gbit/s at 1518 B meets 3500M: got %s %v", v, f)
	}
	v, f = Evaluate(&v1alpha1.Expectations{MinThroughput: []v1alpha1.ThroughputExpectation{{L2BitsPerSecond: quantity("1G")}}}, res, planned)
	if v != v1alpha1.VerdictFailed || len(f) != 1 || !strings.Contains(f[0], "64 B") || !strings.Contains(f[0], "400.00 Mbit/s") {
		t.Fatalf("every-size 1G must fail exactly at 64 B naming the rate: %s %q", v, f)
	}
	v, f = Evaluate(&v1alpha1.Expectations{MinThroughput: []v1alpha1.ThroughputExpectation{{FrameSize: 64, PercentOfLineRate: "10"}}}, res, planned)
	if v != v1alpha1.VerdictFailed || !strings.Contains(f[0], "5.25% of line rate") {
		t.Fatalf("percent of line rate: %s %q", v, f)
	}
	v, f = Evaluate(&v1alpha1.Expectations{MinThroughput: []v1alpha1.ThroughputExpectation{{FrameSize: 128, FramesPerSecond: quantity("1")}}}, res, planned)
	if v != v1alpha1.VerdictInconclusive || !strings.Contains(f[0], "no throughput was measured") {
		t.Fatalf("an unmeasured size is inconclusive, never met: %s %q", v, f)
	}
}

func TestLatencyStatisticsAndInvalidClock(t *testing.T) {
	res := sampleResults()
	exp := &v1alpha1.Expectations{MaxLatency: []v1alpha1.LatencyExpectation{{FrameSize: 64, Statistic: "p99", Max: metav1.Duration{Duration: 100 * time.Microsecond}}}}
	if v, f := Evaluate(exp, res, planned); v != v1alpha1.VerdictPassed {
		t.Fatalf("p99 90µs under 100µs: %s %v", v, f)
	}
	exp.MaxLatency[0].Statistic = "p99.9"
	if v, f := Evaluate(exp, res, planned); v != v1alpha1.VerdictFailed || !strings.Contains(f[0], "400.00 µs") {
		t.Fatalf("p99.9 400µs over 100µs: %s %q", v, f)
	}
	exp.MaxLatency[0].FrameSize = 1518
	if v, f := Evaluate(exp, res, planned); v != v1alpha1.VerdictInconclusive || !strings.Contains(f[0], "could not be measured") {
		t.Fatalf("an unmeasurable latency is inconclusive, with its reason: %s %q", v, f)
	}
}

// A percentile too few frames could support is left out of the summary (0): a maxLatency on it is
// undecided and says how many frames it needs, never Passed as a latency of 0; no change of it is known.
func TestAPercentileTooFewFramesSupportIsNeverPassed(t *testing.T) {
	res := sampleResults()
	res.Latency[0].Aggregate.Frames, res.Latency[0].Aggregate.P9999Ns = 600, 0
	exp := &v1alpha1.Expectations{MaxLatency: []v1alpha1.LatencyExpectation{{FrameSize: 64, Statistic: "p99.99", Max: metav1.Duration{Duration: time.Second}}}}
	if v, f := Evaluate(exp, res, planned); v != v1alpha1.VerdictInconclusive || !strings.Contains(strings.Join(f, ";"), "p99.99 needs 10000 timestamped frames, the latency test measured 600") {
		t.Errorf("%s %q", v, f)
	}
	prev := sampleResults()
	res.Latency[0].Aggregate.P99Ns = 0
	if c := Change(res, prev); c[0].LatencyP99Ns != nil || c[0].LatencyP99Percent != "" {
		t.Errorf("a p99 left out has no change: %+v", c[0])
	}
	for stat, want := range map[v1alpha1.Statistic]int64{"p50": 2, "p90": 10, "p99": 100, "p99.9": 1000, "p99.99": 10000, "max": 0} {
		if got := PercentileFrames(stat); got != want {
			t.Errorf("%s needs %d frames, want %d", stat, got, want)
		}
	}
}

func TestPenaltyAgainstBaseline(t *testing.T) {
	base := sampleResults()
	res := sampleResults()
	res.Throughput[1].NDR.L2BitsPerSecond = 2800e6
	p := Penalty(res, base)
	if len(p) != 2 {
		t.Fatalf("want a penalty per size, got %v", p)
	}
	if p[0].Percent != "0.00" || p[1].Percent != "20.00" || p[1].L2BitsPerSecond != 700e6 {
		t.Fatalf("penalty: %+v", p)
	}
	res.Penalty = p
	if v, f := Evaluate(&v1alpha1.Expectations{MaxPenalty: "15"}, res, planned); v != v1alpha1.VerdictFailed || !strings.Contains(f[0], "1518 B") {
		t.Fatalf("20%% penalty over 15%%: %s %q", v, f)
	}
	if v, _ := Evaluate(&v1alpha1.Expectations{MaxPenalty: "25"}, res, planned); v != v1alpha1.VerdictPassed {
		t.Fatalf("20%% penalty under 25%%: %s", v)
	}
	if v, f := Evaluate(&v1alpha1.Expectations{MaxPenalty: "25"}, sampleResults(), planned); v != v1alpha1.VerdictInconclusive || !strings.Contains(f[0], "baseline") {
		t.Fatalf("no penalty measured is inconclusive: %s %q", v, f)
	}
}

func TestChangeAgainstThePreviousRun(t *testing.T) {
	prev := sampleResults()
	res := sampleResults()
	res.Throughput[0].NDR.L2BitsPerSecond = 360e6 // -10%
	res.Throughput[1].NDR.L2BitsPerSecond = 3570e6
	res.Latency[0].Aggregate.P99Ns, res.Latency[0].Aggregate.MeanNs = 120_000, 9_000
	prev.Latency[0].Aggregate.MeanNs = 8_000
	c := Change(res, prev)
	if len(c) != 2 || c[0].NDRPercent != "-10.00" || c[0].NDRL2BitsPerSecond != -40e6 || c[1].NDRPercent != "2.00" {
		t.Fatalf("change: %+v", c)
	}
	if c[0].LatencyP99Ns == nil || *c[0].LatencyP99Ns != 30_000 || *c[0].LatencyMeanNs != 1_000 || c[0].LatencyP99Percent != "33.33" {
		t.Errorf("64 B latency change: %+v", c[0])
	}
	if c[1].LatencyP99Ns != nil {
		t.Errorf("an invalid latency (clocks not synchronised) has no change: %+v", c[1])
	}
}

func TestMaxNDRDrop(t *testing.T) {
	cases := []struct {
		name          string
		share         [2]float64 // this run's NDR over the previous run's, per size
		limited, prev [2]bool    // tester-limited in this run, in the previous run
		compared      bool
		want          v1alpha1.Verdict
		message       string
	}{
		{"first run of a schedule: nothing to judge", [2]float64{0.5, 0.5}, [2]bool{}, [2]bool{}, false, v1alpha1.VerdictPassed, ""},
		{"within the drop", [2]float64{0.96, 1.10}, [2]bool{}, [2]bool{}, true, v1alpha1.VerdictPassed, ""},
		{"a drop past the limit", [2]float64{1, 0.93}, [2]bool{}, [2]bool{}, true, v1alpha1.VerdictFailed, "maxNDRDrop: 1518 B west-east NDR changed -7.00% against last-week"},
		{"the tester's ceiling fell: not the DUT's drop", [2]float64{0.5, 1}, [2]bool{true, false}, [2]bool{}, true, v1alpha1.VerdictInconclusive, "this run's figure is the tester's limit"},
		{"the tester's ceiling both times, held: the DUT is at least that good", [2]float64{1, 1}, [2]bool{true, false}, [2]bool{true, false}, true, v1alpha1.VerdictPassed, ""},
		{"last week the tester's ceiling, now the DUT's and within", [2]float64{0.97, 1}, [2]bool{}, [2]bool{true, false}, true, v1alpha1.VerdictPassed, ""},
		{"a size last week did not measure", [2]float64{1, 1}, [2]bool{}, [2]bool{}, true, v1alpha1.VerdictInconclusive, "1518 B west-east has no NDR in last-week to compare with"},
		{"below last week's ceiling: a certain drop", [2]float64{0.8, 1}, [2]bool{}, [2]bool{true, false}, true, v1alpha1.VerdictFailed, "64 B west-east NDR changed -20.00%"},
		{"this run's search ran out of trials: its lower bound fell", [2]float64{0.5, 1}, [2]bool{}, [2]bool{}, true, v1alpha1.VerdictInconclusive, "an undetermined lower bound"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prev, res := sampleResults(), sampleResults()
			for i := range res.Throughput {
				res.Throughput[i].NDR.L2BitsPerSecond = int64(float64(prev.Throughput[i].NDR.L2BitsPerSecond) * c.share[i])
				res.Throughput[i].TesterLimited, prev.Throughput[i].TesterLimited = c.limited[i], c.prev[i]
			}
			if c.compared {
				res.ComparedWith, res.Change = "last-week", Change(res, prev)
			}
			if c.name == "a size last week did not measure" {
				res.Change = res.Change[:1]
			}
			if c.name == "this run's search ran out of trials: its lower bound fell" {
				res.Throughput[0].Undetermined = "the search reached its cap of 60 trials"
			}
			v, f := Evaluate(&v1alpha1.Expectations{MaxNDRDrop: "5"}, res, planned)
			if v != c.want || !strings.Contains(strings.Join(f, "\n"), c.message) {
				t.Fatalf("%s %q, want %s with %q", v, f, c.want, c.message)
			}
		})
	}
}

// Across two nodes a latency is true only to within the clocks' bound: judged at both ends of it.
func TestMaxLatencyAcrossTwoClocks(t *testing.T) {
	for _, c := range []struct {
		p99, bound int64
		want       v1alpha1.Verdict
	}{
		{18_000, 1_000, v1alpha1.VerdictPassed},
		{18_000, 4_000, v1alpha1.VerdictInconclusive},
		{25_000, 4_000, v1alpha1.VerdictFailed},
		{22_000, 4_000, v1alpha1.VerdictInconclusive},
	} {
		res := sampleResults()
		res.Latency = res.Latency[:1]
		res.Latency[0].Aggregate.P99Ns, res.Latency[0].Aggregate.ClockOffsetBoundNs = c.p99, c.bound
		exp := &v1alpha1.Expectations{MaxLatency: []v1alpha1.LatencyExpectation{{FrameSize: 64, Statistic: "p99", Max: metav1.Duration{Duration: 20 * time.Microsecond}}}}
		if v, f := Evaluate(exp, res, planned[:3]); v != c.want {
			t.Errorf("p99 %d ns ± %d ns against 20 µs: %s %q, want %s", c.p99, c.bound, v, f, c.want)
		}
	}
}

// The tester's own latency (the most its calibration saw it add) and its own queues (at an NDR that is its limit) are no
// failure of the DUT: such a maxLatency is undecided; beyond the floor it fails.
func TestMaxLatencyOfTheTestersOwn(t *testing.T) {
	for _, c := range []struct {
		name          string
		p99, floor    int64
		testerLimited bool
		want          v1alpha1.Verdict
	}{
		{"within the limit", 18_000, 5_000, false, v1alpha1.VerdictPassed},
		{"over by no more than the tester adds", 24_000, 5_000, false, v1alpha1.VerdictInconclusive},
		{"over by more than the tester adds", 26_000, 5_000, false, v1alpha1.VerdictFailed},
		{"over, no calibration", 24_000, 0, false, v1alpha1.VerdictFailed},
		{"over at an NDR that is the tester's limit", 40_000, 0, true, v1alpha1.VerdictInconclusive},
		{"within at an NDR that is the tester's limit", 18_000, 0, true, v1alpha1.VerdictPassed},
	} {
		res := sampleResults()
		res.Latency = res.Latency[:1]
		res.Latency[0].Aggregate.P99Ns, res.Latency[0].TesterMaxLatencyNs = c.p99, c.floor
		for i := range res.Throughput {
			if res.Throughput[i].FrameSize == res.Latency[0].FrameSize && res.Throughput[i].Direction == res.Latency[0].Direction {
				res.Throughput[i].TesterLimited = c.testerLimited
			}
		}
		exp := &v1alpha1.Expectations{MaxLatency: []v1alpha1.LatencyExpectation{{FrameSize: 64, Statistic: "p99", Max: metav1.Duration{Duration: 20 * time.Microsecond}}}}
		if v, f := Evaluate(exp, res, planned[:3]); v != c.want {
			t.Errorf("%s: %s %q, want %s", c.name, v, f, c.want)
		}
	}
}

// A penalty is the DUT's only where both figures are: where this run's NDR is the tester's limit (or an
// undetermined lower bound) the penalty is at most what it says, so exceeding the limit is undecided;
// where the baseline's is, the penalty is at least what it says, so staying within it is undecided.
func TestPenaltyOfATesterLimitedFigure(t *testing.T) {
	for _, tc := range []struct {
		name                string
		limitedRun, limBase bool
		undeterminedRun     bool
		maxPenalty          v1alpha1.Percent
		want                v1alpha1.Verdict
	}{
		{name: "exact, over", maxPenalty: "15", want: v1alpha1.VerdictFailed},
		{name: "exact, within", maxPenalty: "25", want: v1alpha1.VerdictPassed},
		{name: "this run the tester's limit, over: the DUT may lose less", limitedRun: true, maxPenalty: "15", want: v1alpha1.VerdictInconclusive},
		{name: "this run the tester's limit, within: proven", limitedRun: true, maxPenalty: "25", want: v1alpha1.VerdictPassed},
		{name: "this run undetermined, over", undeterminedRun: true, maxPenalty: "15", want: v1alpha1.VerdictInconclusive},
		{name: "baseline the tester's limit, over: proven", limBase: true, maxPenalty: "15", want: v1alpha1.VerdictFailed},
		{name: "baseline the tester's limit, within: the DUT may lose more", limBase: true, maxPenalty: "25", want: v1alpha1.VerdictInconclusive},
		{name: "both, within", limitedRun: true, limBase: true, maxPenalty: "25", want: v1alpha1.VerdictInconclusive},
		{name: "both, over", limitedRun: true, limBase: true, maxPenalty: "15", want: v1alpha1.VerdictInconclusive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, res := sampleResults(), sampleResults()
			res.Throughput[1].NDR.L2BitsPerSecond = 2800e6 // 20 % below the baseline at 1518 B
			// a tester-limited figure here stays a measured one (not 0), so no row is missing
			res.Throughput[1].TesterLimited, base.Throughput[1].TesterLimited = tc.limitedRun, tc.limBase
			if tc.undeterminedRun {
				res.Throughput[1].Undetermined = "the search reached its cap of 60 trials"
			}
			res.Penalty = Penalty(res, base)
			rows := planned
			if tc.undeterminedRun {
				rows = planned[:1] // the undetermined row is not measured: judged here for its penalty only
			}
			if v, f := Evaluate(&v1alpha1.Expectations{MaxPenalty: tc.maxPenalty}, res, rows); v != tc.want {
				t.Errorf("%s %q, want %s", v, f, tc.want)
			}
		})
	}
}

// A timeline row fails on what the DUT's own bins showed, passes only where the tester spoiled no more
// than its share of bins, and a row the tester spoiled decides nothing when within the bounds.
func TestTimelineOutagesAgainstTheBounds(t *testing.T) {
	row := v1alpha1.TimelineResult{FrameSize: 128, Direction: "west->east", Outages: 3, LongestOutageMilliseconds: "8",
		LossPercent: "0.03", Bins: 600, TesterBins: 2}
	tlPlanned := []plan.Row{{Test: v1alpha1.TestTimeline, FrameSize: 128, Direction: "west->east"}}
	n := func(v int64) *int64 { return &v }
	d := func(x time.Duration) *metav1.Duration { return &metav1.Duration{Duration: x} }
	for _, c := range []struct {
		name          string
		exp           v1alpha1.TimelineExpectation
		testerLimited bool
		want          v1alpha1.Verdict
		says          string
	}{
		{"within every bound", v1alpha1.TimelineExpectation{MaxOutages: n(3), MaxOutage: d(10 * time.Millisecond), MaxLoss: "0.05"}, false, v1alpha1.VerdictPassed, ""},
		{"one outage too many", v1alpha1.TimelineExpectation{MaxOutages: n(2)}, false, v1alpha1.VerdictFailed, "3 outages, more than 2"},
		{"an outage too long", v1alpha1.TimelineExpectation{MaxOutage: d(5 * time.Millisecond)}, false, v1alpha1.VerdictFailed, "an outage of 8 ms, longer than 5ms"},
		{"too much loss", v1alpha1.TimelineExpectation{MaxLoss: "0.01"}, false, v1alpha1.VerdictFailed, "0.03% lost"},
		{"what the DUT showed fails a spoiled row", v1alpha1.TimelineExpectation{MaxOutages: n(0)}, true, v1alpha1.VerdictFailed, "3 outages, more than 0"},
		{"a spoiled row within the bounds decides nothing", v1alpha1.TimelineExpectation{MaxOutages: n(5)}, true, v1alpha1.VerdictInconclusive, "the tester spoiled 2 of its 600 bins"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := row
			r.TesterLimited = c.testerLimited
			v, f := Evaluate(&v1alpha1.Expectations{Timeline: &c.exp}, &v1alpha1.Results{Timeline: []v1alpha1.TimelineResult{r}}, tlPlanned)
			if v != c.want || !strings.Contains(strings.Join(f, ";"), c.says) {
				t.Errorf("%s %q, want %s saying %q", v, f, c.want, c.says)
			}
		})
	}
	if v, f := Evaluate(&v1alpha1.Expectations{Timeline: &v1alpha1.TimelineExpectation{MaxOutages: n(0)}}, &v1alpha1.Results{}, tlPlanned); v != v1alpha1.VerdictInconclusive {
		t.Errorf("no timeline measured: %s %q", v, f)
	}
}

// An outage the tester's bins hide (a failover with one spoiled bin in it) never lets a bound on outages pass.
func TestTimelineOutagesHiddenInTheTestersBinsDecideNothing(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	row := v1alpha1.TimelineResult{FrameSize: 128, Direction: "west->east", LossPercent: "0", Bins: 600, TesterBins: 1,
		TesterOutages: 1, TesterLostFrames: 6000}
	planned := []plan.Row{{Test: v1alpha1.TestTimeline, FrameSize: 128, Direction: "west->east"}}
	v, f := Evaluate(&v1alpha1.Expectations{Timeline: &v1alpha1.TimelineExpectation{MaxOutages: n(0)}}, &v1alpha1.Results{Timeline: []v1alpha1.TimelineResult{row}}, planned)
	if v != v1alpha1.VerdictInconclusive || !strings.Contains(strings.Join(f, ";"), "6000 frames were lost in bins the tester spoiled") {
		t.Errorf("%s %q: want Inconclusive for the frames lost in the tester's bins", v, f)
	}
}

// minAvailability fails on the unavailable time the DUT's own seconds prove, is undecided where the
// seconds the tester spoiled could bring it under the bound, and decides nothing without whole seconds.
func TestTimelineAvailabilityAgainstItsBound(t *testing.T) {
	planned := []plan.Row{{Test: v1alpha1.TestTimeline, FrameSize: 128, Direction: "west->east"}}
	row := func(avail string, unavailable, atMost int64, binMs int32) v1alpha1.TimelineResult {
		r := v1alpha1.TimelineResult{FrameSize: 128, Direction: "west->east", LossPercent: "0.1", Bins: 1000, Seconds: "1000",
			BinMilliseconds: binMs, AvailabilityPercent: avail, UnavailableSeconds: unavailable, UnavailableSecondsAtMost: atMost}
		if avail != "" {
			r.AvailabilitySeconds = 1000
		}
		return r
	}
	month := v1alpha1.TimelineResult{FrameSize: 128, Direction: "west->east", LossPercent: "0", Bins: 2592000, Seconds: "2592000",
		BinMilliseconds: 1000, AvailabilityPercent: "99.999", AvailabilitySeconds: 2592000, UnavailableSeconds: 2}
	cut := row("98.8", 12, 0, 100)
	cut.TesterLimited, cut.CutShort, cut.TesterBins = true, true, 300
	spoiled := row("98.8", 12, 0, 100)
	spoiled.TesterLimited, spoiled.TesterBins = true, 300
	for _, c := range []struct {
		name string
		min  v1alpha1.Percent
		row  v1alpha1.TimelineResult
		want v1alpha1.Verdict
		says string
	}{
		{"available enough", "98", row("98.8", 12, 0, 100), v1alpha1.VerdictPassed, ""},
		{"unavailable too long", "99", row("98.8", 12, 0, 100), v1alpha1.VerdictFailed, "available 98.8% of the time (12 of 1000 s unavailable), less than 99%"},
		{"the tester's seconds could hide it", "98.5", row("98.8", 12, 22, 100), v1alpha1.VerdictInconclusive, "up to 22 of 1000 s unavailable (97.8%"},
		{"judged exactly, not on the rounded figure", "99.9999", month, v1alpha1.VerdictPassed, ""},
		{"three seconds more are too many", "99.9998", func() v1alpha1.TimelineResult { m := month; m.UnavailableSeconds = 6; return m }(),
			v1alpha1.VerdictFailed, "(6 of 2592000 s unavailable), less than 99.9998%"},
		{"a row cut short decides nothing", "99", cut, v1alpha1.VerdictInconclusive, "available 98.8% of the 1000 s judged, less than 99%, but the trial was cut short"},
		{"a row the tester spoiled still fails on what its own seconds prove", "99", spoiled, v1alpha1.VerdictFailed, "(12 of 1000 s unavailable), less than 99%"},
		{"the tester's seconds could not bring it under", "97", row("98.8", 12, 22, 100), v1alpha1.VerdictPassed, ""},
		{"no whole seconds", "99", row("", 0, 0, 300), v1alpha1.VerdictInconclusive, "its 300 ms bins do not divide a second"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, f := Evaluate(&v1alpha1.Expectations{Timeline: &v1alpha1.TimelineExpectation{MinAvailability: c.min}},
				&v1alpha1.Results{Timeline: []v1alpha1.TimelineResult{c.row}}, planned)
			if v != c.want || !strings.Contains(strings.Join(f, ";"), c.says) {
				t.Errorf("%s %q, want %s saying %q", v, f, c.want, c.says)
			}
		})
	}
}

// A size the DUT refused (too big for its MTU: a throughput row with refused, NDR 0) is a result: the
// latency, frame loss and back-to-back rows planned there have nothing to measure and are not missing; an
// expectation on the size fails on it.
func TestARefusedSizeIsAResult(t *testing.T) {
	res := sampleResults()
	res.Throughput[1] = v1alpha1.ThroughputResult{FrameSize: 1518, Direction: "west-east", Refused: "too big for the path MTU 1400 (the DUT's ICMP)"}
	res.Latency = res.Latency[:1]
	withMore := append(append([]plan.Row{}, planned...),
		plan.Row{Test: v1alpha1.TestLatency, FrameSize: 1518, Direction: "west-east", Load: "100"},
		plan.Row{Test: v1alpha1.TestFrameLoss, FrameSize: 1518, Direction: "west-east"},
		plan.Row{Test: v1alpha1.TestBackToBack, FrameSize: 1518, Direction: "west-east"})
	exp := &v1alpha1.Expectations{MinThroughput: []v1alpha1.ThroughputExpectation{{FrameSize: 64, L2BitsPerSecond: quantity("100M")}}}
	if v, f := Evaluate(exp, res, withMore); v != v1alpha1.VerdictPassed {
		t.Errorf("nothing planned is missing at a refused size: %s %q", v, f)
	}
	exp.MinThroughput = append(exp.MinThroughput, v1alpha1.ThroughputExpectation{FrameSize: 1518, L2BitsPerSecond: quantity("1M")})
	if v, f := Evaluate(exp, res, withMore); v != v1alpha1.VerdictFailed || !strings.Contains(strings.Join(f, " "), "1518") {
		t.Errorf("an expectation on a refused size fails: %s %q", v, f)
	}
	// a back-to-back expectation fails at a refused size: with the row the runner writes where some lane
	// refused it, and with none where every direction did (the test was not run there)
	frames := int64(10)
	exp = &v1alpha1.Expectations{MinBackToBackFrames: &frames}
	for _, rows := range [][]v1alpha1.BackToBackResult{
		{{FrameSize: 1518, Direction: "west-east", NotMeasurable: "the DUT refused every frame of this size as too big for the path MTU 1400 (the DUT's ICMP)"}},
		nil,
	} {
		res.BackToBack = rows
		if v, f := Evaluate(exp, res, withMore); v != v1alpha1.VerdictFailed || len(f) != 1 || !strings.Contains(f[0], "1518 B west-east: the DUT forwards no frame of that size") {
			t.Errorf("a back-to-back expectation on a refused size fails (%d rows): %s %q", len(rows), v, f)
		}
	}
}
