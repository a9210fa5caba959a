package engine_test

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"linerate.dev/linerate/internal/engine"
)

// A receiver that stops for 300 ms while 20,000 frames/s arrive overruns its ring: the kernel drops what the
// ring cannot hold. Those frames are the tester's loss, not the DUT's (here a wire, which loses nothing):
// the engine counts them, the loss equals them exactly, and the trial is invalid.
func TestReceiverOverrunIsTheTestersLoss(t *testing.T) {
	eng := needEngine(t)
	ns := fmt.Sprintf("lro%d", os.Getpid()%100000)
	wire(t, ns, "02:4c:52:00:02")
	gen := startIn(t, eng, ns, "lrog", engine.Device{Devargs: "net_af_packet0,iface=t0"})
	rcv := startIn(t, eng, ns, "lror", engine.Device{Devargs: "net_af_packet0,iface=t1"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := gen.Port(ctx, engine.PortConfig{ID: 0, IP4: "198.18.0.1/24", PeerMAC: "02:4c:52:00:02:02"}); err != nil {
		t.Fatal(err)
	}
	if _, err := rcv.Port(ctx, engine.PortConfig{ID: 0, IP4: "198.18.0.2/24", PeerMAC: "02:4c:52:00:02:01"}); err != nil {
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
