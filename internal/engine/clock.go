package engine

import (
	"context"
	"fmt"
	"time"
)

// One-way latency across two nodes is the receiver's clock minus the sender's stamp: it is only as true
// as the two clocks agree. The runner checks that itself, over the control connections it has anyway:
// it reads its own engine's clock, the remote engine's, and its own again (Cristian's method). The remote
// reading was taken somewhere in that round trip, so the offset of the two clocks lies within half the
// round trip of the measured one. With clocks kept in step (PTP and phc2sys on both nodes, engines started
// with --clock realtime) the bound is about half the control round trip; without, it shows how far apart
// they are.

// TimeReading is an engine's timestamp clock, read now (the TIME verb).
type TimeReading struct {
	Clock string `json:"clock"`
	Ns    int64  `json:"ns"`
}

// Time reads the engine's timestamp clock.
func (c *Client) Time(ctx context.Context) (*TimeReading, error) {
	var t TimeReading
	if err := c.Do(ctx, "TIME", nil, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// Clock is an engine whose timestamp clock can be read.
type Clock interface {
	Time(ctx context.Context) (*TimeReading, error)
}

// ClockBound is what is known of the offset between two engines' clocks.
type ClockBound struct {
	// OffsetNs is the remote clock minus the local one, at the sample with the shortest round trip.
	OffsetNs int64
	// RoundTripNs is that sample's round trip.
	RoundTripNs int64
	// BoundNs bounds the true offset: |OffsetNs| + RoundTripNs/2.
	BoundNs int64
	// Samples is how many round trips were measured.
	Samples int
}

func (b *ClockBound) String() string {
	return fmt.Sprintf("offset %s, known to within ±%s (shortest of %d control round trips: %s)",
		time.Duration(b.OffsetNs), time.Duration(b.BoundNs), b.Samples, time.Duration(b.RoundTripNs))
}

// BoundClocks measures the offset of remote's clock from local's in n round trips and bounds it from the
// shortest one. Both must stamp with CLOCK_REALTIME (--clock realtime): clocks that count from each
// engine's start are not comparable at all.
func BoundClocks(ctx context.Context, local, remote Clock, n int) (*ClockBound, error) {
	var best *ClockBound
	for i := 0; i < n; i++ {
		a, err := local.Time(ctx)
		if err != nil {
			return nil, fmt.Errorf("local engine TIME: %w", err)
		}
		b, err := remote.Time(ctx)
		if err != nil {
			return nil, fmt.Errorf("remote engine TIME: %w", err)
		}
		c, err := local.Time(ctx)
		if err != nil {
			return nil, fmt.Errorf("local engine TIME: %w", err)
		}
		if a.Clock != "realtime" || b.Clock != "realtime" {
			return nil, fmt.Errorf("engine clocks %s (local) and %s (remote): both must be started with --clock realtime", a.Clock, b.Clock)
		}
		rtt := c.Ns - a.Ns
		off := b.Ns - a.Ns - rtt/2
		if best == nil || rtt < best.RoundTripNs {
			best = &ClockBound{OffsetNs: off, RoundTripNs: rtt, BoundNs: abs64(off) + (rtt+1)/2}
		}
	}
	if best == nil {
		return nil, fmt.Errorf("no clock samples")
	}
	best.Samples = n
	return best, nil
}

// judgeLatency makes a latency measured across the two engines' clocks valid only within the bound.
func judgeLatency(l *Latency, bound *ClockBound, limit time.Duration) {
	if l == nil || !l.Valid || l.Clock != "realtime" {
		return
	}
	switch {
	case bound == nil:
		*l = Latency{Clock: l.Clock, Reason: "the offset between the two nodes' clocks was not measured"}
	case limit <= 0 || time.Duration(bound.BoundNs) > limit:
		*l = Latency{Clock: l.Clock, Reason: fmt.Sprintf("the two nodes' clocks are known to agree only within ±%s, more than tester.maxClockOffset %s",
			time.Duration(bound.BoundNs), limit)}
	default:
		l.ClockBoundNs = bound.BoundNs
	}
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
