// Package cgroupcpu reads what the kernel's CPU controllers say of a cgroup: its quota (cgroup v2 cpu.max,
// v1 cpu.cfs_quota_us over cpu.cfs_period_us) and the CPU time its processes used (v2 cpu.stat usage_usec,
// v1 cpuacct.usage). The runner sizes the engine by its own cgroup's quota, and measures a DUT's CPU cost
// (spec.dut.cpu.cgroup) by the DUT cgroup's usage.
package cgroupcpu

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// NodeMount is where a tester pod that reads a DUT's CPU time (spec.dut.cpu.cgroup) mounts its node's
// /sys/fs/cgroup, read-only: the pod's own /sys/fs/cgroup is its container's.
const NodeMount = "/host/sys/fs/cgroup"

// V2 says whether the cgroup file system mounted at root is the unified hierarchy (cgroup v2).
func V2(root string) bool {
	_, err := os.Stat(filepath.Join(root, "cgroup.controllers"))
	return err == nil
}

// QuotaAt is the quota set on one cgroup directory (of the cpu controller's hierarchy on v1), in CPUs (0:
// none).
func QuotaAt(dir string, v2 bool) float64 {
	if v2 {
		raw, err := os.ReadFile(filepath.Join(dir, "cpu.max"))
		if err != nil {
			return 0
		}
		return ParseCPUMax(string(raw))
	}
	q, err1 := os.ReadFile(filepath.Join(dir, "cpu.cfs_quota_us"))
	p, err2 := os.ReadFile(filepath.Join(dir, "cpu.cfs_period_us"))
	if err1 != nil || err2 != nil {
		return 0
	}
	return ParseCPUMax(strings.TrimSpace(string(q)) + " " + strings.TrimSpace(string(p)))
}

// ParseCPUMax reads a quota and a period ("150000 100000": cgroup v2's cpu.max, or v1's two files) as CPUs
// (0: no quota, "max" or -1).
func ParseCPUMax(s string) float64 {
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

// SmallestQuota is the smallest quota from dir up to root (a pod's quota may sit on the pod's cgroup, above
// its container's), in CPUs (0: none).
func SmallestQuota(root, dir string, v2 bool) float64 {
	cpus := 0.0
	for {
		if q := QuotaAt(dir, v2); q > 0 && (cpus == 0 || q < cpus) {
			cpus = q
		}
		if len(dir) <= len(root) {
			return cpus
		}
		dir = filepath.Dir(dir)
	}
}

// Usage reads the CPU time a cgroup's processes used since it was made.
type Usage struct {
	// Path is the cgroup as /proc/<pid>/cgroup names it.
	Path string
	file string // cpu.stat (v2) or cpuacct.usage (v1)
	v2   bool
	// quota is the cpu controller's directory of the cgroup, below quotaRoot
	quota, quotaRoot string
}

// OpenUsage finds the cgroup path (as /proc/<pid>/cgroup names it, e.g. /system.slice/strongswan.service)
// in the cgroup file system mounted at root (/sys/fs/cgroup, or the node's mounted elsewhere) and reads it
// once: a cgroup that is not there, or whose CPU time is not accounted, is an error that names it.
func OpenUsage(root, path string) (*Usage, error) {
	if strings.Contains(path, "..") {
		return nil, fmt.Errorf("cgroup %q: not a cgroup path ('..')", path)
	}
	clean := filepath.Join("/", path)
	u := &Usage{Path: clean, v2: V2(root)}
	if u.v2 {
		u.file = filepath.Join(root, clean, "cpu.stat")
		u.quotaRoot = root
	} else {
		u.file = filepath.Join(root, "cpuacct", clean, "cpuacct.usage")
		u.quotaRoot = filepath.Join(root, "cpu")
	}
	u.quota = filepath.Join(u.quotaRoot, clean)
	if _, err := u.CPUTime(); err != nil {
		return nil, err
	}
	return u, nil
}

// CPUTime is the CPU time the cgroup's processes (its descendants' included) used since it was made.
func (u *Usage) CPUTime() (time.Duration, error) {
	raw, err := os.ReadFile(u.file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, fmt.Errorf("cgroup %s: no %s (the cgroup is not there, or its CPU time is not accounted)", u.Path, u.file)
		}
		return 0, fmt.Errorf("cgroup %s: %w", u.Path, err)
	}
	if !u.v2 {
		ns, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("cgroup %s: %s: %w", u.Path, u.file, err)
		}
		return time.Duration(ns), nil
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "usage_usec" {
			us, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("cgroup %s: %s: %w", u.Path, u.file, err)
			}
			return time.Duration(us) * time.Microsecond, nil
		}
	}
	return 0, fmt.Errorf("cgroup %s: %s has no usage_usec", u.Path, u.file)
}

// Allowed is the CPUs the cgroup's quota (or an ancestor's) allows its processes, 0 when none limits them.
func (u *Usage) Allowed() float64 {
	return SmallestQuota(u.quotaRoot, u.quota, u.v2)
}

// FindPod is the cgroup of the pod whose UID is uid, as /proc/<pid>/cgroup names it, in the cgroup file
// system mounted at root: the kubelet names it pod<uid> (cgroupfs driver) or ...-pod<uid with _>.slice
// (systemd driver), below its kubepods cgroup wherever that is (a node in a container nests it deeper).
func FindPod(root, uid string) (string, error) {
	hierarchy := root
	if !V2(root) {
		hierarchy = filepath.Join(root, "cpuacct")
	}
	// systemd mounts v1's cpu and cpuacct together and links each name to the mount: the walk starts
	// where the link points (it follows none)
	if resolved, err := filepath.EvalSymlinks(hierarchy); err == nil {
		hierarchy = resolved
	}
	names := []string{"pod" + uid, "pod" + strings.ReplaceAll(uid, "-", "_")}
	found := ""
	err := filepath.WalkDir(hierarchy, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return filepath.SkipDir // a cgroup that went away while walked: the others are still looked at
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(hierarchy, path)
		if strings.Count(rel, string(filepath.Separator)) > 6 {
			return filepath.SkipDir // pods sit a few levels down: deeper cgroups are not walked
		}
		base := strings.TrimSuffix(d.Name(), ".slice")
		for _, n := range names {
			if base == n || strings.HasSuffix(base, "-"+n) {
				found = "/" + rel
				return filepath.SkipAll
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if found == "" {
		return "", fmt.Errorf("no cgroup of pod UID %s below %s (the pod is not on this node, or it ended)", uid, hierarchy)
	}
	return found, nil
}
