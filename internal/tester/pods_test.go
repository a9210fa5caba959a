package tester

import (
	"testing"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/plan"
)

// The memory for sequence windows grows with the RX queues the pod's CPUs give each port: a queue's
// window spans all the stream's numbers, whatever share of its flows the queue gets.
func TestWindowMemoryCountsEveryRXQueue(t *testing.T) {
	// 2 s + 1 s warm-up + 2 s drain + 1 s at 10 GbE: 89.3 M frames, 10.7 MiB of bits per stream and queue
	base := plan.Plan{Traffic: plan.Traffic{LineRateBps: 10e9, Direction: v1alpha1.Bidirectional},
		Durations: plan.Durations{SearchTrial: 2 * time.Second, WarmUp: time.Second, Drain: 2 * time.Second},
		Ports:     []plan.Port{{Name: "west"}, {Name: "east"}}}
	split := base
	split.Ports = []plan.Port{{Name: "west", Node: "a"}, {Name: "east", Node: "b"}}
	for _, c := range []struct {
		name  string
		p     plan.Plan
		ports []int
		cpus  int
		mib   int64
	}{
		{"a worker per port: one queue each, two streams received", base, []int{0, 1}, 3, 22},
		{"an odd CPU adds no queue", base, []int{0, 1}, 4, 22},
		{"two queue pairs per port", base, []int{0, 1}, 5, 43},
		{"four", base, []int{0, 1}, 9, 86},
		// a window per sender lane on each queue, each lane's holding its share of the numbers: per queue
		// the stream's whole span again, whatever the sender's lanes
		{"a split test's pod receives one stream, on its one port's 4 queue pairs", split, []int{1}, 5, 43},
		{"a split test's pod of 2 CPUs: one queue pair", split, []int{1}, 2, 11},
	} {
		q := windowMemory(&c.p, c.ports, c.cpus)
		if got := q.Value() >> 20; got != c.mib {
			t.Errorf("%s: %d MiB, want %d", c.name, got, c.mib)
		}
	}
}

// The rings of af_packet ports take memory the pod is charged for: a queue pair's RX and TX ring each, per
// queue pair the pod's CPUs give a port; a VF port has none.
func TestRingMemoryCountsAFPacketQueuePairs(t *testing.T) {
	p := plan.Plan{Ports: []plan.Port{{Name: "west", Driver: v1alpha1.DriverAFPacket}, {Name: "east", Driver: v1alpha1.DriverAFPacket},
		{Name: "vf", Driver: v1alpha1.DriverVFIO}}}
	for _, c := range []struct {
		ports []int
		cpus  int
		mib   int64
	}{
		{[]int{0, 1}, 3, 32}, // a queue pair each: 2 x 2 x 4096 x 2048 B
		{[]int{0, 1}, 5, 64}, // two each
		{[]int{2}, 3, 0},     // a VF: DPDK's own descriptors, in the hugepages
		{[]int{0, 2}, 3, 16}, // one af_packet port of the two
	} {
		q := ringMemory(&p, c.ports, c.cpus)
		if got := q.Value() >> 20; got != c.mib {
			t.Errorf("ports %v, %d CPUs: %d MiB, want %d", c.ports, c.cpus, got, c.mib)
		}
	}
}
