package engine

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

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

// The engine's limits are the C engine's own, copied: each copy here is read where the engine defines it,
// so the two cannot drift apart unseen (a runner that laid out more workers or queues than the engine
// takes would have it refuse to start; one that sized memory for other ring frames would under-charge the
// pod).
func TestTheLimitsAreTheEnginesOwn(t *testing.T) {
	for _, c := range []struct {
		name    string
		goValue int
		file    string
		cCode   *regexp.Regexp
	}{
		{"MaxWorkers", MaxWorkers, "engine.h", regexp.MustCompile(`(?m)^#define LR_MAX_WORKERS (\d+)\b`)},
		{"MaxQueuesPerPort", MaxQueuesPerPort, "engine.h", regexp.MustCompile(`(?m)^#define LR_MAX_QUEUES (\d+)\b`)},
		{"DefaultMaxFrame", DefaultMaxFrame, "main.c", regexp.MustCompile(`\bmax_frame = (\d+);`)},
		{"AFPacketFrameBytes", AFPacketFrameBytes, "kernel_rx_time.c", regexp.MustCompile(`\.frame_size = (\d+),`)},
	} {
		src, err := os.ReadFile(filepath.Join("..", "..", "dataplane", "src", c.file))
		if err != nil {
			t.Fatal(err)
		}
		m := c.cCode.FindAllSubmatch(src, -1)
		if len(m) != 1 {
			t.Errorf("%s: dataplane/src/%s has %d places matching %s, want the one that defines it", c.name, c.file, len(m), c.cCode)
			continue
		}
		if v, _ := strconv.Atoi(string(m[0][1])); v != c.goValue {
			t.Errorf("%s is %d, the engine's (dataplane/src/%s: %s) %d", c.name, c.goValue, c.file, m[0][0], v)
		}
	}
}
