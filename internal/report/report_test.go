package report

import (
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"linerate.dev/linerate/api/v1alpha1"
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
