package engine

import (
	"fmt"
	"strings"
	"time"
)

// ProtocolVersion is the control protocol this package speaks (dataplane/PROTOCOL.md).
const ProtocolVersion = 11

// Limits are how far the tester's own health may fall before a trial is invalid: neither a pass nor a fail
// of the DUT, because the tester, not the DUT, made part of what was measured. The defaults are met by an
// engine on dedicated cores (an 82599 VF tester, or this project's tests on an idle machine); a tester that
// shares its CPU breaks them, and its results then say so instead of blaming the DUT.
type Limits struct {
	// MaxTxLag is how far a stream may fall behind its TX schedule. A stream L behind at r frames/s sends
	// r·L frames back to back when it runs again: a burst the DUT's buffers, not its forwarding rate,
	// must absorb. Default 1 ms: no pause of an engine on a dedicated core comes near it, and a CFS
	// quota or a busy shared core exceeds it at once.
	MaxTxLag time.Duration
	// MaxShortfall is the fraction of the scheduled frames a stream may fail to send (default 0.001).
	MaxShortfall float64
	// MaxWorkerGap bounds the longest pause of a worker while the trial's latency is measured: a frame
	// that waited in the tester's ring has the wait in its latency (default 1 ms). It does not apply to
	// trials measuring loss alone, where a pause shows as ring drops if it did harm.
	MaxWorkerGap time.Duration
}

// DefaultLimits are the limits of an engine on dedicated cores.
func DefaultLimits() Limits {
	return Limits{MaxTxLag: time.Millisecond, MaxShortfall: 0.001, MaxWorkerGap: time.Millisecond}
}

// WithDefaults fills the limits left zero.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits()
	if l.MaxTxLag <= 0 {
		l.MaxTxLag = d.MaxTxLag
	}
	if l.MaxShortfall <= 0 {
		l.MaxShortfall = d.MaxShortfall
	}
	if l.MaxWorkerGap <= 0 {
		l.MaxWorkerGap = d.MaxWorkerGap
	}
	return l
}

// TesterFaults lists, one sentence each, how the tester spoiled the trial for the given streams: frames its
// ports or kernel rings dropped on receipt, frames it could not build or send, a stream that fell behind
// its schedule (and so burst) or sent fewer frames than scheduled. An empty list is a trial the tester kept
// clean. Port counters are the engine's for the whole trial: a trial runs the tester alone, so any drop of
// its is this trial's.
func (r *TrialResult) TesterFaults(streams []int, lim Limits) []string {
	lim = lim.WithDefaults()
	var out []string
	for _, p := range r.Ports {
		if n := p.IMissed + p.RxKernelDrops; n > 0 {
			out = append(out, fmt.Sprintf("port %d dropped %d frames on receipt itself (ring full: %d, kernel ring full: %d)",
				p.ID, n, p.IMissed, p.RxKernelDrops))
		}
		if p.RxNoMbuf > 0 {
			// apart from the rings' drops: a pool that ran dry is short of buffers, not of CPU
			out = append(out, fmt.Sprintf("port %d had no buffer for %d frames it received (its mbuf pool ran dry)", p.ID, p.RxNoMbuf))
		}
		if p.RxKernelUnread > 0 {
			out = append(out, fmt.Sprintf("port %d: the kernel's drop counts of %d of its af_packet receive rings could not be read (a socket gone or refusing PACKET_STATISTICS, or /proc/self/fd unreadable): frames the kernel dropped there would count as lost by the DUT",
				p.ID, p.RxKernelUnread))
		}
		if p.RxKernelRollovers > 0 {
			out = append(out, fmt.Sprintf("port %d: the kernel moved %d frames to another of its receive queues (af_packet fanout rollover, a ring nearly full): their flows arrived on two queues, and duplicates and order are no longer counted exactly",
				p.ID, p.RxKernelRollovers))
		}
		if !p.RxMissesCounted && p.RxRing > 0 && p.RxUnreadMaxNs*p.RxPeakFPS >= p.RxRing*int64(time.Second) {
			// the port cannot count its own drops: whether its ring overflowed is judged by how long it was
			// left and how fast frames came; a loss that may be the tester's is never booked as the DUT's
			out = append(out, fmt.Sprintf("port %d counts none of the frames its receive ring drops (its driver reports no misses, as an 82599 VF) and was left unread for %s while frames arrived at up to %d/s: its ring of %d frames may have overflowed on receipt itself, so loss in this trial may be the tester's",
				p.ID, time.Duration(p.RxUnreadMaxNs).Round(time.Microsecond), p.RxPeakFPS, p.RxRing))
		}
		if p.IErrors > 0 {
			out = append(out, fmt.Sprintf("port %d counted %d receive errors", p.ID, p.IErrors))
		}
		if n := p.OErrors + p.TxAllocFail; n > 0 {
			out = append(out, fmt.Sprintf("port %d failed to send %d frames (transmit errors: %d, no buffer: %d)", p.ID, n, p.OErrors, p.TxAllocFail))
		}
	}
	for _, id := range streams {
		s := r.Stream(id)
		if s != nil && s.UnknownLane > 0 {
			out = append(out, fmt.Sprintf("stream %d: %d frames arrived from sender lanes its receiver keeps no state for (the receiving engine was told fewer lanes than the sender sends on): counted as lost by the tester, not the DUT",
				id, s.UnknownLane))
		}
		if s == nil || s.ScheduledFrames == 0 {
			continue // a receive-only half, or a trial that sent nothing of this stream
		}
		if lag := time.Duration(s.TxMaxLagNs); lag > lim.MaxTxLag {
			out = append(out, fmt.Sprintf("stream %d fell %s behind its schedule (limit %s) and sent what it owed in a burst (peak %d frames/s over 1 ms against %.0f paced)",
				id, lag.Round(time.Microsecond), lim.MaxTxLag, s.TxPeakFPS, s.TargetFPS))
		}
		if short := s.ScheduledFrames - s.TxFrames; r.State == StateDone && float64(short) > lim.MaxShortfall*float64(s.ScheduledFrames) {
			out = append(out, fmt.Sprintf("stream %d sent %d of %d scheduled frames (%.2f%% short, limit %.2f%%)",
				id, s.TxFrames, s.ScheduledFrames, 100*float64(short)/float64(s.ScheduledFrames), 100*lim.MaxShortfall))
		}
	}
	return out
}

// loadMarks are words that only the faults of a host short of CPU carry: a stream behind or short of its
// schedule, frames the tester's own rings (or the kernel's under them) dropped or rolled over, a worker that
// paused. More CPU cures each of them; it cures none of the others.
var loadMarks = []string{"behind its schedule", "scheduled frames", "on receipt itself", "to another of its receive queues", "paused for", "left unread"}

// ExplainedByLoad says whether a fault of TesterFaults or WorkerPauses is one a host short of CPU causes.
// The others (drop counts that could not be read, receive or send errors, lanes the receiver keeps no
// state for) are a set-up or engine defect: a test that accepts a spoiled trial as load must not accept them.
func ExplainedByLoad(fault string) bool {
	for _, m := range loadMarks {
		if strings.Contains(fault, m) {
			return true
		}
	}
	return false
}

// WorkerPauses lists the workers that paused longer than the limit while the trial measured or drained:
// the frames that waited for them carry the wait in their latency, so the trial's latency is the tester's
// as much as the DUT's. A worker whose ports timed every frame by the kernel's receive time (af_packet:
// PortCounters.RxPollTimed 0) is not listed: the wait is not in their latency, its sending is judged by
// its streams' lag, and its rings' drops are faults of their own.
func (r *TrialResult) WorkerPauses(lim Limits) []string {
	lim = lim.WithDefaults()
	var out []string
	for _, w := range r.Workers {
		if r.kernelTimed(w.Ports) {
			continue
		}
		if gap := time.Duration(w.MaxGapNs); gap > lim.MaxWorkerGap {
			out = append(out, fmt.Sprintf("the %s worker on lcore %d (ports %v) paused for %s (limit %s): frames waited in the tester, and their latency shows it",
				w.Role, w.Lcore, w.Ports, gap.Round(time.Microsecond), lim.MaxWorkerGap))
		}
	}
	return out
}

// kernelTimed says whether the given ports' frames were timed by the kernel while the trial measured: some
// were, and none by the worker's poll. Ports that say nothing of it (an engine that cannot tell) are not.
func (r *TrialResult) kernelTimed(ports []int) bool {
	kernel := false
	for _, id := range ports {
		for _, p := range r.Ports {
			if p.ID != id {
				continue
			}
			if p.RxPollTimed > 0 {
				return false
			}
			kernel = kernel || p.RxKernelTimed > 0
		}
	}
	return kernel
}
