// Package sim is a simulated traffic engine with a model of a device under test. It exists for the
// methodology tests and the search benchmark, to demonstrate the CLI without DPDK (clearly labelled as
// simulated), and as the model DUT on which a run's time estimate draws its searches (internal/rfc2544);
// no production path measures with it.
//
// Time is virtual: a trial returns at once and advances the simulation clock by warm-up + duration +
// drain (and the control overhead, when set), so a test can run hundreds of "60 s" trials in milliseconds.
package sim

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"linerate.dev/linerate/internal/engine"
)

// DUT models a device under test and the tester's own limits.
type DUT struct {
	// LineRateBps is the L1 rate of the tester ports (default 10 Gbit/s).
	LineRateBps float64
	// CapacityFPS limits the DUT in frames/s per direction (0: unlimited).
	CapacityFPS float64
	// CapacityL2Bps limits the DUT in L2 bit/s per direction (0: unlimited).
	CapacityL2Bps float64
	// Shared makes both directions share one capacity (a DUT whose directions share cores).
	Shared bool
	// Noise is the relative standard deviation of the capacity from trial to trial.
	Noise float64
	// DriftPerHour changes the capacity by this fraction per simulated hour (negative: degrading).
	DriftPerHour float64
	// StallAfterTrials makes the DUT stop forwarding from this trial on (1-based; 0: never).
	StallAfterTrials int
	// PathMTU refuses frames whose IP packet is larger (frame size - 18 B of Ethernet header and FCS) as a
	// router with that egress MTU does with DF set: it drops them and sends an ICMP error for each, which
	// the tester counts on the port the frames left by (0: no limit). A stream whose every frame is
	// refused receives nothing: the trial stalls, as the engine's stall check sees it.
	PathMTU int
	// PathMTUPorts are the tester ports whose frames PathMTU holds (none listed: all), as a path whose MTU
	// differs by direction.
	PathMTUPorts []int
	// PathMTUSilent drops the frames over PathMTU without any ICMP error: the tester counts none.
	PathMTUSilent bool
	// FragmentedShare is the share of the frames over PathMTU that a path of DF-clear frames fragments, the
	// others taking a path whose MTU carries them whole (0: all are fragmented).
	FragmentedShare float64
	// FragmentsUnmatched are fragments a trial whose first fragment never came (the DUT lost it); as many
	// other fragmented frames are not whole (it lost one of theirs).
	FragmentsUnmatched int64
	// TesterMaxFPS is the most the tester's CPU can send per stream (0: line rate).
	TesterMaxFPS float64
	// TesterPortMaxFPS is the most the tester's port carries per stream (0: line rate), as a link slower
	// than the plan's line rate: frames above it fill the port's TX queue, which the port counts (TxFull).
	TesterPortMaxFPS float64
	// TesterSlowPorts are the ports TesterPortMaxFPS holds back (none listed: all).
	TesterSlowPorts []int
	// TesterHiccupTrials are trials (1-based) in which the tester was preempted, as on a shared host: it
	// offers 3 % less than asked (the engine reports saturated) and the catch-up burst after the stall
	// loses 2 % of the frames, whatever the DUT.
	TesterHiccupTrials []int
	// TesterLagAbovePercent makes the tester fall 5 ms behind its schedule in every paced trial offered
	// above this share of the simulated line rate (LineRateBps; percent; 0: never), as a preempted worker
	// on a loaded host does: it sends every frame, late, in a burst (TxMaxLagNs), which spoils the trial
	// while the runner's maxTxLag is under 5 ms (its default is 1 ms), whatever the DUT.
	TesterLagAbovePercent float64
	// BufferFrames is the DUT's queue: a burst or overload shorter than this is absorbed.
	BufferFrames int64
	// DropEvery drops every Nth frame whatever the rate (like nft "numgen inc mod N == 0 drop").
	DropEvery int64
	// CorruptEvery corrupts every Nth forwarded frame (its checksum no longer matches): the tester
	// counts it as corrupted and lost.
	CorruptEvery int64
	// RxQueues spreads each stream's flows over this many RX queues (RSS; 0: one). The engine then counts
	// reordering within each queue, and a queue's gaps are the other queues' frames: every frame after one
	// of another queue's counts as early.
	RxQueues int
	// RareLossPerFrame loses each forwarded frame with this probability whatever the rate (a DUT that
	// drops a frame now and then: interrupts, housekeeping), drawn from the seeded generator.
	RareLossPerFrame float64
	// ColdFraction is the share of its capacity the DUT forwards in the first ColdTime of every trial (a
	// flow cache or a crypto context warming up); 0: none.
	ColdFraction float64
	// ColdTime is how long the DUT is cold at the start of a trial (default 100 ms when ColdFraction is set).
	ColdTime time.Duration
	// LatencyNs is the latency of an idle DUT.
	LatencyNs float64
	// ControlOverhead is the wall time of the control round trips around every trial (defining it,
	// starting it, fetching its counters), which a real tester spends besides the trial's phases and which
	// a loaded host makes long: the clock advances by it too (0: the phases alone).
	ControlOverhead time.Duration
	// Seed of the noise.
	Seed uint64
}

// lineFPS is the line rate in frames/s at a mean frame size.
func (d *DUT) lineFPS(size float64) float64 {
	lr := d.LineRateBps
	if lr == 0 {
		lr = 10e9
	}
	return lr / ((size + 20) * 8)
}

// Capacity is the DUT's nominal forwarding rate in frames/s at a frame size (line rate included).
func (d *DUT) Capacity(size float64) float64 {
	c := d.lineFPS(size)
	if d.CapacityFPS > 0 {
		c = math.Min(c, d.CapacityFPS)
	}
	if d.CapacityL2Bps > 0 {
		c = math.Min(c, d.CapacityL2Bps/(8*size))
	}
	return c
}

// CapacityPercent is Capacity in percent of line rate (L1).
func (d *DUT) CapacityPercent(size float64) float64 {
	return 100 * d.Capacity(size) / d.lineFPS(size)
}

// cycleCapacity is the capacity for a size schedule: the time per frame averaged over the cycle.
func (d *DUT) cycleCapacity(sizes []int) float64 {
	var t float64
	for _, s := range sizes {
		t += 1 / d.Capacity(float64(s))
	}
	return float64(len(sizes)) / t
}

// BurstCapacity is the longest burst at line rate the DUT forwards without loss at a frame size.
func (d *DUT) BurstCapacity(size float64) int64 {
	u := d.Capacity(size) / d.lineFPS(size)
	if u >= 1 {
		return math.MaxInt64
	}
	return int64(float64(d.BufferFrames) / (1 - u))
}

// Engine is the simulated engine.
type Engine struct {
	mu      sync.Mutex
	DUT     DUT
	rng     *rand.Rand
	streams map[int]engine.StreamConfig
	clock   time.Duration
	trials  int
	last    *engine.TrialResult
	// Log of every trial the engine ran.
	Log []engine.TrialConfig
	// Hardware, when set, is what the engine reports of its ports and lcores (the runner's preflight).
	Hardware  *Hardware
	portPolls int
}

// Hardware is the simulated engine's ports and placement.
type Hardware struct {
	// PortNUMA are the ports' NUMA nodes (-1: none).
	PortNUMA [2]int
	// LcoreCPUs and LcoreNUMA are the engine's CPUs and their nodes; MemoryNUMA the nodes of its memory.
	LcoreCPUs, LcoreNUMA, MemoryNUMA []int
	// LinkDownPolls is how many PORT answers report the link down before it comes up (-1: never up).
	LinkDownPolls int
	// SpeedMbps is the link speed (0: the DUT's line rate, -1: none reported); MaxFrame the largest frame
	// (0: 9216).
	SpeedMbps int64
	MaxFrame  int
	// Driver names the ports' PMD (empty: "simulated"); KernelRxQueues the receive queues of the kernel
	// interface behind each port (0: none), KernelFirstRxQueue the first of them each port binds.
	Driver             string
	KernelRxQueues     int
	KernelFirstRxQueue int
	// UnknownLaneFrames is what every received stream counts from sender lanes it keeps no state for (a
	// split test whose receiver was told too few lanes).
	UnknownLaneFrames int64
}

var _ engine.Engine = (*Engine)(nil)

// New makes a simulated engine.
func New(d DUT) *Engine {
	if d.LineRateBps == 0 {
		d.LineRateBps = 10e9
	}
	if d.LatencyNs == 0 {
		d.LatencyNs = 20000
	}
	return &Engine{DUT: d, rng: rand.New(rand.NewPCG(d.Seed, 0x73696d)), streams: map[int]engine.StreamConfig{}}
}

// Clock is the simulated time spent in trials and sleeps.
func (e *Engine) Clock() time.Duration { e.mu.Lock(); defer e.mu.Unlock(); return e.clock }

// Trials counts trials run.
func (e *Engine) Trials() int { e.mu.Lock(); defer e.mu.Unlock(); return e.trials }

// Sleep advances the simulated clock (use it as the DUT rest of a simulated run).
func (e *Engine) Sleep(ctx context.Context, d time.Duration) error {
	e.mu.Lock()
	e.clock += d
	e.mu.Unlock()
	return ctx.Err()
}

// Hello implements engine.Engine.
func (e *Engine) Hello(context.Context) (*engine.Hello, error) {
	h := &engine.Hello{Proto: engine.ProtocolVersion, Engine: "simulated", Ports: 2, TSCHz: 1e9, Lcores: 4}
	if hw := e.Hardware; hw != nil {
		h.LcoreCPUs, h.LcoreNUMA, h.MemoryNUMA = hw.LcoreCPUs, hw.LcoreNUMA, hw.MemoryNUMA
	}
	return h, nil
}

// Port implements engine.Engine.
func (e *Engine) Port(_ context.Context, p engine.PortConfig) (*engine.PortInfo, error) {
	if p.ID < 0 || p.ID > 1 {
		return nil, &engine.Error{Verb: "PORT", Code: "bad-port", Message: fmt.Sprintf("id=%d: the simulation has ports 0 and 1", p.ID)}
	}
	info := &engine.PortInfo{ID: p.ID, MAC: fmt.Sprintf("02:00:00:00:00:%02x", p.ID+1), Driver: "simulated", LinkUp: true, RxChecksums: "ipv4,udp",
		Device: fmt.Sprintf("sim%d", p.ID), NUMA: -1, RxQueues: max(1, e.DUT.RxQueues), TxQueues: max(1, e.DUT.RxQueues), SpeedMbps: int64(e.DUT.LineRateBps / 1e6), MaxFrame: 9216,
		Promiscuous: true, RxMissesCounted: true, RxRing: 1024}
	if hw := e.Hardware; hw != nil {
		e.mu.Lock()
		e.portPolls++
		info.LinkUp = hw.LinkDownPolls >= 0 && e.portPolls > hw.LinkDownPolls
		e.mu.Unlock()
		info.NUMA = hw.PortNUMA[p.ID]
		if hw.SpeedMbps != 0 {
			info.SpeedMbps = max(0, hw.SpeedMbps)
		}
		if hw.MaxFrame > 0 {
			info.MaxFrame = hw.MaxFrame
		}
		if hw.Driver != "" {
			info.Driver = hw.Driver
		}
		info.KernelRxQueues, info.KernelFirstRxQueue = hw.KernelRxQueues, hw.KernelFirstRxQueue
	}
	return info, nil
}

// Resolve implements engine.Engine.
func (e *Engine) Resolve(_ context.Context, port int, _ time.Duration) (string, error) {
	return fmt.Sprintf("02:00:00:00:01:%02x", port+1), nil
}

// Stream implements engine.Engine.
func (e *Engine) Stream(_ context.Context, s engine.StreamConfig) (*engine.StreamInfo, error) {
	if len(s.Sizes) == 0 {
		return nil, &engine.Error{Verb: "STREAM", Code: "bad-value", Message: "sizes: at least one size is needed"}
	}
	// as the engine: a lane per queue pair of the TX port, or the sender's lanes= (1-8) on a stream another
	// engine sends; the client sends lanes= only above 1
	e.mu.Lock()
	defer e.mu.Unlock()
	lanes := max(1, e.DUT.RxQueues)
	switch {
	case s.Lanes > engine.MaxQueuesPerPort:
		return nil, &engine.Error{Verb: "STREAM", Code: "bad-value", Message: fmt.Sprintf("lanes=%d: want an integer from 1 to %d", s.Lanes, engine.MaxQueuesPerPort)}
	case s.Lanes > 0 && s.TX >= 0:
		return nil, &engine.Error{Verb: "STREAM", Code: "bad-value", Message: "lanes=: only for a stream another engine sends (tx=none)"}
	case s.TX < 0:
		lanes = max(1, s.Lanes)
	}
	s.Sizes = append([]int(nil), s.Sizes...)
	e.streams[s.ID] = s
	mean, mn, mx := 0.0, s.Sizes[0], s.Sizes[0]
	for _, z := range s.Sizes {
		mean += float64(z)
		mn, mx = min(mn, z), max(mx, z)
	}
	return &engine.StreamInfo{ID: s.ID, CycleLen: len(s.Sizes), MeanFrame: mean / float64(len(s.Sizes)), MinFrame: mn, MaxFrame: mx, Lanes: lanes}, nil
}

// Close implements engine.Engine.
func (e *Engine) Close() error { return nil }

// RunTrial implements engine.Engine.
func (e *Engine) RunTrial(ctx context.Context, t engine.TrialConfig, progress func(engine.Progress)) (*engine.TrialResult, error) {
	if _, err := engine.TrialArgs(t); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if t.OnStart != nil {
		t.OnStart()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.trials++
	e.Log = append(e.Log, t)
	d := &e.DUT
	dur := t.Duration.Seconds()
	res := &engine.TrialResult{Trial: e.trials, State: engine.StateDone}
	stalled := d.StallAfterTrials > 0 && e.trials >= d.StallAfterTrials
	if stalled {
		stall := t.Stall
		if stall <= 0 {
			stall = 2 * time.Second
		}
		if t.Burst == 0 && stall < t.Duration {
			dur = stall.Seconds()
		}
		res.State, res.Reason = engine.StateAborted, engine.ReasonDUTStalled
	}
	drift := 1 + d.DriftPerHour*e.clock.Hours()
	hiccup := slices.Contains(d.TesterHiccupTrials, e.trials)

	type load struct {
		s      engine.StreamConfig
		mean   float64
		fps    float64
		cap    float64
		target float64
	}
	loads := make([]load, len(t.Streams))
	var sumFPS, sumCapShare float64
	for i, id := range t.Streams {
		s, ok := e.streams[id]
		if !ok {
			return nil, &engine.Error{Verb: "TRIAL", Code: "bad-value", Message: fmt.Sprintf("streams: stream %d is not defined", id)}
		}
		mean := 0.0
		for _, z := range s.Sizes {
			mean += float64(z)
		}
		mean /= float64(len(s.Sizes))
		target := t.RatesFPS[i]
		fps := math.Min(target, d.lineFPS(mean))
		if t.Burst > 0 {
			fps = d.lineFPS(mean)
			target = fps
		}
		if d.TesterMaxFPS > 0 {
			fps = math.Min(fps, d.TesterMaxFPS)
		}
		if d.TesterPortMaxFPS > 0 && fps > d.TesterPortMaxFPS && (len(d.TesterSlowPorts) == 0 || slices.Contains(d.TesterSlowPorts, s.TX)) {
			fps = d.TesterPortMaxFPS
			res.Ports = append(res.Ports, engine.PortCounters{ID: s.TX, TxFull: 1})
		}
		if hiccup {
			fps *= 0.97
		}
		c := d.cycleCapacity(s.Sizes) * drift
		if d.Noise > 0 {
			c *= 1 + d.Noise*e.rng.NormFloat64()
		}
		loads[i] = load{s: s, mean: mean, fps: fps, cap: c, target: target}
		sumFPS += fps
		sumCapShare += fps / c
	}
	for i, l := range loads {
		c := l.cap
		if d.Shared && len(loads) > 1 && sumCapShare > 1 {
			// Shared capacity: the DUT's time is split in proportion to the offered work.
			c = l.fps / sumCapShare
		}
		var tx, lost int64
		if t.Burst > 0 {
			tx = t.Burst
			u := math.Min(1, c/l.fps)
			backlog := float64(tx) * (1 - u)
			lost = int64(math.Max(0, math.Ceil(backlog-float64(d.BufferFrames))))
			dur = math.Max(dur, float64(tx)/l.fps)
		} else {
			// the engine sends every position of its schedule, ceil(fps × duration), a slow rate too
			tx = int64(math.Ceil(l.fps*dur - 1e-9))
			if l.fps > c {
				lost = int64(math.Max(0, math.Round((l.fps-c)*dur-float64(d.BufferFrames))))
			}
		}
		if stalled {
			lost = tx
		}
		var tooBig int64
		fragmenting := false // DF clear: the path fragments what it would refuse (counted once the loss is known)
		if refused := d.refused(l.s.Sizes, tx); refused > 0 && l.s.Fragmentable && (len(d.PathMTUPorts) == 0 || slices.Contains(d.PathMTUPorts, l.s.TX)) {
			fragmenting = true
		} else if refused > 0 && (len(d.PathMTUPorts) == 0 || slices.Contains(d.PathMTUPorts, l.s.TX)) {
			lost += refused
			if !d.PathMTUSilent {
				res.Ports = append(res.Ports, engine.PortCounters{ID: l.s.TX, RxTooBig: refused, TooBigMTU: int64(d.PathMTU)})
				tooBig = refused
			}
			// nothing arrives: the engine's stall check ends a trial longer than it
			stall := t.Stall
			if stall <= 0 {
				stall = 2 * time.Second
			}
			if refused == tx && t.Burst == 0 && res.State == engine.StateDone && stall < t.Duration {
				res.State, res.Reason = engine.StateAborted, engine.ReasonDUTStalled
				dur = stall.Seconds()
			}
		}
		if d.DropEvery > 0 && !stalled {
			lost += (tx - lost) / d.DropEvery
		}
		if d.ColdFraction > 0 && !stalled && t.Burst == 0 {
			cold := d.ColdTime
			if cold == 0 {
				cold = 100 * time.Millisecond
			}
			// frames beyond the cold capacity in the cold time are lost unless the queue holds them; the
			// rest of the trial must also absorb what the queue still holds
			coldS := math.Min(cold.Seconds(), dur)
			if over := (l.fps - c*d.ColdFraction) * coldS; over > float64(d.BufferFrames) {
				lost += int64(math.Round(over - float64(d.BufferFrames)))
			}
		}
		if d.RareLossPerFrame > 0 && !stalled {
			lost += poisson(e.rng, float64(tx-lost)*d.RareLossPerFrame)
		}
		if hiccup {
			lost += (tx - lost) / 50
		}
		lost = min(lost, tx)
		var corrupted int64
		if d.CorruptEvery > 0 && !stalled {
			corrupted = (tx - lost) / d.CorruptEvery
			lost += corrupted
		}
		rx := tx - lost
		// what the schedule asked for, as the engine reports it; whether the shortfall spoils the trial is
		// the runner's rule (engine.Limits), not the simulator's
		scheduled := tx
		if t.Burst == 0 {
			scheduled = int64(math.Ceil(l.target*dur - 1e-9))
		}
		sr := engine.StreamResult{ID: t.Streams[i], TargetFPS: l.target, AchievedFPS: l.fps, ScheduledFrames: scheduled,
			Saturated: tx < scheduled, TxFrames: tx, RxFrames: rx, Corrupted: corrupted,
			TxBytes: int64(float64(tx) * l.mean), RxBytes: int64(float64(rx) * l.mean)}
		if tooBig > 0 {
			sr.RxTooBig, sr.TooBigMTU = tooBig, int64(d.PathMTU)
		}
		sr.Classes = classes(l.s.Sizes, tx, lost)
		var fragmented, fragments int64
		if fragmenting {
			// the frames of the sizes over the MTU that arrived, each size bearing its share of the loss, and
			// each cut into its own number of fragments
			for _, class := range sr.Classes {
				if class.Size-18 <= d.PathMTU {
					continue
				}
				n := class.RxFrames
				if d.FragmentedShare > 0 {
					n = int64(math.Round(float64(n) * d.FragmentedShare))
				}
				fragmented += n
				fragments += n * d.fragmentsOf(class.Size)
			}
		}
		if fragmented = min(fragmented, rx); fragmented > 0 {
			sr.Fragmented, sr.FragmentedWhole, sr.Fragments = fragmented, fragmented, fragments
			if n := min(d.FragmentsUnmatched, fragmented); n > 0 {
				sr.FragmentedWhole -= n
				sr.Fragments -= n
				res.Ports = append(res.Ports, engine.PortCounters{ID: l.s.RX, RxFragmentsUnmatched: n})
			}
		}
		if d.TesterLagAbovePercent > 0 && t.Burst == 0 && l.target > d.TesterLagAbovePercent/100*d.lineFPS(l.mean)*(1+1e-9) {
			sr.TxMaxLagNs, sr.TxPeakFPS = 5_000_000, int64(d.lineFPS(l.mean))
		}
		if rx > 0 {
			sr.Latency = e.latency(l.fps/c, rx, l.mean)
		} else {
			sr.Latency = &engine.Latency{Valid: false, Reason: "no frame received"}
		}
		if d.RxQueues > 1 {
			sr.RxQueues, sr.Early, sr.MaxEarly, sr.MaxLate = d.RxQueues, rx*int64(d.RxQueues-1)/int64(d.RxQueues), int64(d.RxQueues), 1
		} else if rx > 0 {
			sr.RxQueues = 1
		}
		if e.Hardware != nil {
			sr.UnknownLane = e.Hardware.UnknownLaneFrames
		}
		res.Streams = append(res.Streams, sr)
	}
	res.Workers = simWorkers(res.Streams, e.streams)
	res.DurationNs = int64(dur * 1e9)
	e.clock += d.ControlOverhead + t.WarmUp + time.Duration(dur*1e9) + t.Drain
	if progress != nil {
		p := engine.Progress{Trial: res.Trial, State: res.State, Elapsed: time.Duration(dur * 1e9), ElapsedM: int64(dur * 1e3)}
		for _, s := range res.Streams {
			p.Streams = append(p.Streams, engine.StreamCounters{ID: s.ID, TxFrames: s.TxFrames, RxFrames: s.RxFrames})
		}
		progress(p)
	}
	e.last = res
	return res, nil
}

// fragmentsOf is how many fragments the path MTU cuts an IPv4 frame of size bytes into (RFC 791: every
// fragment but the last carries a multiple of 8 bytes of the datagram).
func (d *DUT) fragmentsOf(size int) int64 {
	datagram, per := size-18-20, (d.PathMTU-20)/8*8
	if per <= 0 {
		return 1
	}
	return int64((datagram + per - 1) / per)
}

// refused counts the frames of tx (sent in turn from sizes) over the path MTU.
func (d *DUT) refused(sizes []int, tx int64) int64 {
	if d.PathMTU <= 0 || len(sizes) == 0 {
		return 0
	}
	var n int64
	for i, z := range sizes {
		if z-18 > d.PathMTU {
			n += tx / int64(len(sizes))
			if int64(i) < tx%int64(len(sizes)) {
				n++
			}
		}
	}
	return n
}

// latency models a queue: the idle latency grows as the load u approaches capacity.
func (e *Engine) latency(u float64, count int64, mean float64) *engine.Latency {
	base := e.DUT.LatencyNs + mean*0.8 // serialisation of the frame on a 10G link: 0.8 ns per byte
	q := math.Min(u, 0.98)
	m := base * (1 + q/(1-q)*0.05)
	l := &engine.Latency{Valid: true, Clock: "simulated", Count: count,
		MinNs: int64(base * 0.95), MeanNs: int64(m), P50Ns: int64(m * 0.98), P90Ns: int64(m * 1.1),
		P99Ns: int64(m * 1.3), P999Ns: int64(m * 1.6), P9999Ns: int64(m * 2), MaxNs: int64(m * 2.5),
		JitterNs: int64(base * 0.02)}
	l.PDVNs = l.P999Ns - l.MinNs
	n := float64(count)
	l.Hist = [][2]int64{{l.P50Ns, int64(n * 0.5)}, {l.P90Ns, int64(n * 0.4)}, {l.P99Ns, int64(n * 0.09)},
		{l.P999Ns, int64(n * 0.009)}, {l.P9999Ns, int64(n * 0.0009)}}
	var sum int64
	for _, h := range l.Hist {
		sum += h[1]
	}
	l.Hist = append(l.Hist, [2]int64{l.MaxNs, count - sum})
	return l
}

// classes splits tx and lost over the sizes of the schedule: tx by the schedule, loss in proportion
// (largest remainder, so the classes sum exactly to the totals).
func classes(sizes []int, tx, lost int64) []engine.ClassResult {
	count := map[int]int64{}
	var order []int
	for _, s := range sizes {
		if count[s] == 0 {
			order = append(order, s)
		}
		count[s]++
	}
	n := int64(len(sizes))
	out := make([]engine.ClassResult, len(order))
	var txSum int64
	for i, s := range order {
		out[i] = engine.ClassResult{Size: s, TxFrames: tx / n * count[s]}
		txSum += out[i].TxFrames
	}
	// The remainder of tx falls on the first sizes of the cycle.
	for k := int64(0); k < tx-txSum; k++ {
		s := sizes[k%n]
		for i := range out {
			if out[i].Size == s {
				out[i].TxFrames++
			}
		}
	}
	// the loss falls on the sizes in proportion to their frames, the remainder on the first sizes
	lostOf := make([]int64, len(out))
	var lostSum int64
	for i := range out {
		if tx > 0 {
			lostOf[i] = lost * out[i].TxFrames / tx
		}
		lostSum += lostOf[i]
	}
	for i := 0; lostSum < lost; i = (i + 1) % len(out) {
		if lostOf[i] < out[i].TxFrames {
			lostOf[i]++
			lostSum++
		}
	}
	for i := range out {
		out[i].RxFrames = out[i].TxFrames - lostOf[i]
	}
	return out
}

// poisson draws from a Poisson distribution of the given mean (normal approximation above 30).
func poisson(rng *rand.Rand, mean float64) int64 {
	if mean <= 0 {
		return 0
	}
	if mean > 30 {
		return max(0, int64(math.Round(mean+math.Sqrt(mean)*rng.NormFloat64())))
	}
	l, k, p := math.Exp(-mean), int64(0), 1.0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// simWorkers is the workers record of a worker per port (lcore 1 + port) serving its queue 0.
func simWorkers(results []engine.StreamResult, streams map[int]engine.StreamConfig) []engine.WorkerHealth {
	var ports []int
	frames := map[int]*engine.WorkerQueue{}
	at := func(port int) *engine.WorkerQueue {
		if frames[port] == nil {
			ports = append(ports, port)
			frames[port] = &engine.WorkerQueue{Port: port}
		}
		return frames[port]
	}
	for _, r := range results {
		s := streams[r.ID]
		if s.TX >= 0 {
			at(s.TX).TxFrames += r.TxFrames
		}
		if s.RX >= 0 {
			at(s.RX).RxFrames += r.RxFrames
		}
	}
	slices.Sort(ports)
	var out []engine.WorkerHealth
	for _, p := range ports {
		out = append(out, engine.WorkerHealth{Lcore: 1 + p, Role: "txrx", Ports: []int{p}, Queues: []engine.WorkerQueue{*frames[p]}})
	}
	return out
}
