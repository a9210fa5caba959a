package plan

import (
	"fmt"
	"slices"

	"linerate.dev/linerate/api/v1alpha1"
)

// Direction is one way through the DUT, named "tx->rx" after the ports.
type Direction struct {
	Name string `json:"name"`
	TX   int    `json:"tx"`
	RX   int    `json:"rx"`
}

// Directions lists the directions traffic flows in.
func (p *Plan) Directions() []Direction {
	d := []Direction{{Name: p.Ports[0].Name + "->" + p.Ports[1].Name, TX: 0, RX: 1}}
	if p.Traffic.Direction != v1alpha1.Unidirectional {
		d = append(d, Direction{Name: p.Ports[1].Name + "->" + p.Ports[0].Name, TX: 1, RX: 0})
	}
	return d
}

// Lanes groups directions into searches: Unidirectional one lane of one direction, Bidirectional one lane
// per direction (searched independently, traffic both ways at once), BidirectionalBound one lane of both
// directions (one rate, one verdict).
func (p *Plan) Lanes() [][]int {
	switch p.Traffic.Direction {
	case v1alpha1.Unidirectional:
		return [][]int{{0}}
	case v1alpha1.BidirectionalBound:
		return [][]int{{0, 1}}
	default:
		return [][]int{{0}, {1}}
	}
}

// Has says whether the plan runs test t.
func (p *Plan) Has(t v1alpha1.TestKind) bool { return slices.Contains(p.Tests, t) }

// Row is one result a plan asks for: a test at a frame size (0 for the IMIX) in one direction.
type Row struct {
	Test      v1alpha1.TestKind
	FrameSize int
	Direction string
	// Load of a latency row in percent of the NDR, as LoadPercent writes it; "" for other tests.
	Load string
}

func (r Row) String() string {
	if r.Test == v1alpha1.TestImixThroughput {
		return fmt.Sprintf("%s %s", r.Test, r.Direction)
	}
	if r.Load != "" && r.Load != "100" {
		return fmt.Sprintf("%s %d B %s %s", r.Test, r.FrameSize, r.Direction, LoadPhrase(r.Load))
	}
	return fmt.Sprintf("%s %d B %s", r.Test, r.FrameSize, r.Direction)
}

// Step is one test at one frame size (0: the IMIX): what the runner completes, checkpoints and estimates
// at a time.
type Step struct {
	Test      v1alpha1.TestKind
	FrameSize int
}

// Steps are the plan's steps in the order they run.
func (p *Plan) Steps() []Step {
	var out []Step
	for _, t := range p.Tests {
		if t == v1alpha1.TestImixThroughput || t == v1alpha1.TestPathMTU {
			out = append(out, Step{t, 0})
			continue
		}
		if t == v1alpha1.TestTimeline {
			if p.Timeline != nil {
				out = append(out, Step{t, p.Timeline.FrameSize})
			}
			continue
		}
		for _, size := range p.FrameSizes {
			out = append(out, Step{t, size})
		}
	}
	return out
}

// Rows are every result the plan asks for, in the order they run.
func (p *Plan) Rows() []Row {
	var out []Row
	for _, s := range p.Steps() {
		for _, d := range p.Directions() {
			if s.Test != v1alpha1.TestLatency {
				out = append(out, Row{Test: s.Test, FrameSize: s.FrameSize, Direction: d.Name})
				continue
			}
			for _, load := range p.Latency.PercentOfNDR {
				out = append(out, Row{Test: s.Test, FrameSize: s.FrameSize, Direction: d.Name, Load: LoadPercent(load)})
			}
		}
	}
	return out
}
