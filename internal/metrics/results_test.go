package metrics

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"linerate.dev/linerate/api/v1alpha1"
)

// sample is one exported series: its labels and its value.
type sample struct {
	labels map[string]string
	value  float64
}

// gather scrapes the collector over a cluster holding objs, as Prometheus would: the samples of each
// metric, by name.
func gather(t *testing.T, objs ...client.Object) map[string][]sample {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(&ResultsCollector{Reader: fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()})
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]sample{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			sm := sample{labels: map[string]string{}, value: m.GetGauge().GetValue()}
			for _, l := range m.GetLabel() {
				sm.labels[l.GetName()] = l.GetValue()
			}
			out[f.GetName()] = append(out[f.GetName()], sm)
		}
	}
	return out
}

// A calibration run measures the tester through joined ports: its rows are the tester's ceiling, and
// exported as a throughput they would read as a DUT's (and trip regression alerts when the tester is
// recalibrated). A DUT's run with the same rows is exported.
func TestCalibrationRunsExportNoThroughput(t *testing.T) {
	row := v1alpha1.ThroughputResult{FrameSize: 64, Direction: "west->east",
		NDR: v1alpha1.Rate{FramesPerSecond: 200000, L2BitsPerSecond: 102400000, PercentOfLineRate: "13.44"}}
	test := func(name string, measure bool) *v1alpha1.TrafficTest {
		tt := &v1alpha1.TrafficTest{ObjectMeta: metav1.ObjectMeta{Namespace: "lab", Name: name}}
		tt.Spec.DUT.Name = "gw"
		tt.Spec.Tester.Calibration = &v1alpha1.TesterCalibration{ConfigMapName: "tester-ceiling", Measure: measure}
		tt.Status.Phase = v1alpha1.PhaseSucceeded
		tt.Status.Results = &v1alpha1.Results{Throughput: []v1alpha1.ThroughputResult{row}}
		return tt
	}
	var names []string
	for _, m := range gather(t, test("calibrate", true), test("dut", false))["linerate_throughput_frames_per_second"] {
		names = append(names, m.labels["traffictest"])
	}
	if len(names) != 1 || names[0] != "dut" {
		t.Errorf("linerate_throughput_frames_per_second series of tests %v, want only the DUT's run", names)
	}
}

// A back-to-back row is exported only when it is the DUT's burst: the plan's longest burst (saturated),
// the tester's limit, or the length of a line-rate trial (not measurable) are lower bounds, and as a
// figure they would read as the DUT's buffer.
func TestBackToBackExportsOnlyMeasuredBursts(t *testing.T) {
	tt := &v1alpha1.TrafficTest{ObjectMeta: metav1.ObjectMeta{Namespace: "lab", Name: "b2b"}}
	tt.Spec.DUT.Name = "gw"
	tt.Status.Phase = v1alpha1.PhaseSucceeded
	tt.Status.Results = &v1alpha1.Results{BackToBack: []v1alpha1.BackToBackResult{
		{FrameSize: 64, Direction: "measured", Frames: 130},
		{FrameSize: 64, Direction: "saturated", Frames: 2000, Saturated: true},
		{FrameSize: 64, Direction: "tester-limited", Frames: 90, TesterLimited: true},
		{FrameSize: 64, Direction: "not-measurable", Frames: 162548, NotMeasurable: "its throughput is line rate"},
	}}
	got := map[string]float64{}
	for _, m := range gather(t, tt)["linerate_back_to_back_frames"] {
		got[m.labels["direction"]] = m.value
	}
	if len(got) != 1 || got["measured"] != 130 {
		t.Errorf("linerate_back_to_back_frames %v, want only the measured row (130 frames)", got)
	}
}

// A lower bound never reaches a gauge an alert reads as the DUT's figure, and a stalled schedule, which
// makes no run whose gauges could say anything, says so itself.
func TestLowerBoundsStayOutAndAStalledScheduleSaysSo(t *testing.T) {
	run := &v1alpha1.TrafficTest{ObjectMeta: metav1.ObjectMeta{Namespace: "lab", Name: "nightly-1"}}
	run.Spec.DUT.Name = "gw"
	run.Status.Phase = v1alpha1.PhaseSucceeded
	run.Status.Results = &v1alpha1.Results{
		Throughput: []v1alpha1.ThroughputResult{
			{FrameSize: 64, Direction: "measured", NDR: v1alpha1.Rate{L2BitsPerSecond: 1e9}},
			{FrameSize: 64, Direction: "undetermined", NDR: v1alpha1.Rate{L2BitsPerSecond: 5e8}, Undetermined: "the search reached its cap of trials"},
			{FrameSize: 128, Direction: "limited and undetermined", NDR: v1alpha1.Rate{L2BitsPerSecond: 4e8}, Undetermined: "cap", TesterLimited: true},
		},
		Imix: []v1alpha1.ImixResult{{Direction: "undetermined", NDR: v1alpha1.Rate{L2BitsPerSecond: 4e8}, Undetermined: "cap"}},
		Penalty: []v1alpha1.PenaltyResult{
			{FrameSize: 64, Direction: "measured", Percent: "10"},
			{FrameSize: 64, Direction: "bound", Percent: "20", Bound: v1alpha1.PenaltyAtMost},
			{FrameSize: 64, Direction: "at least", Percent: "30", Bound: v1alpha1.PenaltyAtLeast},
		},
		Change: []v1alpha1.ChangeResult{{FrameSize: 64, Direction: "limited", NDRPercent: "-30", TesterLimited: true, LatencyP99Percent: "50"}},
	}
	s := &v1alpha1.TrafficTestSchedule{ObjectMeta: metav1.ObjectMeta{Namespace: "lab", Name: "nightly"}}
	s.Spec.Template.Spec.DUT.Name = "gw"
	s.Status.Runs = []v1alpha1.ScheduledRun{{Name: "nightly-1", Phase: v1alpha1.PhaseSucceeded}}
	s.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionStalled, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonInvalidPlan,
		LastTransitionTime: metav1.Now()}}
	got := map[string][]string{} // metric -> direction labels (or the value, for the schedule's gauges)
	all := gather(t, run, s)
	for name, samples := range all {
		for _, m := range samples {
			dir := m.labels["direction"]
			if dir == "" {
				dir = fmt.Sprint(m.value)
			}
			got[name] = append(got[name], dir)
		}
	}
	for name, want := range map[string]string{
		"linerate_throughput_l2_bits_per_second":          "[measured]",
		"linerate_schedule_throughput_l2_bits_per_second": "[measured]",
		"linerate_imix_throughput_l2_bits_per_second":     "[]",
		"linerate_throughput_undetermined":                "[undetermined undetermined]",
		"linerate_throughput_tester_limited":              "[limited and undetermined]",
		"linerate_baseline_penalty_ratio":                 "[at least measured]",
		"linerate_schedule_latency_p99_change_ratio":      "[]",
		"linerate_schedule_ndr_change_ratio":              "[]",
		"linerate_schedule_stalled":                       "[1]",
	} {
		if fmt.Sprint(got[name]) != want {
			t.Errorf("%s: %v, want %s", name, got[name], want)
		}
	}
	for _, m := range all["linerate_throughput_undetermined"] {
		if m.value != 1 || (m.labels["frame_size"] != "64" && m.labels["frame_size"] != "0") {
			t.Errorf("linerate_throughput_undetermined %v = %v, want 1 at 64 B and for IMIX (frame_size 0)", m.labels, m.value)
		}
	}
}

// A timeline row exports the DUT's outages and loss only where it says something of the DUT: a row the
// tester spoiled beyond timeline.maxTesterSpoiled says linerate_timeline_tester_limited instead (its
// outages and loss are those of the bins the tester left, a lower bound, and "0 outages" from it would
// read as a clean night), keeping its bins and the tester's, which are the tester's own figures.
func TestTimelineExportsTheDUTsOutagesOnlyWhereItMeasuredThem(t *testing.T) {
	timeline := []string{"linerate_timeline_outages", "linerate_timeline_outage_frames", "linerate_timeline_lost_frames",
		"linerate_timeline_loss_ratio", "linerate_timeline_longest_outage_seconds", "linerate_timeline_outage_seconds",
		"linerate_timeline_severely_errored_seconds", "linerate_timeline_bins", "linerate_timeline_tester_bins",
		"linerate_timeline_tester_limited", "linerate_timeline_availability_ratio"}
	for _, c := range []struct {
		name string
		row  v1alpha1.TimelineResult
		want map[string]float64 // every timeline series the row exports, and nothing else
	}{
		{"outages",
			v1alpha1.TimelineResult{Outages: 3, OutageFrames: 1200, LostFrames: 1207, LossPercent: "0.0025",
				LongestOutageMilliseconds: "412.5", TotalOutageMilliseconds: "600", SeverelyErroredSeconds: 1,
				Bins: 864000, TesterBins: 4, AvailabilityPercent: "99.5", AvailabilitySeconds: 86400, UnavailableSeconds: 432},
			map[string]float64{"linerate_timeline_outages": 3, "linerate_timeline_outage_frames": 1200,
				"linerate_timeline_lost_frames": 1207, "linerate_timeline_loss_ratio": 0.000025,
				"linerate_timeline_longest_outage_seconds": 0.4125, "linerate_timeline_outage_seconds": 0.6,
				"linerate_timeline_severely_errored_seconds": 1, "linerate_timeline_bins": 864000, "linerate_timeline_tester_bins": 4,
				"linerate_timeline_availability_ratio": 0.995}},
		{"an availability the tester's seconds could lower is not exported",
			v1alpha1.TimelineResult{LossPercent: "0", Bins: 600, AvailabilityPercent: "100", UnavailableSecondsAtMost: 20},
			map[string]float64{"linerate_timeline_outages": 0, "linerate_timeline_outage_frames": 0,
				"linerate_timeline_lost_frames": 0, "linerate_timeline_loss_ratio": 0,
				"linerate_timeline_longest_outage_seconds": 0, "linerate_timeline_outage_seconds": 0,
				"linerate_timeline_severely_errored_seconds": 0, "linerate_timeline_bins": 600, "linerate_timeline_tester_bins": 0}},
		{"clean",
			v1alpha1.TimelineResult{LossPercent: "0", Bins: 600},
			map[string]float64{"linerate_timeline_outages": 0, "linerate_timeline_outage_frames": 0,
				"linerate_timeline_lost_frames": 0, "linerate_timeline_loss_ratio": 0,
				"linerate_timeline_longest_outage_seconds": 0, "linerate_timeline_outage_seconds": 0,
				"linerate_timeline_severely_errored_seconds": 0, "linerate_timeline_bins": 600, "linerate_timeline_tester_bins": 0}},
		{"tester-limited",
			v1alpha1.TimelineResult{LossPercent: "0", Bins: 600, TesterBins: 90, TesterOutages: 2, TesterLimited: true},
			map[string]float64{"linerate_timeline_tester_limited": 1, "linerate_timeline_bins": 600, "linerate_timeline_tester_bins": 90}},
		{"tester-limited with outages in the DUT's bins",
			v1alpha1.TimelineResult{Outages: 1, OutageFrames: 40, LostFrames: 40, LossPercent: "0.1",
				LongestOutageMilliseconds: "20", TotalOutageMilliseconds: "20", SeverelyErroredSeconds: 1,
				Bins: 600, TesterBins: 90, TesterLimited: true},
			map[string]float64{"linerate_timeline_tester_limited": 1, "linerate_timeline_bins": 600, "linerate_timeline_tester_bins": 90}},
		{"frames lost in one bin the tester spoiled: the outages are a lower bound",
			v1alpha1.TimelineResult{LossPercent: "0", Bins: 600, TesterBins: 1, TesterOutages: 1, TesterLostFrames: 6000},
			map[string]float64{"linerate_timeline_tester_limited": 1, "linerate_timeline_bins": 600, "linerate_timeline_tester_bins": 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.row.FrameSize, c.row.Direction = 128, "west->east"
			tt := &v1alpha1.TrafficTest{ObjectMeta: metav1.ObjectMeta{Namespace: "lab", Name: "soak"}}
			tt.Spec.DUT.Name = "gw"
			tt.Status.Phase = v1alpha1.PhaseSucceeded
			tt.Status.Results = &v1alpha1.Results{Timeline: []v1alpha1.TimelineResult{c.row}}
			all := gather(t, tt)
			got := map[string]float64{}
			for _, name := range timeline {
				for _, m := range all[name] {
					want := map[string]string{"namespace": "lab", "traffictest": "soak", "dut": "gw", "frame_size": "128", "direction": "west->east"}
					if fmt.Sprint(m.labels) != fmt.Sprint(want) {
						t.Errorf("%s labels %v, want %v", name, m.labels, want)
					}
					got[name] = m.value
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("timeline series %v,\nwant %v", got, c.want)
			}
		})
	}
}

// A timeline running now is in Prometheus as it goes: the load, what arrived in the last second judged,
// the seconds judged and the tester's bins always; the DUT's outages and loss so far only while no frame
// lost in the tester's bins could be the DUT's; nothing once the run has finished (the results say it).
func TestALiveTimelineIsExportedWhileItRuns(t *testing.T) {
	live := []string{"linerate_timeline_live_offered_frames_per_second", "linerate_timeline_live_received_frames_per_second",
		"linerate_timeline_live_judged_seconds", "linerate_timeline_live_outages", "linerate_timeline_live_lost_frames",
		"linerate_timeline_live_last_outage_seconds", "linerate_timeline_live_tester_bins"}
	rx := int64(1998)
	for _, c := range []struct {
		name  string
		phase v1alpha1.Phase
		row   v1alpha1.TimelineProgress
		want  map[string]float64
	}{
		{"clean so far", v1alpha1.PhaseRunning,
			v1alpha1.TimelineProgress{OfferedFramesPerSecond: 2000, ReceivedFramesPerSecond: &rx, Seconds: "3600.5", Outages: 4,
				LostFrames: 61, LastOutageMilliseconds: "7.5", Bins: 36005},
			map[string]float64{"linerate_timeline_live_offered_frames_per_second": 2000, "linerate_timeline_live_received_frames_per_second": 1998,
				"linerate_timeline_live_judged_seconds": 3600.5, "linerate_timeline_live_outages": 4, "linerate_timeline_live_lost_frames": 61,
				"linerate_timeline_live_last_outage_seconds": 0.0075, "linerate_timeline_live_tester_bins": 0}},
		{"frames lost in the tester's bins", v1alpha1.PhaseRunning,
			v1alpha1.TimelineProgress{OfferedFramesPerSecond: 2000, Seconds: "60", Outages: 1, LostFrames: 9, LastOutageMilliseconds: "4.5",
				Bins: 600, TesterBins: 3, TesterLostFrames: 80},
			map[string]float64{"linerate_timeline_live_offered_frames_per_second": 2000, "linerate_timeline_live_judged_seconds": 60,
				"linerate_timeline_live_tester_bins": 3}},
		{"more bins the tester's than allowed", v1alpha1.PhaseRunning,
			v1alpha1.TimelineProgress{OfferedFramesPerSecond: 2000, Seconds: "60", Outages: 1, Bins: 600, TesterBins: 30, TesterLimited: true},
			map[string]float64{"linerate_timeline_live_offered_frames_per_second": 2000, "linerate_timeline_live_judged_seconds": 60,
				"linerate_timeline_live_tester_bins": 30}},
		{"suspended: nothing runs", v1alpha1.PhaseSuspended,
			v1alpha1.TimelineProgress{OfferedFramesPerSecond: 2000, Seconds: "60", Bins: 600},
			map[string]float64{}},
		{"finished", v1alpha1.PhaseSucceeded,
			v1alpha1.TimelineProgress{OfferedFramesPerSecond: 2000, Seconds: "60", Bins: 600},
			map[string]float64{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.row.FrameSize, c.row.Direction = 128, "west->east"
			tt := &v1alpha1.TrafficTest{ObjectMeta: metav1.ObjectMeta{Namespace: "lab", Name: "soak"}}
			tt.Status.Phase = c.phase
			tt.Status.Progress = &v1alpha1.Progress{Test: v1alpha1.TestTimeline, Timeline: []v1alpha1.TimelineProgress{c.row}}
			all := gather(t, tt)
			got := map[string]float64{}
			for _, name := range live {
				for _, m := range all[name] {
					got[name] = m.value
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("live series %v,\nwant %v", got, c.want)
			}
		})
	}
}

// A calibration run's timeline is the tester's own: nothing of it is exported as a DUT's.
func TestCalibrationRunsExportNoTimeline(t *testing.T) {
	tt := &v1alpha1.TrafficTest{ObjectMeta: metav1.ObjectMeta{Namespace: "lab", Name: "calibrate"}}
	tt.Spec.Tester.Calibration = &v1alpha1.TesterCalibration{ConfigMapName: "tester-ceiling", Measure: true}
	tt.Status.Phase = v1alpha1.PhaseSucceeded
	tt.Status.Results = &v1alpha1.Results{Timeline: []v1alpha1.TimelineResult{{FrameSize: 64, Direction: "west->east", LossPercent: "0", Bins: 10}}}
	for name := range gather(t, tt) {
		if strings.HasPrefix(name, "linerate_timeline_") {
			t.Errorf("a calibration run exports %s", name)
		}
	}
	tt.Status.Phase = v1alpha1.PhaseRunning
	tt.Status.Progress = &v1alpha1.Progress{Timeline: []v1alpha1.TimelineProgress{{FrameSize: 64, Direction: "west->east", Seconds: "5", Bins: 50}}}
	for name := range gather(t, tt) {
		if strings.HasPrefix(name, "linerate_timeline_") {
			t.Errorf("a calibration run exports %s", name)
		}
	}
}

// Conditional throughput is exported per goal where a row has it, and never for a row the tester limited
// (its figures are the tester's) nor for one whose NDR is undetermined.
func TestConditionalThroughputIsExportedPerGoal(t *testing.T) {
	cond := func(fps int64) *v1alpha1.Rate { return &v1alpha1.Rate{FramesPerSecond: fps} }
	run := &v1alpha1.TrafficTest{ObjectMeta: metav1.ObjectMeta{Namespace: "lab", Name: "pdr"}}
	run.Status.Phase = v1alpha1.PhaseSucceeded
	run.Status.Results = &v1alpha1.Results{Throughput: []v1alpha1.ThroughputResult{
		{FrameSize: 64, Direction: "measured", NDR: v1alpha1.Rate{FramesPerSecond: 1000}, NDRConditional: cond(999), PDRConditional: cond(1010)},
		{FrameSize: 64, Direction: "limited", NDR: v1alpha1.Rate{FramesPerSecond: 900}, PDRConditional: cond(905), TesterLimited: true},
		{FrameSize: 64, Direction: "undetermined", NDR: v1alpha1.Rate{FramesPerSecond: 800}, PDRConditional: cond(805), Undetermined: "cap"},
	}}
	var got []string
	for _, m := range gather(t, run)["linerate_throughput_conditional_frames_per_second"] {
		got = append(got, fmt.Sprintf("%s %s %.0f", m.labels["direction"], m.labels["goal"], m.value))
	}
	if strings.Join(got, ", ") != "measured ndr 999, measured pdr 1010" {
		t.Errorf("conditional throughput series %q", got)
	}
}

// What arrived in fragments at the NDR is exported as a fraction of what arrived, for the rows whose NDR is
// the DUT's only.
func TestFragmentedFramesAreExportedAsARatio(t *testing.T) {
	frag := &v1alpha1.FragmentCounts{Frames: 250, Percent: "25", Whole: 250, Fragments: 500}
	run := &v1alpha1.TrafficTest{ObjectMeta: metav1.ObjectMeta{Namespace: "lab", Name: "frag"}}
	run.Status.Phase = v1alpha1.PhaseSucceeded
	run.Status.Results = &v1alpha1.Results{Throughput: []v1alpha1.ThroughputResult{
		{FrameSize: 1518, Direction: "measured", NDR: v1alpha1.Rate{FramesPerSecond: 1000}, Fragmented: frag},
		{FrameSize: 1518, Direction: "limited", NDR: v1alpha1.Rate{FramesPerSecond: 900}, Fragmented: frag, TesterLimited: true},
		{FrameSize: 64, Direction: "measured", NDR: v1alpha1.Rate{FramesPerSecond: 9000}},
	}}
	var got []string
	for _, m := range gather(t, run)["linerate_throughput_fragmented_ratio"] {
		got = append(got, fmt.Sprintf("%s %s %.2f", m.labels["frame_size"], m.labels["direction"], m.value))
	}
	if strings.Join(got, ", ") != "1518 measured 0.25" {
		t.Errorf("fragmented series %q", got)
	}
}

// The DUT's CPU cost at the NDR is exported in base units, for the rows whose NDR is the DUT's only.
func TestTheDUTsCPUCostIsExported(t *testing.T) {
	cost := &v1alpha1.DUTCPUCost{CoresBusy: "0.101", CoresAllowed: "0.1", Saturated: true, MicrosecondsPerThousandFrames: "22190", MicrosecondsPerKilobyte: "173"}
	run := &v1alpha1.TrafficTest{ObjectMeta: metav1.ObjectMeta{Namespace: "lab", Name: "cpu"}}
	run.Status.Phase = v1alpha1.PhaseSucceeded
	run.Status.Results = &v1alpha1.Results{Throughput: []v1alpha1.ThroughputResult{
		{FrameSize: 128, Direction: "measured", NDR: v1alpha1.Rate{FramesPerSecond: 5243}, DUTCPU: cost},
		{FrameSize: 128, Direction: "limited", NDR: v1alpha1.Rate{FramesPerSecond: 900}, DUTCPU: cost, TesterLimited: true},
		{FrameSize: 64, Direction: "measured", NDR: v1alpha1.Rate{FramesPerSecond: 9000}},
	}}
	got := gather(t, run)
	var cores, perFrame []string
	for _, m := range got["linerate_throughput_dut_cpu_cores"] {
		cores = append(cores, fmt.Sprintf("%s %s %g", m.labels["frame_size"], m.labels["direction"], m.value))
	}
	for _, m := range got["linerate_throughput_dut_cpu_seconds_per_frame"] {
		perFrame = append(perFrame, fmt.Sprintf("%s %s %g", m.labels["frame_size"], m.labels["direction"], m.value))
	}
	if strings.Join(cores, ", ") != "128 measured 0.101" || strings.Join(perFrame, ", ") != "128 measured 2.219e-05" {
		t.Errorf("DUT CPU series %q %q", cores, perFrame)
	}
}
