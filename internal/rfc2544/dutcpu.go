package rfc2544

import (
	"math"
	"strconv"
	"sync"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/results"
)

// CPUMeter reads the DUT's CPU time (spec.dut.cpu): its cgroup's, internal/cgroupcpu.Usage.
type CPUMeter interface {
	// CPUTime is the CPU time the DUT used since some fixed moment.
	CPUTime() (time.Duration, error)
	// Allowed is the CPUs the DUT's quota allows it, 0 when none limits it.
	Allowed() float64
}

// cpuSampleEvery is how often the DUT's CPU time is read during a trial: the loaded part of a trial is
// found among the samples to within this.
const cpuSampleEvery = 10 * time.Millisecond

// cpuSample is the DUT's CPU time at one moment.
type cpuSample struct {
	wall time.Time
	cpu  time.Duration
}

// cpuSampler reads the DUT's CPU time through a trial, from its start (engine.TrialConfig.OnStart) until
// finish. It never writes to the Runner: it runs beside the engine's client.
type cpuSampler struct {
	meter   CPUMeter
	mu      sync.Mutex
	samples []cpuSample
	err     error
	stop    chan struct{}
	done    chan struct{}
}

// start is the trial's OnStart: the first sample, then one every cpuSampleEvery.
func (s *cpuSampler) start() {
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	s.take()
	go func() {
		defer close(s.done)
		t := time.NewTicker(cpuSampleEvery)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				s.take()
			}
		}
	}()
}

func (s *cpuSampler) take() {
	cpu, err := s.meter.CPUTime()
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if s.err == nil {
			s.err = err
		}
		return
	}
	s.samples = append(s.samples, cpuSample{wall: now, cpu: cpu})
}

// finish takes the last sample and returns them all, or the first error a read met; nothing when the trial
// never started.
func (s *cpuSampler) finish() ([]cpuSample, error) {
	if s.stop == nil {
		return nil, nil
	}
	close(s.stop)
	<-s.done
	s.take()
	return s.samples, s.err
}

// cpuAt is the DUT's CPU time at t, between the samples around it; false outside them.
func cpuAt(samples []cpuSample, t time.Time) (time.Duration, bool) {
	for i := 1; i < len(samples); i++ {
		a, b := samples[i-1], samples[i]
		if t.Before(a.wall) || t.After(b.wall) {
			continue
		}
		span := b.wall.Sub(a.wall)
		if span <= 0 {
			return a.cpu, true
		}
		f := float64(t.Sub(a.wall)) / float64(span)
		return a.cpu + time.Duration(f*float64(b.cpu-a.cpu)), true
	}
	return 0, false
}

// trialDUTCPU is what the DUT's CPU paid for the trial that just ended; nil when it was not read through (a
// read that failed, or a counter that went back, is said once in a note: never a made-up cost) or the trial
// was aborted. Its cores busy are its CPU time while the trial's frames came (from the warm-up's end for the
// trial's duration) over that time; its cost per frame and per byte is all the CPU time it used from the
// trial's start to the drain's end (a DUT that queued frames works on them in the drain) over the frames it
// forwarded in every direction of the trial.
func (r *Runner) trialDUTCPU(s *cpuSampler, ts trialSpec, res *engine.TrialResult) *results.DUTCPU {
	samples, err := s.finish()
	if res == nil {
		return nil // the trial failed: the sampler is stopped, nothing to say
	}
	if err != nil {
		if !r.cpuNoted {
			r.cpuNoted = true
			r.note("the DUT's CPU time (spec.dut.cpu) could not be read: " + err.Error() + "; the trials it was not read through have no CPU cost")
		}
		return nil
	}
	if len(samples) < 2 || res.Aborted() || res.DurationNs <= 0 {
		return nil // an aborted trial's sending time is not known
	}
	for i := 1; i < len(samples); i++ {
		if samples[i].cpu < samples[i-1].cpu {
			if !r.cpuWentBackNoted {
				r.cpuWentBackNoted = true
				r.note("the DUT's CPU time (spec.dut.cpu) went back during a trial: its cgroup was made again (the DUT restarted?); that trial has no CPU cost")
			}
			return nil
		}
	}
	sending := time.Duration(res.DurationNs)
	// the engine starts sending after its warm-up, timed from the trial's start: the samples find that
	// window to within their spacing and the control request's round trip
	from := samples[0].wall.Add(r.plan.Durations.WarmUp)
	cpuFrom, ok1 := cpuAt(samples, from)
	cpuTo, ok2 := cpuAt(samples, from.Add(sending))
	if !ok1 || !ok2 || sending <= 0 {
		return nil
	}
	var frames, bytes float64
	for _, d := range ts.dirs {
		id := r.plan.Directions()[d].TX
		if sr := res.Stream(id); sr != nil {
			frames += float64(sr.RxFrames)
			bytes += float64(sr.RxFrames) * r.streams[id].mean
		}
	}
	used := samples[len(samples)-1].cpu - samples[0].cpu
	return dutCPU(used, cpuTo-cpuFrom, sending, frames, bytes, r.dutCoresAllowed())
}

// dutCoresAllowed is what the DUT's CPU is judged saturated against: its cgroup's quota, or
// spec.dut.cpu.cores, the smaller of the two (0: neither says).
func (r *Runner) dutCoresAllowed() float64 {
	allowed := r.opt.DUTCPU.Allowed()
	if c := r.plan.DUT.CPU; c != nil && c.Cores != "" {
		if cores, err := strconv.ParseFloat(c.Cores, 64); err == nil && cores > 0 && (allowed == 0 || cores < allowed) {
			allowed = cores
		}
	}
	return allowed
}

// dutCPU is what the DUT's CPU paid for a trial: loadedCPU over the time it was loaded (cores busy), and
// used over the frames and bytes (frames as the test counts them) it forwarded.
func dutCPU(used, loadedCPU, loaded time.Duration, frames, bytes, allowed float64) *results.DUTCPU {
	if loaded <= 0 || used < 0 || loadedCPU < 0 {
		return nil
	}
	us := float64(used) / float64(time.Microsecond)
	c := &results.DUTCPU{Seconds: used.Seconds(), CoresBusy: loadedCPU.Seconds() / loaded.Seconds(), CoresAllowed: allowed}
	if frames > 0 {
		c.USPerKframe = us / (frames / 1000)
		c.USPerKbyte = us / (bytes / 1000)
	}
	return c
}

// dutCPUCost is a trial's DUT CPU cost as a result row says it; nil when it has none.
func dutCPUCost(c *results.DUTCPU) *v1alpha1.DUTCPUCost {
	if c == nil {
		return nil
	}
	out := &v1alpha1.DUTCPUCost{CoresBusy: sig3(c.CoresBusy), Saturated: c.Saturated()}
	if c.CoresAllowed > 0 {
		out.CoresAllowed = strconv.FormatFloat(c.CoresAllowed, 'f', -1, 64)
	}
	if c.USPerKframe > 0 {
		out.MicrosecondsPerThousandFrames, out.MicrosecondsPerKilobyte = sig3(c.USPerKframe), sig3(c.USPerKbyte)
	}
	return out
}

// sig3 writes v with three significant digits, never in exponent form.
func sig3(v float64) string {
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v, 'f', max(0, 2-int(math.Floor(math.Log10(math.Abs(v))))), 64)
}
