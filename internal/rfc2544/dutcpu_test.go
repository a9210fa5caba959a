package rfc2544_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine/sim"
	"linerate.dev/linerate/internal/rfc2544"
)

type brokenMeter struct{}

func (brokenMeter) CPUTime() (time.Duration, error) {
	return 0, errors.New("cgroup /dut: no /sys/fs/cgroup/dut/cpu.stat")
}
func (brokenMeter) Allowed() float64 { return 0 }

// A DUT whose CPU time cannot be read gets no cost, and the results say why: never a made-up one.
func TestADUTCPUThatCannotBeReadGivesNoCost(t *testing.T) {
	p := planFor(t, v1alpha1.TestThroughput)
	p.FrameSizes = []int{512}
	e := sim.New(sim.DUT{CapacityFPS: 1e6})
	r := rfc2544.New(p, e, &recorder{}, rfc2544.Options{Sleep: e.Sleep, DUTCPU: brokenMeter{}})
	res, err := r.Run(context.Background())
	if err != nil || len(res.Throughput) != 1 {
		t.Fatalf("%v %+v", err, res)
	}
	if c := res.Throughput[0].DUTCPU; c != nil {
		t.Errorf("a cost from a meter that never read: %+v", c)
	}
	said := 0
	for _, n := range res.Notes {
		if strings.Contains(n, "the DUT's CPU time (spec.dut.cpu) could not be read: cgroup /dut: no /sys/fs/cgroup/dut/cpu.stat") {
			said++
		}
	}
	if said != 1 {
		t.Errorf("the unreadable CPU time is said %d times: %q", said, res.Notes)
	}
}

// The diagnosis says whether the DUT's CPU was the limit, from each NDR's cost, and says nothing it does
// not know: rows that are no NDR of the DUT's or at line rate are left out, a DUT without a known allowance
// is neither saturated nor not, and a cgroup that used nothing holds no work of the DUT's.
func TestTheDiagnosisSaysWhetherTheDUTsCPUWasTheLimit(t *testing.T) {
	p := planFor(t, v1alpha1.TestThroughput)
	row := func(size int32, pct, busy, allowed string, saturated bool) v1alpha1.ThroughputResult {
		return v1alpha1.ThroughputResult{FrameSize: size, Direction: "west->east",
			NDR:    v1alpha1.Rate{FramesPerSecond: 1000, PercentOfLineRate: pct},
			DUTCPU: &v1alpha1.DUTCPUCost{CoresBusy: busy, CoresAllowed: allowed, Saturated: saturated}}
	}
	limited := row(256, "5", "2", "2", true)
	limited.TesterLimited = true
	undetermined := row(128, "5", "2", "2", true)
	undetermined.Undetermined = "a cap"
	for _, c := range []struct {
		name  string
		rows  []v1alpha1.ThroughputResult
		bound string
		says  string
	}{
		{name: "saturated at every size, no fit (one size)", rows: []v1alpha1.ThroughputResult{row(64, "10", "1.98", "2", true)},
			bound: rfc2544.BoundDUTCPU, says: "the DUT used 90 % or more of the CPU it may use at the NDR of every size (64 B; 1.98 of the 2 cores it may use at 64 B): its CPU was at its limit"},
		{name: "saturated below line rate, at line rate above", rows: []v1alpha1.ThroughputResult{row(64, "10", "1.98", "2", true), row(512, "40", "1.2", "2", false), row(1518, "100", "1.9", "2", true)},
			says: "the DUT used 90 % or more of the CPU it may use at the NDR of 64 B (1.98 of the 2 cores it may use at 64 B); the DUT used less than 90 % of the CPU it may use at the NDR of 512 B (1.2 of 2 cores): its CPU allowance was not used up there"},
		{name: "never saturated", rows: []v1alpha1.ThroughputResult{row(64, "10", "0.5", "2", false), row(512, "40", "0.4", "2", false), row(1518, "90", "0.3", "2", false)},
			says: "the DUT used less than 90 % of the CPU it may use at the NDR of 64 B (0.5 of 2 cores), 512 B (0.4 of 2 cores), 1518 B (0.3 of 2 cores): its CPU allowance was not used up there"},
		{name: "no allowance known", rows: []v1alpha1.ThroughputResult{row(64, "10", "0.98", "", false)},
			says: "at the NDR of 64 B (0.98 cores busy) no CPU quota of its cgroup (nor spec.dut.cpu.cores) says how many cores the DUT may use: whether its CPU was at its limit there is not known"},
		{name: "a cgroup that used nothing", rows: []v1alpha1.ThroughputResult{row(64, "10", "0", "2", false), row(512, "10", "0", "", false)},
			says: "the DUT's cgroup used no CPU at any NDR: the DUT's work is not in it"},
		{name: "a DUT that used little is not called absent", rows: []v1alpha1.ThroughputResult{row(64, "1", "0.00200", "2", false)},
			says: "the DUT used less than 90 % of the CPU it may use at the NDR of 64 B (0.00200 of 2 cores)"},
		{name: "saturated below line rate, the sizes at line rate left out", rows: []v1alpha1.ThroughputResult{row(64, "10", "1.98", "2", true), row(1518, "100", "0.5", "2", false)},
			bound: rfc2544.BoundDUTCPU, says: "at the NDR of every size below line rate (64 B;"},
		{name: "the tester's limit and an undetermined row say nothing", rows: []v1alpha1.ThroughputResult{limited, undetermined, row(64, "10", "0.5", "2", false)},
			says: "the DUT used less than 90 % of the CPU it may use at the NDR of 64 B (0.5 of 2 cores)"},
		{name: "only at line rate", rows: []v1alpha1.ThroughputResult{row(1518, "100", "1.99", "2", true)}},
	} {
		d := rfc2544.Diagnose(&v1alpha1.Results{Throughput: c.rows}, p)
		if c.says == "" {
			if d != nil && d.DUTCPU != "" {
				t.Errorf("%s: %+v", c.name, d)
			}
			continue
		}
		if d == nil || !strings.Contains(d.DUTCPU, c.says) {
			t.Errorf("%s: %+v, want it to say %q", c.name, d, c.says)
			continue
		}
		if c.bound != "" && d.Bound != c.bound {
			t.Errorf("%s: bound %s, want %s", c.name, d.Bound, c.bound)
		}
		if c.bound == "" && d.Bound == rfc2544.BoundDUTCPU {
			t.Errorf("%s: bound %s where the CPU was not the limit at every size", c.name, d.Bound)
		}
	}
}
