// Package metrics exports TrafficTest results to Prometheus. The gauges are built at scrape time from the
// TrafficTests' status (through the manager's cache), so they are never stale, survive operator restarts
// and vanish with the TrafficTest.
package metrics

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/expectations"
	"linerate.dev/linerate/internal/plan"
)

var (
	testLabels = []string{"namespace", "traffictest", "dut"}
	rowLabels  = append(append([]string{}, testLabels...), "frame_size", "direction")

	throughputL1 = prometheus.NewDesc("linerate_throughput_l1_bits_per_second",
		"RFC 2544 throughput (NDR) in bit/s on the wire (frame + 20 B preamble and gap).", rowLabels, nil)
	throughputL2 = prometheus.NewDesc("linerate_throughput_l2_bits_per_second",
		"RFC 2544 throughput (NDR) in bit/s of Ethernet frames (FCS included).", rowLabels, nil)
	throughputFPS = prometheus.NewDesc("linerate_throughput_frames_per_second",
		"RFC 2544 throughput (NDR) in frames per second.", rowLabels, nil)
	throughputConditional = prometheus.NewDesc("linerate_throughput_conditional_frames_per_second",
		"RFC 9971 conditional throughput in frames per second at the NDR or the PDR (goal), where its loss tolerance is not 0: the rate the DUT forwards there.",
		append(append([]string{}, rowLabels...), "goal"), nil)
	throughputFragmented = prometheus.NewDesc("linerate_throughput_fragmented_ratio",
		"The fraction of the frames received in the validation trial at the NDR that arrived in fragments (sent with DF clear: spec.traffic.dontFragment false); absent where none did.", rowLabels, nil)
	throughputDUTCPU = prometheus.NewDesc("linerate_throughput_dut_cpu_cores",
		"The DUT's CPU seconds per second (cores busy) while the validation trial at the NDR offered its frames, read from the DUT's cgroup (spec.dut.cpu); absent without one.", rowLabels, nil)
	throughputDUTCPUPerFrame = prometheus.NewDesc("linerate_throughput_dut_cpu_seconds_per_frame",
		"The DUT's CPU time per frame it forwarded in the validation trial at the NDR (spec.dut.cpu); absent without one.", rowLabels, nil)
	throughputRatio = prometheus.NewDesc("linerate_throughput_line_rate_ratio",
		"RFC 2544 throughput (NDR) as a fraction of the ports' line rate (L1).", rowLabels, nil)
	throughputTesterLimited = prometheus.NewDesc("linerate_throughput_tester_limited",
		"1 for a throughput (or IMIX, frame_size 0) result at which the tester, not the DUT, was the limit: its NDR is a lower bound of the DUT's and is not exported as the DUT's throughput.", rowLabels, nil)
	throughputUndetermined = prometheus.NewDesc("linerate_throughput_undetermined",
		"1 for a throughput (or IMIX, frame_size 0) result whose NDR is undetermined: the search ended without confirming one (its cap of trials; a pair no joint trial confirmed within its cap, the tester spoiling it, or an engine abort; the other direction of a pair undetermined; the run stopping first), so the status holds at most a lower bound, and no figure is exported as the DUT's throughput. A row the tester limited says linerate_throughput_tester_limited instead.", rowLabels, nil)
	latency = prometheus.NewDesc("linerate_latency_seconds",
		"Latency at a load in percent of the throughput rate (100: the NDR, RFC 2544; 0: the sparse probe), aggregated over repetitions.",
		append(append([]string{}, rowLabels...), "statistic", "percent_of_ndr"), nil)
	frameLoss = prometheus.NewDesc("linerate_frame_loss_ratio",
		"RFC 2544 frame loss rate at an offered load (fraction of line rate).", append(append([]string{}, rowLabels...), "offered_load"), nil)
	backToBack = prometheus.NewDesc("linerate_back_to_back_frames",
		"RFC 2544 back-to-back: mean longest burst forwarded without loss (only measured rows: none that is saturated, tester-limited or not measurable).", rowLabels, nil)
	pathMTUFrame = prometheus.NewDesc("linerate_path_mtu_largest_frame_bytes",
		"Path MTU finder: the largest frame (FCS included) that crossed the DUT whole in a direction; with at_least=\"true\" the largest tried, which crossed. Only determined rows.",
		append(append([]string{}, testLabels...), "direction", "at_least"), nil)
	imixL2 = prometheus.NewDesc("linerate_imix_throughput_l2_bits_per_second",
		"IMIX throughput (NDR) in bit/s of Ethernet frames.", append(append([]string{}, testLabels...), "direction"), nil)
	timelineOutages = prometheus.NewDesc("linerate_timeline_outages",
		"Timeline test: the DUT's outages (runs of at least timeline.outageMinFrames consecutive lost frames) in the DUT's bins. Only rows the tester did not limit (linerate_timeline_tester_limited says the others).", rowLabels, nil)
	timelineOutageFrames = prometheus.NewDesc("linerate_timeline_outage_frames",
		"Timeline test: the frames the DUT's outages lost. Only rows the tester did not limit.", rowLabels, nil)
	timelineLostFrames = prometheus.NewDesc("linerate_timeline_lost_frames",
		"Timeline test: the frames lost in the DUT's bins, in outages or scattered. Only rows the tester did not limit.", rowLabels, nil)
	timelineLoss = prometheus.NewDesc("linerate_timeline_loss_ratio",
		"Timeline test: the frames lost in the DUT's bins over the frames due in them. Only rows the tester did not limit.", rowLabels, nil)
	timelineLongestOutage = prometheus.NewDesc("linerate_timeline_longest_outage_seconds",
		"Timeline test: the DUT's longest outage, its frames lost over the rate (0 without an outage). Only rows the tester did not limit.", rowLabels, nil)
	timelineOutageTime = prometheus.NewDesc("linerate_timeline_outage_seconds",
		"Timeline test: all the DUT's outages together, their frames lost over the rate. Only rows the tester did not limit.", rowLabels, nil)
	timelineSES = prometheus.NewDesc("linerate_timeline_severely_errored_seconds",
		"Timeline test: whole seconds without a tester's bin that lost more than half their frames (ITU-T Y.1563). Only rows the tester did not limit.", rowLabels, nil)
	timelineAvailability = prometheus.NewDesc("linerate_timeline_availability_ratio",
		"Timeline test: the share of seconds that were not unavailable time in the ITU-T Y.1564 sense (ten severely errored seconds in a row begin it, ten others end it). Only rows the tester did not limit, whose bins divide a second, and where no bound is open (unavailableSecondsAtMost).", rowLabels, nil)
	timelineLiveOffered = prometheus.NewDesc("linerate_timeline_live_offered_frames_per_second",
		"Timeline test running now: the load held.", rowLabels, nil)
	timelineLiveReceived = prometheus.NewDesc("linerate_timeline_live_received_frames_per_second",
		"Timeline test running now: what arrived of the frames due in the last whole second judged (not exported when the tester spoiled it).", rowLabels, nil)
	timelineLiveSeconds = prometheus.NewDesc("linerate_timeline_live_judged_seconds",
		"Timeline test running now: the seconds of load judged so far (settle behind the load).", rowLabels, nil)
	timelineLiveOutages = prometheus.NewDesc("linerate_timeline_live_outages",
		"Timeline test running now: the DUT's outages so far. Not exported while frames lost in the tester's bins could hide one, or the tester is limited (status.progress.timeline testerLimited).", rowLabels, nil)
	timelineLiveLost = prometheus.NewDesc("linerate_timeline_live_lost_frames",
		"Timeline test running now: the frames the DUT lost so far. Not exported while frames lost in the tester's bins could be the DUT's, or the tester is limited.", rowLabels, nil)
	timelineLiveLastOutage = prometheus.NewDesc("linerate_timeline_live_last_outage_seconds",
		"Timeline test running now: the length of the DUT's latest outage. Not exported while frames lost in the tester's bins could hide a later one, or the tester is limited.", rowLabels, nil)
	timelineLiveTesterBins = prometheus.NewDesc("linerate_timeline_live_tester_bins",
		"Timeline test running now: the bins the tester spoiled so far.", rowLabels, nil)
	timelineBins = prometheus.NewDesc("linerate_timeline_bins",
		"Timeline test: the counting bins of the load held (timeline.bin each).", rowLabels, nil)
	timelineTesterBins = prometheus.NewDesc("linerate_timeline_tester_bins",
		"Timeline test: the bins the tester spoiled (fell behind its schedule, paused, dropped on receipt): never counted against the DUT.", rowLabels, nil)
	timelineTesterLimited = prometheus.NewDesc("linerate_timeline_tester_limited",
		"1 for a timeline result whose bins the tester spoiled beyond timeline.maxTesterSpoiled, or in which frames were lost or an outage lay (or whose trial was cut short): its outage figures are a lower bound, and none of its outage or loss figures is exported.", rowLabels, nil)
	penalty = prometheus.NewDesc("linerate_baseline_penalty_ratio",
		"Throughput lost against the baseline TrafficTest, as a fraction.", rowLabels, nil)
	phase = prometheus.NewDesc("linerate_traffictest_phase",
		"1 for the TrafficTest's current phase; reason: why it ended (its Complete condition's reason, e.g. Cancelled, TesterFailed), empty while it has not.",
		append(append([]string{}, testLabels...), "phase", "reason"), nil)
	verdict = prometheus.NewDesc("linerate_traffictest_verdict",
		"1 for the TrafficTest's regression verdict (Passed, Failed, Inconclusive, None).", append(append([]string{}, testLabels...), "verdict"), nil)
	trials = prometheus.NewDesc("linerate_traffictest_trials",
		"Trials measured so far.", testLabels, nil)
	completion = prometheus.NewDesc("linerate_traffictest_completion_timestamp_seconds",
		"When the TrafficTest finished (Unix time).", testLabels, nil)
	ndrChange = prometheus.NewDesc("linerate_ndr_change_ratio",
		"NDR change against spec.previousRun (a schedule's last passed run), as a fraction of the previous NDR: negative when throughput was lost. Rows either run measured at the tester's ceiling are left out.",
		append(append([]string{}, rowLabels...), "previous_run"), nil)
	latencyChange = prometheus.NewDesc("linerate_latency_change_seconds",
		"Latency change at the NDR against spec.previousRun, where both runs measured it validly.",
		append(append([]string{}, rowLabels...), "previous_run", "statistic"), nil)

	scheduleLabels = []string{"namespace", "schedule", "dut"}
	scheduleNDR    = prometheus.NewDesc("linerate_schedule_throughput_l2_bits_per_second",
		"NDR (L2) of the schedule's newest finished run that measured it with the DUT as the limit: one series per schedule, size and direction across runs.",
		append(append([]string{}, scheduleLabels...), "frame_size", "direction"), nil)
	scheduleNDRChange = prometheus.NewDesc("linerate_schedule_ndr_change_ratio",
		"NDR change of the schedule's newest finished run against the run it was compared with (its last passed run).",
		append(append([]string{}, scheduleLabels...), "frame_size", "direction"), nil)
	scheduleLatencyChange = prometheus.NewDesc("linerate_schedule_latency_p99_change_ratio",
		"p99 latency change at the NDR of the schedule's newest finished run against the run it was compared with, as a fraction of that run's p99.",
		append(append([]string{}, scheduleLabels...), "frame_size", "direction"), nil)
	scheduleLastPassed = prometheus.NewDesc("linerate_schedule_last_run_passed",
		"1 when the schedule's newest finished run passed, 0 when it did not.", scheduleLabels, nil)
	scheduleLastRun = prometheus.NewDesc("linerate_schedule_last_run_timestamp_seconds",
		"When the schedule's newest run was due (Unix time).", scheduleLabels, nil)
	scheduleStalled = prometheus.NewDesc("linerate_schedule_stalled",
		"1 when the schedule starts no run until its spec, or the ImixProfile it names, is fixed (condition Stalled: its schedule cannot be read, or its template cannot be planned), else 0.",
		scheduleLabels, nil)
)

// ResultsCollector builds the result gauges from every TrafficTest at scrape time.
type ResultsCollector struct {
	Reader client.Reader
}

// Describe implements prometheus.Collector.
func (c *ResultsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{throughputL1, throughputL2, throughputFPS, throughputConditional, throughputFragmented, throughputDUTCPU, throughputDUTCPUPerFrame, throughputRatio, throughputTesterLimited, throughputUndetermined, latency, frameLoss,
		backToBack, pathMTUFrame, imixL2, timelineOutages, timelineOutageFrames, timelineLostFrames, timelineLoss, timelineLongestOutage, timelineOutageTime,
		timelineSES, timelineAvailability, timelineLiveOffered, timelineLiveReceived, timelineLiveSeconds, timelineLiveOutages,
		timelineLiveLost, timelineLiveLastOutage, timelineLiveTesterBins, timelineBins, timelineTesterBins, timelineTesterLimited, penalty, phase, verdict, trials, completion, ndrChange, latencyChange,
		scheduleNDR, scheduleNDRChange, scheduleLatencyChange, scheduleLastPassed, scheduleLastRun, scheduleStalled} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *ResultsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var list v1alpha1.TrafficTestList
	if err := c.Reader.List(ctx, &list); err != nil {
		logf.Log.WithName("metrics").Error(err, "listing TrafficTests for the results metrics")
		return
	}
	for i := range list.Items {
		collectTest(ch, &list.Items[i])
	}
	var schedules v1alpha1.TrafficTestScheduleList
	if err := c.Reader.List(ctx, &schedules); err != nil {
		logf.Log.WithName("metrics").Error(err, "listing TrafficTestSchedules for the results metrics")
		return
	}
	for i := range schedules.Items {
		collectSchedule(ch, &schedules.Items[i], list.Items)
	}
}

// collectSchedule exports a schedule's newest finished run under the schedule's name, so a dashboard or an
// alert follows one series across runs whose names change every night.
func collectSchedule(ch chan<- prometheus.Metric, s *v1alpha1.TrafficTestSchedule, tests []v1alpha1.TrafficTest) {
	st := &s.Status
	labels := []string{s.Namespace, s.Name, s.Spec.Template.Spec.DUT.Name}
	gauge := func(d *prometheus.Desc, v float64, extra ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append(append([]string{}, labels...), extra...)...)
	}
	if st.LastScheduleTime != nil {
		gauge(scheduleLastRun, float64(st.LastScheduleTime.Unix()))
	}
	// a stalled schedule makes no run, so no run's gauge says anything: this one must
	gauge(scheduleStalled, boolValue(meta.IsStatusConditionTrue(st.Conditions, v1alpha1.ConditionStalled)))
	said := false
	for _, run := range st.Runs { // newest first
		if run.Phase != v1alpha1.PhaseSucceeded && run.Phase != v1alpha1.PhaseFailed || run.Cancelled {
			continue // a replaced run neither passed nor failed, and its partial figures are not the schedule's
		}
		if !said {
			passed := run.Phase == v1alpha1.PhaseSucceeded && (run.Verdict == v1alpha1.VerdictPassed || run.Verdict == v1alpha1.VerdictNone)
			gauge(scheduleLastPassed, boolValue(passed))
			said = true
		}
		if run.Phase != v1alpha1.PhaseSucceeded {
			// a run that crashed measured part of its plan: its figures stay in its status, and the series
			// that follow the schedule keep the newest run that measured all of it
			continue
		}
		for i := range tests {
			tt := &tests[i]
			if tt.Namespace != s.Namespace || tt.Name != run.Name || tt.Status.Results == nil {
				continue
			}
			for _, t := range tt.Status.Results.Throughput {
				if !t.TesterLimited && t.Undetermined == "" {
					gauge(scheduleNDR, float64(t.NDR.L2BitsPerSecond), strconv.Itoa(int(t.FrameSize)), t.Direction)
				}
			}
			for _, m := range tt.Status.Results.Imix { // frame_size 0, as in linerate_throughput_tester_limited
				if !m.TesterLimited && m.Undetermined == "" {
					gauge(scheduleNDR, float64(m.NDR.L2BitsPerSecond), "0", m.Direction)
				}
			}
			for _, c := range tt.Status.Results.Change {
				if c.TesterLimited {
					continue // the tester's ceiling moved, or the latencies compared were at other rates
				}
				gauge(scheduleNDRChange, percentToRatio(c.NDRPercent), strconv.Itoa(int(c.FrameSize)), c.Direction)
				if c.LatencyP99Percent != "" {
					gauge(scheduleLatencyChange, percentToRatio(c.LatencyP99Percent), strconv.Itoa(int(c.FrameSize)), c.Direction)
				}
			}
		}
		return
	}
}

func finishedPhase(p v1alpha1.Phase) bool {
	return p == v1alpha1.PhaseSucceeded || p == v1alpha1.PhaseFailed
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// collectLiveTimeline exports a running timeline's figures so far. Fail closed as at the end: while frames
// lost in the tester's bins could be the DUT's, or the tester has spoiled more than it may, its outages
// and loss so far are a lower bound, and are not exported as the count.
func collectLiveTimeline(gauge func(*prometheus.Desc, float64, []string), l []string, t v1alpha1.TimelineProgress) {
	gauge(timelineLiveOffered, float64(t.OfferedFramesPerSecond), l)
	gauge(timelineLiveSeconds, number(t.Seconds), l)
	gauge(timelineLiveTesterBins, float64(t.TesterBins), l)
	if t.ReceivedFramesPerSecond != nil {
		gauge(timelineLiveReceived, float64(*t.ReceivedFramesPerSecond), l)
	}
	if t.TesterLostFrames > 0 || t.TesterLimited {
		return
	}
	gauge(timelineLiveOutages, float64(t.Outages), l)
	gauge(timelineLiveLost, float64(t.LostFrames), l)
	if t.LastOutageMilliseconds != "" {
		gauge(timelineLiveLastOutage, millisecondsToSeconds(t.LastOutageMilliseconds), l)
	}
}

func collectTest(ch chan<- prometheus.Metric, tt *v1alpha1.TrafficTest) {
	st := &tt.Status
	base := []string{tt.Namespace, tt.Name, tt.Spec.DUT.Name}
	row := func(size int32, dir string, extra ...string) []string {
		out := append(append([]string{}, base...), strconv.Itoa(int(size)), dir)
		return append(out, extra...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels []string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	if st.Phase != "" {
		reason := ""
		if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionComplete); c != nil && finishedPhase(st.Phase) {
			reason = c.Reason
		}
		gauge(phase, 1, append(append([]string{}, base...), string(st.Phase), reason))
	}
	if st.Verdict != "" {
		gauge(verdict, 1, append(append([]string{}, base...), string(st.Verdict)))
	}
	gauge(trials, float64(st.TrialsMeasured), base)
	if st.CompletionTime != nil {
		gauge(completion, float64(st.CompletionTime.Unix()), base)
	}
	calibration := tt.Spec.Tester.Calibration != nil && tt.Spec.Tester.Calibration.Measure
	if st.Progress != nil && st.Phase == v1alpha1.PhaseRunning && !calibration {
		for _, t := range st.Progress.Timeline {
			collectLiveTimeline(gauge, row(t.FrameSize, t.Direction), t)
		}
	}
	r := st.Results
	if r == nil {
		return
	}
	if calibration {
		return // a calibration run's rows are the tester's own ceiling and floor, never a DUT's figures
	}
	for _, t := range r.Throughput {
		l := row(t.FrameSize, t.Direction)
		if t.TesterLimited {
			// fail closed: a tester's ceiling is not the DUT's throughput (and must not trip a regression alert)
			gauge(throughputTesterLimited, 1, l)
			continue
		}
		if t.Undetermined != "" {
			// a lower bound of the NDR, not the NDR: said, so that the row does not simply vanish
			gauge(throughputUndetermined, 1, l)
			continue
		}
		gauge(throughputL1, float64(t.NDR.L1BitsPerSecond), l)
		gauge(throughputL2, float64(t.NDR.L2BitsPerSecond), l)
		gauge(throughputFPS, float64(t.NDR.FramesPerSecond), l)
		if c := t.NDRConditional; c != nil {
			gauge(throughputConditional, float64(c.FramesPerSecond), row(t.FrameSize, t.Direction, "ndr"))
		}
		if c := t.PDRConditional; c != nil {
			gauge(throughputConditional, float64(c.FramesPerSecond), row(t.FrameSize, t.Direction, "pdr"))
		}
		gauge(throughputRatio, percentToRatio(t.NDR.PercentOfLineRate), l)
		if f := t.Fragmented; f != nil && f.Frames > 0 {
			gauge(throughputFragmented, percentToRatio(f.Percent), l)
		}
		if c := t.DUTCPU; c != nil {
			if v, err := strconv.ParseFloat(c.CoresBusy, 64); err == nil {
				gauge(throughputDUTCPU, v, l)
			}
			if v, err := strconv.ParseFloat(c.MicrosecondsPerThousandFrames, 64); err == nil {
				gauge(throughputDUTCPUPerFrame, v/1e9, l)
			}
		}
	}
	for _, lr := range r.Latency {
		if !lr.Aggregate.Valid {
			continue
		}
		for _, s := range []v1alpha1.Statistic{"min", "mean", "p50", "p90", "p99", "p99.9", "p99.99", "max"} {
			v := expectations.Statistic(lr.Aggregate, s)
			if v == 0 {
				continue // a percentile its frames cannot support was not reported, and is no latency of 0
			}
			gauge(latency, float64(v)/1e9, row(lr.FrameSize, lr.Direction, string(s), plan.RowLoad(lr)))
		}
	}
	for _, fl := range r.FrameLoss {
		for _, p := range fl.Points {
			offered := strconv.FormatFloat(percentToRatio(p.PercentOfLineRate), 'f', -1, 64)
			gauge(frameLoss, percentToRatio(p.LossPercent), row(fl.FrameSize, fl.Direction, offered))
		}
	}
	for _, b := range r.BackToBack {
		if b.NotMeasurable != "" || b.Saturated || b.TesterLimited {
			continue // a lower bound (the plan's longest burst, the tester's limit, a trial's length), not the DUT's burst
		}
		gauge(backToBack, float64(b.Frames), row(b.FrameSize, b.Direction))
	}
	for _, m := range r.PathMTU {
		if m.Undetermined != "" {
			continue
		}
		gauge(pathMTUFrame, float64(m.LargestFrame), append(append([]string{}, base...), m.Direction, strconv.FormatBool(m.AtLeast)))
	}
	for _, m := range r.Imix {
		if m.TesterLimited {
			gauge(throughputTesterLimited, 1, row(0, m.Direction))
			continue
		}
		if m.Undetermined != "" {
			gauge(throughputUndetermined, 1, row(0, m.Direction))
			continue
		}
		gauge(imixL2, float64(m.NDR.L2BitsPerSecond), append(append([]string{}, base...), m.Direction))
	}
	for _, t := range r.Timeline {
		l := row(t.FrameSize, t.Direction)
		// the bins are the tester's own figures, true whoever spoiled them: they say how much was judged
		gauge(timelineBins, float64(t.Bins), l)
		gauge(timelineTesterBins, float64(t.TesterBins), l)
		if t.TesterLimited || t.TesterOutages > 0 || t.TesterLostFrames > 0 {
			// fail closed: the outages of the bins the tester left are a lower bound (an outage of the
			// DUT's may lie in the bins it spoiled), and "0 outages" from them would read as a clean night
			gauge(timelineTesterLimited, 1, l)
			continue
		}
		gauge(timelineOutages, float64(t.Outages), l)
		gauge(timelineOutageFrames, float64(t.OutageFrames), l)
		gauge(timelineLostFrames, float64(t.LostFrames), l)
		gauge(timelineLoss, percentToRatio(t.LossPercent), l)
		gauge(timelineLongestOutage, millisecondsToSeconds(t.LongestOutageMilliseconds), l)
		gauge(timelineOutageTime, millisecondsToSeconds(t.TotalOutageMilliseconds), l)
		gauge(timelineSES, float64(t.SeverelyErroredSeconds), l)
		if t.AvailabilitySeconds > 0 && t.UnavailableSecondsAtMost == 0 {
			// from the seconds, not the percentage rounded down for people: an alert compares it exactly
			gauge(timelineAvailability, float64(t.AvailabilitySeconds-t.UnavailableSeconds)/float64(t.AvailabilitySeconds), l)
		}
	}
	for _, p := range r.Penalty {
		if p.Bound != "" && p.Bound != v1alpha1.PenaltyAtLeast {
			continue // it may be smaller than this (AtMost) or either way (Unknown): no alert may take it for the penalty
		}
		gauge(penalty, percentToRatio(p.Percent), row(p.FrameSize, p.Direction))
	}
	for _, c := range r.Change {
		if c.TesterLimited {
			continue // the tester's ceiling moved, not the DUT
		}
		gauge(ndrChange, percentToRatio(c.NDRPercent), row(c.FrameSize, c.Direction, r.ComparedWith))
		if c.LatencyP99Ns != nil {
			gauge(latencyChange, float64(*c.LatencyP99Ns)/1e9, row(c.FrameSize, c.Direction, r.ComparedWith, "p99"))
			gauge(latencyChange, float64(*c.LatencyMeanNs)/1e9, row(c.FrameSize, c.Direction, r.ComparedWith, "mean"))
		}
	}
}

// millisecondsToSeconds reads a status's milliseconds ("" where there was no outage: 0 s).
func millisecondsToSeconds(s string) float64 { return number(s) / 1000 }

func percentToRatio(s string) float64 { return number(s) / 100 }

// number reads a status's decimal string; 0 for "" (a figure the status leaves out).
func number(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0
	}
	return v
}
