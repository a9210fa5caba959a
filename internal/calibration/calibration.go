// Package calibration is the tester's knowledge of its own ceiling: what it forwards without loss, and the
// latency it measures, with its ports joined to each other and no DUT between them (a cable, a veth pair,
// two VFs of one PF through the NIC's embedded switch). A later run on the same tester compares its
// results with that ceiling: a DUT figure within a few percent of it may be the tester's, and is marked
// tester-limited rather than reported as the DUT's.
package calibration

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
)

// Kind names a calibration file, so that a results file given in its place is refused.
const Kind = "LinerateCalibration"

// DefaultMarginPercent is how close to the ceiling a DUT's NDR may come before it is the tester's: the
// spread of a zero-loss search on a shared host is a few percent of the rate.
const DefaultMarginPercent = 3.0

// Calibration is what `linerate calibrate` measured.
type Calibration struct {
	Kind       string    `json:"kind"`
	MeasuredAt time.Time `json:"measuredAt"`
	// Test names the TrafficTest whose ports, traffic and search the calibration used.
	Test string `json:"test"`
	// Ports are the tester's ports as the engine found them: a calibration holds for these devices only.
	Ports []Port `json:"ports"`
	// CPUs are the cores the engine ran on.
	CPUs          []int32 `json:"cpus,omitempty"`
	LineRateBps   int64   `json:"lineRateBps"`
	LossTolerance string  `json:"lossTolerancePercent"`
	// ResolutionPercent is the resolution of the searches that found the ceilings, in percent of line
	// rate: a ceiling is known to within it.
	ResolutionPercent float64 `json:"resolutionPercentOfLineRate"`
	// Ceilings are the tester's zero-loss rates, per frame size (0: the IMIX) and direction.
	Ceilings []Ceiling `json:"ceilings"`
	// Floors are the latencies the tester measures through no DUT at a tenth of its ceiling: the least
	// any DUT can show on this tester.
	Floors []Floor  `json:"latencyFloors,omitempty"`
	Notes  []string `json:"notes,omitempty"`
}

// Port is one port of the calibrated tester.
type Port struct {
	Name   string `json:"name"`
	Device string `json:"device"`
	Driver string `json:"driver"`
}

// Ceiling is the tester's NDR through no DUT.
type Ceiling struct {
	FrameSize int32  `json:"frameSize"` // 0: the IMIX
	Direction string `json:"direction"`
	// FramesPerSecond is the ceiling.
	FramesPerSecond   int64  `json:"framesPerSecond"`
	PercentOfLineRate string `json:"percentOfLineRate"`
	// AtLineRate is true when the tester reached the line rate: it has no ceiling below it at this size.
	AtLineRate bool `json:"atLineRate,omitempty"`
	// Unknown says why no ceiling was found (the search was undetermined); such a row limits nothing.
	Unknown string `json:"unknown,omitempty"`
}

// Floor is the latency through no DUT.
type Floor struct {
	FrameSize int32  `json:"frameSize"`
	Direction string `json:"direction"`
	MinNs     int64  `json:"minNs"`
	P50Ns     int64  `json:"p50Ns"`
	P99Ns     int64  `json:"p99Ns"`
}

// FromResults turns the results of a run through joined ports into a calibration.
func FromResults(test string, res *v1alpha1.Results, lineRateBps int64, lossTolerance string, resolutionPercent float64, at time.Time) *Calibration {
	c := &Calibration{Kind: Kind, MeasuredAt: at.UTC(), Test: test, LineRateBps: lineRateBps, LossTolerance: lossTolerance,
		ResolutionPercent: resolutionPercent}
	if pf := res.Preflight; pf != nil {
		c.CPUs = pf.CPUs
		for _, p := range pf.Ports {
			c.Ports = append(c.Ports, Port{Name: p.Name, Device: p.Device, Driver: p.Driver})
		}
	}
	ceiling := func(size int32, dir string, ndr v1alpha1.Rate, undetermined string) Ceiling {
		pct, _ := strconv.ParseFloat(ndr.PercentOfLineRate, 64)
		out := Ceiling{FrameSize: size, Direction: dir, FramesPerSecond: ndr.FramesPerSecond, PercentOfLineRate: ndr.PercentOfLineRate,
			AtLineRate: pct >= 100, Unknown: undetermined}
		if undetermined == "" && ndr.FramesPerSecond <= 0 {
			out.Unknown = "no rate passed through the joined ports"
		}
		return out
	}
	for _, t := range res.Throughput {
		c.Ceilings = append(c.Ceilings, ceiling(t.FrameSize, t.Direction, t.NDR, t.Undetermined))
	}
	for _, m := range res.Imix {
		c.Ceilings = append(c.Ceilings, ceiling(0, m.Direction, m.NDR, m.Undetermined))
	}
	for _, l := range res.Latency {
		if l.Aggregate.Valid {
			c.Floors = append(c.Floors, Floor{FrameSize: l.FrameSize, Direction: l.Direction, MinNs: l.Aggregate.MinNs,
				P50Ns: l.Aggregate.P50Ns, P99Ns: l.Aggregate.P99Ns})
		}
	}
	c.Notes = res.Notes
	return c
}

// Write stores c as indented JSON.
func (c *Calibration) Write(file string) error {
	raw, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(raw, '\n'), 0o644)
}

// ConfigMapKey is the key of a ConfigMap (spec.tester.calibration) that holds a calibration.
const ConfigMapKey = "calibration.json"

// Read loads a calibration file and refuses anything else.
func Read(file string) (*Calibration, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	c, err := Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("calibration %s: %w", file, err)
	}
	return c, nil
}

// Parse reads a calibration and refuses anything else.
func Parse(raw []byte) (*Calibration, error) {
	c := &Calibration{}
	if err := json.Unmarshal(raw, c); err != nil {
		return nil, err
	}
	if c.Kind != Kind {
		return nil, fmt.Errorf("not a calibration (kind %q, want %s; write one with linerate calibrate)", c.Kind, Kind)
	}
	if len(c.Ceilings) == 0 {
		return nil, fmt.Errorf("holds no ceiling")
	}
	return c, nil
}

// Mismatch says how the tester of a run differs from the calibrated one ("" when it does not): a ceiling
// holds for the devices, drivers and line rate it was measured with.
func (c *Calibration) Mismatch(pf *v1alpha1.Preflight, lineRateBps int64) string {
	var diffs []string
	if lineRateBps != c.LineRateBps {
		diffs = append(diffs, fmt.Sprintf("line rate %d bit/s, calibrated at %d bit/s", lineRateBps, c.LineRateBps))
	}
	if pf != nil {
		for _, p := range pf.Ports {
			i := slices.IndexFunc(c.Ports, func(q Port) bool { return q.Name == p.Name })
			switch {
			case i < 0:
				diffs = append(diffs, fmt.Sprintf("port %s was not calibrated", p.Name))
			case c.Ports[i].Driver != p.Driver:
				diffs = append(diffs, fmt.Sprintf("port %s is driven by %s, calibrated with %s", p.Name, p.Driver, c.Ports[i].Driver))
			}
		}
	}
	return strings.Join(diffs, "; ")
}

// ceilingFor is the calibrated ceiling of a row: the same frame size and direction, or else the same frame
// size in the other direction (a symmetric tester), nil when none was calibrated.
func (c *Calibration) ceilingFor(size int32, dir string) *Ceiling {
	var other *Ceiling
	for i := range c.Ceilings {
		cl := &c.Ceilings[i]
		if cl.FrameSize != size || cl.Unknown != "" {
			continue
		}
		if cl.Direction == dir {
			return cl
		}
		if other == nil || cl.FramesPerSecond < other.FramesPerSecond {
			other = cl
		}
	}
	return other
}

// Apply states each throughput row's margin to the tester's ceiling and marks a row tester-limited when its
// NDR is within marginPercent of that ceiling, or within what the two searches could not tell apart (the
// calibration's resolution and the run's, resolutionPercent, both in percent of line rate): the tester,
// not the DUT, may be what stopped the search there. It returns the notes that say so.
func Apply(res *v1alpha1.Results, c *Calibration, marginPercent, resolutionPercent float64) []string {
	var notes []string
	judge := func(size int32, dir string, ndr v1alpha1.Rate, limited *bool, margin *string) {
		cl := c.ceilingFor(size, dir)
		what := fmt.Sprintf("%d B %s", size, dir)
		if size == 0 {
			what = "IMIX " + dir
		}
		switch {
		case cl == nil:
			notes = append(notes, fmt.Sprintf("throughput %s: the calibration has no ceiling at this size; the tester's limit is unknown", what))
			return
		case cl.AtLineRate:
			*margin = ""
			return
		case ndr.FramesPerSecond <= 0:
			return
		}
		m := 100 * (1 - float64(ndr.FramesPerSecond)/float64(cl.FramesPerSecond))
		*margin = strconv.FormatFloat(m, 'f', 1, 64)
		within := marginPercent
		if pct, err := strconv.ParseFloat(cl.PercentOfLineRate, 64); err == nil && pct > 0 {
			// the resolutions are in percent of line rate; the margin is in percent of the ceiling
			within = max(within, 100*(c.ResolutionPercent+resolutionPercent)/pct)
		}
		if m < within && !*limited {
			*limited = true
			notes = append(notes, fmt.Sprintf("throughput %s: the NDR of %d frames/s is within %.1f%% of the tester's calibrated ceiling of %d frames/s (%s%% of line rate, calibrated %s): the tester may be the limit, so the row is tester-limited and no verdict rests on it",
				what, ndr.FramesPerSecond, within, cl.FramesPerSecond, cl.PercentOfLineRate, c.MeasuredAt.Format(time.RFC3339)))
		}
	}
	for i := range res.Throughput {
		t := &res.Throughput[i]
		judge(t.FrameSize, t.Direction, t.NDR, &t.TesterLimited, &t.CeilingMarginPercent)
	}
	for i := range res.Imix {
		m := &res.Imix[i]
		judge(0, m.Direction, m.NDR, &m.TesterLimited, &m.CeilingMarginPercent)
	}
	for _, l := range res.Latency {
		if f := c.floorFor(l.FrameSize, l.Direction); f != nil && l.Aggregate.Valid {
			notes = append(notes, fmt.Sprintf("latency %d B %s includes the tester's own: through no DUT it measured min %d ns, median %d ns (calibrated %s)",
				l.FrameSize, l.Direction, f.MinNs, f.P50Ns, c.MeasuredAt.Format(time.RFC3339)))
		}
	}
	return notes
}

func (c *Calibration) floorFor(size int32, dir string) *Floor {
	i := slices.IndexFunc(c.Floors, func(f Floor) bool { return f.FrameSize == size && f.Direction == dir })
	if i < 0 {
		return nil
	}
	return &c.Floors[i]
}
