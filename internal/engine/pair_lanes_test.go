package engine_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"linerate.dev/linerate/internal/devices"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/enginestart/enginetest"
	"linerate.dev/linerate/internal/testenv"
)

// twoNodeWire joins t0 in namespace a to t1 in namespace b, as two nodes' ports cabled to each other (two
// namespaces also keep the two engines' af_packet fanout groups apart).
func twoNodeWire(t *testing.T, a, b, macPrefix string) {
	t.Helper()
	t.Cleanup(func() {
		_ = exec.Command("ip", "netns", "del", a).Run()
		_ = exec.Command("ip", "netns", "del", b).Run()
	})
	enginetest.Run(t, "ip", "netns", "add", a)
	enginetest.Run(t, "ip", "netns", "add", b)
	enginetest.Run(t, "ip", "-n", a, "link", "add", "t0", "address", macPrefix+":01", "type", "veth", "peer", "name", "t1", "address", macPrefix+":02")
	enginetest.Run(t, "ip", "-n", a, "link", "set", "t1", "netns", b)
	for _, l := range [][2]string{{a, "t0"}, {b, "t1"}} {
		enginetest.Run(t, "ip", "netns", "exec", l[0], "sysctl", "-qw", "net.ipv6.conf."+l[1]+".disable_ipv6=1")
		enginetest.Run(t, "ip", "-n", l[0], "link", "set", l[1], "up")
	}
}

// A stream split over two engines whose ports each have two queue pairs served by two workers: the
// sending engine sends it on two lanes, Pair tells the receiving engine so, and over a wire (which loses,
// duplicates and reorders nothing) every frame is counted received, on both RX queues, none of them from a
// lane the receiver has no state for. This is the runner's own path (Pair.Stream, RunTrial, the results'
// merge) with the real engines; dataplane/tests/test_queues.py SplitEnginesQueues checks the counts through
// a DUT that drops and duplicates.
func TestPairCountsAStreamSentOnTwoLanes(t *testing.T) {
	eng := enginetest.Binary(t)
	id := os.Getpid() % 100000
	gns, xns := fmt.Sprintf("lrl%dg", id), fmt.Sprintf("lrl%dx", id)
	twoNodeWire(t, gns, xns, "02:4c:52:00:03")
	// two workers each (the second shares a CPU with the control lcore): a queue pair per worker
	lcores := []string{"--lcores", "0@0,1@1,2@0"}
	gen := enginetest.StartIn(t, eng, gns, "lrlg", lcores, nil, devices.Device{Devargs: "net_af_packet0,iface=t0,qpairs=2"})
	rcv := enginetest.StartIn(t, eng, xns, "lrlr", lcores, nil, devices.Device{Devargs: "net_af_packet0,iface=t1,qpairs=2"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pair := &engine.Pair{Local: gen.Client, Remote: rcv.Client}
	for i, peer := range []string{"02:4c:52:00:03:02", "02:4c:52:00:03:01"} {
		info, err := pair.Port(ctx, engine.PortConfig{ID: i, IP4: fmt.Sprintf("198.18.0.%d/24", i+1), PeerMAC: peer})
		if err != nil {
			t.Fatal(err)
		}
		if info.RxQueues != 2 || info.TxQueues != 2 {
			t.Fatalf("port %d: %d RX and %d TX queues, want 2 and 2", i, info.RxQueues, info.TxQueues)
		}
	}
	info, err := pair.Stream(ctx, engine.StreamConfig{ID: 0, TX: 0, RX: 1, L3: "ipv4", Src: "198.18.0.1", Dst: "198.18.0.2",
		Flows: 64, Vary: []string{"sport"}, Sizes: []int{64, 1518, 570}})
	if err != nil {
		t.Fatal(err)
	}
	if info.Lanes != 2 {
		t.Fatalf("the sending engine sends on %d lanes, want one per queue pair: 2", info.Lanes)
	}
	const rate = 10000
	var res *engine.TrialResult
	for try := 0; try < 3; try++ {
		res, err = pair.RunTrial(ctx, engine.TrialConfig{Streams: []int{0}, RatesFPS: []float64{rate}, Duration: time.Second,
			WarmUp: 100 * time.Millisecond, Drain: 300 * time.Millisecond}, nil)
		if err != nil {
			t.Fatal(err)
		}
		// frames of a lane the receiver was not told of are the fault under test: never retried away
		if s := res.Stream(0); s == nil || s.UnknownLane > 0 {
			t.Fatalf("the receiver counted frames of lanes it keeps no state for: %+v", s)
		}
		faults := res.TesterFaults([]int{0}, engine.Limits{MaxTxLag: 20 * time.Millisecond})
		for _, f := range faults {
			if !engine.ExplainedByLoad(f) {
				t.Fatalf("a fault no load explains: %s", f)
			}
		}
		if len(faults) == 0 {
			break
		} else if try == 2 {
			testenv.SkipForLoad(t, "the tester spoiled three trials on this loaded machine: %q", faults)
		}
	}
	s := res.Stream(0)
	perQueue := map[int]int64{}
	for _, w := range res.Workers {
		for _, q := range w.Queues {
			if q.Port == 1 {
				perQueue[q.Queue] += q.RxFrames
			}
		}
	}
	t.Logf("tx %d rx %d lost %d unknown lane %d, rx queues %d, frames per RX queue %v", s.TxFrames, s.RxFrames, s.Lost(), s.UnknownLane, s.RxQueues, perQueue)
	if s.TxFrames != rate || s.RxFrames != rate || s.Lost() != 0 || s.Duplicates != 0 || s.Reordered != 0 || s.UnknownLane != 0 {
		t.Errorf("over a wire: tx %d rx %d lost %d duplicates %d reordered %d unknown lane %d, want %d sent and received, nothing else",
			s.TxFrames, s.RxFrames, s.Lost(), s.Duplicates, s.Reordered, s.UnknownLane, rate)
	}
	if s.RxQueues != 2 || len(perQueue) != 2 || perQueue[0] < rate/10 || perQueue[1] < rate/10 {
		t.Errorf("the stream arrived on %d RX queues (%v): want both carrying", s.RxQueues, perQueue)
	}
}
