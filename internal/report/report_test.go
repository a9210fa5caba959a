package report

import (
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
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
	if err := Write(dir, "t", res, []results.Trial{{Seq: 1}, {Seq: 2}}); err != nil {
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
