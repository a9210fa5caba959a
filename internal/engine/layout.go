package engine

// The engine's own limits (dataplane/src/engine.h: LR_MAX_WORKERS, LR_MAX_QUEUES). layout_test.go reads
// them there: a copy that drifts fails it.
const (
	MaxWorkers       = 16
	MaxQueuesPerPort = 8
)

// DefaultMaxFrame is the largest frame linerate-engine buffers without --max-frame (dataplane/src/main.c).
const DefaultMaxFrame = 2048

// AFPacketRingFrames is the depth the runner gives an af_packet port's rings (the PMD's framecnt, of its
// default 2,048-byte frames, one RX and one TX ring per queue pair) unless its devargs say otherwise. The
// engine times af_packet frames by the kernel's receive time, so a worker the host holds up costs the
// latency nothing, only ring room: 4,096 frames hold 400 ms at 10 kframes/s, where the PMD's default 512
// overflowed when a busy host ran the tester 20-40 ms late (the demo's gateways at their limit).
const AFPacketRingFrames = 4096

// AFPacketFrameBytes is the af_packet PMD's ring frame, which the runner leaves at its default (the engine
// reads the rings' geometry as the PMD does: dataplane/src/kernel_rx_time.c).
const AFPacketFrameBytes = 2048

// AFPacketRingBytes is the memory one af_packet queue pair's two rings take, locked and charged to the
// tester's memory.
const AFPacketRingBytes = 2 * AFPacketRingFrames * AFPacketFrameBytes

// WorkerLayout is how many worker lcores the engine gets from cpus usable CPUs (the cpuset within the CPU
// quota, the control lcore's included) for ports ports, and the queue pairs each port then has.
//
// Up to one worker per port, a worker owns its ports whole (port i to worker i mod W). Past that, every
// port gets a queue pair per worker it can use, so the workers are a multiple of the ports (each then
// owns exactly one pair, where one more worker would leave another owning two and be no faster than
// without it), the queues per port a power of two (an 82599 VF takes 1, 2 or 4 RSS queues and refuses
// others) and within the engine's limits. A test split over two nodes is laid out so too, on each side:
// the receiving engine is told the lanes the sending one sends each stream on (Pair.Stream).
func WorkerLayout(cpus, ports int) (workers, queuesPerPort int) {
	ports = max(1, ports)
	workers = max(1, cpus-1) // with a single CPU, control and one worker share it: control sleeps
	if workers <= ports {
		return min(workers, ports), 1
	}
	q := min(workers/ports, MaxQueuesPerPort, max(1, MaxWorkers/ports))
	for q&(q-1) != 0 {
		q &= q - 1 // the highest power of two not above it
	}
	return ports * q, q
}
