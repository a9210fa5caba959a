package plan

import (
	"fmt"
	"slices"

	"linerate.dev/linerate/api/v1alpha1"
)

func resolveTraffic(t *v1alpha1.TrafficParams) (Traffic, error) {
	lr, err := LineRateBps(t.LineRate)
	if err != nil {
		return Traffic{}, err
	}
	out := Traffic{
		Direction:      t.Direction,
		LineRateBps:    lr,
		IPVersion:      int(orDefault(t.IPVersion, 4)),
		Flows:          int(orDefault(t.Flows, 1)),
		SrcPort:        int(orDefault(t.SrcPort, 49152)),
		DstPort:        int(orDefault(t.DstPort, 49153)),
		DSCP:           int(t.DSCP),
		Payload:        string(t.Payload),
		Fragmentable:   t.Fragmentable(),
		FragmentedLost: t.FragmentedFrames == v1alpha1.FragmentedLost,
	}
	if out.Fragmentable && out.IPVersion != 4 {
		return Traffic{}, fmt.Errorf("spec.traffic.dontFragment: only IPv4 has a DF bit to clear (a hop never fragments an IPv6 packet; it answers packet too big)")
	}
	if out.Direction == "" {
		out.Direction = v1alpha1.Bidirectional
	}
	if out.Payload == "" {
		out.Payload = string(v1alpha1.PayloadPattern("Zeros"))
	}
	if t.VLAN != nil {
		out.VLAN = int(*t.VLAN)
	}
	for _, v := range t.Vary {
		out.Vary = append(out.Vary, string(v))
	}
	if out.Flows > 1 && len(out.Vary) == 0 {
		out.Vary = []string{"srcPort"}
	}
	if out.Flows+out.SrcPort-1 > 65535 && slices.Contains(out.Vary, "srcPort") {
		return Traffic{}, fmt.Errorf("spec.traffic.flows: %d flows from srcPort %d run past port 65535", out.Flows, out.SrcPort)
	}
	if out.Flows+out.DstPort-1 > 65535 && slices.Contains(out.Vary, "dstPort") {
		return Traffic{}, fmt.Errorf("spec.traffic.flows: %d flows from dstPort %d run past port 65535", out.Flows, out.DstPort)
	}
	return out, nil
}
