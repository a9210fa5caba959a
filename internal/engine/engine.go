// Package engine is the runner's view of the DPDK traffic engine (dataplane/PROTOCOL.md): the Engine
// interface the RFC 2544 procedures use, a Client that speaks the control protocol over a unix or tcp
// socket, Pair, which drives a stream split over two engines as one, what a trial reports and the rules
// that judge the tester's health from it, and the engine's limits that lay its workers out. It speaks the
// protocol only: starting linerate-engine is internal/enginestart's, and finding each port's device
// internal/devices'.
//
// A simulated engine for tests and benchmarks lives in the sub-package sim; it is never used by the
// production paths.
package engine

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Engine is what the methodology needs from a traffic generator/analyser.
type Engine interface {
	// Hello checks the engine speaks this package's protocol version (ProtocolVersion) and tells what it has.
	Hello(ctx context.Context) (*Hello, error)
	// Port sets the addressing of a port.
	Port(ctx context.Context, cfg PortConfig) (*PortInfo, error)
	// Resolve resolves a port's next hop (no-op for ports with a static peer MAC).
	Resolve(ctx context.Context, port int, timeout time.Duration) (string, error)
	// Stream defines or redefines a stream.
	Stream(ctx context.Context, cfg StreamConfig) (*StreamInfo, error)
	// RunTrial runs one trial to its end, reporting live counters to progress (may be nil) about once
	// a second. A trial the engine aborted (DUT stalled) returns a result with State "aborted" and no
	// error; err is for failures of the engine or of the connection. When ctx ends the trial is aborted.
	RunTrial(ctx context.Context, cfg TrialConfig, progress func(Progress)) (*TrialResult, error)
	// Close releases the engine (the connection; a Process also stops the engine).
	Close() error
}

// Quieter rests the DUT until nothing has arrived on the engine's ports for quiet, or for most at most:
// the Client (QUIET), which RunTrial calls for TrialConfig.Quiet; Pair rests both engines at once.
type Quieter interface {
	Quiet(ctx context.Context, quiet, most time.Duration) (Rest, error)
}

// Hello is the engine's greeting.
type Hello struct {
	Proto  int    `json:"proto"`
	Engine string `json:"engine"`
	Ports  int    `json:"ports"`
	TSCHz  int64  `json:"tsc_hz"`
	Lcores int    `json:"lcores"`
	// LcoreCPUs are the CPUs the engine's lcores run on, and LcoreNUMA their NUMA nodes (same order).
	LcoreCPUs []int `json:"lcore_cpus"`
	LcoreNUMA []int `json:"lcore_numa"`
	// MemoryNUMA are the NUMA nodes that hold the engine's frame memory (its hugepages).
	MemoryNUMA []int `json:"memory_numa"`
	// Spin says the workers never sleep (--spin: dedicated cores). Otherwise a worker with nothing due
	// sleeps until its next frame, a frame arriving on a socket the kernel wakes it for (af_packet), or at
	// most RxSleepUs on any other RX queue in a trial (0: it spins while such a queue is in a trial).
	Spin      bool `json:"spin"`
	RxSleepUs int  `json:"rx_sleep_us"`
}

// PortConfig addresses one DPDK port.
type PortConfig struct {
	ID      int
	IP4     string // address/len
	GW4     string
	IP6     string
	GW6     string
	PeerMAC string
	VLAN    int
}

// PortInfo is what the engine says about a port.
type PortInfo struct {
	ID     int    `json:"id"`
	MAC    string `json:"mac"`
	Driver string `json:"driver"`
	// Device is the PCI address of a PCI port (a VF), the vdev name of a virtual one.
	Device string `json:"device"`
	// NUMA is the device's NUMA node, -1 when it has none.
	NUMA      int   `json:"numa"`
	RxQueues  int   `json:"rx_queues"`
	TxQueues  int   `json:"tx_queues"`
	LinkUp    bool  `json:"link_up"`
	SpeedMbps int64 `json:"speed_mbps"`
	MaxFrame  int   `json:"max_frame"`
	// RxChecksums lists the checksums the port verifies on receipt ("ipv4,udp"; empty: none). Only on
	// such a port are frames the DUT corrupted told apart (StreamResult.Corrupted).
	RxChecksums string `json:"rx_checksums"`
	// KernelRxQueues are the receive queues of the kernel interface behind the port (af_packet, af_xdp;
	// 0: none). af_packet receives from all of them; af_xdp only from the RxQueues it binds.
	KernelRxQueues int `json:"kernel_rx_queues"`
	// Promiscuous says the port receives frames for any MAC (foreign frames counted). False when the
	// port refused it (an 82599 VF's PF does) or cannot confirm it (an ixgbe or iavf VF's PF says yes
	// to an untrusted VF and grants less): the port then sees only its own MAC, broadcast and multicast.
	Promiscuous bool `json:"promiscuous"`
	// RxMissesCounted: see PortCounters. RxRing is the frames its RX ring holds.
	RxMissesCounted bool `json:"rx_misses_counted"`
	RxRing          int  `json:"rx_ring"`
	// VLANFilter says the port receives only the VLANs it asks for (an SR-IOV VF): PORT vlan= asks for the
	// test's, and a driver's refusal is PORT's error.
	VLANFilter bool `json:"vlan_filter"`
	// KernelFirstRxQueue is the first of those queues the port binds (an af_xdp port's start_queue; 0 for
	// the others): RSS fills them from queue 0, and an af_xdp port starting past it misses the ones before.
	KernelFirstRxQueue int `json:"kernel_first_rx_queue"`
	// RxTimestamps says what times a received frame: "kernel", the kernel's receive time (an af_packet
	// port, its ring read a second time), so a worker that slept or was run late adds nothing to the
	// latency; "poll", when the worker read it.
	RxTimestamps string `json:"rx_timestamps"`
	// RxWake says how a sleeping worker learns of the port's frames: "kernel" (its sockets wake it),
	// "poll" (it looks again within Hello.RxSleepUs, or spins in a trial when that is 0), "spin".
	RxWake string `json:"rx_wake"`
}

// StreamConfig defines a stream: frames leave port TX and are expected on port RX; a negative TX or RX
// means another engine sends or receives it (PROTOCOL.md, split streams).
type StreamConfig struct {
	ID      int
	TX, RX  int
	L3      string // ipv4 or ipv6
	Src     string
	Dst     string
	SPort   int
	DPort   int
	Flows   int
	Vary    []string // sport, dport, src, dst
	DSCP    int
	Payload string // zeros, random, incrementing
	Sizes   []int  // frame n has size Sizes[n % len]
	// Lanes is, for a stream another engine sends (TX < 0), the lanes that engine sends it on (its
	// StreamInfo.Lanes): the receiver keeps a sequence window per lane. 0: one. Refused when TX >= 0.
	Lanes int
	// Fragmentable clears IPv4's DF bit (STREAM df=0): a hop may fragment the frames, and the receiver
	// counts those that arrived so (StreamResult.Fragmented). Refused for IPv6.
	Fragmentable bool
}

// StreamInfo is what the engine made of a stream definition.
type StreamInfo struct {
	ID        int     `json:"id"`
	CycleLen  int     `json:"cycle_len"`
	MeanFrame float64 `json:"mean_frame"`
	MinFrame  int     `json:"min_frame"`
	MaxFrame  int     `json:"max_frame"`
	// Lanes are the lanes the stream is sent on by this engine (its TX port's queue pairs), or, received
	// only, the lanes it keeps state for.
	Lanes int `json:"lanes"`
}

// TrialConfig starts a trial. Rates are in frames per second, one per stream.
type TrialConfig struct {
	Streams  []int
	RatesFPS []float64
	Duration time.Duration
	WarmUp   time.Duration
	Drain    time.Duration
	// Burst, when > 0, sends exactly Burst frames per stream back to back instead of Duration.
	Burst int64
	// Stall aborts the trial when nothing arrives on a stream's RX port for this long (0: engine default).
	Stall time.Duration
	// Quiet, when > 0, rests the DUT before the trial until nothing has arrived on any of the engine's
	// ports for this long, at most QuietMax more (0: the engine's default, 10 s): it settles from an
	// earlier trial it was still forwarding (Quieter).
	Quiet, QuietMax time.Duration
	// ID numbers the trial explicitly (0: the engine's next number); two engines of a split stream
	// must agree on it, since frames carry it.
	ID int
	// Timeline, when set, keeps the trial's timeline (Timeliner reads it; a paced trial of streams one
	// engine both sends and receives).
	Timeline *TimelineConfig
	// OnStart, when set, is called once as the trial starts: after the DUT's rest, just before the engine
	// is told to begin (the warm-up). What is read beside the trial (the DUT's CPU time) starts there.
	OnStart func()
}

// Progress is the live state of a trial.
type Progress struct {
	Trial    int              `json:"trial"`
	State    string           `json:"state"`
	Elapsed  time.Duration    `json:"-"`
	ElapsedM int64            `json:"elapsed_ms"`
	Streams  []StreamCounters `json:"streams"`
}

// StreamCounters are live counters of one stream.
type StreamCounters struct {
	ID       int   `json:"id"`
	TxFrames int64 `json:"tx_frames"`
	RxFrames int64 `json:"rx_frames"`
}

// Trial states.
const (
	StateDone    = "done"
	StateAborted = "aborted"
)

// Abort reasons.
const (
	ReasonDUTStalled = "dut-stalled"
	ReasonAborted    = "aborted"
)

// TrialResult is the full result of a finished trial.
type TrialResult struct {
	Trial      int    `json:"trial"`
	State      string `json:"state"`
	Reason     string `json:"reason"`
	DurationNs int64  `json:"duration_ns"`
	// QuietWaitNs is how long the DUT rested before the trial (TrialConfig.Quiet); QuietMissed says it was
	// still forwarding after QuietMax, and the trial began all the same.
	QuietWaitNs int64          `json:"-"`
	QuietMissed bool           `json:"-"`
	Streams     []StreamResult `json:"streams"`
	Ports       []PortCounters `json:"ports"`
	// Workers say how each worker lcore kept up during the trial (two engines: both engines' workers).
	Workers []WorkerHealth `json:"workers"`
}

// WorkerHealth is what one worker lcore reports about itself for a trial.
type WorkerHealth struct {
	Lcore int `json:"lcore"`
	// Role is txrx: the worker sends and receives on the queue pairs it owns.
	Role string `json:"role"`
	// Ports are the ports the worker serves a queue pair of, each once.
	Ports []int `json:"ports"`
	// Queues are the queue pairs the worker served, with the frames each RX queue received: how the
	// port's RSS (or af_packet's flow-hash fanout) spread the traffic.
	Queues []WorkerQueue `json:"queues,omitempty"`
	// MaxGapNs is the longest time between two passes of the worker's loop while the trial measured or
	// drained, beyond any sleep it chose (a sleep that ended late counts its lateness): frames waited that
	// long in a ring, and, on a port without kernel receive times, their latency grew by as much.
	MaxGapNs int64 `json:"max_gap_ns"`
	// SleptNs is how long the worker slept in the trial, in Sleeps sleeps (idle workers sleep: Hello.Spin).
	SleptNs int64 `json:"slept_ns"`
	Sleeps  int64 `json:"sleeps"`
}

// WorkerQueue is one queue pair (an RX and a TX queue of a port) a worker served in a trial.
type WorkerQueue struct {
	Port  int `json:"port"`
	Queue int `json:"queue"`
	// RxFrames are all frames the RX queue received in the trial (test frames, ARP, foreign ones).
	RxFrames int64 `json:"rx_frames"`
	// TxFrames are the test frames the TX queue sent: the lanes of the trial's streams it carried (a
	// stream whose TX port has several queues is sent by each, at its share of the rate).
	TxFrames int64 `json:"tx_frames"`
}

// Aborted says whether the trial was cut short.
func (r *TrialResult) Aborted() bool { return r.State == StateAborted }

// Port returns the counters of port id, or nil.
func (r *TrialResult) Port(id int) *PortCounters {
	for i := range r.Ports {
		if r.Ports[i].ID == id {
			return &r.Ports[i]
		}
	}
	return nil
}

// Stream returns the result of stream id, or nil.
func (r *TrialResult) Stream(id int) *StreamResult {
	for i := range r.Streams {
		if r.Streams[i].ID == id {
			return &r.Streams[i]
		}
	}
	return nil
}

// StreamResult is what one stream sent and received.
type StreamResult struct {
	ID           int     `json:"id"`
	TargetFPS    float64 `json:"target_fps"`
	AchievedFPS  float64 `json:"achieved_fps"`
	Saturated    bool    `json:"saturated"`
	TxFrames     int64   `json:"tx_frames"`
	TxBytes      int64   `json:"tx_bytes"`
	RxFrames     int64   `json:"rx_frames"`
	RxBytes      int64   `json:"rx_bytes"`
	Duplicates   int64   `json:"duplicates"`
	Reordered    int64   `json:"reordered"`
	Early        int64   `json:"early"`
	Late         int64   `json:"late"`
	BeyondWindow int64   `json:"beyond_window"`
	MaxLate      int64   `json:"max_late"`
	MaxEarly     int64   `json:"max_early"`
	// UnknownLane frames came from a sender lane the receiver keeps no state for (a split stream's
	// receiving engine told fewer lanes than its sender sends on): the tester's set-up, not the DUT's loss.
	UnknownLane int64 `json:"unknown_lane"`
	// Corrupted frames arrived with a bad IPv4 header or UDP checksum (on ports that verify them): they
	// are not counted as received, so each is lost unless an intact copy of it arrived too.
	Corrupted int64 `json:"corrupted"`
	// TxMaxLagNs is how far the stream fell behind its TX schedule (a preempted worker sends late, in
	// bursts): a trial with a large lag did not offer the paced rate.
	TxMaxLagNs int64 `json:"tx_max_lag_ns"`
	// ScheduledFrames is what the trial asked the stream to send: ceil(duration × rate), or the burst.
	ScheduledFrames int64 `json:"scheduled_frames"`
	// TxPeakFPS is the highest rate over any 1 ms window of the measurement (the most frames sent in a
	// window × 1000): a stream on schedule stays within one TX burst of its target.
	TxPeakFPS int64 `json:"tx_peak_fps"`
	// RxQueues is how many RX queues the stream's measured frames arrived on. Counts are merged exactly
	// over queues (a flow, and so a duplicate, stays on one queue); reordering is counted within each
	// queue and sender lane, and Early overstates when this is above 1 (a queue's gaps include the other
	// queues' flows).
	RxQueues int `json:"rx_queues"`
	// RxTooBig counts the ICMP errors refusing the stream's frames as too big for a hop's MTU that came back
	// to its TX port (PortCounters.RxTooBig counts them for all streams), TooBigMTU the smallest MTU they
	// named (0: none).
	RxTooBig  int64 `json:"rx_too_big"`
	TooBigMTU int64 `json:"too_big_mtu"`
	// Fragmented frames arrived in fragments (sent with DF clear, fragmented by a hop): RxFrames counts
	// them by their first fragment, which carries the tag. FragmentedWhole are those of them every fragment
	// of which arrived, and Fragments the fragments of them that arrived, first ones included.
	Fragmented      int64 `json:"fragmented"`
	FragmentedWhole int64 `json:"fragmented_whole"`
	Fragments       int64 `json:"fragments"`
	// FragmentedAreLost is the runner's choice (spec.traffic.fragmentedFrames Lost): a frame that arrived in
	// fragments counts as lost, whole or not. Not the engine's.
	FragmentedAreLost bool          `json:"-"`
	Latency           *Latency      `json:"latency,omitempty"`
	Classes           []ClassResult `json:"classes,omitempty"`
}

// Lost counts the frames sent that never arrived intact: tx − (rx − duplicates), never negative, where a
// frame that arrived in fragments is received only if every fragment came (and not at all when
// FragmentedAreLost). This is the one place loss is computed: the engine reports the counts, and when a
// stream's two halves come from two engines (Pair) only the runner has them both.
func (s *StreamResult) Lost() int64 {
	// (never more whole than fragmented: a count the engine got wrong must not hide loss)
	received := s.RxFrames - s.Duplicates - max(0, s.Fragmented-s.FragmentedWhole)
	if s.FragmentedAreLost {
		received -= s.FragmentedWhole
	}
	return lostFrames(s.TxFrames, received)
}

// LossPercent is lost × 100 / tx (0 when nothing was sent).
func (s *StreamResult) LossPercent() float64 { return LossPercent(s.Lost(), s.TxFrames) }

func lostFrames(tx, rxUnique int64) int64 { return max(0, tx-rxUnique) }

// LossPercent is lost × 100 / tx, 0 when nothing was sent.
func LossPercent(lost, tx int64) float64 {
	if tx <= 0 {
		return 0
	}
	return float64(lost) * 100 / float64(tx)
}

// Latency is the per-frame latency distribution of a stream.
type Latency struct {
	Valid    bool   `json:"valid"`
	Clock    string `json:"clock"`
	Count    int64  `json:"count"`
	MinNs    int64  `json:"min_ns"`
	MeanNs   int64  `json:"mean_ns"`
	MaxNs    int64  `json:"max_ns"`
	P50Ns    int64  `json:"p50_ns"`
	P90Ns    int64  `json:"p90_ns"`
	P99Ns    int64  `json:"p99_ns"`
	P999Ns   int64  `json:"p999_ns"`
	P9999Ns  int64  `json:"p9999_ns"`
	PDVNs    int64  `json:"pdv_ns"`
	JitterNs int64  `json:"jitter_ns"`
	// Hist is [upper bound, count] of every bucket that holds a frame; HistSub the buckets per power of two
	// (the engine's: exact below it), from which each bucket's bounds follow. ResolutionNs is how far the
	// reported percentiles may be from the samples they stand for (half p99.99's bucket).
	Hist         [][2]int64 `json:"hist,omitempty"`
	HistSub      int64      `json:"hist_sub,omitempty"`
	ResolutionNs int64      `json:"resolution_ns"`
	Reason       string     `json:"reason,omitempty"`
	// Negative counts frames received "before" their stamp (two clocks further apart than the latency).
	Negative int64 `json:"negative,omitempty"`
	// ClockBoundNs bounds the error of a latency measured across two engines' clocks (Pair); 0 for one
	// engine's own clock.
	ClockBoundNs int64 `json:"-"`
}

// ClassResult is the count of one frame size of a stream's size schedule.
type ClassResult struct {
	Size     int   `json:"size"`
	TxFrames int64 `json:"tx_frames"`
	RxFrames int64 `json:"rx_frames"`
}

// Lost counts the frames of this size sent that never arrived (a class has no duplicates of its own).
func (c ClassResult) Lost() int64 { return lostFrames(c.TxFrames, c.RxFrames) }

// PortCounters are per-port counters of a trial.
type PortCounters struct {
	ID int `json:"id"`
	// RxKernelTimed are the measured frames timed by the kernel's receive time (PortInfo.RxTimestamps),
	// RxPollTimed those timed when the worker read them (no kernel time matched the frame). RxWaitMaxNs is
	// the longest a kernel-timed frame waited in its ring for the worker: the receiver's own lag, which
	// the kernel's time keeps out of the latency.
	RxKernelTimed int64 `json:"rx_kernel_timed"`
	RxPollTimed   int64 `json:"rx_poll_timed"`
	RxWaitMaxNs   int64 `json:"rx_wait_max_ns"`
	// RxMissesCounted says the port's drops on receipt are counted (IMissed, or RxKernelDrops for af_packet);
	// an 82599 VF counts none, and a driver the engine does not know is taken not to. Where they are not,
	// RxRing (the frames its RX ring holds), RxPeakFPS (the most frames it received over any 1 ms, × 1000)
	// and RxUnreadMaxNs (the longest its ring was left unread: frames' waits by the kernel's times, else its
	// workers' longest gap and the sleep they may choose) bound whether its ring could have overflowed.
	RxMissesCounted bool  `json:"rx_misses_counted"`
	RxRing          int64 `json:"rx_ring"`
	RxPeakFPS       int64 `json:"rx_peak_fps"`
	RxUnreadMaxNs   int64 `json:"rx_unread_max_ns"`
	RxForeign       int64 `json:"rx_foreign"`
	// RxStale counts the tester's frames of an earlier trial that arrived during this one: the DUT was
	// still forwarding an earlier load.
	RxStale int64 `json:"rx_stale"`
	RxARP   int64 `json:"rx_arp"`
	TxARP   int64 `json:"tx_arp"`
	// IMissed counts frames the port's receive queue had no room for; RxNoMbuf those dropped because
	// the engine's pool was empty; RxKernelDrops those the kernel dropped because an af_packet port's
	// ring was full. All are the tester's own drops, never the DUT's.
	IMissed       int64 `json:"imissed"`
	RxNoMbuf      int64 `json:"rx_nombuf"`
	RxKernelDrops int64 `json:"rx_kernel_drops"`
	// RxKernelUnread counts an af_packet port's sockets whose drops this trial's read could not reach:
	// RxKernelDrops is then short of the kernel's drops by an unknown number.
	RxKernelUnread int64 `json:"rx_kernel_unread"`
	// RxKernelRollovers are frames the kernel moved from one of an af_packet port's sockets (queues) to
	// another because its ring was nearly full: their flows arrived on two queues, whose windows count
	// duplicates and order apart, so the trial's counts are not exact.
	RxKernelRollovers int64 `json:"rx_kernel_rollovers"`
	IErrors           int64 `json:"ierrors"`
	OErrors           int64 `json:"oerrors"`
	// TxAllocFail counts frames the engine could not build because its TX pool was empty.
	TxAllocFail int64 `json:"tx_alloc_fail"`
	// TxFull counts the bursts of test frames the port's TX queue took only in part: a saturated
	// stream on a port that was full was limited by the port, not by the engine's CPU.
	TxFull int64 `json:"tx_full"`
	// RxBadChecksum counts every frame the port found with a bad checksum, test frame or not.
	RxBadChecksum int64 `json:"rx_bad_checksum"`
	// RxTooBig counts the ICMP errors (IPv4 "fragmentation needed", ICMPv6 "packet too big") that arrived
	// quoting one of the tester's frames: a hop refused frames that left by this port as too big for its
	// MTU. TooBigMTU is the smallest MTU they named (0: none named one).
	RxTooBig  int64 `json:"rx_too_big"`
	TooBigMTU int64 `json:"too_big_mtu"`
	// RxFragmentsUnmatched are IPv4 fragments of UDP whose first fragment never came to them on their RX
	// queue (the DUT lost it, it came on another queue, or a hash collision took their slot), counted when
	// another datagram takes their slot.
	RxFragmentsUnmatched int64 `json:"rx_fragments_unmatched"`
}

// Error is an error response of the engine.
type Error struct {
	Verb    string
	Code    string
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("engine %s: %s: %s", e.Verb, e.Code, e.Message)
}

// ErrClosed is returned after Close.
var ErrClosed = errors.New("engine: connection closed")

// ErrProtocolVersion is an engine that answered HELLO with another protocol version than this package's:
// an answer, not a failure to retry.
var ErrProtocolVersion = errors.New("engine: another protocol version")

// L1FPS converts an L1 bit rate into frames/s for a mean frame size (20 B preamble + gap per frame).
func L1FPS(l1bps float64, meanFrame float64) float64 { return l1bps / ((meanFrame + 20) * 8) }

// HistBucket is the bucket of an engine latency histogram whose upper bound is upper, with sub buckets per
// power of two (exact below sub; 0: every bucket exact): its lower bound and width.
func HistBucket(upper, sub int64) (lower, width int64) {
	if sub <= 0 || upper < sub {
		return upper, 1
	}
	width = 1
	for v := upper; v >= 2*sub; v >>= 1 {
		width <<= 1
	}
	return upper - width + 1, width
}
