// Package calibration is the tester's knowledge of its own ceiling: what it forwards without loss, and the
// latency it measures, with its ports joined to each other and no DUT between them (a cable, a veth pair,
// two VFs of one PF through the NIC's embedded switch). A later run on the same tester compares its
// results with that ceiling: a DUT figure within a few percent of it may be the tester's, and is marked
// tester-limited rather than reported as the DUT's.
package calibration

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
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
	// Ports are the tester's ports as the engine found them: a calibration holds for these drivers and link
	// speeds only.
	Ports []Port `json:"ports"`
	// CPUs are the cores the engine ran on.
	CPUs []int32 `json:"cpus,omitempty"`
	// Shape is the traffic the ceilings were measured with: they hold for runs of the same shape only.
	Shape Shape `json:"shape"`
	// ResolutionPercent is the resolution of the searches that found the ceilings, in percent of line
	// rate: a ceiling is known to within it.
	ResolutionPercent float64 `json:"resolutionPercentOfLineRate"`
	// Incomplete says why the calibration ended before it measured everything: such a file is refused.
	Incomplete string `json:"incomplete,omitempty"`
	// Ceilings are the tester's zero-loss rates, per frame size (0: the IMIX) and direction.
	Ceilings []Ceiling `json:"ceilings"`
	// Floors are the latencies the tester measures through no DUT at a tenth of its ceiling: the least
	// any DUT can show on this tester.
	Floors []Floor `json:"latencyFloors,omitempty"`
	// FloorsNotMeasured are the floors asked for that no valid repetition measured, with why.
	FloorsNotMeasured []FloorNotMeasured `json:"latencyFloorsNotMeasured,omitempty"`
	Notes             []string           `json:"notes,omitempty"`
}

// Shape is what of a run a tester's ceiling depends on besides the frame size: how many directions load
// it at once, the line rate it paces against, the headers it writes per frame, the loss it tolerates, the
// trial lengths and the IMIX.
type Shape struct {
	Direction       string   `json:"direction"`
	LineRateBps     int64    `json:"lineRateBps"`
	IPVersion       int      `json:"ipVersion"`
	Flows           int      `json:"flows"`
	Vary            []string `json:"vary,omitempty"`
	VLAN            int      `json:"vlan,omitempty"`
	Payload         string   `json:"payload"`
	LossTolerance   string   `json:"lossTolerancePercent"`
	SearchTrial     string   `json:"searchTrial"`
	ValidationTrial string   `json:"validationTrial"`
	// Imix names the mix (its profile and mean frame size), empty without one.
	Imix string `json:"imix,omitempty"`
	// Fragmentable: frames sent with DF clear, which the engine builds with an IP ID each (a slower path).
	Fragmentable bool `json:"fragmentable,omitempty"`
}

// differences lists how shape o differs from s.
func (s Shape) differences(o Shape) []string {
	var d []string
	diff := func(what string, run, cal any) {
		if fmt.Sprint(run) != fmt.Sprint(cal) {
			d = append(d, fmt.Sprintf("%s %v, calibrated with %v", what, run, cal))
		}
	}
	diff("direction", o.Direction, s.Direction)
	diff("line rate (bit/s)", o.LineRateBps, s.LineRateBps)
	diff("IP version", o.IPVersion, s.IPVersion)
	diff("flows", o.Flows, s.Flows)
	diff("varied fields", sorted(o.Vary), sorted(s.Vary))
	diff("VLAN", o.VLAN, s.VLAN)
	diff("payload", o.Payload, s.Payload)
	if !samePercent(o.LossTolerance, s.LossTolerance) {
		diff("loss tolerance (%)", o.LossTolerance, s.LossTolerance)
	}
	diff("search trial", o.SearchTrial, s.SearchTrial)
	diff("validation trial", o.ValidationTrial, s.ValidationTrial)
	diff("DF clear", o.Fragmentable, s.Fragmentable)
	if o.Imix != "" && s.Imix != "" {
		diff("IMIX", o.Imix, s.Imix)
	}
	return d
}

func sorted(v []string) []string {
	out := slices.Clone(v)
	slices.Sort(out)
	return out
}

// Port is one port of the calibrated tester.
type Port struct {
	Name      string `json:"name"`
	Device    string `json:"device"`
	Driver    string `json:"driver"`
	SpeedMbps int64  `json:"speedMbps,omitempty"`
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
	// AtLeast says why the search did not determine the ceiling (it reached its cap): FramesPerSecond is
	// then a lower bound of it, and rows from it on are the tester's.
	AtLeast string `json:"atLeast,omitempty"`
	// SpreadPercent is how far apart the repeated calibration searches found it, in percent of the highest:
	// the tester's own run-to-run spread, within which a row is as much the tester's as at the ceiling.
	SpreadPercent float64 `json:"spreadPercent,omitempty"`
	// Unknown says why no ceiling was found; the tester's limit at this size is unknown.
	Unknown string `json:"unknown,omitempty"`
}

// Floor is the latency through no DUT.
type Floor struct {
	FrameSize int32  `json:"frameSize"`
	Direction string `json:"direction"`
	MinNs     int64  `json:"minNs"`
	P50Ns     int64  `json:"p50Ns"`
	P99Ns     int64  `json:"p99Ns"`
	// MaxNs is the most the tester itself added to any frame: all a DUT's latency could be short of what
	// the tester reports for it.
	MaxNs int64 `json:"maxNs"`
}

// FloorNotMeasured is a floor asked for that no valid repetition measured, and why: missing without a word
// it would read as one never asked for. (Kept apart from Floors, so that no reader of Floors, an older one
// included, takes it for a floor of 0 ns.)
type FloorNotMeasured struct {
	FrameSize int32  `json:"frameSize"`
	Direction string `json:"direction"`
	// Reasons are each distinct reason its repetitions were invalid.
	Reasons []string `json:"reasons"`
}

// FromResults turns the results of a run through joined ports into a calibration.
func FromResults(test string, res *v1alpha1.Results, shape Shape, resolutionPercent float64, at time.Time) *Calibration {
	c := &Calibration{Kind: Kind, MeasuredAt: at.UTC(), Test: test, Shape: shape, ResolutionPercent: resolutionPercent}
	if pf := res.Preflight; pf != nil {
		c.CPUs = pf.CPUs
		for _, p := range pf.Ports {
			c.Ports = append(c.Ports, Port{Name: p.Name, Device: p.Device, Driver: p.Driver, SpeedMbps: p.SpeedMbps})
		}
	}
	ceiling := func(size int32, dir string, ndr v1alpha1.Rate, undetermined string, spread *v1alpha1.Spread) Ceiling {
		pct, _ := strconv.ParseFloat(ndr.PercentOfLineRate, 64)
		out := Ceiling{FrameSize: size, Direction: dir, FramesPerSecond: ndr.FramesPerSecond, PercentOfLineRate: ndr.PercentOfLineRate,
			AtLineRate: pct >= 100 && undetermined == "", AtLeast: undetermined}
		if spread != nil && spread.Max > 0 {
			out.SpreadPercent = math.Round(1000*float64(spread.Max-spread.Min)/float64(spread.Max)) / 10
		}
		if ndr.FramesPerSecond <= 0 {
			out.Unknown = "no rate passed through the joined ports"
		}
		return out
	}
	for _, t := range res.Throughput {
		c.Ceilings = append(c.Ceilings, ceiling(t.FrameSize, t.Direction, t.NDR, t.Undetermined, t.Spread))
	}
	for _, m := range res.Imix {
		c.Ceilings = append(c.Ceilings, ceiling(0, m.Direction, m.NDR, m.Undetermined, nil))
	}
	c.Notes = slices.Clone(res.Notes)
	for _, l := range res.Latency {
		if l.Aggregate.Valid {
			c.Floors = append(c.Floors, Floor{FrameSize: l.FrameSize, Direction: l.Direction, MinNs: l.Aggregate.MinNs,
				P50Ns: l.Aggregate.P50Ns, P99Ns: l.Aggregate.P99Ns, MaxNs: l.Aggregate.MaxNs})
			continue
		}
		why := invalidBecause(l)
		c.FloorsNotMeasured = append(c.FloorsNotMeasured, FloorNotMeasured{FrameSize: l.FrameSize, Direction: l.Direction, Reasons: why})
		c.Notes = append(c.Notes, fmt.Sprintf("latency floor %d B %s: not measured: %s", l.FrameSize, l.Direction, strings.Join(why, "; ")))
	}
	return c
}

// invalidBecause is why a latency row is invalid: each distinct reason of its repetitions (the calibration
// keeps no repetitions, so the row's own "see each" would point at nothing), else the row's own reason.
func invalidBecause(l v1alpha1.LatencyResult) []string {
	var reasons []string
	for _, r := range l.Repetitions {
		if !r.Valid && r.Reason != "" && !slices.Contains(reasons, r.Reason) {
			reasons = append(reasons, r.Reason)
		}
	}
	switch {
	case len(reasons) > 0:
		return reasons
	case l.Aggregate.Reason != "":
		return []string{l.Aggregate.Reason}
	}
	return []string{"no repetition was valid"}
}

// Write stores c as indented JSON.
func (c *Calibration) Write(file string) error {
	raw, err := c.Marshal()
	if err != nil {
		return err
	}
	return os.WriteFile(file, raw, 0o644)
}

// Marshal is the file Write stores: indented JSON, as a ConfigMap's calibration.json holds it too.
func (c *Calibration) Marshal() ([]byte, error) {
	raw, err := json.MarshalIndent(c, "", "  ")
	return append(raw, '\n'), err
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

// ErrIncomplete refuses a calibration that ended early: a ceiling it did not measure would be no limit.
var ErrIncomplete = errors.New("the calibration is incomplete")

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
	if c.Incomplete != "" {
		return nil, fmt.Errorf("%w (%s): calibrate again", ErrIncomplete, c.Incomplete)
	}
	if c.Shape.Direction == "" || c.Shape.LineRateBps <= 0 || len(c.Ports) == 0 {
		return nil, fmt.Errorf("names no traffic shape or ports it was measured with: calibrate again with this linerate")
	}
	return c, nil
}

// Mismatch says how a run differs from the calibrated one ("" when it does not): a ceiling holds for the
// ports (by name and driver), the engine's number of cores and the traffic's shape it was measured with.
func (c *Calibration) Mismatch(shape Shape, pf *v1alpha1.Preflight) string {
	diffs := c.Shape.differences(shape)
	if pf != nil {
		for _, p := range pf.Ports {
			i := slices.IndexFunc(c.Ports, func(q Port) bool { return q.Name == p.Name })
			switch {
			case i < 0:
				diffs = append(diffs, fmt.Sprintf("port %s was not calibrated", p.Name))
			case c.Ports[i].Driver != p.Driver:
				diffs = append(diffs, fmt.Sprintf("port %s is driven by %s, calibrated with %s", p.Name, p.Driver, c.Ports[i].Driver))
			case c.Ports[i].SpeedMbps > 0 && p.SpeedMbps > 0 && c.Ports[i].SpeedMbps != p.SpeedMbps:
				diffs = append(diffs, fmt.Sprintf("port %s links at %d Mbit/s, calibrated at %d Mbit/s", p.Name, p.SpeedMbps, c.Ports[i].SpeedMbps))
			}
		}
		if len(c.CPUs) > 0 && len(pf.CPUs) != len(c.CPUs) {
			diffs = append(diffs, fmt.Sprintf("the engine runs on %d cores, calibrated on %d", len(pf.CPUs), len(c.CPUs)))
		}
	}
	return strings.Join(diffs, "; ")
}

// ceilingFor is the calibrated ceiling of a row, nil when none was calibrated (another direction's is no
// measure of this one: a tester's directions may differ).
func (c *Calibration) ceilingFor(size int32, dir string) *Ceiling {
	i := slices.IndexFunc(c.Ceilings, func(cl Ceiling) bool { return cl.FrameSize == size && cl.Direction == dir && cl.Unknown == "" })
	if i < 0 {
		return nil
	}
	return &c.Ceilings[i]
}

// Apply states each throughput row's margin to the tester's ceiling and marks a row tester-limited when its
// NDR is within marginPercent of that ceiling, or within what the two searches could not tell apart (the
// calibration's resolution and the run's precision at the ceiling's rate, both in percent of line rate):
// the tester,
// not the DUT, may be what stopped the search there. It returns the notes that say so.
func Apply(res *v1alpha1.Results, c *Calibration, marginPercent float64, precision func(ratePercent float64) float64) []string {
	var notes []string
	judge := func(size int32, dir string, ndr v1alpha1.Rate, limited *bool, margin *string) {
		cl := c.ceilingFor(size, dir)
		what := fmt.Sprintf("%d B %s", size, dir)
		if size == 0 {
			what = "IMIX " + dir
		}
		switch {
		case cl == nil:
			notes = append(notes, fmt.Sprintf("throughput %s: the calibration has no ceiling at this size and direction; the tester's limit there is unknown", what))
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
			within = max(within, 100*(c.ResolutionPercent+precision(pct))/pct)
		}
		within = max(within, cl.SpreadPercent)
		ceiling := fmt.Sprintf("%d frames/s (%s%% of line rate, calibrated %s)", cl.FramesPerSecond, cl.PercentOfLineRate, c.MeasuredAt.Format(time.RFC3339))
		if cl.AtLeast != "" {
			ceiling = "at least " + ceiling
		}
		switch {
		case *limited:
			// the tester said so itself
		case m < -within && cl.AtLeast == "":
			// the ceiling is below what this tester just did: it does not describe this tester (any more)
			*limited = true
			notes = append(notes, fmt.Sprintf("throughput %s: the NDR of %d frames/s is %.1f%% above the tester's calibrated ceiling of %s: the calibration no longer describes this tester, so the row is tester-limited and no verdict rests on it; calibrate again",
				what, ndr.FramesPerSecond, -m, ceiling))
		case m < within:
			*limited = true
			notes = append(notes, fmt.Sprintf("throughput %s: the NDR of %d frames/s is within %.1f%% of the tester's calibrated ceiling of %s: the tester may be the limit, so the row is tester-limited and no verdict rests on it",
				what, ndr.FramesPerSecond, within, ceiling))
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
	for i := range res.Latency {
		l := &res.Latency[i]
		if f := c.floorFor(l.FrameSize, l.Direction); f != nil {
			l.TesterMaxLatencyNs = f.MaxNs
			notes = append(notes, fmt.Sprintf("latency %d B %s includes the tester's own: through no DUT, at a tenth of its ceiling, it measured min %d ns, median %d ns, p99 %d ns, max %d ns (calibrated %s)",
				l.FrameSize, l.Direction, f.MinNs, f.P50Ns, f.P99Ns, f.MaxNs, c.MeasuredAt.Format(time.RFC3339)))
		} else if i := slices.IndexFunc(c.FloorsNotMeasured, func(f FloorNotMeasured) bool { return f.FrameSize == l.FrameSize && f.Direction == l.Direction }); i >= 0 {
			notes = append(notes, fmt.Sprintf("latency %d B %s includes the tester's own, how much is unknown: the calibration of %s could not measure it (%s)",
				l.FrameSize, l.Direction, c.MeasuredAt.Format(time.RFC3339), strings.Join(c.FloorsNotMeasured[i].Reasons, "; ")))
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

// samePercent tells whether two percentages written as text are one number: a calibration stored before
// plan.FormatPercent wrote small values out ("1e-05") still matches the run that now writes "0.00001".
func samePercent(a, b string) bool {
	if a == b {
		return true
	}
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	return errA == nil && errB == nil && x == y
}
