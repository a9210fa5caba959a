// Package report writes a run's results as a self-contained HTML page with SVG plots: throughput and
// frames/s against frame size, the frame-loss curves, the latency percentiles and each timeline's received
// rate over time. No external assets, so the page can be attached to a ticket or archived with the
// regression run.
package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"html/template"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/units"
)

// Series is one line of a chart.
type Series struct {
	Name   string
	Points [][2]float64
}

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

// style is the n-th series' colour and dash: every colour solid, then every colour dashed, so that the
// fourteen curves of seven frame sizes in two directions are told apart.
func style(n int) (colour, dash string) {
	colour = palette[n%len(palette)]
	if (n/len(palette))%2 == 1 {
		dash = ` stroke-dasharray="6 3"`
	}
	return colour, dash
}

// XAxis is a chart's x axis: its label, and whether its values are whole numbers.
type XAxis struct {
	Label string
	// Integers: the values are whole numbers (frame sizes in bytes), labelled exactly ("1024", never
	// "1.02k", which names no frame size).
	Integers bool
}

// LineChart renders series as an SVG line chart with labelled axes. The legend has a column of its own
// right of the plot, so it never covers a line, and the chart grows to hold it; the x range has a margin
// so that no point sits on an axis and no label on the axis's own.
func LineChart(title string, xAxis XAxis, yLabel string, series []Series) string {
	const plotW, ml, mt, mb, legendW, lineH = 520.0, 80.0, 40.0, 50.0, 170.0, 14.0
	w, mr := ml+plotW+legendW, legendW
	h := math.Max(360, mt+lineH*float64(len(series)+1)+mb)
	xmin, xmax, ymax := math.Inf(1), math.Inf(-1), 0.0
	for _, s := range series {
		for _, p := range s.Points {
			xmin, xmax, ymax = math.Min(xmin, p[0]), math.Max(xmax, p[0]), math.Max(ymax, p[1])
		}
	}
	if math.IsInf(xmin, 0) {
		xmin, xmax = 0, 1
	}
	if xmax == xmin {
		// one x value (one frame size): the point in the middle, with room on both sides
		d := math.Max(math.Abs(xmin)/2, 1)
		xmin, xmax = xmin-d, xmax+d
	}
	pad := (xmax - xmin) * 0.05
	xmin, xmax = xmin-pad, xmax+pad
	if ymax <= 0 {
		ymax = 1
	}
	ymax *= 1.1
	x := func(v float64) float64 { return ml + (v-xmin)/(xmax-xmin)*(w-ml-mr) }
	y := func(v float64) float64 { return h - mb - v/ymax*(h-mt-mb) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`, w, h, w, h)
	fmt.Fprintf(&b, `<text x="%.0f" y="20" font-size="14" text-anchor="middle">%s</text>`, (ml+w-mr)/2, esc(title))
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/>`, ml, h-mb, w-mr, h-mb)
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/>`, ml, mt, ml, h-mb)
	for i := 0; i <= 4; i++ {
		v := ymax * float64(i) / 4
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="end">%s</text><line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#ddd"/>`,
			ml-5, y(v)+4, short(v), ml, y(v), w-mr, y(v))
	}
	// a label that would run into the one before it goes one line lower (64 and 128 B are close on a
	// linear axis up to 1518 B)
	lastRight := [2]float64{math.Inf(-1), math.Inf(-1)}
	for _, xv := range xTicks(series, xmin+pad, xmax-pad, xAxis.Integers) {
		label := short(xv)
		if xAxis.Integers {
			label = strconv.FormatFloat(xv, 'f', 0, 64)
		}
		half := 3.5 * float64(len(label)) // about half the width of a 12 px sans-serif label
		row := 0
		if x(xv)-half < lastRight[0]+6 {
			row = 1
		}
		lastRight[row] = x(xv) + half
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">%s</text>`, x(xv), h-mb+16+14*float64(row), label)
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">%s</text>`, (ml+w-mr)/2, h-10, esc(xAxis.Label))
	fmt.Fprintf(&b, `<text x="14" y="%.0f" text-anchor="middle" transform="rotate(-90 14 %.0f)">%s</text>`, (mt+h-mb)/2, (mt+h-mb)/2, esc(yLabel))
	for i, s := range series {
		c, dash := style(i)
		pts := append([][2]float64(nil), s.Points...)
		sort.Slice(pts, func(a, b int) bool { return pts[a][0] < pts[b][0] })
		var path []string
		for _, p := range pts {
			path = append(path, fmt.Sprintf("%.1f,%.1f", x(p[0]), y(p[1])))
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`, x(p[0]), y(p[1]), c)
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`, c, dash, strings.Join(path, " "))
		ly := mt + lineH*float64(i+1)
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="2"%s/>`, w-mr+8, ly-4, w-mr+26, ly-4, c, dash)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" fill="%s">%s</text>`, w-mr+30, ly, c, esc(s.Name))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// xTicks are where the x axis is labelled: at the data's own x values when there are a few (frame sizes,
// offered loads), so every label names a measured point; otherwise five even steps, whole numbers on an
// axis of integers.
func xTicks(series []Series, xmin, xmax float64, integers bool) []float64 {
	seen := map[float64]bool{}
	var xs []float64
	for _, s := range series {
		for _, p := range s.Points {
			if !seen[p[0]] {
				seen[p[0]] = true
				xs = append(xs, p[0])
			}
		}
	}
	if len(xs) > 0 && len(xs) <= 10 {
		sort.Float64s(xs)
		return xs
	}
	xs = xs[:0]
	for i := 0; i <= 4; i++ {
		x := xmin + (xmax-xmin)*float64(i)/4
		if integers {
			x = math.Round(x)
		}
		xs = append(xs, x)
	}
	return xs
}

func esc(s string) string { return template.HTMLEscapeString(s) }

func short(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e9:
		return strconv.FormatFloat(v/1e9, 'g', 3, 64) + "G"
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 3, 64) + "M"
	case a >= 1e3:
		return strconv.FormatFloat(v/1e3, 'g', 3, 64) + "k"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func num(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }

var frameSizes = XAxis{Label: "frame size (B)", Integers: true}

// Charts builds the report's plots from the result tables.
func Charts(r *v1alpha1.Results) map[string]string {
	out := map[string]string{}
	if r == nil {
		return out
	}
	fps, bps := map[string]*Series{}, map[string]*Series{}
	var dirs []string
	for _, t := range r.Throughput {
		if fps[t.Direction] == nil {
			fps[t.Direction], bps[t.Direction] = &Series{Name: t.Direction}, &Series{Name: t.Direction}
			dirs = append(dirs, t.Direction)
		}
		fps[t.Direction].Points = append(fps[t.Direction].Points, [2]float64{float64(t.FrameSize), float64(t.NDR.FramesPerSecond)})
		bps[t.Direction].Points = append(bps[t.Direction].Points, [2]float64{float64(t.FrameSize), float64(t.NDR.L2BitsPerSecond)})
	}
	if len(dirs) > 0 {
		var fs, bs []Series
		for _, d := range dirs {
			fs, bs = append(fs, *fps[d]), append(bs, *bps[d])
		}
		out["throughput-fps.svg"] = LineChart("Throughput (NDR) in frames/s", frameSizes, "frames/s", fs)
		out["throughput-bps.svg"] = LineChart("Throughput (NDR), L2", frameSizes, "bit/s", bs)
	}
	if len(r.FrameLoss) > 0 {
		var ss []Series
		for _, f := range r.FrameLoss {
			s := Series{Name: fmt.Sprintf("%d B %s", f.FrameSize, f.Direction)}
			for _, p := range f.Points {
				s.Points = append(s.Points, [2]float64{num(p.PercentOfLineRate), num(p.LossPercent)})
			}
			ss = append(ss, s)
		}
		out["frame-loss.svg"] = LineChart("Frame loss rate", XAxis{Label: "offered load (% of line rate)"}, "frames lost (%)", ss)
	}
	if len(r.Latency) > 0 {
		var ss []Series
		qs := []float64{0, 50, 90, 99, 99.9, 99.99, 100}
		// the distribution at the NDR (RFC 2544's latency) where a size and direction has it; the loads
		// below it are the curve's (latency-load.svg), and drawn here only for a size and direction
		// without a valid NDR row
		atNDR := func(size int32, dir string) bool {
			return slices.ContainsFunc(r.Latency, func(l v1alpha1.LatencyResult) bool {
				return l.FrameSize == size && l.Direction == dir && plan.RowLoad(l) == "100" && l.Aggregate.Valid
			})
		}
		for _, l := range r.Latency {
			a := l.Aggregate
			if !a.Valid || (plan.RowLoad(l) != "100" && atNDR(l.FrameSize, l.Direction)) {
				continue
			}
			s := Series{Name: fmt.Sprintf("%d B %s", l.FrameSize, l.Direction)}
			if load := plan.RowLoad(l); load != "100" {
				s.Name += " " + latencyLoad(l)
			}
			for i, v := range []int64{a.MinNs, a.P50Ns, a.P90Ns, a.P99Ns, a.P999Ns, a.P9999Ns, a.MaxNs} {
				if v == 0 {
					continue // a percentile its frames cannot support is not reported
				}
				// percentiles on a log-like axis: distance to 100 % in "nines"
				s.Points = append(s.Points, [2]float64{nines(qs[i]), float64(v) / 1000})
			}
			ss = append(ss, s)
		}
		if len(ss) > 0 {
			out["latency.svg"] = LineChart("Latency percentiles (x: 0=min, 1=p90, 2=p99, 3=p99.9, 4=p99.99, 5=max)", XAxis{Label: "nines"}, "µs", ss)
		}
		if curve := latencyAgainstLoad(r.Latency, r.Throughput); len(curve) > 0 {
			out["latency-load.svg"] = LineChart("Latency against load: p50 and p99 of every frame at each load (the sparse probe where it ran)",
				XAxis{Label: "load (% of the NDR)"}, "µs", curve)
		}
	}
	return out
}

// latencyAgainstLoad is a p50 and a p99 curve per frame size and direction over the loads latency was
// measured at, where it was measured at more than one; a load whose repetitions were all invalid is a
// gap in the curve, not a point, and so is a p99 too few frames could support. The sparse probe is drawn
// where it ran (its rate against the NDR, 1 % to 10 %), not at 0.
func latencyAgainstLoad(rows []v1alpha1.LatencyResult, ndrs []v1alpha1.ThroughputResult) []Series {
	type lane struct {
		size int32
		dir  string
	}
	var order []lane
	points := map[lane][]v1alpha1.LatencyResult{}
	for _, l := range rows {
		k := lane{l.FrameSize, l.Direction}
		if _, ok := points[k]; !ok {
			order = append(order, k)
		}
		points[k] = append(points[k], l)
	}
	var out []Series
	for _, k := range order {
		if len(points[k]) < 2 {
			continue
		}
		p50 := Series{Name: fmt.Sprintf("%d B %s p50", k.size, k.dir)}
		p99 := Series{Name: fmt.Sprintf("%d B %s p99", k.size, k.dir)}
		for _, l := range points[k] {
			if !l.Aggregate.Valid {
				continue
			}
			load := loadOfNDR(l, ndrs)
			p50.Points = append(p50.Points, [2]float64{load, float64(l.Aggregate.P50Ns) / 1000})
			if l.Aggregate.P99Ns > 0 {
				p99.Points = append(p99.Points, [2]float64{load, float64(l.Aggregate.P99Ns) / 1000})
			}
		}
		slices.SortFunc(p50.Points, func(a, b [2]float64) int { return cmp.Compare(a[0], b[0]) })
		slices.SortFunc(p99.Points, func(a, b [2]float64) int { return cmp.Compare(a[0], b[0]) })
		if len(p50.Points) > 0 {
			out = append(out, p50, p99)
		}
	}
	return out
}

// loadOfNDR is where a latency row's load lies in percent of its NDR: its percentOfNDR, and for the sparse
// probe its rate against the NDR of its frame size and direction (0 where that is not among the results).
func loadOfNDR(l v1alpha1.LatencyResult, ndrs []v1alpha1.ThroughputResult) float64 {
	load, _ := strconv.ParseFloat(plan.RowLoad(l), 64)
	if load > 0 {
		return load
	}
	for _, t := range ndrs {
		if t.FrameSize == l.FrameSize && t.Direction == l.Direction && t.NDR.FramesPerSecond > 0 {
			return 100 * float64(l.Rate.FramesPerSecond) / float64(t.NDR.FramesPerSecond)
		}
	}
	return 0
}

// latencyLoad names a latency row's load: "at the NDR", "at the sparse probe", "at 50% of the NDR".
func latencyLoad(l v1alpha1.LatencyResult) string { return plan.LoadPhrase(plan.RowLoad(l)) }

func nines(q float64) float64 {
	switch {
	case q >= 100:
		return 5
	case q <= 0:
		return -0.5
	}
	return -math.Log10(1 - q/100)
}

// maxTimelineColumns bounds a timeline chart's line: each column is drawn at its worst bin, with at most
// two points, so a day in 10 ms bins (8.64 million) is at most 2000 points and no bin that lost frames is
// averaged away.
const maxTimelineColumns = 1000

// timelineColumn is a run of bins a timeline chart draws as one step of its line.
type timelineColumn struct {
	first, end int64 // its bins
	// lowest is the least rate any of its bins received (frames/s)
	lowest float64
}

// timelineColumns splits a record's bins into at most maxTimelineColumns columns, each at the least rate
// any of its bins received: a bin not marked received all it was sent, the rate × the bin.
func timelineColumns(rec *results.Timeline, marked [][4]int64) []timelineColumn {
	n := min(rec.Bins, maxTimelineColumns)
	binS := float64(rec.BinMs) / 1000
	cols := make([]timelineColumn, n)
	markedIn := make([]int64, n)
	for c := range cols {
		cols[c] = timelineColumn{first: int64(c) * rec.Bins / n, end: int64(c+1) * rec.Bins / n, lowest: math.Inf(1)}
	}
	c := 0
	for _, b := range marked { // by index
		if b[0] < 0 || b[0] >= rec.Bins {
			continue
		}
		for cols[c].end <= b[0] {
			c++
		}
		markedIn[c]++
		cols[c].lowest = math.Min(cols[c].lowest, float64(b[2])/binS)
	}
	for c := range cols {
		if markedIn[c] < cols[c].end-cols[c].first {
			cols[c].lowest = math.Min(cols[c].lowest, rec.RateFPS)
		}
	}
	return cols
}

// markSpans turns spans of time (s) into marks on the x axis (px): at least minMarkPx wide, so that a
// single lost frame shows, inside the plot, and one where they are closer than a pixel, so that ten
// thousand outages make no more marks than the plot has pixels.
func markSpans(spans [][2]float64, x func(float64) float64, left, right float64) [][2]float64 {
	const minMarkPx = 3.0
	slices.SortFunc(spans, func(a, b [2]float64) int { return cmp.Compare(a[0], b[0]) })
	var out [][2]float64
	for _, s := range spans {
		a, b := x(s[0]), x(s[1])
		if b-a < minMarkPx {
			b = a + minMarkPx
		}
		if b > right {
			a, b = math.Max(left, math.Min(a, right-minMarkPx)), right
		}
		if n := len(out); n > 0 && a <= out[n-1][1]+1 {
			out[n-1][1] = math.Max(out[n-1][1], b)
			continue
		}
		out = append(out, [2]float64{a, b})
	}
	return out
}

// timeUnit is the unit a timeline's x axis counts in: hours for a soak, minutes for most of an hour,
// seconds below.
func timeUnit(seconds float64) (name string, size float64) {
	switch {
	case seconds >= 3*3600:
		return "hours", 3600
	case seconds >= 180:
		return "minutes", 60
	}
	return "seconds", 1
}

// TimelineChart draws a timeline trial's received rate over time from its record: a step line, each
// column at its worst bin; every outage of the DUT's marked in red where it was; every bin of the DUT's
// that lost frames, however few, marked under the line; the tester's bins shaded grey. The tester's
// outages lie in its bins, which the shading shows: they are not marked as the DUT's.
func TimelineChart(title string, rec *results.Timeline) string {
	const plotW, ml, mt, mb, legendW, lineH, h = 520.0, 80.0, 40.0, 50.0, 170.0, 14.0, 360.0
	w, right, bottom := ml+plotW+legendW, ml+plotW, h-mb
	binS := float64(rec.BinMs) / 1000
	total := float64(rec.Bins) * binS
	marked := slices.Clone(rec.Marked)
	slices.SortFunc(marked, func(a, b [4]int64) int { return int(a[0] - b[0]) })
	cols := timelineColumns(rec, marked)
	ymax := rec.RateFPS
	for _, c := range cols {
		ymax = math.Max(ymax, c.lowest)
	}
	if ymax <= 0 {
		ymax = 1
	}
	ymax *= 1.1
	x := func(s float64) float64 { return ml + s/total*plotW }
	y := func(v float64) float64 { return bottom - v/ymax*(bottom-mt) }
	var outages, losses, tester [][2]float64
	for _, o := range rec.Outages {
		if o.Tester {
			continue
		}
		start := float64(o.StartNs-rec.StartNs) / 1e9
		length := 0.0
		if rec.RateFPS > 0 {
			length = float64(o.Frames) / rec.RateFPS
		}
		outages = append(outages, [2]float64{math.Max(0, start), math.Min(total, start+length)})
	}
	for _, b := range marked {
		span := [2]float64{float64(b[0]) * binS, float64(b[0]+1) * binS}
		switch {
		case b[3] != 0:
			tester = append(tester, span)
		case b[2] < b[1]:
			losses = append(losses, span)
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`, w, h, w, h)
	fmt.Fprintf(&sb, `<text x="%.0f" y="20" font-size="14" text-anchor="middle">%s</text>`, ml+plotW/2, esc(title))
	for _, m := range markSpans(tester, x, ml, right) {
		fmt.Fprintf(&sb, `<rect class="tester" x="%.1f" y="%.0f" width="%.1f" height="%.0f" fill="#999" fill-opacity="0.35"/>`, m[0], mt, m[1]-m[0], bottom-mt)
	}
	for _, m := range markSpans(outages, x, ml, right) {
		fmt.Fprintf(&sb, `<rect class="outage" x="%.1f" y="%.0f" width="%.1f" height="%.0f" fill="#d62728" fill-opacity="0.45"/>`, m[0], mt, m[1]-m[0], bottom-mt)
	}
	fmt.Fprintf(&sb, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/>`, ml, bottom, right, bottom)
	fmt.Fprintf(&sb, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/>`, ml, mt, ml, bottom)
	for i := 0; i <= 4; i++ {
		v := ymax * float64(i) / 4
		fmt.Fprintf(&sb, `<text x="%.0f" y="%.0f" text-anchor="end">%s</text><line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#ddd"/>`,
			ml-5, y(v)+4, short(v), ml, y(v), right, y(v))
	}
	unit, size := timeUnit(total)
	for i := 0; i <= 4; i++ {
		s, anchor := total*float64(i)/4, "middle"
		if i == 0 {
			anchor = "start" // clear of the y axis's 0
		}
		fmt.Fprintf(&sb, `<text x="%.0f" y="%.0f" text-anchor="%s">%s</text>`, x(s), bottom+16, anchor, short(s/size))
	}
	since := "the start"
	if rec.StartNs > 0 {
		since = time.Unix(0, rec.StartNs).UTC().Format("2006-01-02 15:04:05 UTC")
	}
	fmt.Fprintf(&sb, `<text x="%.0f" y="%.0f" text-anchor="middle">%s since %s</text>`, ml+plotW/2, h-10, unit, since)
	fmt.Fprintf(&sb, `<text x="14" y="%.0f" text-anchor="middle" transform="rotate(-90 14 %.0f)">received frames/s</text>`, (mt+bottom)/2, (mt+bottom)/2)
	// a step per run of columns at one rate: a flat day is two points, the most 2 × maxTimelineColumns
	var pts []string
	for i := 0; i < len(cols); {
		j := i
		for j+1 < len(cols) && cols[j+1].lowest == cols[i].lowest {
			j++
		}
		v := y(cols[i].lowest)
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(float64(cols[i].first)*binS), v), fmt.Sprintf("%.1f,%.1f", x(float64(cols[j].end)*binS), v))
		i = j + 1
	}
	fmt.Fprintf(&sb, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`, palette[0], strings.Join(pts, " "))
	for _, m := range markSpans(losses, x, ml, right) {
		fmt.Fprintf(&sb, `<rect class="loss" x="%.1f" y="%.0f" width="%.1f" height="6" fill="#ff7f0e"/>`, m[0], bottom-8, m[1]-m[0])
	}
	for i, l := range []struct{ fill, name string }{
		{"", "received"}, // the line's own swatch
		{`fill="#d62728" fill-opacity="0.45"`, "outage"},
		{`fill="#ff7f0e"`, "bin that lost frames"},
		{`fill="#999" fill-opacity="0.35"`, "tester's bins"},
	} {
		ly := mt + lineH*float64(i+1)
		if l.fill == "" {
			fmt.Fprintf(&sb, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="2"/>`, right+8, ly-4, right+26, ly-4, palette[0])
		} else {
			fmt.Fprintf(&sb, `<rect x="%.0f" y="%.0f" width="18" height="10" %s/>`, right+8, ly-9, l.fill)
		}
		fmt.Fprintf(&sb, `<text x="%.0f" y="%.0f">%s</text>`, right+30, ly, esc(l.name))
	}
	sb.WriteString(`</svg>`)
	return sb.String()
}

// timelineView is a timeline row as the report shows it: its figures, its chart's file, and what the
// chart cannot show.
type timelineView struct {
	v1alpha1.TimelineResult
	StartUTC string
	Chart    string
	Caveats  []string
}

// timelineViews pairs each timeline row with its trial's record (the last, should a resumed run have
// measured one twice) and draws its chart.
func timelineViews(rows []v1alpha1.TimelineResult, trials []results.Trial) ([]timelineView, map[string]string) {
	charts := map[string]string{}
	var views []timelineView
	for i, row := range rows {
		v := timelineView{TimelineResult: row}
		if row.StartTime != nil {
			v.StartUTC = row.StartTime.UTC().Format("2006-01-02 15:04:05.000 UTC")
		}
		name := fmt.Sprintf("%d B %s", row.FrameSize, row.Direction)
		var rec *results.Timeline
		for _, t := range trials {
			if t.Test == v1alpha1.TestTimeline && t.FrameSize == int(row.FrameSize) && t.Direction == row.Direction && t.Timeline != nil {
				rec = t.Timeline
			}
		}
		switch {
		case rec == nil:
			v.Caveats = append(v.Caveats, fmt.Sprintf("No trial record of %s is in this report: it has no chart.", name))
		case rec.Bins <= 0 || rec.BinMs <= 0:
			v.Caveats = append(v.Caveats, fmt.Sprintf("The trial record of %s holds no bins: it has no chart.", name))
		default:
			v.Chart = fmt.Sprintf("timeline-%d-%dB-%s.svg", i+1, row.FrameSize, fileSafe(row.Direction))
			charts[v.Chart] = TimelineChart(name+": frames/s received", rec)
			if rec.Bins > maxTimelineColumns {
				per := float64(rec.Bins) / maxTimelineColumns * float64(rec.BinMs) / 1000
				v.Caveats = append(v.Caveats, fmt.Sprintf("Each of the chart's %d columns is drawn at the least rate any of its bins received (%s s of bins each), so a bin that lost frames is never averaged away.",
					maxTimelineColumns, strconv.FormatFloat(per, 'g', 4, 64)))
			}
			if rec.MissedBins > 0 {
				v.Caveats = append(v.Caveats, fmt.Sprintf("%s of the tester's bins were dropped by the engine before the runner read them: the record does not say when, so the chart cannot shade them and draws them at the full rate.",
					units.FormatCount(rec.MissedBins)))
			}
			if rec.OutagesLeftOut > 0 {
				v.Caveats = append(v.Caveats, fmt.Sprintf("%s outages beyond the record's first %s are counted in the table but not marked on the chart.",
					units.FormatCount(rec.OutagesLeftOut), units.FormatCount(results.MaxRecordedOutages)))
			}
		}
		views = append(views, v)
	}
	return views, charts
}

// fileSafe keeps a name's letters and digits for a file name: "west->east" is "west-east".
func fileSafe(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range s {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// utcClock renders an outage's start (RFC 3339, UTC) as a table reads it: to the nanosecond, no "T" or "Z".
func utcClock(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Format("2006-01-02 15:04:05.000000000")
}

// plural counts a thing: "1 outage", "5,001 frames".
func plural(n int64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return units.FormatCount(n) + " " + thing + "s"
}

var page = template.Must(template.New("r").Funcs(template.FuncMap{
	"bits": units.FormatBits, "count": units.FormatCount, "ns": units.FormatNs, "pct": units.FormatPercentileNs,
	"sentence": func(s string) string { return strings.TrimRight(s, ". ") },
	"utc":      utcClock, "plural": plural, "load": latencyLoad,
}).Parse(`<!doctype html><html><head><meta charset="utf-8">
<title>linerate: {{.Name}}</title><style>body{font-family:sans-serif;margin:2em;max-width:80em}
table{border-collapse:collapse;margin-bottom:1em}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}
th{background:#f4f4f4}td.l,th.l{text-align:left}.failed{border-left:4px solid #d62728;padding:.5em 1em;background:#fdf0f0}
.limited{color:#9a5b00}</style></head><body>
<h1>RFC 2544 results: {{.Name}}</h1>
{{with .Failure}}<p class="failed"><strong>This run did not finish: {{sentence .}}.</strong> The tables hold what it measured until then; what is missing was not measured.</p>{{end}}
{{with .Running}}<p class="failed"><strong>This run has not finished yet: {{sentence .}}.</strong> The tables hold what it measured so far; what is missing is not measured yet.</p>{{end}}
{{with .DUT}}{{if or .Name .Model .Software .Cipher}}<p>DUT: {{.Name}} {{.Model}} {{.Software}} {{.Cipher}}</p>{{end}}{{end}}
{{if .Limited}}<p class="limited">Rows marked tester-limited are where the tester, not the DUT, was the limit: the DUT is at least that good, and the notes say why.</p>{{end}}
{{range .Charts}}<p><img src="{{.}}" alt="{{.}}"></p>{{end}}
{{if .Res.PathMTU}}<h2>Path MTU</h2><table><tr><th>direction</th><th>largest frame that crossed whole</th><th>MTU</th><th>larger frames refused</th><th>probes</th></tr>
{{range .Res.PathMTU}}<tr><td class="l">{{.Direction}}</td>{{if .Undetermined}}<td colspan="3" class="l limited">undetermined: {{.Undetermined}}</td>{{else}}<td>{{if .AtLeast}}at least {{end}}{{.LargestFrame}} B</td><td>{{.MTU}}</td><td class="l">{{if .AtLeast}}none tried{{else if .Silent}}silently (no ICMP){{else if .Fragmented}}fragmented (DF clear){{else}}by ICMP{{if .ICMPMTU}} naming MTU {{.ICMPMTU}}{{end}}{{end}}</td>{{end}}<td>{{.Probes}}</td></tr>{{end}}</table>{{end}}
{{if .Res.Throughput}}<h2>Throughput (NDR)</h2><table><tr><th>frame</th><th>direction</th><th>frames/s</th><th>L2</th><th>L1</th><th>% of line</th><th>loss %</th><th>PDR frames/s</th><th>conditional throughput (RFC 9971) frames/s</th><th>trials</th><th></th></tr>
{{range .Res.Throughput}}<tr><td>{{.FrameSize}} B</td><td class="l">{{.Direction}}</td><td>{{count .NDR.FramesPerSecond}}</td><td>{{bits .NDR.L2BitsPerSecond}}</td><td>{{bits .NDR.L1BitsPerSecond}}</td><td>{{.NDR.PercentOfLineRate}}</td><td>{{.LossPercent}}</td><td>{{with .PDR}}{{count .FramesPerSecond}}{{else}}-{{end}}</td><td class="l">{{with .NDRConditional}}NDR {{count .FramesPerSecond}}{{end}}{{if and .NDRConditional .PDRConditional}} / {{end}}{{with .PDRConditional}}PDR {{count .FramesPerSecond}}{{end}}</td><td>{{.Trials}}</td><td class="l limited">{{if .TesterLimited}}tester-limited{{end}}{{if .Undetermined}} undetermined{{end}}{{if .CeilingMarginPercent}} {{.CeilingMarginPercent}}% below the tester's ceiling{{end}}{{if .BoundBy}} bound by {{.BoundBy}}{{end}}{{if .Refused}} refused: {{.Refused}}{{end}}{{with .Fragmented}} fragmented: {{count .Frames}} frames ({{.Percent}} %), {{count .Whole}} whole, {{count .Fragments}} fragments{{if .Unmatched}}, {{count .Unmatched}} without their first{{end}}{{end}}{{with .DUTCPU}} DUT CPU: {{.CoresBusy}} cores{{if .CoresAllowed}} of {{.CoresAllowed}}{{end}}{{if .Saturated}} (saturated){{end}}{{if .MicrosecondsPerThousandFrames}}, {{.MicrosecondsPerThousandFrames}} µs per 1000 frames, {{.MicrosecondsPerKilobyte}} µs per kB{{end}}{{end}}</td></tr>{{end}}</table>{{end}}
{{if .Res.Imix}}<h2>IMIX throughput (NDR)</h2><table><tr><th>direction</th><th>mean frame</th><th>frames/s</th><th>L2</th><th>L1</th><th>% of line</th><th>loss %</th><th>trials</th><th></th></tr>
{{range .Res.Imix}}<tr><td class="l">{{.Direction}}</td><td>{{.AverageFrameSize}} B</td><td>{{count .NDR.FramesPerSecond}}</td><td>{{bits .NDR.L2BitsPerSecond}}</td><td>{{bits .NDR.L1BitsPerSecond}}</td><td>{{.NDR.PercentOfLineRate}}</td><td>{{.LossPercent}}</td><td>{{.Trials}}</td><td class="l limited">{{if .TesterLimited}}tester-limited{{end}}{{if .Undetermined}} undetermined{{end}}{{if .CeilingMarginPercent}} {{.CeilingMarginPercent}}% below the tester's ceiling{{end}}{{if .Refused}} refused: {{.Refused}}{{end}}</td></tr>{{end}}</table>
{{range .Res.Imix}}{{if .Classes}}<table><tr><th colspan="4">IMIX {{.Direction}} at the NDR, per frame size</th></tr><tr><th>frame</th><th>sent</th><th>received</th><th>loss %</th></tr>
{{range .Classes}}<tr><td>{{.FrameSize}} B</td><td>{{count .TxFrames}}</td><td>{{count .RxFrames}}</td><td>{{.LossPercent}}</td></tr>{{end}}</table>{{end}}{{end}}{{end}}
{{if .Res.Latency}}<h2>Latency</h2><table><tr><th>frame</th><th>direction</th><th>load</th><th>frames/s</th><th>min</th><th>mean</th><th>p50</th><th>p99</th><th>p99.9</th><th>max</th><th>PDV</th><th>percentiles ±</th><th>clocks</th></tr>
{{range .Res.Latency}}<tr><td>{{.FrameSize}} B</td><td class="l">{{.Direction}}</td><td class="l">{{load .}}</td><td>{{count .Rate.FramesPerSecond}}</td>{{with .Aggregate}}{{if .Valid}}<td>{{ns .MinNs}}</td><td>{{ns .MeanNs}}</td><td>{{pct .P50Ns}}</td><td>{{pct .P99Ns}}</td><td>{{pct .P999Ns}}</td><td>{{ns .MaxNs}}</td><td>{{pct .PDVNs}}</td><td>{{if .ResolutionNs}}{{ns .ResolutionNs}}{{else}}exact{{end}}</td><td class="l">{{if .ClockOffsetBoundNs}}± {{ns .ClockOffsetBoundNs}} (two nodes){{else}}one{{end}}</td>{{else}}<td colspan="9" class="l limited">not measurable: {{.Reason}}</td>{{end}}{{end}}</tr>{{end}}</table>
<table><tr><th colspan="7">Latency over the repetitions (RFC 8219 §7.2): medians of each repetition's typical (p50) and worst-case (p99.9) latency, [1st, 99th percentile]</th></tr><tr><th>frame</th><th>direction</th><th>load</th><th>typical</th><th>worst case</th><th>PDV</th><th>repetitions valid / invalid</th></tr>
{{range .Res.Latency}}<tr><td>{{.FrameSize}} B</td><td class="l">{{.Direction}}</td><td class="l">{{load .}}</td>{{with .RFC8219}}<td>{{ns .TypicalNs}} [{{ns .TypicalP1Ns}}, {{ns .TypicalP99Ns}}]</td><td>{{pct .WorstCaseNs}} [{{pct .WorstCaseP1Ns}}, {{pct .WorstCaseP99Ns}}]</td><td>{{pct .PDVNs}}</td><td>{{.Repetitions}} / {{.Invalid}}</td>{{else}}<td colspan="4" class="l limited">no valid repetition</td>{{end}}</tr>{{end}}</table>{{end}}
{{if .Res.BackToBack}}<h2>Back-to-back (RFC 9004)</h2><table><tr><th>frame</th><th>direction</th><th>longest burst (frames, mean)</th><th>std. dev.</th><th>min</th><th>max</th><th>searches</th><th>implied buffer (s)</th><th>corrected buffer (s)</th><th></th></tr>
{{range .Res.BackToBack}}<tr><td>{{.FrameSize}} B</td><td class="l">{{.Direction}}</td>{{if .NotMeasurable}}<td colspan="7" class="l limited">not measurable: {{.NotMeasurable}}</td>{{else}}<td>{{count .Frames}}</td><td>{{count .Spread.StdDev}}</td><td>{{count .Spread.Min}}</td><td>{{count .Spread.Max}}</td><td>{{.Spread.Repetitions}}</td><td>{{.BurstSeconds}}</td><td>{{or .CorrectedBufferSeconds "-"}}</td>{{end}}<td class="l limited">{{if .TesterLimited}}tester-limited{{end}}{{if .Saturated}} saturated{{end}}</td></tr>{{end}}</table>{{end}}
{{if .Timeline}}<h2>Timeline</h2>
{{range .Timeline}}<h3>{{.FrameSize}} B {{.Direction}}{{if .TesterLimited}} <span class="limited">tester-limited</span>{{end}}</h3>
{{if .TesterLimited}}<p class="limited">The tester spoiled {{count .TesterBins}} of {{count .Bins}} bins, more than timeline.maxTesterSpoiled, or cut the trial short: these figures are no statement about the DUT (the notes say why).</p>{{end}}
<table><tr><th class="l">load</th><td class="l">{{count .Rate.FramesPerSecond}} frames/s, {{bits .Rate.L2BitsPerSecond}} L2 ({{.Rate.PercentOfLineRate}} % of line rate)</td></tr>
<tr><th class="l">held</th><td class="l">{{.Seconds}} s{{with .StartUTC}} from {{.}}{{end}}, in bins of {{.BinMilliseconds}} ms</td></tr>
<tr><th class="l">frames sent</th><td class="l">{{count .TxFrames}}</td></tr>
<tr><th class="l">frames lost</th><td class="l">{{count .LostFrames}} ({{.LossPercent}} % of the frames due in the DUT's bins)</td></tr>
<tr><th class="l">outages</th><td class="l">{{count .Outages}}{{if .Outages}}: {{plural .OutageFrames "frame"}}, the longest {{.LongestOutageMilliseconds}} ms, {{.TotalOutageMilliseconds}} ms together{{end}}</td></tr>
<tr><th class="l">scattered loss</th><td class="l">{{plural .ScatteredFrames "frame"}}, lost alone or in runs too short to be an outage</td></tr>
<tr><th class="l">severely errored seconds</th><td class="l">{{count .SeverelyErroredSeconds}}</td></tr>
{{if .AvailabilityPercent}}<tr><th class="l">availability (Y.1564)</th><td class="l">{{.AvailabilityPercent}} %, {{plural .UnavailableSeconds "second"}} unavailable{{if .UnavailableSecondsAtMost}} (up to {{count .UnavailableSecondsAtMost}} if the tester's seconds hid the DUT's, or the seconds still open at the end had gone on){{end}}</td></tr>{{end}}
<tr><th class="l">tester's bins</th><td class="l">{{count .TesterBins}} of {{count .Bins}}{{if .TesterOutages}}, in which {{plural .TesterOutages "outage"}} (the tester's, not the DUT's){{end}}</td></tr>
{{if .LateAfterSettle}}<tr><th class="l">late after settle</th><td class="l">{{plural .LateAfterSettle "frame"}}, lost in their bins</td></tr>{{end}}</table>
{{with .Longest}}<table><tr><th colspan="3">The longest outages, longest first</th></tr><tr><th>start (UTC)</th><th>frames</th><th>ms</th></tr>
{{range .}}<tr><td>{{utc .Start}}</td><td>{{count .Frames}}</td><td>{{.Milliseconds}}{{if .Open}} (still lost at the end){{end}}</td></tr>{{end}}</table>{{end}}
{{with .Chart}}<p><img src="{{.}}" alt="{{.}}"></p>{{end}}
{{range .Caveats}}<p>{{.}}</p>{{end}}{{end}}{{end}}
{{with .Res.Diagnosis}}<h2>Diagnosis</h2><p>{{.Bound}}: {{.Explanation}}</p>{{if and .DUTCPU (ne .DUTCPU .Explanation)}}<p>DUT CPU: {{.DUTCPU}}</p>{{end}}{{end}}
{{with .Res.Preflight}}<h2>Tester (preflight)</h2><table><tr><th>port</th><th>device</th><th>driver</th><th>MAC</th><th>link</th><th>speed</th><th>largest frame</th><th>NUMA node</th><th>queues rx/tx</th></tr>
{{range .Ports}}<tr><td class="l">{{.Name}}</td><td class="l">{{.Device}}</td><td class="l">{{.Driver}}</td><td class="l">{{.MAC}}</td><td>{{if .LinkUp}}up{{else}}down{{end}}</td><td>{{if .SpeedMbps}}{{.SpeedMbps}} Mbit/s{{else}}unknown{{end}}</td><td>{{.MaxFrame}} B</td><td>{{if lt .NUMANode 0}}none{{else}}{{.NUMANode}}{{end}}</td><td>{{.RxQueues}}/{{.TxQueues}}</td></tr>{{end}}</table>
<p>Engine on CPUs {{.CPUs}} (NUMA nodes {{.CPUNUMANodes}}), frame memory on NUMA node(s) {{.MemoryNUMANodes}}.</p>
{{if .Warnings}}<ul class="limited">{{range .Warnings}}<li>{{.}}</li>{{end}}</ul>{{end}}{{end}}
{{if .Res.Notes}}<h2>Notes</h2><ul>{{range .Res.Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
<p>Every trial: <a href="results.json">results.json</a>, <a href="trials.jsonl">trials.jsonl</a> ({{.Trials}} trials).</p>
</body></html>`))

// Run is what a report shows: the run's name, its results and trial records, and, for a run that did not
// finish, why.
type Run struct {
	Name    string
	Results *v1alpha1.Results
	Trials  []results.Trial
	// Failure says why the run ended before measuring everything ("" for a run that finished).
	Failure string
	// Running says where a run that goes on stands (a TrafficTest still running in a cluster): the report
	// is what it measured so far.
	Running string
}

// Write writes index.html, the SVG plots, results.json and trials.jsonl into dir.
func Write(dir string, run Run) error {
	name, res, trials := run.Name, run.Results, run.Trials
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	charts := Charts(res)
	var names []string
	for n := range charts {
		names = append(names, n)
	}
	sort.Strings(names)
	var timeline []timelineView
	if res != nil {
		var drawn map[string]string
		timeline, drawn = timelineViews(res.Timeline, trials)
		maps.Copy(charts, drawn)
	}
	for n, svg := range charts {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(svg), 0o644); err != nil {
			return err
		}
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "results.json"), b, 0o644); err != nil {
		return err
	}
	var tl strings.Builder
	for _, t := range trials {
		line, _ := json.Marshal(t)
		tl.Write(line)
		tl.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "trials.jsonl"), []byte(tl.String()), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "index.html"))
	if err != nil {
		return err
	}
	var dut *v1alpha1.DUTSpec
	if res != nil {
		dut = res.DUT
	}
	if res == nil {
		res = &v1alpha1.Results{}
	}
	if err := page.Execute(f, map[string]any{"Name": name, "DUT": dut, "Charts": names, "Res": res, "Trials": len(trials),
		"Failure": run.Failure, "Running": run.Running, "Limited": testerLimited(res), "Timeline": timeline}); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close() // a full disk shows here: the page would be cut short

}

// testerLimited says whether any row of the results is where the tester was the limit.
func testerLimited(r *v1alpha1.Results) bool {
	for _, t := range r.Throughput {
		if t.TesterLimited {
			return true
		}
	}
	for _, m := range r.Imix {
		if m.TesterLimited {
			return true
		}
	}
	for _, b := range r.BackToBack {
		if b.TesterLimited {
			return true
		}
	}
	return false
}
