package rfc2544

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/plan"
)

func TestCPUAtInterpolatesBetweenSamples(t *testing.T) {
	t0 := time.Unix(1000, 0)
	samples := []cpuSample{{t0, 0}, {t0.Add(10 * time.Millisecond), 5 * time.Millisecond}, {t0.Add(30 * time.Millisecond), 5 * time.Millisecond}}
	for _, c := range []struct {
		at   time.Duration
		want time.Duration
		ok   bool
	}{
		{0, 0, true}, {4 * time.Millisecond, 2 * time.Millisecond, true}, {10 * time.Millisecond, 5 * time.Millisecond, true},
		{20 * time.Millisecond, 5 * time.Millisecond, true}, {30 * time.Millisecond, 5 * time.Millisecond, true},
		{-time.Millisecond, 0, false}, {31 * time.Millisecond, 0, false},
	} {
		got, ok := cpuAt(samples, t0.Add(c.at))
		if got != c.want || ok != c.ok {
			t.Errorf("at %v: %v %v, want %v %v", c.at, got, ok, c.want, c.ok)
		}
	}
	if _, ok := cpuAt(samples[:1], t0); ok {
		t.Errorf("one sample brackets nothing")
	}
}

// The cost of a trial: cores busy from the loaded window alone, the cost per frame and per byte from all
// the CPU time the trial used (its drain included), and saturation against the quota.
func TestDUTCPUCost(t *testing.T) {
	for _, c := range []struct {
		name            string
		used, loadedCPU time.Duration
		loaded          time.Duration
		frames, bytes   float64
		allowed         float64
		want            v1alpha1.DUTCPUCost
		nilCost         bool
	}{
		{name: "saturated at its quota", used: 250 * time.Millisecond, loadedCPU: 200 * time.Millisecond, loaded: 2 * time.Second,
			frames: 10000, bytes: 10000 * 128, allowed: 0.1,
			want: v1alpha1.DUTCPUCost{CoresBusy: "0.100", CoresAllowed: "0.1", Saturated: true, MicrosecondsPerThousandFrames: "25000", MicrosecondsPerKilobyte: "195"}},
		{name: "below 90 % of its quota", used: 2 * time.Second, loadedCPU: 1780 * time.Millisecond, loaded: time.Second,
			frames: 1e6, bytes: 1e6 * 1518, allowed: 2,
			want: v1alpha1.DUTCPUCost{CoresBusy: "1.78", CoresAllowed: "2", MicrosecondsPerThousandFrames: "2000", MicrosecondsPerKilobyte: "1.32"}},
		{name: "no quota, nothing forwarded", used: 30 * time.Millisecond, loadedCPU: 30 * time.Millisecond, loaded: 60 * time.Second,
			want: v1alpha1.DUTCPUCost{CoresBusy: "0.000500"}},
		{name: "a counter that went back", used: -time.Millisecond, loadedCPU: time.Millisecond, loaded: time.Second, nilCost: true},
		{name: "no loaded time", used: time.Millisecond, loadedCPU: time.Millisecond, nilCost: true},
	} {
		got := dutCPUCost(dutCPU(c.used, c.loadedCPU, c.loaded, c.frames, c.bytes, c.allowed))
		if c.nilCost {
			if got != nil {
				t.Errorf("%s: %+v, want none", c.name, got)
			}
			continue
		}
		if got == nil || *got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestSig3(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 0.1: "0.100", 0.09876: "0.0988", 1.5: "1.50", 12.34: "12.3", 123.4: "123", 18368.2: "18368", 0.000512: "0.000512"} {
		if got := sig3(v); got != want {
			t.Errorf("%v: %q, want %q", v, got, want)
		}
	}
}

// fakeMeter's CPU time grows at rate cores per wall second; it fails from its failAt-th read on (0: never).
type fakeMeter struct {
	start  time.Time
	rate   float64
	reads  atomic.Int32
	failAt int32
}

func (m *fakeMeter) CPUTime() (time.Duration, error) {
	if n := m.reads.Add(1); m.failAt > 0 && n >= m.failAt {
		return 0, errors.New("cpu.stat: no such file")
	}
	return time.Duration(m.rate * float64(time.Since(m.start))), nil
}
func (m *fakeMeter) Allowed() float64 { return 0 }

// The sampler reads through the trial, and a read that failed anywhere leaves the trial without a cost.
func TestCPUSamplerReadsThroughTheTrial(t *testing.T) {
	m := &fakeMeter{start: time.Now(), rate: 0.5}
	s := &cpuSampler{meter: m}
	s.start()
	time.Sleep(5 * cpuSampleEvery)
	samples, err := s.finish()
	if err != nil || len(samples) < 3 {
		t.Fatalf("%d samples, %v", len(samples), err)
	}
	first, last := samples[0], samples[len(samples)-1]
	if busy := float64(last.cpu-first.cpu) / float64(last.wall.Sub(first.wall)); busy < 0.49 || busy > 0.51 {
		t.Errorf("%.3f cores busy between the first and last samples, the meter's rate 0.5", busy)
	}
	f := &fakeMeter{start: time.Now(), rate: 1, failAt: 3}
	s = &cpuSampler{meter: f}
	s.start()
	time.Sleep(5 * cpuSampleEvery)
	if _, err := s.finish(); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a failed read: %v", err)
	}
	if samples, err := (&cpuSampler{meter: m}).finish(); samples != nil || err != nil {
		t.Errorf("a trial that never started: %v %v", samples, err)
	}
}

// What the DUT may use: its cgroup's quota, or spec.dut.cpu.cores, the smaller of the two.
func TestDUTCoresAllowed(t *testing.T) {
	for _, c := range []struct {
		quota float64
		cores string
		want  float64
	}{{0, "", 0}, {0.5, "", 0.5}, {0, "1", 1}, {2, "1", 1}, {0.5, "1", 0.5}, {0, "x", 0}} {
		r := &Runner{plan: &plan.Plan{DUT: v1alpha1.DUTSpec{CPU: &v1alpha1.DUTCPUSource{Cgroup: "/dut", Cores: c.cores}}},
			opt: Options{DUTCPU: quotaMeter(c.quota)}}
		if got := r.dutCoresAllowed(); got != c.want {
			t.Errorf("quota %v, cores %q: %v, want %v", c.quota, c.cores, got, c.want)
		}
	}
}

type quotaMeter float64

func (quotaMeter) CPUTime() (time.Duration, error) { return 0, nil }
func (q quotaMeter) Allowed() float64              { return float64(q) }
