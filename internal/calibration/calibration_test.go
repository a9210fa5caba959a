package calibration

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
)

func cal() *Calibration {
	return &Calibration{Kind: Kind, MeasuredAt: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC), Shape: shape(),
		Ports: []Port{{Name: "west", Driver: "net_ixgbe_vf", SpeedMbps: 10000}, {Name: "east", Driver: "net_ixgbe_vf", SpeedMbps: 10000}},
		Ceilings: []Ceiling{
			{FrameSize: 64, Direction: "west->east", FramesPerSecond: 10_000_000, PercentOfLineRate: "67.2"},
			{FrameSize: 64, Direction: "east->west", FramesPerSecond: 9_000_000, PercentOfLineRate: "60.5"},
			{FrameSize: 512, Direction: "west->east", FramesPerSecond: 2_000_000, PercentOfLineRate: "85.1", SpreadPercent: 8},
			{FrameSize: 1518, Direction: "west->east", FramesPerSecond: 812_743, PercentOfLineRate: "100", AtLineRate: true},
			{FrameSize: 9000, Direction: "west->east", FramesPerSecond: 130_000, PercentOfLineRate: "96", AtLeast: "the search reached its cap"},
			{FrameSize: 4000, Direction: "west->east", Unknown: "no rate passed through the joined ports"},
			{FrameSize: 0, Direction: "west->east", FramesPerSecond: 3_000_000, PercentOfLineRate: "90"},
		},
		Floors: []Floor{{FrameSize: 64, Direction: "west->east", MinNs: 4100, P50Ns: 5200, P99Ns: 9000, MaxNs: 31000}}}
}

func TestApply(t *testing.T) {
	for _, tc := range []struct {
		name         string
		size         int32
		dir          string
		fps          int64
		limited      bool // already, by the tester itself
		wantLimited  bool
		wantMargin   string
		wantNotePart string
	}{
		{"far below the ceiling", 64, "west->east", 2_000_000, false, false, "80.0", ""},
		{"within the margin", 64, "west->east", 9_800_000, false, true, "2.0", "within 3.0% of the tester's calibrated ceiling of 10000000"},
		{"above the ceiling", 64, "west->east", 10_100_000, false, true, "-1.0", "calibrated ceiling"},
		{"just outside the margin", 64, "west->east", 9_690_000, false, false, "3.1", ""},
		{"within the tester's own spread", 512, "west->east", 1_850_000, false, true, "7.5", "within 8.0% of the tester's calibrated ceiling of 2000000"},
		{"already the tester's", 64, "west->east", 9_900_000, true, true, "1.0", ""},
		{"another direction's ceiling is no measure of this one", 512, "east->west", 1_990_000, false, false, "", "no ceiling at this size and direction"},
		{"far above the ceiling: the calibration is stale", 64, "west->east", 11_000_000, false, true, "-10.0", "no longer describes this tester"},
		{"a tester at line rate has no ceiling", 1518, "west->east", 812_743, false, false, "", ""},
		{"at an undetermined ceiling, a lower bound of it", 9000, "west->east", 129_000, false, true, "0.8", "ceiling of at least 130000"},
		{"above an undetermined ceiling", 9000, "west->east", 200_000, false, true, "-53.8", "ceiling of at least 130000"},
		{"below an undetermined ceiling", 9000, "west->east", 100_000, false, false, "23.1", ""},
		{"an unknown ceiling limits nothing", 4000, "west->east", 100_000, false, false, "", "no ceiling at this size"},
		{"an uncalibrated size", 128, "west->east", 100_000, false, false, "", "no ceiling at this size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &v1alpha1.Results{Throughput: []v1alpha1.ThroughputResult{{FrameSize: tc.size, Direction: tc.dir,
				NDR: v1alpha1.Rate{FramesPerSecond: tc.fps}, TesterLimited: tc.limited}}}
			notes := Apply(res, cal(), DefaultMarginPercent, func(float64) float64 { return 0 })
			row := res.Throughput[0]
			if row.TesterLimited != tc.wantLimited || row.CeilingMarginPercent != tc.wantMargin {
				t.Errorf("limited %v margin %q, want %v %q", row.TesterLimited, row.CeilingMarginPercent, tc.wantLimited, tc.wantMargin)
			}
			joined := strings.Join(notes, "\n")
			if (tc.wantNotePart == "") != (len(notes) == 0) || !strings.Contains(joined, tc.wantNotePart) {
				t.Errorf("notes %q, want one containing %q", notes, tc.wantNotePart)
			}
		})
	}
}

func TestApplyToImixAndLatency(t *testing.T) {
	res := &v1alpha1.Results{
		Imix:    []v1alpha1.ImixResult{{Direction: "west->east", NDR: v1alpha1.Rate{FramesPerSecond: 2_950_000}}},
		Latency: []v1alpha1.LatencyResult{{FrameSize: 64, Direction: "west->east", Aggregate: v1alpha1.LatencySummary{Valid: true, MinNs: 30000}}},
	}
	notes := Apply(res, cal(), DefaultMarginPercent, func(float64) float64 { return 0 })
	if !res.Imix[0].TesterLimited || res.Imix[0].CeilingMarginPercent != "1.7" {
		t.Errorf("IMIX row %+v", res.Imix[0])
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "IMIX west->east") || !strings.Contains(notes[1], "min 4100 ns, median 5200 ns, p99 9000 ns, max 31000 ns") {
		t.Errorf("notes %q", notes)
	}
	if res.Latency[0].TesterMaxLatencyNs != 31000 {
		t.Errorf("latency row %+v carries no floor", res.Latency[0])
	}
	// applied again (each step applies it), it says the same and marks nothing more
	again := Apply(res, cal(), DefaultMarginPercent, func(float64) float64 { return 0 })
	if len(again) != 1 || again[0] != notes[1] {
		t.Errorf("applied twice: %q", again)
	}
}

func shape() Shape {
	return Shape{Direction: "Bidirectional", LineRateBps: 10e9, IPVersion: 4, Flows: 1, Payload: "zeros", LossTolerance: "0",
		SearchTrial: "1s", ValidationTrial: "1m0s", Vary: []string{"dstIP", "srcPort"}}
}

func TestMismatch(t *testing.T) {
	pf := &v1alpha1.Preflight{CPUs: []int32{2, 3}, Ports: []v1alpha1.PortPreflight{{Name: "west", Driver: "net_ixgbe_vf", SpeedMbps: 25000}, {Name: "east", Driver: "net_af_packet"}}}
	c := cal()
	c.CPUs = []int32{4, 5, 6}
	run := shape()
	run.Direction, run.LineRateBps, run.Flows, run.Imix = "Unidirectional", 25e9, 1024, "ipsec (mean 417.38 B)"
	run.Vary = []string{"dstIP", "srcPort"}
	got := c.Mismatch(run, pf)
	for _, want := range []string{"direction Unidirectional, calibrated with Bidirectional", "line rate (bit/s) 25000000000, calibrated with 10000000000",
		"flows 1024, calibrated with 1", "port east is driven by net_af_packet, calibrated with net_ixgbe_vf", "the engine runs on 2 cores, calibrated on 3",
		"port west links at 25000 Mbit/s, calibrated at 10000 Mbit/s"} {
		if !strings.Contains(got, want) {
			t.Errorf("mismatch %q lacks %q", got, want)
		}
	}
	// an IMIX is compared only when both have one: a calibration of sizes serves a run of sizes too
	if strings.Contains(got, "IMIX") {
		t.Errorf("IMIX compared with none: %q", got)
	}
	c.Shape.Imix = "imix-7-4-1 (mean 353.83 B)"
	if got := c.Mismatch(run, pf); !strings.Contains(got, "IMIX ipsec (mean 417.38 B), calibrated with imix-7-4-1") {
		t.Errorf("another IMIX: %q", got)
	}
	pf.Ports[1].Driver, pf.CPUs, pf.Ports[0].SpeedMbps = "net_ixgbe_vf", []int32{1, 2, 3}, 10000
	c.Shape.Imix = ""
	same := shape()
	same.Vary = []string{"srcPort", "dstIP"} // the order the fields are named in does not matter
	if got := c.Mismatch(same, pf); got != "" {
		t.Errorf("the calibrated tester: %q", got)
	}
	// a tolerance stored as Go's %g wrote it ("1e-05") is the one the run now writes out
	c.Shape.LossTolerance, same.LossTolerance = "1e-05", "0.00001"
	if got := c.Mismatch(same, pf); got != "" {
		t.Errorf("one tolerance written two ways: %q", got)
	}
	same.LossTolerance = "0.00002"
	if got := c.Mismatch(same, pf); !strings.Contains(got, "loss tolerance (%) 0.00002, calibrated with 1e-05") {
		t.Errorf("another tolerance: %q", got)
	}
}

func TestReadRefusesWhatIsNotACalibration(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "calibration.json")
	if err := cal().Write(good); err != nil {
		t.Fatal(err)
	}
	if c, err := Read(good); err != nil || len(c.Ceilings) != 7 || !c.MeasuredAt.Equal(cal().MeasuredAt) {
		t.Fatalf("read back %+v, %v", c, err)
	}
	results := filepath.Join(dir, "results.json")
	if err := os.WriteFile(results, []byte(`{"results":{"throughput":[]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(results); err == nil || !strings.Contains(err.Error(), "not a calibration") {
		t.Errorf("a results file was read as a calibration: %v", err)
	}
	shapeless := cal()
	shapeless.Shape = Shape{}
	if err := shapeless.Write(good); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(good); err == nil || !strings.Contains(err.Error(), "names no traffic shape") {
		t.Errorf("a calibration without its shape was read: %v", err)
	}
	partial := cal()
	partial.Incomplete = "interrupted by SIGINT after 12 trials"
	if err := partial.Write(good); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(good); !errors.Is(err, ErrIncomplete) || !strings.Contains(err.Error(), "SIGINT") {
		t.Errorf("an incomplete calibration was read: %v", err)
	}
}

func TestFromResults(t *testing.T) {
	res := &v1alpha1.Results{
		Preflight: &v1alpha1.Preflight{CPUs: []int32{2, 3}, Ports: []v1alpha1.PortPreflight{{Name: "west", Driver: "net_af_packet", SpeedMbps: 10000}}},
		Throughput: []v1alpha1.ThroughputResult{
			{FrameSize: 64, Direction: "west->east", NDR: v1alpha1.Rate{FramesPerSecond: 200_000, PercentOfLineRate: "13.44"},
				Spread: &v1alpha1.Spread{Repetitions: 3, Min: 200_000, Max: 230_000}},
			{FrameSize: 1518, Direction: "west->east", NDR: v1alpha1.Rate{FramesPerSecond: 812_743, PercentOfLineRate: "100"}},
			{FrameSize: 512, Direction: "west->east", NDR: v1alpha1.Rate{FramesPerSecond: 900_000, PercentOfLineRate: "38.3"}, Undetermined: "cap"},
			{FrameSize: 9000, Direction: "west->east"},
		},
		Latency: []v1alpha1.LatencyResult{
			{FrameSize: 64, Direction: "west->east", Aggregate: v1alpha1.LatencySummary{Valid: true, MinNs: 15000, P50Ns: 20000, P99Ns: 60000, MaxNs: 90000}},
			{FrameSize: 1518, Direction: "west->east", Aggregate: v1alpha1.LatencySummary{Reason: "all 2 repetitions were invalid (see each)"},
				Repetitions: []v1alpha1.LatencySummary{{Reason: "the tester spoiled it: a worker paused"}, {Reason: "the tester spoiled it: a worker paused"}}},
		},
		Notes: []string{"a note of the run"},
	}
	c := FromResults("t", res, shape(), 0.5, time.Now())
	want := []Ceiling{
		{FrameSize: 64, Direction: "west->east", FramesPerSecond: 200_000, PercentOfLineRate: "13.44", SpreadPercent: 13},
		{FrameSize: 1518, Direction: "west->east", FramesPerSecond: 812_743, PercentOfLineRate: "100", AtLineRate: true},
		{FrameSize: 512, Direction: "west->east", FramesPerSecond: 900_000, PercentOfLineRate: "38.3", AtLeast: "cap"},
		{FrameSize: 9000, Direction: "west->east", Unknown: "no rate passed through the joined ports"},
	}
	if fmt.Sprint(c.Ceilings) != fmt.Sprint(want) {
		t.Errorf("ceilings\n%+v\nwant\n%+v", c.Ceilings, want)
	}
	if len(c.Floors) != 1 || c.Floors[0].MaxNs != 90000 || c.Floors[0].MinNs != 15000 || len(c.Ports) != 1 || c.Ports[0].SpeedMbps != 10000 || len(c.CPUs) != 2 {
		t.Errorf("floors %+v ports %+v cpus %v", c.Floors, c.Ports, c.CPUs)
	}
	// a floor it could not measure says why (each distinct reason of its repetitions), and no run takes it
	want1518 := []FloorNotMeasured{{FrameSize: 1518, Direction: "west->east", Reasons: []string{"the tester spoiled it: a worker paused"}}}
	if fmt.Sprint(c.FloorsNotMeasured) != fmt.Sprint(want1518) {
		t.Errorf("floors not measured %+v, want %+v", c.FloorsNotMeasured, want1518)
	}
	wantNotes := []string{"a note of the run", "latency floor 1518 B west->east: not measured: the tester spoiled it: a worker paused"}
	if !slices.Equal(c.Notes, wantNotes) || len(res.Notes) != 1 {
		t.Errorf("notes %q, want %q (the run's own notes untouched: %q)", c.Notes, wantNotes, res.Notes)
	}
	run := &v1alpha1.Results{Latency: []v1alpha1.LatencyResult{{FrameSize: 1518, Direction: "west->east", Aggregate: v1alpha1.LatencySummary{Valid: true, MinNs: 1}}}}
	notes := Apply(run, c, DefaultMarginPercent, func(float64) float64 { return 0 })
	if run.Latency[0].TesterMaxLatencyNs != 0 || len(notes) != 1 || !strings.Contains(notes[0], "how much is unknown") || !strings.Contains(notes[0], "a worker paused") {
		t.Errorf("a floor not measured was applied, or not said: %+v %q", run.Latency[0], notes)
	}
}
