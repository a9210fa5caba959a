package plan

import (
	"fmt"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
)

// PathMTU is the path MTU finder's plan: frames of one size at a time, FramesPerSecond for Trial each,
// between the smallest frame and MaxFrame.
type PathMTU struct {
	MaxFrame        int           `json:"maxFrame"`
	FramesPerSecond float64       `json:"framesPerSecond"`
	Trial           time.Duration `json:"trial"`
}

// FrameOverhead is what an Ethernet frame adds around the IP packet an MTU limits: header and FCS, and
// the VLAN tag when there is one.
func FrameOverhead(vlan bool) int {
	if vlan {
		return 22
	}
	return 18
}

// DefaultPathMTUMaxFrame is the largest frame the finder tries unless told: a standard Ethernet frame,
// which every tester port at MTU 1500 sends (with a VLAN tag, the tag's 4 B are in it).
const DefaultPathMTUMaxFrame = 1518

// resolvePathMTU defaults the finder: up to a standard Ethernet frame, or the DUT's own largest where
// smaller.
func resolvePathMTU(s *v1alpha1.PathMTUParams, t Traffic, dutMax *int32) (*PathMTU, error) {
	vlan := t.VLAN != 0
	out := &PathMTU{MaxFrame: DefaultPathMTUMaxFrame, FramesPerSecond: float64(orDefault(s.FramesPerSecond, 1000)),
		Trial: 500 * time.Millisecond}
	if dutMax != nil && int(*dutMax) < out.MaxFrame {
		out.MaxFrame = int(*dutMax)
	}
	if s.MaxFrameSize != nil {
		out.MaxFrame = int(*s.MaxFrameSize)
	}
	if s.Trial != nil {
		out.Trial = s.Trial.Duration
	}
	if minFrame := MinFrameSize(t.IPVersion, vlan); out.MaxFrame <= minFrame {
		return nil, fmt.Errorf("spec.pathMTU.maxFrameSize: %d B leaves nothing to find above the smallest frame, %d B (IPv%d)",
			out.MaxFrame, minFrame, t.IPVersion)
	}
	if out.Trial < 100*time.Millisecond {
		return nil, fmt.Errorf("spec.pathMTU.trial: %s is shorter than 100ms", out.Trial)
	}
	return out, nil
}
