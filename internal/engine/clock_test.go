package engine

import (
	"context"
	"strings"
	"testing"
	"time"
)

// fakeClock is an engine clock: true time plus an offset, each reading taking `cost` of true time.
type fakeClock struct {
	now    *int64 // true time, ns
	offset int64
	cost   []int64 // per reading, cycled
	n      int
	clock  string
}

func (f *fakeClock) Time(context.Context) (*TimeReading, error) {
	c := f.cost[f.n%len(f.cost)]
	f.n++
	*f.now += c / 2
	r := &TimeReading{Clock: f.clock, Ns: *f.now + f.offset}
	*f.now += c - c/2
	return r, nil
}

func TestBoundClocksContainsTheTrueOffset(t *testing.T) {
	for _, c := range []struct {
		name       string
		offset     int64
		localCost  []int64
		remoteCost []int64
	}{
		{"in step, symmetric", 0, []int64{20_000}, []int64{80_000}},
		{"remote 300 µs ahead, jittery network", 300_000, []int64{20_000, 35_000}, []int64{400_000, 90_000, 1_500_000}},
		{"remote 2 ms behind", -2_000_000, []int64{10_000}, []int64{60_000, 200_000}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var now int64 = 1e18
			local := &fakeClock{now: &now, cost: c.localCost, clock: "realtime"}
			remote := &fakeClock{now: &now, offset: c.offset, cost: c.remoteCost, clock: "realtime"}
			b, err := BoundClocks(context.Background(), local, remote, 8)
			if err != nil {
				t.Fatal(err)
			}
			if c.offset < b.OffsetNs-b.BoundNs || c.offset > b.OffsetNs+b.BoundNs || abs64(c.offset) > b.BoundNs {
				t.Errorf("true offset %d ns outside %s", c.offset, b)
			}
			// the shortest round trip decides: local reading, cheapest remote, local reading
			if want := c.localCost[0] + min64(c.remoteCost); b.RoundTripNs > want+c.localCost[len(c.localCost)-1] {
				t.Errorf("round trip %d ns, want the shortest (about %d ns)", b.RoundTripNs, want)
			}
		})
	}
	var now int64
	_, err := BoundClocks(context.Background(), &fakeClock{now: &now, cost: []int64{1}, clock: "realtime"},
		&fakeClock{now: &now, cost: []int64{1}, clock: "local"}, 2)
	if err == nil || !strings.Contains(err.Error(), "--clock realtime") {
		t.Errorf("a clock counting from the engine's start is not comparable: %v", err)
	}
}

func min64(v []int64) int64 {
	m := v[0]
	for _, x := range v {
		m = min(m, x)
	}
	return m
}

func TestLatencyAcrossTwoClocksIsValidOnlyWithinTheBound(t *testing.T) {
	measured := func() *Latency {
		return &Latency{Valid: true, Clock: "realtime", Count: 10, MinNs: 9_000, P50Ns: 12_000}
	}
	for _, c := range []struct {
		name   string
		bound  *ClockBound
		max    time.Duration
		valid  bool
		reason string
	}{
		{"no bound measured", nil, time.Millisecond, false, "not measured"},
		{"bound beyond the limit", &ClockBound{BoundNs: 40_000}, 10 * time.Microsecond, false, "agree only within ±40µs, more than tester.maxClockOffset 10µs"},
		{"within the limit", &ClockBound{BoundNs: 4_000}, 10 * time.Microsecond, true, ""},
	} {
		l := measured()
		judgeLatency(l, c.bound, c.max)
		if l.Valid != c.valid || !strings.Contains(l.Reason, c.reason) || (c.valid && l.ClockBoundNs != c.bound.BoundNs) || (!c.valid && l.P50Ns != 0) {
			t.Errorf("%s: %+v", c.name, l)
		}
	}
	one := &Latency{Valid: true, Clock: "local", P50Ns: 5}
	judgeLatency(one, nil, 0)
	if !one.Valid || one.ClockBoundNs != 0 {
		t.Errorf("one engine's own clock needs no bound: %+v", one)
	}
}
