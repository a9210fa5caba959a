package engine_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"linerate.dev/linerate/internal/engine"
)

// Each kind of tester fault spoils a trial on its own, at the limit's edge; a clean trial has none.
func TestTesterFaults(t *testing.T) {
	clean := func() *engine.TrialResult {
		return &engine.TrialResult{State: engine.StateDone,
			Streams: []engine.StreamResult{{ID: 0, TargetFPS: 10000, ScheduledFrames: 10000, TxFrames: 10000, TxMaxLagNs: 200_000, TxPeakFPS: 11000}},
			Ports:   []engine.PortCounters{{ID: 0}, {ID: 1}}}
	}
	lim := engine.Limits{MaxTxLag: time.Millisecond, MaxShortfall: 0.001}
	for _, c := range []struct {
		name  string
		spoil func(r *engine.TrialResult)
		lim   engine.Limits
		want  string // "" for a clean trial
		load  bool   // a fault a host short of CPU causes (ExplainedByLoad)
	}{
		{"clean", func(*engine.TrialResult) {}, lim, "", false},
		{"lag at the limit", func(r *engine.TrialResult) { r.Streams[0].TxMaxLagNs = 1_000_000 }, lim, "", false},
		{"lag over the limit", func(r *engine.TrialResult) { r.Streams[0].TxMaxLagNs = 1_000_001 }, lim, "behind its schedule", true},
		{"lag under a looser limit", func(r *engine.TrialResult) { r.Streams[0].TxMaxLagNs = 12_000_000 }, engine.Limits{MaxTxLag: 15 * time.Millisecond}, "", false},
		{"shortfall at 0.1 %", func(r *engine.TrialResult) { r.Streams[0].TxFrames = 9990 }, lim, "", false},
		{"shortfall over 0.1 %", func(r *engine.TrialResult) { r.Streams[0].TxFrames = 9989 }, lim, "scheduled frames", true},
		{"0.6 % short under a 1 % limit (the engine's own saturated flag does not decide)", func(r *engine.TrialResult) {
			r.Streams[0].TxFrames, r.Streams[0].Saturated = 9940, true
		}, engine.Limits{MaxShortfall: 0.01}, "", false},
		{"shortfall of an aborted trial", func(r *engine.TrialResult) { r.State, r.Streams[0].TxFrames = engine.StateAborted, 10 }, lim, "", false},
		{"RX ring full", func(r *engine.TrialResult) { r.Ports[1].IMissed = 1 }, lim, "on receipt itself", true},
		{"no mbuf", func(r *engine.TrialResult) { r.Ports[1].RxNoMbuf = 1 }, lim, "mbuf pool ran dry", false},
		{"kernel ring full", func(r *engine.TrialResult) { r.Ports[1].RxKernelDrops = 1 }, lim, "kernel ring full: 1", true},
		{"kernel drop counts unreadable", func(r *engine.TrialResult) { r.Ports[1].RxKernelUnread = 1 }, lim, "could not be read", false},
		{"receive error", func(r *engine.TrialResult) { r.Ports[1].IErrors = 1 }, lim, "receive errors", false},
		// a port that counts no drops of its own (an 82599 VF): its ring of 1024 frames left 100 ms at up to
		// 10,000 frames/s holds what came; 102.4 ms may have overflowed it; a port that counts them is judged
		// by its counts alone
		{"uncounted ring that held", func(r *engine.TrialResult) { uncounted(&r.Ports[1], 100_000_000) }, lim, "", false},
		{"uncounted ring that may have overflowed", func(r *engine.TrialResult) { uncounted(&r.Ports[1], 102_400_000) }, lim, "may have overflowed on receipt itself", true},
		{"counted ring left as long", func(r *engine.TrialResult) {
			uncounted(&r.Ports[1], 500_000_000)
			r.Ports[1].RxMissesCounted = true
		}, lim, "", false},
		{"af_packet fanout rollover", func(r *engine.TrialResult) { r.Ports[1].RxKernelRollovers = 1 }, lim, "moved 1 frames to another of its receive queues", true},
		{"transmit error", func(r *engine.TrialResult) { r.Ports[0].OErrors = 1 }, lim, "failed to send", false},
		{"TX pool empty", func(r *engine.TrialResult) { r.Ports[0].TxAllocFail = 1 }, lim, "no buffer: 1", false},
		{"a frame of a sender lane the receiver has no state for", func(r *engine.TrialResult) { r.Streams[0].UnknownLane = 1 }, lim, "keeps no state for", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := clean()
			c.spoil(r)
			got := r.TesterFaults([]int{0}, c.lim)
			switch {
			case c.want == "" && len(got) > 0:
				t.Errorf("a clean trial has faults: %q", got)
			case c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want)):
				t.Errorf("faults %q, want one saying %q", got, c.want)
			case c.want != "" && engine.ExplainedByLoad(got[0]) != c.load:
				t.Errorf("%q explained by load: %v, want %v", got[0], !c.load, c.load)
			}
		})
	}
}

// uncounted makes p a port that counts no drops of its own, with a ring of 1024 frames that frames reached at
// up to 10,000 a second and was left unread for unreadNs.
func uncounted(p *engine.PortCounters, unreadNs int64) {
	p.RxMissesCounted, p.RxRing, p.RxPeakFPS, p.RxUnreadMaxNs = false, 1024, 10_000, unreadNs
}

func TestWorkerPauses(t *testing.T) {
	r := &engine.TrialResult{Workers: []engine.WorkerHealth{{Lcore: 1, Role: "txrx", Ports: []int{0}, MaxGapNs: 1_000_000},
		{Lcore: 2, Role: "txrx", Ports: []int{1}, MaxGapNs: 1_000_001}}}
	got := r.WorkerPauses(engine.Limits{MaxWorkerGap: time.Millisecond})
	if len(got) != 1 || !strings.Contains(got[0], "txrx worker on lcore 2 (ports [1])") {
		t.Errorf("pauses %q, want port 1's worker's only", got)
	}
	if !engine.ExplainedByLoad(got[0]) {
		t.Errorf("a worker's pause is not explained by load: %q", got[0])
	}
	if got := r.WorkerPauses(engine.Limits{MaxWorkerGap: 2 * time.Millisecond}); len(got) != 0 {
		t.Errorf("pauses under a 2 ms limit: %q", got)
	}
	// the kernel timed every frame of port 1 (af_packet): its worker's pause is not in their latency;
	// a port with one frame timed by the poll, or that says nothing of how it timed them, keeps the rule
	for _, c := range []struct {
		name   string
		port   engine.PortCounters
		paused bool
	}{
		{"all kernel-timed", engine.PortCounters{ID: 1, RxKernelTimed: 5000}, false},
		{"one timed by the poll", engine.PortCounters{ID: 1, RxKernelTimed: 4999, RxPollTimed: 1}, true},
		{"nothing said", engine.PortCounters{ID: 1}, true},
	} {
		r.Ports = []engine.PortCounters{{ID: 0}, c.port}
		got := r.WorkerPauses(engine.Limits{MaxWorkerGap: time.Millisecond})
		if (len(got) == 1) != c.paused {
			t.Errorf("%s: pauses %q, want paused %v", c.name, got, c.paused)
		}
	}
}

// A worker's record names the queue pairs it served and what each RX queue received; a stream says how
// many RX queues its frames arrived on. An engine before queue pairs sent neither: both decode empty.
func TestWorkerQueuesDecode(t *testing.T) {
	var r engine.TrialResult
	line := `{"ok":true,"trial":1,"state":"done","streams":[{"id":0,"rx_queues":2}],"workers":[` +
		`{"lcore":1,"role":"txrx","ports":[0,1],"queues":[{"port":0,"queue":0,"rx_frames":3,"tx_frames":5000},` +
		`{"port":1,"queue":0,"rx_frames":5111}],"max_gap_ns":7},` +
		`{"lcore":2,"role":"txrx","ports":[1],"queues":[{"port":1,"queue":1,"rx_frames":5391}],"max_gap_ns":9}]}`
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatal(err)
	}
	want := []engine.WorkerQueue{{Port: 0, Queue: 0, RxFrames: 3, TxFrames: 5000}, {Port: 1, Queue: 0, RxFrames: 5111}}
	if len(r.Workers) != 2 || !reflect.DeepEqual(r.Workers[0].Queues, want) ||
		!reflect.DeepEqual(r.Workers[1].Queues, []engine.WorkerQueue{{Port: 1, Queue: 1, RxFrames: 5391}}) ||
		!reflect.DeepEqual(r.Workers[1].Ports, []int{1}) {
		t.Errorf("workers %+v", r.Workers)
	}
	if s := r.Stream(0); s == nil || s.RxQueues != 2 {
		t.Errorf("stream %+v, want rx_queues 2", s)
	}
	var old engine.TrialResult
	if err := json.Unmarshal([]byte(`{"ok":true,"streams":[{"id":0}],"workers":[{"lcore":1,"role":"txrx","ports":[0]}]}`), &old); err != nil {
		t.Fatal(err)
	}
	if old.Workers[0].Queues != nil || old.Stream(0).RxQueues != 0 {
		t.Errorf("an older engine's record decoded as %+v", old)
	}
}

// An engine histogram bucket's bounds follow from its upper bound and the buckets per power of two, as the
// engine's hist.c lays them out (exact below sub, then sub per power of two).
func TestHistBucket(t *testing.T) {
	for _, c := range []struct{ upper, sub, lower, width int64 }{
		{17, 1024, 17, 1},
		{1023, 1024, 1023, 1},
		{2047, 1024, 2047, 1},                 // 1024 .. 2047: 1 ns buckets
		{2049, 1024, 2048, 2},                 // 2048 .. 4095: 2 ns
		{50_331_647, 1024, 50_298_880, 32768}, // about 50 ms: 32.8 us wide, 0.065 %
		{4294967295, 1024, 4292870144, 2097152},
		{5000, 0, 5000, 1}, // no sub (the simulated engine): exact
	} {
		lower, width := engine.HistBucket(c.upper, c.sub)
		if lower != c.lower || width != c.width {
			t.Errorf("bucket up to %d of %d a power of two: [%d, +%d), want [%d, +%d)", c.upper, c.sub, lower, width, c.lower, c.width)
		}
	}
}
