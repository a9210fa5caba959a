package engine

import "testing"

func TestWorkerLayoutTurnsEveryCPUIntoQueuePairs(t *testing.T) {
	for _, c := range []struct {
		name            string
		cpus, ports     int
		oneQueue        bool
		workers, queues int
	}{
		{"one CPU: control and a worker share it", 1, 2, false, 1, 1},
		{"two CPUs, two ports: one worker for both", 2, 2, false, 1, 1},
		{"a worker per port", 3, 2, false, 2, 1},
		{"an odd CPU would give one worker two pairs: left out", 4, 2, false, 2, 1},
		{"two queue pairs per port", 5, 2, false, 4, 2},
		{"four per port", 9, 2, false, 8, 4},
		{"one port takes every CPU, in a power of two", 4, 1, false, 2, 2},
		{"six workers would give three queues, which a VF refuses: two", 7, 2, false, 4, 2},
		{"one port, many CPUs: the engine's 8 queues", 19, 1, false, 8, 8},
		{"two ports, many CPUs: the engine's 16 workers", 33, 2, false, 16, 8},
		{"a split test's engine keeps a worker per port", 9, 1, true, 1, 1},
		{"a sender for another engine keeps a worker per port", 9, 2, true, 2, 1},
		{"a sender with one port keeps one worker", 4, 1, true, 1, 1},
		{"no ports said: one", 3, 0, false, 2, 2},
	} {
		w, q := WorkerLayout(c.cpus, c.ports, c.oneQueue)
		if w != c.workers || q != c.queues {
			t.Errorf("%s: %d CPUs, %d ports: %d workers of %d queue pairs per port, want %d of %d", c.name, c.cpus, c.ports, w, q, c.workers, c.queues)
		}
	}
}
