package plan

import (
	"fmt"
	"slices"

	"linerate.dev/linerate/api/v1alpha1"
)

// RFC2544FrameSizes are the Ethernet frame sizes RFC 2544 §9.1 lists for Ethernet.
var RFC2544FrameSizes = []int{64, 128, 256, 512, 1024, 1280, 1518}

// MaxFrameSize is the largest frame the engine builds (dataplane/src/frame.h: LR_MAX_FRAME) and the API
// takes (the CRD's frameSizes, and what dut.maxFrameSize defaults to).
const MaxFrameSize = 9216

// TagBytes is the size of linerate's per-frame tag (dataplane/PROTOCOL.md) at the start of the UDP payload.
const TagBytes = 18

// MinFrameSize is the smallest frame that holds Ethernet (+VLAN) / IP / UDP headers, the tag and FCS.
func MinFrameSize(ipVersion int, vlan bool) int {
	n := 14 + 8 + TagBytes + 4
	if ipVersion == 6 {
		n += 40
	} else {
		n += 20
	}
	if vlan {
		n += 4
	}
	return max(n, 64)
}

// LargestFrame is the largest frame the plan sends, FCS included (frame sizes, the IMIX's and the path MTU
// finder's largest).
func (p *Plan) LargestFrame() int {
	largest := 0
	if p.PathMTU != nil {
		largest = p.PathMTU.MaxFrame
	}
	for _, f := range p.FrameSizes {
		largest = max(largest, f)
	}
	if p.Imix != nil {
		for _, e := range p.Imix.Entries {
			largest = max(largest, int(e.FrameSize))
		}
	}
	return largest
}

func (p *Plan) needsSizes() bool {
	for _, t := range p.Tests {
		if t != v1alpha1.TestImixThroughput {
			return true
		}
	}
	return false
}

// resolveSizes puts the spec's sizes into frames (IP packet sizes plus the Ethernet header and FCS, RFC
// 2544's set when none is given) and expands its IMIX, refusing a size the headers do not fit in or the DUT
// does not take.
func (p *Plan) resolveSizes(s *v1alpha1.TrafficTestSpec, profile *v1alpha1.ImixProfile) error {
	vlanBytes := 0
	if p.Traffic.VLAN != 0 {
		vlanBytes = 4
	}
	minFrame := MinFrameSize(p.Traffic.IPVersion, p.Traffic.VLAN != 0)
	maxFrame := MaxFrameSize
	if s.DUT.MaxFrameSize != nil {
		maxFrame = int(*s.DUT.MaxFrameSize)
	}

	if p.needsSizes() {
		switch {
		case len(s.IPPacketSizes) > 0:
			p.SizeBasis = "ipPacket"
			for _, ip := range s.IPPacketSizes {
				p.FrameSizes = append(p.FrameSizes, int(ip)+18+vlanBytes)
			}
		case len(s.FrameSizes) > 0:
			p.SizeBasis = "frame"
			for _, f := range s.FrameSizes {
				p.FrameSizes = append(p.FrameSizes, int(f))
			}
		default:
			p.SizeBasis = "frame"
			for _, f := range RFC2544FrameSizes {
				if f >= minFrame && f <= maxFrame {
					p.FrameSizes = append(p.FrameSizes, f)
				}
			}
		}
		slices.Sort(p.FrameSizes)
		p.FrameSizes = slices.Compact(p.FrameSizes)
		for _, f := range p.FrameSizes {
			if f < minFrame || f > maxFrame {
				return fmt.Errorf("spec.frameSizes: frame size %d B is outside %d..%d B (IPv%d%s, dut.maxFrameSize)",
					f, minFrame, maxFrame, p.Traffic.IPVersion, map[bool]string{true: " with VLAN"}[vlanBytes > 0])
			}
		}
	}

	if s.Imix != nil {
		var spec v1alpha1.ImixSpec
		name := ""
		if s.Imix.ProfileRef != nil {
			if profile == nil {
				return fmt.Errorf("spec.imix.profileRef: ImixProfile %q not found", s.Imix.ProfileRef.Name)
			}
			spec, name = profile.Spec, profile.Name
		} else {
			spec = v1alpha1.ImixSpec{Entries: s.Imix.Entries, Order: s.Imix.Order, Seed: s.Imix.Seed}
		}
		sched, err := NewSchedule(spec)
		if err != nil {
			return fmt.Errorf("spec.imix: %w", err)
		}
		for _, e := range spec.Entries {
			if int(e.FrameSize) < minFrame || int(e.FrameSize) > maxFrame {
				return fmt.Errorf("spec.imix: frame size %d B is outside %d..%d B", e.FrameSize, minFrame, maxFrame)
			}
		}
		p.Imix = &Imix{Name: name, Entries: spec.Entries, Order: sched.Order, Cycle: sched.Cycle, AverageFrameSize: sched.AverageFrameSize}
	}
	return nil
}
