package runner

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/units"
)

func fmtInt(v int64) string {
	s := strconv.FormatInt(v, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && c != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func ns(v int64) string { return units.FormatNs(v) }

// pct writes a percentile, or "–" where its frames could not support one.
func pct(v int64) string { return units.FormatPercentileNs(v) }

// PrintTable writes the RFC 2544 result tables the way a test report shows them.
func PrintTable(w io.Writer, r *v1alpha1.Results, lossTolerance string) {
	if r == nil {
		return
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	if r.DUT != nil && r.DUT.Name != "" {
		fmt.Fprintf(tw, "DUT: %s %s %s %s\n", r.DUT.Name, r.DUT.Model, r.DUT.Software, r.DUT.Cipher)
	}
	if len(r.PathMTU) > 0 {
		fmt.Fprintln(tw, "\nPath MTU (the largest frame that crossed the DUT whole)")
		fmt.Fprintln(tw, "direction\tlargest frame\tMTU\trefused\tprobes\t")
		for _, m := range r.PathMTU {
			if m.Undetermined != "" {
				fmt.Fprintf(tw, "%s\tundetermined: %s\t\t\t%d\t\n", m.Direction, m.Undetermined, m.Probes)
				continue
			}
			largest, refused := fmt.Sprintf("%d B", m.LargestFrame), "by ICMP"
			switch {
			case m.AtLeast:
				largest, refused = "at least "+largest, "none tried"
			case m.Silent:
				refused = "silently"
			case m.Fragmented:
				refused = "fragmented (DF clear)"
			case m.ICMPMTU > 0:
				refused = fmt.Sprintf("by ICMP (MTU %d)", m.ICMPMTU)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t\n", m.Direction, largest, m.MTU, refused, m.Probes)
		}
	}
	if len(r.Throughput) > 0 {
		fmt.Fprintf(tw, "\nThroughput (RFC 2544 26.1, NDR at %s%% loss)\n", lossTolerance)
		fmt.Fprintln(tw, "frame\tdirection\tframes/s\tL2\tL1\t% line\tloss %\tPDR frames/s\tlatency p50/p99\ttrials\t")
		for _, t := range r.Throughput {
			pdr := "-"
			if t.PDR != nil {
				pdr = fmtInt(t.PDR.FramesPerSecond)
			}
			if c := conditional(t); c != "" {
				pdr += " (conditional " + c + ")"
			}
			lat := "-"
			if t.Latency != nil && t.Latency.Valid {
				lat = pct(t.Latency.P50Ns) + " / " + pct(t.Latency.P99Ns)
			}
			mark := rowMarks(t.TesterLimited, t.Undetermined, t.CeilingMarginPercent)
			mark += refusedMark(t.Refused)
			if f := t.Fragmented; f != nil {
				mark += " " + fragmentedText(f)
			}
			if c := t.DUTCPU; c != nil {
				mark += " " + dutCPUText(c)
			}
			fmt.Fprintf(tw, "%d B\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d (%s s)%s\t\n", t.FrameSize, t.Direction,
				fmtInt(t.NDR.FramesPerSecond), units.FormatBits(t.NDR.L2BitsPerSecond),
				units.FormatBits(t.NDR.L1BitsPerSecond), t.NDR.PercentOfLineRate, t.LossPercent, pdr, lat,
				t.Trials, t.TrialSeconds, mark)
		}
	}
	if len(r.Latency) > 0 {
		fmt.Fprintln(tw, "\nLatency at the loads of spec.latency.percentOfNDR (RFC 2544 26.2 at the NDR; every frame timestamped; – a percentile too few frames support)")
		fmt.Fprintln(tw, "frame\tdirection\tload\tframes/s\tmin\tmean\tp50\tp99\tp99.9\tmax\tPDV\tjitter\tpercentiles ±\treps\t")
		for _, l := range r.Latency {
			a := l.Aggregate
			if !a.Valid {
				fmt.Fprintf(tw, "%d B\t%s\t%s\t%s\tnot valid: %s\t\n", l.FrameSize, l.Direction, loadName(l), fmtInt(l.Rate.FramesPerSecond), a.Reason)
				continue
			}
			fmt.Fprintf(tw, "%d B\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n", l.FrameSize, l.Direction, loadName(l),
				fmtInt(l.Rate.FramesPerSecond), ns(a.MinNs), ns(a.MeanNs), pct(a.P50Ns), pct(a.P99Ns), pct(a.P999Ns),
				ns(a.MaxNs), pct(a.PDVNs), ns(a.JitterNs), resolution(a.ResolutionNs), len(l.Repetitions))
		}
		fmt.Fprintln(tw, "\nLatency over the repetitions (RFC 8219 7.2: medians of each repetition's p50 and p99.9, [1st, 99th percentile])")
		fmt.Fprintln(tw, "frame\tdirection\tload\ttypical\tworst case\tPDV\tvalid reps\tinvalid\t")
		for _, l := range r.Latency {
			s := l.RFC8219
			if s == nil {
				fmt.Fprintf(tw, "%d B\t%s\t%s\tno valid repetition\t\n", l.FrameSize, l.Direction, loadName(l))
				continue
			}
			fmt.Fprintf(tw, "%d B\t%s\t%s\t%s [%s, %s]\t%s [%s, %s]\t%s\t%d\t%d\t\n", l.FrameSize, l.Direction, loadName(l),
				ns(s.TypicalNs), ns(s.TypicalP1Ns), ns(s.TypicalP99Ns), pct(s.WorstCaseNs), pct(s.WorstCaseP1Ns),
				pct(s.WorstCaseP99Ns), pct(s.PDVNs), s.Repetitions, s.Invalid)
		}
	}
	if len(r.FrameLoss) > 0 {
		fmt.Fprintln(tw, "\nFrame loss (RFC 2544 26.3): loss % at % of line rate")
		for _, f := range r.FrameLoss {
			var pts []string
			for _, p := range f.Points {
				pts = append(pts, p.PercentOfLineRate+"%:"+p.LossPercent)
			}
			fmt.Fprintf(tw, "%d B\t%s\t%s\t\n", f.FrameSize, f.Direction, strings.Join(pts, "  "))
		}
	}
	if len(r.BackToBack) > 0 {
		fmt.Fprintln(tw, "\nBack-to-back (RFC 2544 26.4, RFC 9004)")
		fmt.Fprintln(tw, "frame\tdirection\tframes (mean)\tstddev\tmin\tmax\timplied buffer s\tcorrected buffer s\tsearches\t")
		for _, b := range r.BackToBack {
			if b.NotMeasurable != "" {
				fmt.Fprintf(tw, "%d B\t%s\tnot measurable: %s\t\n", b.FrameSize, b.Direction, b.NotMeasurable)
				continue
			}
			mark := ""
			if b.Saturated {
				mark += " (saturated: a lower bound)"
			}
			if b.TesterLimited {
				mark += " (tester limit)"
			}
			corrected := b.CorrectedBufferSeconds
			if corrected == "" {
				corrected = "-"
			}
			fmt.Fprintf(tw, "%d B\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d%s\t\n", b.FrameSize, b.Direction, fmtInt(b.Frames),
				fmtInt(b.Spread.StdDev), fmtInt(b.Spread.Min), fmtInt(b.Spread.Max), b.BurstSeconds, corrected,
				b.Spread.Repetitions, mark)
		}
	}
	for _, m := range r.Imix {
		fmt.Fprintf(tw, "\nIMIX throughput %s (average %s B): %s frames/s, %s L2, %s%% of line, loss %s%%%s\n", m.Direction,
			m.AverageFrameSize, fmtInt(m.NDR.FramesPerSecond), units.FormatBits(m.NDR.L2BitsPerSecond),
			m.NDR.PercentOfLineRate, m.LossPercent, rowMarks(m.TesterLimited, m.Undetermined, m.CeilingMarginPercent)+refusedMark(m.Refused))
		fmt.Fprintln(tw, "size\ttx\trx\tloss %\tloss % above the NDR\t")
		for i, c := range m.Classes {
			above := "-"
			if i < len(m.ClassesAboveNDR) {
				above = m.ClassesAboveNDR[i].LossPercent
			}
			fmt.Fprintf(tw, "%d B\t%s\t%s\t%s\t%s\t\n", c.FrameSize, fmtInt(c.TxFrames), fmtInt(c.RxFrames), c.LossPercent, above)
		}
	}
	if len(r.Timeline) > 0 {
		fmt.Fprintln(tw, "\nTimeline (every outage, to the frame)")
		fmt.Fprintln(tw, "frame\tdirection\tframes/s\tseconds\tlost\tloss %\toutages\tlongest ms\ttotal ms\tscattered\tSES\tavailable %\ttester bins\t")
		for _, t := range r.Timeline {
			mark := ""
			if t.TesterLimited {
				mark = " (the tester spoiled too many bins: no statement about the DUT)"
			}
			longest, total := t.LongestOutageMilliseconds, t.TotalOutageMilliseconds
			if longest == "" {
				longest, total = "-", "-"
			}
			available := t.AvailabilityPercent
			switch {
			case available == "":
				available = "-"
			case t.UnavailableSecondsAtMost > 0:
				available += " (or less)"
			}
			fmt.Fprintf(tw, "%d B\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%d\t%s\t%d of %d%s\t\n", t.FrameSize, t.Direction,
				fmtInt(t.Rate.FramesPerSecond), t.Seconds, fmtInt(t.LostFrames), t.LossPercent, t.Outages, longest, total,
				fmtInt(t.ScatteredFrames), t.SeverelyErroredSeconds, available, t.TesterBins, t.Bins, mark)
		}
		for _, t := range r.Timeline {
			for _, o := range t.Longest {
				open := ""
				if o.Open {
					open = " (still lost at the end)"
				}
				fmt.Fprintf(tw, "  outage %s %s: %s frames, %s ms%s\n", t.Direction, o.Start, fmtInt(o.Frames), o.Milliseconds, open)
			}
		}
	}
	if d := r.Diagnosis; d != nil {
		fmt.Fprintf(tw, "\nDiagnosis (%s): %s — %s\n", d.Direction, d.Bound, d.Explanation)
		if d.DUTCPU != "" && d.DUTCPU != d.Explanation {
			fmt.Fprintf(tw, "DUT CPU: %s\n", d.DUTCPU)
		}
	}
	bounds := map[v1alpha1.PenaltyBound]string{v1alpha1.PenaltyAtMost: " at most (this run's figure is a lower bound)",
		v1alpha1.PenaltyAtLeast: " at least (the baseline's figure is a lower bound)", v1alpha1.PenaltyUnknown: " not the DUT's (both figures are lower bounds)"}
	for _, p := range r.Penalty {
		fmt.Fprintf(tw, "Penalty %d B %s: %s%% (%s) against the baseline%s\n", p.FrameSize, p.Direction, p.Percent,
			units.FormatBits(p.L2BitsPerSecond), bounds[p.Bound])
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(tw, "\nNotes:")
		for _, n := range r.Notes {
			fmt.Fprintf(tw, "- %s\n", n)
		}
	}
	_ = tw.Flush()
}

// rowMarks says what a throughput row's NDR is beside the DUT's: the tester's limit, a lower bound, and how
// far below the tester's calibrated ceiling.
func rowMarks(testerLimited bool, undetermined, ceilingMargin string) string {
	mark := ""
	if testerLimited {
		mark = " (tester limit)"
	}
	if undetermined != "" {
		mark += " (undetermined: a lower bound)"
	}
	if ceilingMargin != "" {
		mark += " (" + ceilingMargin + "% below the tester's ceiling)"
	}
	return mark
}

// resolution is how far a reported percentile may be from its sample ("exact" when its bucket is one ns).
func resolution(halfWidthNs int64) string {
	if halfWidthNs == 0 {
		return "exact"
	}
	return ns(halfWidthNs)
}

// loadName is a latency row's load for a table: "at the NDR", "at 50% of the NDR".
func loadName(l v1alpha1.LatencyResult) string { return plan.LoadPhrase(plan.RowLoad(l)) }

// conditional is a throughput row's RFC 9971 conditional throughputs (frames/s), where a goal's loss
// ratio is not zero: "NDR 9,990 / PDR 8,950", "" where there are none.
func conditional(t v1alpha1.ThroughputResult) string {
	var out []string
	if t.NDRConditional != nil {
		out = append(out, "NDR "+fmtInt(t.NDRConditional.FramesPerSecond))
	}
	if t.PDRConditional != nil {
		out = append(out, "PDR "+fmtInt(t.PDRConditional.FramesPerSecond))
	}
	return strings.Join(out, " / ")
}

// fragmentedText says what arrived in fragments in a row's trial at the NDR.
func fragmentedText(f *v1alpha1.FragmentCounts) string {
	s := fmt.Sprintf("fragmented: %d frames (%s%%), %d whole, %d fragments", f.Frames, f.Percent, f.Whole, f.Fragments)
	if f.Unmatched > 0 {
		s += fmt.Sprintf(", %d without their first", f.Unmatched)
	}
	return s
}

// refusedMark says why the DUT refused a row's frames ("": it did not).
func refusedMark(why string) string {
	if why == "" {
		return ""
	}
	return " refused: " + why
}

// dutCPUText says what the DUT's CPU paid in a row's trial at the NDR.
func dutCPUText(c *v1alpha1.DUTCPUCost) string {
	s := "DUT CPU: " + c.CoresBusy + " cores"
	if c.CoresAllowed != "" {
		s += " of " + c.CoresAllowed
	}
	if c.Saturated {
		s += " (saturated)"
	}
	if c.MicrosecondsPerThousandFrames != "" {
		s += fmt.Sprintf(", %s µs per 1000 frames, %s µs per kB", c.MicrosecondsPerThousandFrames, c.MicrosecondsPerKilobyte)
	}
	return s
}
