package engine

import "testing"

func TestWorkerLayoutTurnsEveryCPUIntoQueuePairs(t *testing.T) {
	for _, c := range []struct {
		name            string
		cpus, ports     int
		workers, queues int
	}{
		{"one CPU: control and a worker share it", 1, 2, 1, 1},
		{"two CPUs, two ports: one worker for both", 2, 2, 1, 1},
		{"a worker per port", 3, 2, 2, 1},
		{"an odd CPU would give one worker two pairs: left out", 4, 2, 2, 1},
		{"two queue pairs per port", 5, 2, 4, 2},
		{"four per port", 9, 2, 8, 4},
		{"one port takes every CPU, in a power of two", 4, 1, 2, 2},
		{"six workers would give three queues, which a VF refuses: two", 7, 2, 4, 2},
		{"one port, many CPUs: the engine's 8 queues", 19, 1, 8, 8},
		{"two ports, many CPUs: the engine's 16 workers", 33, 2, 16, 8},
		{"no ports said: one", 3, 0, 2, 2},
	} {
		w, q := WorkerLayout(c.cpus, c.ports)
		if w != c.workers || q != c.queues {
			t.Errorf("%s: %d CPUs, %d ports: %d workers of %d queue pairs per port, want %d of %d", c.name, c.cpus, c.ports, w, q, c.workers, c.queues)
		}
	}
}
