package calibration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
)

func cal() *Calibration {
	return &Calibration{Kind: Kind, MeasuredAt: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC), LineRateBps: 10e9,
		Ports: []Port{{Name: "west", Driver: "net_ixgbe_vf"}, {Name: "east", Driver: "net_ixgbe_vf"}},
		Ceilings: []Ceiling{
			{FrameSize: 64, Direction: "west->east", FramesPerSecond: 10_000_000, PercentOfLineRate: "67.2"},
			{FrameSize: 64, Direction: "east->west", FramesPerSecond: 9_000_000, PercentOfLineRate: "60.5"},
			{FrameSize: 512, Direction: "west->east", FramesPerSecond: 2_000_000, PercentOfLineRate: "85.1"},
			{FrameSize: 1518, Direction: "west->east", FramesPerSecond: 812_743, PercentOfLineRate: "100", AtLineRate: true},
			{FrameSize: 9000, Direction: "west->east", Unknown: "the search reached its cap"},
			{FrameSize: 0, Direction: "west->east", FramesPerSecond: 3_000_000, PercentOfLineRate: "90"},
		},
		Floors: []Floor{{FrameSize: 64, Direction: "west->east", MinNs: 4100, P50Ns: 5200, P99Ns: 9000}}}
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
		{"already the tester's", 64, "west->east", 9_900_000, true, true, "1.0", ""},
		{"the other direction's ceiling for an uncalibrated direction", 512, "east->west", 1_990_000, false, true, "0.5", "calibrated ceiling of 2000000"},
		{"the lower ceiling of a size when the direction is not calibrated", 64, "north->south", 8_900_000, false, true, "1.1", "ceiling of 9000000"},
		{"a tester at line rate has no ceiling", 1518, "west->east", 812_743, false, false, "", ""},
		{"an unknown ceiling limits nothing", 9000, "west->east", 100_000, false, false, "", "no ceiling at this size"},
		{"an uncalibrated size", 128, "west->east", 100_000, false, false, "", "no ceiling at this size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &v1alpha1.Results{Throughput: []v1alpha1.ThroughputResult{{FrameSize: tc.size, Direction: tc.dir,
				NDR: v1alpha1.Rate{FramesPerSecond: tc.fps}, TesterLimited: tc.limited}}}
			notes := Apply(res, cal(), DefaultMarginPercent, 0)
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
	notes := Apply(res, cal(), DefaultMarginPercent, 0)
	if !res.Imix[0].TesterLimited || res.Imix[0].CeilingMarginPercent != "1.7" {
		t.Errorf("IMIX row %+v", res.Imix[0])
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "IMIX west->east") || !strings.Contains(notes[1], "min 4100 ns, median 5200 ns") {
		t.Errorf("notes %q", notes)
	}
	// applied again (each step applies it), it says the same and marks nothing more
	again := Apply(res, cal(), DefaultMarginPercent, 0)
	if len(again) != 1 || again[0] != notes[1] {
		t.Errorf("applied twice: %q", again)
	}
}

func TestMismatch(t *testing.T) {
	pf := &v1alpha1.Preflight{Ports: []v1alpha1.PortPreflight{{Name: "west", Driver: "net_ixgbe_vf"}, {Name: "east", Driver: "net_af_packet"}}}
	got := cal().Mismatch(pf, 25e9)
	for _, want := range []string{"line rate 25000000000 bit/s, calibrated at 10000000000", "port east is driven by net_af_packet, calibrated with net_ixgbe_vf"} {
		if !strings.Contains(got, want) {
			t.Errorf("mismatch %q lacks %q", got, want)
		}
	}
	pf.Ports[1].Driver = "net_ixgbe_vf"
	if got := cal().Mismatch(pf, 10e9); got != "" {
		t.Errorf("the calibrated tester: %q", got)
	}
}

func TestReadRefusesWhatIsNotACalibration(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "calibration.json")
	if err := cal().Write(good); err != nil {
		t.Fatal(err)
	}
	if c, err := Read(good); err != nil || len(c.Ceilings) != 6 || !c.MeasuredAt.Equal(cal().MeasuredAt) {
		t.Fatalf("read back %+v, %v", c, err)
	}
	results := filepath.Join(dir, "results.json")
	if err := os.WriteFile(results, []byte(`{"results":{"throughput":[]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(results); err == nil || !strings.Contains(err.Error(), "not a calibration") {
		t.Errorf("a results file was read as a calibration: %v", err)
	}
}
