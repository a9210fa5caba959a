package engine

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Pair drives two engines as one two-port engine for testbeds whose ports live on two nodes: port 0 is
// port 0 of Local (the generator pod), port 1 is port 0 of Remote (the receiver pod, reached over the
// pod network). Every stream is split (PROTOCOL.md): the engine of its TX port sends, the engine of its
// RX port analyses, and Pair merges the two halves into one result.
type Pair struct {
	Local, Remote Engine
	// Clock bounds the offset between the two engines' clocks (BoundClocks). A latency the receiver
	// measured against the sender's stamps is valid only when the bound is at most MaxClockOffset; it then
	// carries the bound. Without, latency across the pair is not measurable.
	Clock          *ClockBound
	MaxClockOffset time.Duration
	next           int
}

var _ Engine = (*Pair)(nil)

func (p *Pair) side(port int) (Engine, error) {
	switch port {
	case 0:
		return p.Local, nil
	case 1:
		return p.Remote, nil
	}
	return nil, fmt.Errorf("engine pair: no port %d", port)
}

// Hello greets both engines.
func (p *Pair) Hello(ctx context.Context) (*Hello, error) {
	h, err := p.Local.Hello(ctx)
	if err != nil {
		return nil, fmt.Errorf("local engine: %w", err)
	}
	if _, err := p.Remote.Hello(ctx); err != nil {
		return nil, fmt.Errorf("remote engine: %w", err)
	}
	out := *h
	out.Ports = 2
	return &out, nil
}

// Port addresses port 0 of the engine that owns the port.
func (p *Pair) Port(ctx context.Context, cfg PortConfig) (*PortInfo, error) {
	e, err := p.side(cfg.ID)
	if err != nil {
		return nil, err
	}
	id := cfg.ID
	cfg.ID = 0
	info, err := e.Port(ctx, cfg)
	if info != nil {
		info.ID = id
	}
	return info, err
}

// Resolve resolves the next hop of a port on its engine.
func (p *Pair) Resolve(ctx context.Context, port int, timeout time.Duration) (string, error) {
	e, err := p.side(port)
	if err != nil {
		return "", err
	}
	return e.Resolve(ctx, 0, timeout)
}

// Stream defines the sending half on the TX port's engine and the analysing half on the RX port's, which
// is told the lanes the sender sends it on (one per queue pair of its port): a receiver that kept state for
// fewer would count the other lanes' frames as numbers it cannot carry, and their loss would be booked
// against the DUT.
func (p *Pair) Stream(ctx context.Context, cfg StreamConfig) (*StreamInfo, error) {
	if cfg.TX == cfg.RX {
		return nil, fmt.Errorf("engine pair: stream %d sends and receives on port %d", cfg.ID, cfg.TX)
	}
	tx, err := p.side(cfg.TX)
	if err != nil {
		return nil, err
	}
	rx, err := p.side(cfg.RX)
	if err != nil {
		return nil, err
	}
	half := cfg
	half.TX, half.RX = 0, -1
	info, err := tx.Stream(ctx, half)
	if err != nil {
		return nil, err
	}
	if info.Lanes < 1 {
		return nil, fmt.Errorf("engine pair: stream %d: the sending engine did not say how many lanes it sends on", cfg.ID)
	}
	half.TX, half.RX, half.Lanes = -1, 0, info.Lanes
	rinfo, err := rx.Stream(ctx, half)
	if err != nil {
		return nil, err
	}
	if rinfo.Lanes < info.Lanes {
		return nil, fmt.Errorf("engine pair: stream %d is sent on %d lanes and received with state for %d", cfg.ID, info.Lanes, rinfo.Lanes)
	}
	return info, nil
}

// RunTrial starts the receiving halves first (so they are counting before the first frame leaves), then
// the sending halves, with the same trial number, and merges the results.
func (p *Pair) RunTrial(ctx context.Context, cfg TrialConfig, progress func(Progress)) (*TrialResult, error) {
	p.next++
	cfg.ID = p.next
	type out struct {
		r   *TrialResult
		err error
	}
	// The receiver counts from the moment it gets its TRIAL (no warm-up of its own: warm-up frames are
	// flagged and ignored anyway) for longer than the generator sends, so that however late the request
	// reaches it over the pod network, its window covers every measured frame of the generator.
	rest, err := p.rest(ctx, cfg.Quiet, cfg.QuietMax)
	if err != nil {
		return nil, err
	}
	cfg.Quiet = 0
	rcfg := cfg
	rcfg.OnStart = nil // the trial starts with the sending half's TRIAL
	slack := time.Second
	if cfg.Burst == 0 {
		rcfg.WarmUp = 0
		rcfg.Duration = cfg.WarmUp + cfg.Duration + slack
		if cfg.Stall > 0 {
			rcfg.Stall = cfg.Stall + cfg.WarmUp + slack
		}
	}
	remote := make(chan out, 1)
	go func() {
		r, err := p.Remote.RunTrial(ctx, rcfg, nil)
		remote <- out{r, err}
	}()
	time.Sleep(50 * time.Millisecond)
	lr, lerr := p.Local.RunTrial(ctx, cfg, progress)
	ro := <-remote
	if lerr != nil {
		return nil, fmt.Errorf("local engine: %w", lerr)
	}
	if ro.err != nil {
		return nil, fmt.Errorf("remote engine: %w", ro.err)
	}
	merged := mergeHalves(cfg.Streams, lr, ro.r)
	merged.QuietWaitNs, merged.QuietMissed = rest.WaitedNs, !rest.Quiet
	bound := p.Clock
	if p.MaxClockOffset > 0 {
		// the clocks may have drifted apart since the last check: the trial is judged by the worse bound
		lc, lok := p.Local.(Clock)
		rc, rok := p.Remote.(Clock)
		if lok && rok {
			// a check that failed before the run is tried again here; one that fails now voids this trial's
			if now, err := BoundClocks(ctx, lc, rc, 4); err == nil {
				if bound == nil || now.BoundNs > bound.BoundNs {
					bound = now
				}
				if p.Clock == nil {
					bound = nil // nothing known before the trial: its start is not covered
				}
				p.Clock = now
			} else {
				bound = nil
			}
		}
	}
	for i := range merged.Streams {
		judgeLatency(merged.Streams[i].Latency, bound, p.MaxClockOffset)
	}
	return merged, nil
}

// rest rests the DUT on both engines at once, before either starts its half of the trial (the sending
// half would fill the DUT again while the receiving one still waits): the longer wait, quiet only when both
// fell quiet.
func (p *Pair) rest(ctx context.Context, quiet, most time.Duration) (Rest, error) {
	if quiet <= 0 {
		return Rest{Quiet: true}, nil
	}
	lq, lok := p.Local.(Quieter)
	rq, rok := p.Remote.(Quieter)
	if !lok || !rok {
		return Rest{}, fmt.Errorf("engine pair: an engine cannot rest the DUT (QUIET)")
	}
	type out struct {
		r   Rest
		err error
	}
	remote := make(chan out, 1)
	go func() {
		r, err := rq.Quiet(ctx, quiet, most)
		remote <- out{r, err}
	}()
	l, lerr := lq.Quiet(ctx, quiet, most)
	ro := <-remote
	if lerr != nil {
		return Rest{}, fmt.Errorf("local engine: %w", lerr)
	}
	if ro.err != nil {
		return Rest{}, fmt.Errorf("remote engine: %w", ro.err)
	}
	return Rest{WaitedNs: max(l.WaitedNs, ro.r.WaitedNs), Quiet: l.Quiet && ro.r.Quiet}, nil
}

// mergeHalves joins, per stream, the sending half (tx counters) and the analysing half (rx counters,
// latency) of whichever engine had them.
func mergeHalves(ids []int, a, b *TrialResult) *TrialResult {
	out := &TrialResult{Trial: a.Trial, State: a.State, Reason: a.Reason, DurationNs: a.DurationNs}
	if b.Aborted() && !a.Aborted() {
		out.State, out.Reason = b.State, b.Reason
	}
	for _, id := range ids {
		sa, sb := a.Stream(id), b.Stream(id)
		if sa == nil || sb == nil {
			continue
		}
		tx, rx := sa, sb
		if sb.TxFrames > 0 || sa.RxFrames > 0 {
			tx, rx = sb, sa
		}
		m := *rx
		m.TargetFPS, m.AchievedFPS, m.Saturated = tx.TargetFPS, tx.AchievedFPS, tx.Saturated
		m.TxMaxLagNs, m.ScheduledFrames, m.TxPeakFPS = tx.TxMaxLagNs, tx.ScheduledFrames, tx.TxPeakFPS
		m.TxFrames, m.TxBytes = tx.TxFrames, tx.TxBytes
		// the DUT's ICMP errors come back to the sender's port
		m.RxTooBig, m.TooBigMTU = tx.RxTooBig, tx.TooBigMTU
		m.Classes = nil
		for i, c := range tx.Classes {
			if i < len(rx.Classes) {
				c.RxFrames = rx.Classes[i].RxFrames
			}
			m.Classes = append(m.Classes, c)
		}
		out.Streams = append(out.Streams, m)
	}
	// each engine numbers its own port 0: the remote engine's ports are the pair's from 1 on
	out.Ports = append(out.Ports, a.Ports...)
	for _, pc := range b.Ports {
		pc.ID++
		out.Ports = append(out.Ports, pc)
	}
	out.Workers = append(out.Workers, a.Workers...)
	for _, w := range b.Workers {
		// the remote engine's ports as the pair numbers them, as its port counters above
		w.Ports = slices.Clone(w.Ports)
		for i := range w.Ports {
			w.Ports[i]++
		}
		w.Queues = slices.Clone(w.Queues)
		for i := range w.Queues {
			w.Queues[i].Port++
		}
		out.Workers = append(out.Workers, w)
	}
	return out
}

// Close closes both engines.
func (p *Pair) Close() error {
	err := p.Local.Close()
	if e := p.Remote.Close(); err == nil {
		err = e
	}
	return err
}
