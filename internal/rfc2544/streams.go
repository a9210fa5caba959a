package rfc2544

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"linerate.dev/linerate/internal/engine"
)

type streamDef struct {
	sizes []int
	mean  float64
}

// defineStreams (re)defines the stream of every direction with a size schedule.
func (r *Runner) defineStreams(ctx context.Context, sizes []int) error {
	p := r.plan
	for _, d := range p.Directions() {
		id := d.TX
		if equalInts(r.streams[id].sizes, sizes) {
			continue
		}
		cfg := engine.StreamConfig{ID: id, TX: d.TX, RX: d.RX, L3: "ipv4",
			Src: hostAddr(p.Ports[d.TX].Address), Dst: hostAddr(p.Ports[d.RX].Address),
			SPort: p.Traffic.SrcPort, DPort: p.Traffic.DstPort, Flows: p.Traffic.Flows, DSCP: p.Traffic.DSCP,
			Payload: strings.ToLower(p.Traffic.Payload), Sizes: sizes, Fragmentable: p.Traffic.Fragmentable}
		if p.Traffic.IPVersion == 6 {
			cfg.L3 = "ipv6"
		}
		for _, v := range p.Traffic.Vary {
			if n, ok := varyNames[v]; ok {
				cfg.Vary = append(cfg.Vary, n)
			}
		}
		info, err := r.eng.Stream(ctx, cfg)
		if err != nil {
			return fmt.Errorf("stream %s: %w", d.Name, err)
		}
		mean := info.MeanFrame
		if mean <= 0 {
			mean = meanOf(sizes)
		}
		r.streams[id] = streamDef{sizes: append([]int(nil), sizes...), mean: mean}
	}
	return nil
}

var varyNames = map[string]string{"srcPort": "sport", "dstPort": "dport", "srcIP": "src", "dstIP": "dst"}

func hostAddr(prefix string) string {
	if p, err := netip.ParsePrefix(prefix); err == nil {
		return p.Addr().String()
	}
	return prefix
}

func meanOf(v []int) float64 {
	s := 0
	for _, x := range v {
		s += x
	}
	return float64(s) / float64(len(v))
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// lineFPS is the line rate in frames/s at a mean frame size.
func (r *Runner) lineFPS(mean float64) float64 {
	return float64(r.plan.Traffic.LineRateBps) / ((mean + 20) * 8)
}
