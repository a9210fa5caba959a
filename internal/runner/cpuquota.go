package runner

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// cgroupCPUQuota is the CPUs this process's cgroups let it use, 0 when unlimited or unknown: the smallest
// quota from its own cgroup up to the controller's mount (a pod's quota may sit on the pod's cgroup, above
// the container's), as the engine reads it (lr_cgroup_cpus in dataplane/src/cgroup.c; the two are held
// together by TestTheCPUQuotaIsReadAsTheEngineReadsIt). A container sees its host path in
// /proc/self/cgroup but may have its own cgroup mounted at the root: a path that does not exist under the
// mount means the mount root is its own.
func cgroupCPUQuota() float64 { return cgroupCPUQuotaUnder("/") }

// cgroupCPUQuotaUnder is cgroupCPUQuota on the file system rooted at fsRoot: "/", or a test's fake
// /sys/fs/cgroup and /proc/self/cgroup.
func cgroupCPUQuotaUnder(fsRoot string) float64 {
	_, err := os.Stat(filepath.Join(fsRoot, "sys/fs/cgroup/cgroup.controllers"))
	v2 := err == nil
	root := filepath.Join(fsRoot, "sys/fs/cgroup/cpu")
	if v2 {
		root = filepath.Join(fsRoot, "sys/fs/cgroup")
	}
	dir := root
	if self, err := os.ReadFile(filepath.Join(fsRoot, "proc/self/cgroup")); err == nil {
		if p, ok := ownCgroup(string(self), v2); ok {
			if _, err := os.Stat(filepath.Join(root, p)); err == nil {
				dir = filepath.Join(root, p)
			}
		}
	}
	cpus := 0.0
	for {
		if q := quotaAt(dir, v2); q > 0 && (cpus == 0 || q < cpus) {
			cpus = q
		}
		if len(dir) <= len(root) {
			return cpus
		}
		dir = filepath.Dir(dir)
	}
}

// ownCgroup is this process's cgroup path from /proc/self/cgroup: the "0::" line of cgroup v2, the line
// whose controllers include cpu on v1.
func ownCgroup(self string, v2 bool) (string, bool) {
	for _, line := range strings.Split(self, "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if v2 && f[0] == "0" && f[1] == "" {
			return f[2], true
		}
		if !v2 && strings.Contains(","+f[1]+",", ",cpu,") {
			return f[2], true
		}
	}
	return "", false
}

// quotaAt is the quota set on one cgroup directory, in CPUs (0: none).
func quotaAt(dir string, v2 bool) float64 {
	if v2 {
		raw, err := os.ReadFile(filepath.Join(dir, "cpu.max"))
		if err != nil {
			return 0
		}
		return parseCPUMax(string(raw))
	}
	q, err1 := os.ReadFile(filepath.Join(dir, "cpu.cfs_quota_us"))
	p, err2 := os.ReadFile(filepath.Join(dir, "cpu.cfs_period_us"))
	if err1 != nil || err2 != nil {
		return 0
	}
	return parseCPUMax(strings.TrimSpace(string(q)) + " " + strings.TrimSpace(string(p)))
}

// parseCPUMax reads a quota and a period ("150000 100000": cgroup v2's cpu.max, or v1's two files) as CPUs
// (0: no quota, "max" or -1).
func parseCPUMax(s string) float64 {
	f := strings.Fields(s)
	if len(f) != 2 || f[0] == "max" {
		return 0
	}
	quota, err1 := strconv.ParseFloat(f[0], 64)
	period, err2 := strconv.ParseFloat(f[1], 64)
	if err1 != nil || err2 != nil || period <= 0 || quota <= 0 {
		return 0
	}
	return quota / period
}
