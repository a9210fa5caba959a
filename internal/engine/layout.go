package engine

// WorkerLayout is how many worker lcores the engine gets from cpus usable CPUs (the cpuset within the CPU
// quota, the control lcore's included) for ports ports, and the queue pairs each port then has.
//
// Up to one worker per port, a worker owns its ports whole (port i to worker i mod W). Past that, the
// engine gives every port a queue pair per worker it can use (ceil(W / P), the PMD's maximum permitting;
// dataplane/PROTOCOL.md), so the workers are kept a multiple of the ports: each then owns exactly one pair,
// where one more worker would leave another owning two and be no faster than without it. oneQueue keeps
// a worker per port and one queue pair each: an engine whose streams are received by another engine (a
// test split over two nodes) sends each stream on one TX queue, the only lane the other side reads.
func WorkerLayout(cpus, ports int, oneQueue bool) (workers, queuesPerPort int) {
	ports = max(1, ports)
	workers = max(1, cpus-1) // with a single CPU, control and one worker share it: control sleeps
	if oneQueue || workers <= ports {
		return min(workers, ports), 1
	}
	workers -= workers % ports
	return workers, workers / ports
}
