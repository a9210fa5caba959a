package engine_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"linerate.dev/linerate/internal/devices"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/enginestart/enginetest"
)

// A receiver that stops for 300 ms while 20,000 frames/s arrive overruns its ring: the kernel drops what the
// ring cannot hold. Those frames are the tester's loss, not the DUT's (here a wire, which loses nothing):
// the engine counts them, the loss equals them exactly, and the trial is invalid.
func TestReceiverOverrunIsTheTestersLoss(t *testing.T) {
	res := overrunTrial(t, "lro", "02:4c:52:00:02")
	s := res.Stream(0)
	var drops int64
	for _, p := range res.Ports {
		drops += p.IMissed + p.RxKernelDrops + p.RxNoMbuf
	}
	faults := res.TesterFaults([]int{0}, engine.DefaultLimits())
	t.Logf("tx %d rx %d lost %d; the tester's own receive drops %d; faults %q", s.TxFrames, s.RxFrames, s.Lost(), drops, faults)
	if s.Lost() == 0 {
		t.Fatal("the receiver was stopped for 300 ms at 20,000 frames/s and lost nothing: its ring holds more than the test assumes")
	}
	if s.Lost() != drops {
		t.Errorf("lost %d, the tester dropped %d on receipt: the difference would be booked to a DUT that is a wire", s.Lost(), drops)
	}
	if len(faults) == 0 {
		t.Error("a trial in which the tester dropped frames on receipt is not marked invalid")
	}
}

// The same receiver on a port that counts none of its own drops (an 82599 VF reports no imissed; here an
// af_packet port whose kernel drops the engine is told not to read, --mask-rx-misses): the frames its ring
// could not hold look like the DUT's loss. The trial is judged by how long the ring was left unread and how
// fast frames came: invalid, the tester's, never the wire's.
func TestAReceiverThatCountsNoDropsIsJudgedByItsPause(t *testing.T) {
	res := overrunTrial(t, "lrm", "02:4c:52:00:03", "--mask-rx-misses")
	s := res.Stream(0)
	rx := res.Ports[len(res.Ports)-1]
	faults := res.TesterFaults([]int{0}, engine.DefaultLimits())
	t.Logf("tx %d rx %d lost %d; receiving port %+v; faults %q", s.TxFrames, s.RxFrames, s.Lost(), rx, faults)
	if rx.RxMissesCounted || rx.RxKernelDrops != 0 {
		t.Fatalf("the receiving port says it counts its drops (%v, %d): the mask did not take", rx.RxMissesCounted, rx.RxKernelDrops)
	}
	if s.Lost() == 0 {
		t.Fatal("the receiver was stopped for 300 ms at 20,000 frames/s and lost nothing: its ring holds more than the test assumes")
	}
	found := false
	for _, f := range faults {
		found = found || strings.Contains(f, "may have overflowed")
	}
	if !found {
		t.Errorf("lost %d frames a wire never loses, on a port that cannot count its drops, and the trial is not the tester's: faults %q", s.Lost(), faults)
	}
}

// overrunTrial runs 1.5 s at 20,000 frames/s over a wire from one engine to another whose process is stopped
// for 300 ms in the middle; rcvArgs are the receiving engine's arguments.
func overrunTrial(t *testing.T, prefix, macPrefix string, rcvArgs ...string) *engine.TrialResult {
	t.Helper()
	eng := enginetest.Binary(t)
	ns := fmt.Sprintf("%s%d", prefix, os.Getpid()%100000)
	enginetest.Wire(t, ns, macPrefix)
	gen := enginetest.StartIn(t, eng, ns, prefix+"g", []string{"-l", "0,1"}, nil, devices.Device{Devargs: "net_af_packet0,iface=t0"})
	rcv := enginetest.StartIn(t, eng, ns, prefix+"r", []string{"-l", "0,1"}, rcvArgs, devices.Device{Devargs: "net_af_packet0,iface=t1"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := gen.Port(ctx, engine.PortConfig{ID: 0, IP4: "198.18.0.1/24", PeerMAC: macPrefix + ":02"}); err != nil {
		t.Fatal(err)
	}
	if _, err := rcv.Port(ctx, engine.PortConfig{ID: 0, IP4: "198.18.0.2/24", PeerMAC: macPrefix + ":01"}); err != nil {
		t.Fatal(err)
	}
	pair := &engine.Pair{Local: gen.Client, Remote: rcv.Client}
	if _, err := pair.Stream(ctx, engine.StreamConfig{ID: 0, TX: 0, RX: 1, L3: "ipv4", Src: "198.18.0.1", Dst: "198.18.0.2", Sizes: []int{64}}); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(600 * time.Millisecond) // the receiver starts first; the generator's measurement is under way
		_ = rcv.Cmd.Process.Signal(syscall.SIGSTOP)
		time.Sleep(300 * time.Millisecond)
		_ = rcv.Cmd.Process.Signal(syscall.SIGCONT)
	}()
	res, err := pair.RunTrial(ctx, engine.TrialConfig{Streams: []int{0}, RatesFPS: []float64{20000}, Duration: 1500 * time.Millisecond,
		WarmUp: 100 * time.Millisecond, Drain: 300 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
