package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/report/reporttest"
	"linerate.dev/linerate/internal/results"
)

func wellFormed(t *testing.T, name, doc string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(doc))
	for {
		if _, err := d.Token(); err == io.EOF {
			return
		} else if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", name, err)
		}
	}
}

func TestReportPlotsEveryTable(t *testing.T) {
	res := &v1alpha1.Results{
		DUT: &v1alpha1.DUTSpec{Name: "gw <a&b>"},
		Throughput: []v1alpha1.ThroughputResult{
			{FrameSize: 64, Direction: "west->east", NDR: v1alpha1.Rate{FramesPerSecond: 1000, L2BitsPerSecond: 512000}},
			{FrameSize: 1518, Direction: "west->east", NDR: v1alpha1.Rate{FramesPerSecond: 800, L2BitsPerSecond: 9715200}},
		},
		FrameLoss: []v1alpha1.FrameLossResult{{FrameSize: 64, Direction: "west->east",
			Points: []v1alpha1.FrameLossPoint{{PercentOfLineRate: "10", LossPercent: "4.5"}, {PercentOfLineRate: "9", LossPercent: "0"}}}},
		Latency: []v1alpha1.LatencyResult{{FrameSize: 64, Direction: "west->east",
			Aggregate: v1alpha1.LatencySummary{Valid: true, MinNs: 4000, P50Ns: 6000, P90Ns: 7000, P99Ns: 9000, P999Ns: 20000, P9999Ns: 30000, MaxNs: 40000}}},
	}
	charts := Charts(res)
	for _, n := range []string{"throughput-fps.svg", "throughput-bps.svg", "frame-loss.svg", "latency.svg"} {
		svg, ok := charts[n]
		if !ok {
			t.Fatalf("no %s", n)
		}
		wellFormed(t, n, svg)
		if strings.Count(svg, "<circle") < 2 {
			t.Errorf("%s plots no points", n)
		}
	}
	dir := t.TempDir()
	if err := Write(dir, Run{Name: "t", Results: res, Trials: []results.Trial{{Seq: 1}, {Seq: 2}}}); err != nil {
		t.Fatal(err)
	}
	html, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	if !strings.Contains(string(html), "gw &lt;a&amp;b&gt;") || !strings.Contains(string(html), "latency.svg") {
		t.Errorf("index.html: %s", html)
	}
	tl, _ := os.ReadFile(filepath.Join(dir, "trials.jsonl"))
	if strings.Count(string(tl), "\n") != 2 {
		t.Errorf("trials.jsonl: %q", tl)
	}
}

// The x axis is labelled where the data are: one frame size gives one tick under its point, in the middle
// of the plot, never "512 512 512 513 513" with the point on the left edge; a handful of sizes gets a tick
// each; and a frame size is printed exactly, "1024", never "1.02k" (which names no frame size), also where
// there are too many sizes for a tick each.
func TestXAxisTicksAreTheDataPoints(t *testing.T) {
	ticks := regexp.MustCompile(`<text x="([0-9.]+)" y="(?:326|340)" text-anchor="middle">([^<]*)</text>`)
	point := regexp.MustCompile(`<circle cx="([0-9.]+)"`)
	for _, c := range []struct {
		name  string
		sizes []int32
		ticks []string
	}{
		{"one size", []int32{512}, []string{"512"}},
		{"seven sizes", []int32{64, 128, 256, 512, 1024, 1280, 1518}, []string{"64", "128", "256", "512", "1024", "1280", "1518"}},
		{"two sizes", []int32{64, 1518}, []string{"64", "1518"}},
		{"jumbo", []int32{1518, 9000}, []string{"1518", "9000"}},
		{"more sizes than ticks", []int32{64, 100, 128, 200, 256, 300, 512, 600, 1024, 1100, 1280, 1518}, []string{"64", "428", "791", "1155", "1518"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := &v1alpha1.Results{}
			for i, size := range c.sizes {
				res.Throughput = append(res.Throughput, v1alpha1.ThroughputResult{FrameSize: size, Direction: "west->east",
					NDR: v1alpha1.Rate{FramesPerSecond: int64(1000 * (i + 1)), L2BitsPerSecond: int64(8000 * (i + 1))}})
			}
			for _, chart := range []string{"throughput-fps.svg", "throughput-bps.svg"} {
				svg := Charts(res)[chart]
				wellFormed(t, c.name, svg)
				var got []string
				for _, m := range ticks.FindAllStringSubmatch(svg, -1) {
					got = append(got, m[2])
				}
				if strings.Join(got, " ") != strings.Join(c.ticks, " ") {
					t.Errorf("%s: x ticks %q, want %q", chart, got, c.ticks)
				}
				if len(c.sizes) == 1 {
					cx := point.FindStringSubmatch(svg)
					if cx == nil || cx[1] != "340.0" { // 80 + 520/2: the middle of the plot area, left of the legend
						t.Errorf("%s: the only point is at x=%v, want the middle of the plot (340.0)", chart, cx)
					}
				}
			}
		})
	}
}

// A spec without a DUT (or with an empty one) prints no empty "DUT:" line.
func TestNoEmptyDUTLine(t *testing.T) {
	for _, dut := range []*v1alpha1.DUTSpec{nil, {}, {Name: "gw-1"}} {
		dir := t.TempDir()
		if err := Write(dir, Run{Name: "t", Results: &v1alpha1.Results{DUT: dut}}); err != nil {
			t.Fatal(err)
		}
		html, _ := os.ReadFile(filepath.Join(dir, "index.html"))
		has := strings.Contains(string(html), "DUT:")
		if want := dut != nil && dut.Name != ""; has != want {
			t.Errorf("DUT %+v: a DUT line %v, want %v", dut, has, want)
		}
	}
}

// The report carries the tester's preflight record: each port's device, link and NUMA node, where the
// engine ran, and a placement warning where it crossed NUMA nodes.
func TestReportShowsThePreflight(t *testing.T) {
	warn := "port west (0000:3b:02.1) is on NUMA node 1, but the engine runs on CPU 2 (node 0)"
	res := &v1alpha1.Results{Preflight: &v1alpha1.Preflight{CPUs: []int32{2, 3}, CPUNUMANodes: []int32{0, 0}, MemoryNUMANodes: []int32{0},
		Warnings: []string{warn}, Ports: []v1alpha1.PortPreflight{
			{Name: "west", Device: "0000:3b:02.1", Driver: "net_ixgbe_vf", LinkUp: true, SpeedMbps: 10000, MaxFrame: 1518, NUMANode: 1, RxQueues: 1, TxQueues: 1},
			{Name: "east", Device: "net_af_packet1", Driver: "net_af_packet", MaxFrame: 1518, NUMANode: -1, RxQueues: 1, TxQueues: 1}}}}
	dir := t.TempDir()
	if err := Write(dir, Run{Name: "t", Results: res}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	html := string(b)
	for _, want := range []string{"<td class=\"l\">0000:3b:02.1</td>", "<td>10000 Mbit/s</td>", "<td>none</td>", "<td>down</td>", "Engine on CPUs [2 3]", warn} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// A latency that could not be measured says so and why, never a row of zeros; one across two nodes states
// the clocks' bound.
func TestReportSaysWhyLatencyWasNotMeasured(t *testing.T) {
	res := &v1alpha1.Results{Latency: []v1alpha1.LatencyResult{
		{FrameSize: 64, Direction: "west->east", Aggregate: v1alpha1.LatencySummary{Valid: false, Reason: "8424 frames arrived before their stamp"}},
		{FrameSize: 512, Direction: "west->east", Aggregate: v1alpha1.LatencySummary{Valid: true, MinNs: 9000, MeanNs: 12500, P50Ns: 12000, P99Ns: 15000, P999Ns: 18000, MaxNs: 20000, PDVNs: 9000, ClockOffsetBoundNs: 4000}},
	}}
	dir := t.TempDir()
	if err := Write(dir, Run{Name: "t", Results: res}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	html := string(b)
	for _, want := range []string{"not measurable: 8424 frames arrived before their stamp", "± 4.00 µs (two nodes)"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(html, "<td>0 ns</td>") {
		t.Error("an unmeasured latency shown as 0 ns")
	}
}

// dayStart is when the timelines of the tests start: 2024-05-01 22:00:00 UTC.
var dayStart = time.Date(2024, 5, 1, 22, 0, 0, 0, time.UTC).UnixNano()

// dayTimeline is a day at 100,000 frames/s in 10 ms bins (8.64 million bins, 1000 frames each): one frame
// lost at 5:33:20, a 50 ms outage at noon, and a second of the tester's bins at 16:40 with an outage of its
// own in them.
func dayTimeline() *results.Timeline {
	rec := &results.Timeline{StartNs: dayStart, BinMs: 10, RateFPS: 100_000, Bins: 8_640_000}
	rec.Marked = append(rec.Marked, [4]int64{2_000_000, 1000, 999, 0})
	for i := int64(4_320_000); i < 4_320_005; i++ {
		rec.Marked = append(rec.Marked, [4]int64{i, 1000, 0, 0})
	}
	for i := int64(6_000_000); i < 6_000_100; i++ {
		rec.Marked = append(rec.Marked, [4]int64{i, 1000, 400, 1})
	}
	rec.Outages = []results.Outage{
		{First: 4_320_000_000, Frames: 5000, StartNs: dayStart + 12*int64(time.Hour)},
		{First: 6_000_000_000, Frames: 600, StartNs: dayStart + 60_000*int64(time.Second), Tester: true},
	}
	return rec
}

// scatteredDay loses a frame in every 1000th bin and has an outage every 8.64 s of a day, 10,000 of them:
// every column of the chart holds a loss, and outages far more than its pixels.
func scatteredDay() *results.Timeline {
	rec := &results.Timeline{StartNs: dayStart, BinMs: 10, RateFPS: 100_000, Bins: 8_640_000}
	for i := int64(0); i < rec.Bins; i += 1000 {
		rec.Marked = append(rec.Marked, [4]int64{i, 1000, 1000 - 1 - (i/1000)%13, 0})
	}
	for n := int64(0); n < 10_000; n++ {
		bin := n*864 + 500
		rec.Marked = append(rec.Marked, [4]int64{bin, 1000, 998, 0})
		rec.Outages = append(rec.Outages, results.Outage{First: bin * 1000, Frames: 2, StartNs: dayStart + bin*10*int64(time.Millisecond)})
	}
	slices.SortFunc(rec.Marked, func(a, b [4]int64) int { return int(a[0] - b[0]) })
	return rec
}

// A timeline chart shows a day in at most 2000 points and hides nothing: a column shows its worst bin (a
// bin that received nothing draws the line down to 0), every bin that lost a frame is marked under the
// line however little it lost, every outage of the DUT's is marked where it was, and the tester's bins are
// shaded, their outage not marked as the DUT's.
func TestTimelineChartShowsEveryLossOfADay(t *testing.T) {
	mark := func(class string) *regexp.Regexp {
		return regexp.MustCompile(`<rect class="` + class + `" x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)"`)
	}
	points := regexp.MustCompile(`<polyline[^>]* points="([^"]*)"`)
	const left, width, axisY = 80.0, 520.0, 310.0
	at := func(rec *results.Timeline, seconds float64) float64 {
		return left + seconds/(float64(rec.Bins*rec.BinMs)/1000)*width
	}
	for _, c := range []struct {
		name                    string
		rec                     *results.Timeline
		outages, losses, tester []float64 // where each mark must be, in seconds since the start
		maxOutageMarks          int
		lineTo0                 bool
	}{
		{name: "a day with an outage", rec: dayTimeline(),
			outages: []float64{43200}, losses: []float64{20000, 43200}, tester: []float64{60000.5}, maxOutageMarks: 1, lineTo0: true},
		{name: "clean hour", rec: &results.Timeline{StartNs: dayStart, BinMs: 1000, RateFPS: 2000, Bins: 3600}},
		{name: "twenty seconds in 100 ms bins", rec: &results.Timeline{StartNs: dayStart, BinMs: 100, RateFPS: 2000, Bins: 200,
			Marked:  [][4]int64{{50, 200, 0, 0}, {51, 200, 150, 0}, {120, 200, 200, 2}},
			Outages: []results.Outage{{First: 10_000, Frames: 250, StartNs: dayStart + 5*int64(time.Second)}}},
			outages: []float64{5}, losses: []float64{5.1}, tester: []float64{12.05}, maxOutageMarks: 1, lineTo0: true},
		{name: "a loss in every column and 10,000 outages", rec: scatteredDay(), maxOutageMarks: int(width)},
	} {
		t.Run(c.name, func(t *testing.T) {
			svg := TimelineChart("128 B west->east", c.rec)
			wellFormed(t, c.name, svg)
			if len(svg) > 400_000 {
				t.Errorf("the chart is %d bytes", len(svg))
			}
			line := points.FindStringSubmatch(svg)
			if line == nil {
				t.Fatal("no line of the received rate")
			}
			pts := strings.Fields(line[1])
			if len(pts) > 2000 || len(pts) < 2 {
				t.Errorf("the line has %d points, want 2 to 2000", len(pts))
			}
			if reaches0 := slices.ContainsFunc(pts, func(p string) bool { return strings.HasSuffix(p, ","+fmt.Sprintf("%.1f", axisY)) }); reaches0 != c.lineTo0 {
				t.Errorf("the line reaches 0 frames/s: %v, want %v", reaches0, c.lineTo0)
			}
			marks := map[string][][2]float64{}
			for _, class := range []string{"outage", "loss", "tester"} {
				for _, m := range mark(class).FindAllStringSubmatch(svg, -1) {
					x, w := num(m[1]), num(m[2])
					marks[class] = append(marks[class], [2]float64{x, x + w})
				}
			}
			covered := func(class string, px float64) bool {
				return slices.ContainsFunc(marks[class], func(s [2]float64) bool { return s[0]-0.5 <= px && px <= s[1]+0.5 })
			}
			for class, want := range map[string][]float64{"outage": c.outages, "loss": c.losses, "tester": c.tester} {
				if c.name == "a loss in every column and 10,000 outages" {
					break
				}
				if len(marks[class]) != len(want) {
					t.Errorf("%d %s marks %v, want %d", len(marks[class]), class, marks[class], len(want))
				}
				for _, s := range want {
					if !covered(class, at(c.rec, s)) {
						t.Errorf("no %s mark at %v s (x %.1f): %v", class, s, at(c.rec, s), marks[class])
					}
				}
			}
			if len(marks["outage"]) > c.maxOutageMarks {
				t.Errorf("%d outage marks, want at most %d (one per pixel)", len(marks["outage"]), c.maxOutageMarks)
			}
			for _, o := range c.rec.Outages {
				if px := at(c.rec, float64(o.StartNs-c.rec.StartNs)/1e9); !o.Tester && !covered("outage", px) {
					t.Errorf("the outage at %v is not marked (x %.1f)", time.Duration(o.StartNs-c.rec.StartNs), px)
				}
			}
			for _, b := range c.rec.Marked {
				if px := at(c.rec, float64(b[0]*c.rec.BinMs)/1000); b[3] == 0 && b[2] < b[1] && !covered("loss", px) {
					t.Errorf("bin %d lost %d frames and is not marked (x %.1f)", b[0], b[1]-b[2], px)
				}
			}
		})
	}
}

// timelineRun is a run with a timeline in each direction: a day west->east, whose record is among the
// trials; east->west spoiled by the tester; and a third direction whose record is not there.
func timelineRun() Run {
	row := v1alpha1.TimelineResult{FrameSize: 128, Direction: "west->east", Rate: rate(100_000, 128), Seconds: "86400",
		BinMilliseconds: 10, TxFrames: 8_640_000_000, LostFrames: 5001, LossPercent: "0.0000579", Outages: 1, OutageFrames: 5000,
		LongestOutageMilliseconds: "50", TotalOutageMilliseconds: "50", ScatteredFrames: 1, SeverelyErroredSeconds: 0,
		Bins: 8_640_000, TesterBins: 100, TesterOutages: 1,
		Longest: []v1alpha1.OutageRecord{{Start: "2024-05-02T10:00:00.000000123Z", Frames: 5000, Milliseconds: "50", FirstFrame: 4_320_000_000}}}
	start := metav1.NewTime(time.Unix(0, dayStart).UTC())
	row.StartTime = &start
	limited := v1alpha1.TimelineResult{FrameSize: 128, Direction: "east->west", Rate: rate(100_000, 128), Seconds: "60",
		BinMilliseconds: 100, TxFrames: 6_000_000, LossPercent: "0", Bins: 600, TesterBins: 90, TesterLimited: true}
	unrecorded := v1alpha1.TimelineResult{FrameSize: 128, Direction: "north->south", Rate: rate(100_000, 128), Seconds: "60",
		BinMilliseconds: 100, TxFrames: 6_000_000, LossPercent: "0", Bins: 600}
	spoiled := &results.Timeline{StartNs: dayStart, BinMs: 100, RateFPS: 100_000, Bins: 600, MissedBins: 30}
	for i := int64(0); i < 60; i++ {
		spoiled.Marked = append(spoiled.Marked, [4]int64{200 + i, 10_000, 10_000, 1})
	}
	return Run{Name: "soak", Results: &v1alpha1.Results{LineRateBitsPerSecond: 10e9, Timeline: []v1alpha1.TimelineResult{row, limited, unrecorded}},
		Trials: []results.Trial{
			{Seq: 1, Test: v1alpha1.TestThroughput, FrameSize: 128, Direction: "west->east"},
			{Seq: 2, Test: v1alpha1.TestTimeline, FrameSize: 128, Direction: "west->east", Timeline: dayTimeline()},
			{Seq: 2, Test: v1alpha1.TestTimeline, FrameSize: 128, Direction: "east->west", Timeline: spoiled},
		}}
}

// The report has a Timeline section per row: its figures, its longest outages with their start in UTC, and
// its chart drawn from the row's trial record; a row the tester spoiled says it is no statement about the
// DUT, and a row without a record says why it has no chart.
func TestReportShowsEachTimeline(t *testing.T) {
	dir := t.TempDir()
	if err := Write(dir, timelineRun()); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	page := string(b)
	for _, want := range []string{"<h2>Timeline</h2>", "<h3>128 B west-&gt;east</h3>", "100,000 frames/s",
		"86400 s from 2024-05-01 22:00:00.000 UTC, in bins of 10 ms", "<td class=\"l\">5,001 (0.0000579 % of the frames due in the DUT's bins)</td>",
		"<td class=\"l\">1: 5,000 frames, the longest 50 ms, 50 ms together</td>",
		"<td>2024-05-02 10:00:00.000000123</td><td>5,000</td><td>50</td>", "100 of 8,640,000, in which 1 outage (the tester's, not the DUT's)",
		"tester-limited", "no statement about the DUT",
		"30 of the tester&#39;s bins were dropped by the engine before the runner read them",
		"No trial record of 128 B north-&gt;south is in this report: it has no chart."} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	charts := regexp.MustCompile(`<img src="(timeline-[^"]+\.svg)"`).FindAllStringSubmatch(page, -1)
	if len(charts) != 2 {
		t.Fatalf("%d timeline charts on the page, want 2 (the rows with a record)", len(charts))
	}
	for _, c := range charts {
		svg, err := os.ReadFile(filepath.Join(dir, c[1]))
		if err != nil {
			t.Fatal(err)
		}
		wellFormed(t, c[1], string(svg))
	}
}

// The timeline section read in a real browser: no label cut off or drawn over another, the figures said.
func TestTimelineReadsWellInABrowser(t *testing.T) {
	chromium := reporttest.Browser(t)
	dir := t.TempDir()
	if err := Write(dir, timelineRun()); err != nil {
		t.Fatal(err)
	}
	problems, text := reporttest.InBrowser(t, chromium, dir)
	for _, p := range problems {
		t.Error(p)
	}
	for _, want := range []string{"Timeline", "128 B west->east", "2024-05-02 10:00:00.000000123", "tester-limited",
		"hours since 2024-05-01 22:00:00 UTC", "received"} {
		if !strings.Contains(text, want) {
			t.Errorf("the page does not say %q", want)
		}
	}
}

// Latency at several loads is a curve per frame size and direction: p50 and p99 against the load, in load
// order whatever the rows' order; the sparse probe where it ran against the NDR; a load none of whose
// repetitions was valid is a gap, not a zero, and so is a p99 its frames could not support; the tables
// name each row's load.
func TestLatencyAgainstLoadIsACurve(t *testing.T) {
	row := func(load v1alpha1.Percent, fps, p50, p99 int64) v1alpha1.LatencyResult {
		return v1alpha1.LatencyResult{FrameSize: 64, Direction: "west->east", PercentOfNDR: load, Rate: v1alpha1.Rate{FramesPerSecond: fps},
			Aggregate: v1alpha1.LatencySummary{Valid: p50 > 0, P50Ns: p50, P99Ns: p99, MinNs: 1000, MaxNs: 2 * p50}}
	}
	res := &v1alpha1.Results{Throughput: []v1alpha1.ThroughputResult{{FrameSize: 64, Direction: "west->east", NDR: v1alpha1.Rate{FramesPerSecond: 2000}}},
		Latency: []v1alpha1.LatencyResult{row("50", 1000, 8000, 9000), row("0", 50, 5000, 0), row("90", 1800, 0, 0), row("100", 2000, 300000, 700000)}}
	curve := latencyAgainstLoad(res.Latency, res.Throughput)
	if len(curve) != 2 || curve[0].Name != "64 B west->east p50" {
		t.Fatalf("curves %+v", curve)
	}
	want := [][2]float64{{2.5, 5}, {50, 8}, {100, 300}}
	if !slices.Equal(curve[0].Points, want) || !slices.Equal(curve[1].Points, [][2]float64{{50, 9}, {100, 700}}) {
		t.Errorf("p50 %v (want %v), p99 %v", curve[0].Points, want, curve[1].Points)
	}
	charts := Charts(res)
	if svg, ok := charts["latency-load.svg"]; !ok || !strings.Contains(svg, "load (% of the NDR)") {
		t.Errorf("no latency-against-load chart: %v", slices.Sorted(maps.Keys(charts)))
	}
	wellFormed(t, "latency-load.svg", charts["latency-load.svg"])
	// one load only (RFC 2544's): no curve
	if _, ok := Charts(&v1alpha1.Results{Latency: res.Latency[3:]})["latency-load.svg"]; ok {
		t.Errorf("a curve of one point")
	}
	html := writtenPage(t, Run{Name: "curve", Results: res})
	for _, s := range []string{"at the sparse probe", "at 50% of the NDR", "at the NDR", "latency-load.svg"} {
		if !strings.Contains(html, s) {
			t.Errorf("the report lacks %q", s)
		}
	}
}

// The throughput table gives the PDR and RFC 9971's conditional throughputs where the row has them.
func TestTheReportGivesTheConditionalThroughput(t *testing.T) {
	res := &v1alpha1.Results{Throughput: []v1alpha1.ThroughputResult{{FrameSize: 64, Direction: "west->east",
		NDR: v1alpha1.Rate{FramesPerSecond: 1000}, PDR: &v1alpha1.Rate{FramesPerSecond: 1020}, PDRConditional: &v1alpha1.Rate{FramesPerSecond: 1010}}}}
	html := writtenPage(t, Run{Name: "pdr", Results: res})
	for _, s := range []string{"conditional throughput (RFC 9971)", "<td>1,020</td>", "PDR 1,010"} {
		if !strings.Contains(html, s) {
			t.Errorf("the report lacks %q", s)
		}
	}
}

// A row whose frames the DUT fragmented says how many, whole or not, in how many fragments.
func TestTheReportSaysWhatArrivedInFragments(t *testing.T) {
	res := &v1alpha1.Results{Throughput: []v1alpha1.ThroughputResult{{FrameSize: 1518, Direction: "west->east",
		NDR:        v1alpha1.Rate{FramesPerSecond: 1000},
		Fragmented: &v1alpha1.FragmentCounts{Frames: 10000, Percent: "100", Whole: 9990, Fragments: 19990, Unmatched: 3}}}}
	html := writtenPage(t, Run{Name: "frag", Results: res})
	want := "fragmented: 10,000 frames (100 %), 9,990 whole, 19,990 fragments, 3 without their first"
	if !strings.Contains(html, want) {
		t.Errorf("the report lacks %q", want)
	}
}

// A row read with the DUT's CPU (spec.dut.cpu) says what it paid, and the diagnosis whether it was the limit.
func TestTheReportSaysWhatTheDUTsCPUPaid(t *testing.T) {
	res := &v1alpha1.Results{Throughput: []v1alpha1.ThroughputResult{{FrameSize: 128, Direction: "west->east",
		NDR:    v1alpha1.Rate{FramesPerSecond: 5243},
		DUTCPU: &v1alpha1.DUTCPUCost{CoresBusy: "1.50", CoresAllowed: "4", MicrosecondsPerThousandFrames: "286", MicrosecondsPerKilobyte: "2.24"}}},
		Diagnosis: &v1alpha1.Diagnosis{Direction: "west->east", Bound: "FramesPerSecond", Explanation: "a fit", DUTCPU: "the DUT's CPU was not saturated at any NDR"}}
	html := writtenPage(t, Run{Name: "cpu", Results: res})
	for _, want := range []string{"DUT CPU: 1.50 cores of 4, 286 µs per 1000 frames, 2.24 µs per kB", "<p>DUT CPU: the DUT&#39;s CPU was not saturated at any NDR</p>"} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// writtenPage is the index.html Write makes of run.
func writtenPage(t *testing.T, run Run) string {
	t.Helper()
	dir := t.TempDir()
	if err := Write(dir, run); err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	return string(html)
}

// The latency chart draws each size and direction at its NDR where it has a valid row there, and at its
// other loads only where it has none: one test's 64 B measured at the NDR does not hide 1518 B measured
// at 50 % only.
func TestTheLatencyChartDrawsEachSizeAtItsNDRElseItsLoads(t *testing.T) {
	row := func(size int32, load v1alpha1.Percent, p50 int64) v1alpha1.LatencyResult {
		return v1alpha1.LatencyResult{FrameSize: size, Direction: "west->east", PercentOfNDR: load,
			Aggregate: v1alpha1.LatencySummary{Valid: true, MinNs: 1000, P50Ns: p50, MaxNs: 2 * p50}}
	}
	res := &v1alpha1.Results{Latency: []v1alpha1.LatencyResult{row(64, "50", 4000), row(64, "100", 9000), row(1518, "50", 7000)}}
	svg := Charts(res)["latency.svg"]
	for _, want := range []string{"64 B west-&gt;east", "1518 B west-&gt;east at 50% of the NDR"} {
		if !strings.Contains(svg, want) {
			t.Errorf("latency.svg has no series %q", want)
		}
	}
	if strings.Contains(svg, "64 B west-&gt;east at 50% of the NDR") {
		t.Errorf("latency.svg draws 64 B at 50 %% beside its NDR row")
	}
}
