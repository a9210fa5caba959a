package runner

import (
	"os"
	"path/filepath"
	"strings"

	"linerate.dev/linerate/internal/cgroupcpu"
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
	v2 := cgroupcpu.V2(filepath.Join(fsRoot, "sys/fs/cgroup"))
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
	return cgroupcpu.SmallestQuota(root, dir, v2)
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
