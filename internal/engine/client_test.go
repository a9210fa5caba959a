package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"linerate.dev/linerate/internal/devices"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/enginestart"
	"linerate.dev/linerate/internal/enginestart/enginetest"
)

func TestTrialArgsRejectsWhatTheEngineWould(t *testing.T) {
	for _, tc := range []engine.TrialConfig{
		{Streams: []int{0, 1}, RatesFPS: []float64{1000}, Duration: time.Second},
		{Streams: []int{0}, RatesFPS: []float64{0}, Duration: time.Second},
		{Streams: []int{0}, RatesFPS: []float64{1000}},
		{},
	} {
		if _, err := engine.TrialArgs(tc); err == nil {
			t.Errorf("TrialArgs(%+v) accepted", tc)
		}
	}
	kv, err := engine.TrialArgs(engine.TrialConfig{Streams: []int{0, 1}, RatesFPS: []float64{1000, 2000.5}, Duration: 1500 * time.Millisecond,
		WarmUp: 200 * time.Millisecond, Drain: 300 * time.Millisecond, Stall: 2 * time.Second, Quiet: 500 * time.Millisecond,
		QuietMax: 10 * time.Second, ID: 7})
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(kv)
	want := "[{streams 0,1} {rates 1000.000,2000.500} {unit fps} {duration_ms 1500} {warmup_ms 200} {drain_ms 300} {stall_ms 2000} {id 7}]"
	if got != want {
		t.Errorf("TRIAL args\n got %s\nwant %s", got, want)
	}
}

// start runs the engine inside a namespace holding a veth pair t0 <-> t1 (a wire), on both ends.
func start(t *testing.T, eng string) *enginestart.Process {
	t.Helper()
	ns := fmt.Sprintf("lre%d", os.Getpid()%100000)
	enginetest.Wire(t, ns, "02:4c:52:00:01")
	return enginetest.StartIn(t, eng, ns, "lre", []string{"-l", "0,1"}, nil,
		devices.Device{Devargs: "net_af_packet0,iface=t0"}, devices.Device{Devargs: "net_af_packet1,iface=t1"})
}

func TestEngineOnAWire(t *testing.T) {
	eng := enginetest.Binary(t)
	p := start(t, eng)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if p.Hello.Proto != engine.ProtocolVersion || p.Hello.Ports != 2 {
		t.Fatalf("HELLO %+v", p.Hello)
	}
	for i, peer := range []string{"02:4c:52:00:01:02", "02:4c:52:00:01:01"} {
		info, err := p.Port(ctx, engine.PortConfig{ID: i, IP4: fmt.Sprintf("198.18.0.%d/24", i+1), PeerMAC: peer})
		if err != nil {
			t.Fatal(err)
		}
		if info.ID != i || info.MAC == "" {
			t.Errorf("PORT %d: %+v", i, info)
		}
	}
	if _, err := p.Stream(ctx, engine.StreamConfig{ID: 0, TX: 0, RX: 1, L3: "ipv4", Src: "198.18.0.1", Dst: "198.18.0.2", Sizes: []int{64, 512}}); err != nil {
		t.Fatal(err)
	}
	var progress int
	res, err := p.RunTrial(ctx, engine.TrialConfig{Streams: []int{0}, RatesFPS: []float64{5000}, Duration: 500 * time.Millisecond,
		WarmUp: 100 * time.Millisecond, Drain: 200 * time.Millisecond}, func(engine.Progress) { progress++ })
	if err != nil {
		t.Fatal(err)
	}
	s := res.Stream(0)
	if res.Aborted() || s == nil {
		t.Fatalf("trial %+v", res)
	}
	// a wire loses nothing; the trial offers ceil(0.5 s × 5000/s) frames, or says it was saturated
	// (a preempted tester on a shared host) when it fell more than 0.5 % short
	if s.TxFrames > 2500 || (s.TxFrames < 2488) != s.Saturated || s.RxFrames != s.TxFrames || s.Lost() != 0 || s.Duplicates != 0 {
		t.Errorf("tx %d (saturated %v) rx %d lost %d dup %d", s.TxFrames, s.Saturated, s.RxFrames, s.Lost(), s.Duplicates)
	}
	if s.Latency == nil || !s.Latency.Valid {
		t.Errorf("latency %+v", s.Latency)
	}
	if len(s.Classes) != 2 || s.Classes[0].TxFrames+s.Classes[1].TxFrames != s.TxFrames {
		t.Errorf("classes %+v", s.Classes)
	}
	if progress == 0 {
		t.Error("no progress reported while the trial ran")
	}
	// an error response is an *engine.Error with the protocol's code, and the connection stays usable
	_, err = p.Stream(ctx, engine.StreamConfig{ID: 1, TX: 0, RX: 1, L3: "ipv4", Src: "198.18.0.1", Dst: "198.18.0.2", Sizes: []int{20}})
	var ee *engine.Error
	if !errors.As(err, &ee) || ee.Code == "" {
		t.Errorf("a 20 B frame: %v, want an engine error", err)
	}
	if _, err := p.Client.Hello(ctx); err != nil {
		t.Errorf("HELLO after an error: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the engine did not exit on Close")
	}
}

// A progress hook that takes longer than the engine is given (a results ConfigMap write while the API
// server is slow) does not make a trial the engine finished look hung.
func TestASlowProgressHookDoesNotFailAFinishedTrial(t *testing.T) {
	eng := enginetest.Binary(t)
	p := start(t, eng)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i, peer := range []string{"02:4c:52:00:01:02", "02:4c:52:00:01:01"} {
		if _, err := p.Port(ctx, engine.PortConfig{ID: i, IP4: fmt.Sprintf("198.18.0.%d/24", i+1), PeerMAC: peer}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Stream(ctx, engine.StreamConfig{ID: 0, TX: 0, RX: 1, L3: "ipv4", Src: "198.18.0.1", Dst: "198.18.0.2", Sizes: []int{64}}); err != nil {
		t.Fatal(err)
	}
	p.HungAfter = 500 * time.Millisecond
	p.PollInterval = 100 * time.Millisecond
	slow := true
	res, err := p.RunTrial(ctx, engine.TrialConfig{Streams: []int{0}, RatesFPS: []float64{1000}, Duration: 200 * time.Millisecond,
		Drain: 100 * time.Millisecond}, func(engine.Progress) {
		if slow {
			slow = false
			time.Sleep(2 * time.Second) // longer than the trial and its slack together
		}
	})
	if err != nil || res.Stream(0) == nil || res.Stream(0).TxFrames == 0 {
		t.Fatalf("a finished trial behind a slow progress hook: %+v, %v", res, err)
	}
}
