package runner_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// cpuQuota makes a cgroup whose processes get at most share of one CPU (cgroup v2 cpu.max, else v1
// cpu.cfs_quota_us) and returns its cgroup.procs file. The cgroup is removed when the test ends; its
// processes have ended by then (the CLI waits for its engine).
func cpuQuota(t *testing.T, share float64) string {
	t.Helper()
	name := fmt.Sprintf("linerate-test-%d", os.Getpid())
	const period = 100000
	quota := strconv.Itoa(int(share * period))
	var dir string
	var files [][2]string
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		dir = filepath.Join("/sys/fs/cgroup", name)
		files = [][2]string{{"cpu.max", quota + " " + strconv.Itoa(period)}}
	} else {
		dir = filepath.Join("/sys/fs/cgroup/cpu", name)
		files = [][2]string{{"cpu.cfs_period_us", strconv.Itoa(period)}, {"cpu.cfs_quota_us", quota}}
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("no CPU cgroup here: %v", err)
	}
	t.Cleanup(func() {
		// the kernel refuses to remove a cgroup with processes; the last ones may take a moment to go
		for i := 0; i < 50; i++ {
			if os.Remove(dir) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("cgroup %s left behind", dir)
	})
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f[0]), []byte(f[1]), 0o644); err != nil {
			t.Fatalf("%s: %v", f[0], err)
		}
	}
	return filepath.Join(dir, "cgroup.procs")
}

// A tester given 15 % of one CPU sends in bursts and misses frames on receipt. Against a router shaped by
// tbf to 20 Mbit/s, what it reports is the shaper's rate within the resolution, or a result marked
// tester-limited: never a lower throughput booked to the DUT.
func TestStarvedTesterIsNeverBookedAgainstTheDUT(t *testing.T) {
	eng := need(t)
	procs := cpuQuota(t, 0.15)
	tns, rns := router(t, "cq")
	// a bucket of 32 frames of 512 B: a tester that paces holds its rate, one that bursts overflows it
	const bucket, limit = 16 << 10, 16 << 10
	sh(t, "ip", "netns", "exec", rns, "tc", "qdisc", "add", "dev", "r1", "root", "tbf", "rate", "20mbit",
		"burst", strconv.Itoa(bucket), "limit", strconv.Itoa(limit))
	o := runCLIIn(t, eng, tns, routedTest("starved", throughput, []int32{512}, "0.1", "10", validationTrial(2*time.Second)), procs)
	if o.Error != "" || len(o.Results.Throughput) != 1 {
		t.Fatalf("run: %q %+v", o.Error, o.Results)
	}
	row := o.Results.Throughput[0]
	truthFPS := 20e6 / (508 * 8) // tbf counts the frame without its FCS
	resFPS := 0.001 * 1e9 / (532 * 8)
	overshoot := float64(bucket+limit) / 508 / 2.2
	gotFPS := float64(row.NDR.FramesPerSecond)
	if !row.TesterLimited && (gotFPS < truthFPS-resFPS-truthFPS*0.03 || gotFPS > truthFPS+overshoot+truthFPS*0.01) {
		t.Errorf("NDR %.0f frames/s booked to the DUT (testerLimited false); the shaper's truth is %.0f frames/s", gotFPS, truthFPS)
	}
	logTrialsIfFailed(t, o)
}
