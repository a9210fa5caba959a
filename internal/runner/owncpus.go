package runner

import (
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The workers sleep when nothing is due, so that a tester on CPUs it shares (with the cluster, the DUT, a
// CPU hog) uses little and the kernel runs it on time. On CPUs that are its own a sleep only costs: an idle
// CPU is halted and woken late (measured on a VM's vCPU: sleeps of 125 us woke up to 37 ms late, a
// spinning loop on the same CPU never paused more than 0.43 ms), and no one else would have used the
// cycles. There the engine spins (--spin), as DPDK's own applications do on their dedicated cores.

// guaranteedPod matches the cgroup of a container of a Guaranteed pod (kubepods/pod<uid>/... with the
// cgroupfs driver, kubepods-pod<uid>.slice with systemd's): Burstable and BestEffort pods sit one level
// down (kubepods/burstable, kubepods-burstable.slice).
var guaranteedPod = regexp.MustCompile(`/kubepods(/pod[0-9a-f_-]+/|\.slice/kubepods-pod[0-9a-f_]+\.slice/)`)

// cpusAreOwn says whether the CPUs this process may run on are its own and worth polling on: the kubelet's
// static CPU manager gave its Guaranteed pod whole CPUs, which no other container may use. Such a container
// is in a Guaranteed pod's cgroup, has a cpuset narrower than the machine's, and either no CPU quota (the
// kubelet drops it for exclusive CPUs, DisableCPUQuotaWithExclusiveCPUs) or a whole-CPU quota exactly as
// wide as its cpuset. A Burstable pod, or a Guaranteed one with a fractional CPU, runs in the shared pool,
// which may be narrower than the node too; without the pod's cgroup path in sight (a private cgroup
// namespace) nothing says the CPUs are its own. On a single CPU the worker would poll beside its own
// control lcore and the runner: there it sleeps.
func cpusAreOwn(allowed, online int, quota float64, cgroupPath string) bool {
	if allowed < 2 || allowed >= online || !guaranteedPod.MatchString(cgroupPath) {
		return false
	}
	if quota > 0 {
		return math.Abs(quota-float64(allowed)) < 1e-9
	}
	return true
}

// ownCPUs is cpusAreOwn for this process.
func ownCPUs() bool {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return false
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return false
	}
	_, v2err := os.Stat("/sys/fs/cgroup/cgroup.controllers")
	path, _ := ownCgroup(string(self), v2err == nil)
	return cpusAreOwn(set.Count(), onlineCPUs(), cgroupCPUQuota(), path)
}

// onlineCPUs is how many CPUs the machine has online ("0-3,6" in /sys/devices/system/cpu/online), 0 when
// unknown. Not runtime.NumCPU: that counts this process's cpuset.
func onlineCPUs() int {
	raw, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return 0
	}
	return countCPUList(strings.TrimSpace(string(raw)))
}

// countCPUList counts the CPUs of a kernel CPU list ("0-3,6"), 0 when it does not parse.
func countCPUList(list string) int {
	n := 0
	for _, r := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0
			}
		}
		n += b - a + 1
	}
	return n
}

// spins says whether the workers poll without a pause: spec.tester.polling, or under Auto ("") whether
// the CPUs are the pod's own.
func spins(polling string, own func() bool) bool {
	switch polling {
	case "Spin":
		return true
	case "Sleep":
		return false
	}
	return own()
}

// withSpin adds --spin to the engine's arguments where the workers spin (and it was not given already).
func withSpin(args []string, spin bool) []string {
	if !spin || slices.Contains(args, "--spin") {
		return args
	}
	return append(args, "--spin")
}
