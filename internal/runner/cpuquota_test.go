package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestOwnCgroup(t *testing.T) {
	for _, c := range []struct {
		self string
		v2   bool
		want string
	}{
		{"0::/kubepods.slice/pod1/cri-containerd-ab.scope\n", true, "/kubepods.slice/pod1/cri-containerd-ab.scope"},
		{"12:memory:/x\n4:cpu,cpuacct:/kubepods/burstable/pod1/ab\n1:name=systemd:/y\n", false, "/kubepods/burstable/pod1/ab"},
		{"4:cpuset:/only-cpuset\n", false, ""},
	} {
		got, ok := ownCgroup(c.self, c.v2)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%q: %q %v, want %q", c.self, got, ok, c.want)
		}
	}
}

// The CPU quota is read twice: by the runner (cgroupCPUQuota, to size the engine's cores) and by the
// engine itself (lr_cgroup_cpus in dataplane/src/cgroup.c). Both are asked about the same fake cgroup
// trees: the C compiled and run with its file system moved under the tree, as a chroot would. A copy that
// drifts fails here, not as a runner and an engine that disagree on how many cores a pod has.
func TestTheCPUQuotaIsReadAsTheEngineReadsIt(t *testing.T) {
	const v1Self = "12:memory:/kubepods/pod1/ab\n4:cpu,cpuacct:/kubepods/pod1/ab\n1:name=systemd:/init.scope\n"
	const v2Self = "0::/kubepods.slice/pod1.slice/cri-containerd-ab.scope\n"
	v1 := func(quota, period string) map[string]string {
		return map[string]string{"cpu.cfs_quota_us": quota + "\n", "cpu.cfs_period_us": period + "\n"}
	}
	cases := []struct {
		name string
		v2   bool
		// self is /proc/self/cgroup ("": none)
		self string
		// quotas are the quota files of each cgroup, by its directory under the controller's mount
		quotas map[string]map[string]string
		want   float64
	}{
		{name: "v1 quota and period", self: v1Self,
			quotas: map[string]map[string]string{"kubepods/pod1/ab": v1("150000", "100000")}, want: 1.5},
		{name: "v1 quota -1 is unlimited", self: v1Self,
			quotas: map[string]map[string]string{"kubepods/pod1/ab": v1("-1", "100000")}, want: 0},
		{name: "v1 a quarter of a CPU", self: v1Self,
			quotas: map[string]map[string]string{"kubepods/pod1/ab": v1("25000", "100000")}, want: 0.25},
		{name: "v1 a third of a CPU, other period", self: v1Self,
			quotas: map[string]map[string]string{"kubepods/pod1/ab": v1("50000", "150000")}, want: 50000.0 / 150000},
		{name: "v1 the pod's quota above the container's unlimited one", self: v1Self,
			quotas: map[string]map[string]string{"kubepods/pod1": v1("200000", "100000"), "kubepods/pod1/ab": v1("-1", "100000")}, want: 2},
		{name: "v1 the smallest up the chain is the container's", self: v1Self,
			quotas: map[string]map[string]string{"kubepods/pod1": v1("300000", "100000"), "kubepods/pod1/ab": v1("150000", "100000")}, want: 1.5},
		{name: "v1 the smallest up the chain is the pod's", self: v1Self,
			quotas: map[string]map[string]string{"kubepods/pod1": v1("50000", "100000"), "kubepods/pod1/ab": v1("400000", "100000")}, want: 0.5},
		{name: "v1 a host path not under the mount: the mount root is its own", self: v1Self,
			quotas: map[string]map[string]string{"": v1("75000", "100000")}, want: 0.75},
		{name: "v1 the cpu controller, not cpuacct", self: "3:cpuacct:/a\n4:cpu:/b\n",
			quotas: map[string]map[string]string{"a": v1("50000", "100000"), "b": v1("100000", "100000")}, want: 1},
		{name: "v1 a quota without a period", self: v1Self,
			quotas: map[string]map[string]string{"kubepods/pod1/ab": {"cpu.cfs_quota_us": "150000\n"}}, want: 0},
		{name: "v1 no /proc/self/cgroup: the mount root",
			quotas: map[string]map[string]string{"": v1("300000", "100000")}, want: 3},
		{name: "v2 max is unlimited", v2: true, self: v2Self,
			quotas: map[string]map[string]string{"kubepods.slice/pod1.slice/cri-containerd-ab.scope": {"cpu.max": "max 100000\n"}}, want: 0},
		{name: "v2 quota and period", v2: true, self: v2Self,
			quotas: map[string]map[string]string{"kubepods.slice/pod1.slice/cri-containerd-ab.scope": {"cpu.max": "150000 100000\n"}}, want: 1.5},
		{name: "v2 half a CPU", v2: true, self: v2Self,
			quotas: map[string]map[string]string{"kubepods.slice/pod1.slice/cri-containerd-ab.scope": {"cpu.max": "50000 100000\n"}}, want: 0.5},
		{name: "v2 five sixths of a CPU, other period", v2: true, self: v2Self,
			quotas: map[string]map[string]string{"kubepods.slice/pod1.slice/cri-containerd-ab.scope": {"cpu.max": "250000 300000\n"}}, want: 250000.0 / 300000},
		{name: "v2 the pod's quota above the container's max", v2: true, self: v2Self,
			quotas: map[string]map[string]string{
				"kubepods.slice/pod1.slice":                         {"cpu.max": "120000 100000\n"},
				"kubepods.slice/pod1.slice/cri-containerd-ab.scope": {"cpu.max": "max 100000\n"}}, want: 1.2},
		{name: "v2 the smallest up the chain", v2: true, self: v2Self,
			quotas: map[string]map[string]string{
				"kubepods.slice":                                    {"cpu.max": "800000 100000\n"},
				"kubepods.slice/pod1.slice":                         {"cpu.max": "250000 100000\n"},
				"kubepods.slice/pod1.slice/cri-containerd-ab.scope": {"cpu.max": "400000 100000\n"}}, want: 2.5},
		{name: "v2 its own cgroup namespace (0::/)", v2: true, self: "0::/\n",
			quotas: map[string]map[string]string{"": {"cpu.max": "200000 100000\n"}}, want: 2},
		{name: "v2 a host path not under the mount: the mount root is its own", v2: true, self: v2Self,
			quotas: map[string]map[string]string{"": {"cpu.max": "150000 100000\n"}}, want: 1.5},
		{name: "v2 an empty cpu.max", v2: true, self: v2Self,
			quotas: map[string]map[string]string{"kubepods.slice/pod1.slice/cri-containerd-ab.scope": {"cpu.max": ""}}, want: 0},
	}
	roots := make([]string, len(cases))
	for i, c := range cases {
		roots[i] = t.TempDir()
		mount := filepath.Join(roots[i], "sys/fs/cgroup/cpu")
		files := map[string]string{}
		if c.v2 {
			mount = filepath.Join(roots[i], "sys/fs/cgroup")
			files[filepath.Join(mount, "cgroup.controllers")] = "cpu memory pids\n"
		}
		if c.self != "" {
			files[filepath.Join(roots[i], "proc/self/cgroup")] = c.self
		}
		for dir, quota := range c.quotas {
			for name, content := range quota {
				files[filepath.Join(mount, dir, name)] = content
			}
		}
		for path, content := range files {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	engine := engineCgroupCPUs(t, roots)
	for i, c := range cases {
		if got := cgroupCPUQuotaUnder(roots[i]); got != c.want || engine[i] != c.want {
			t.Errorf("%s: the runner reads %v CPUs, the engine (lr_cgroup_cpus) %v, want %v", c.name, got, engine[i], c.want)
		}
	}
}

// engineCgroupCPUs is lr_cgroup_cpus of dataplane/src/cgroup.c on each fake file system root: cgroup.c
// needs no DPDK, so it is compiled here into a main that takes every absolute path it opens under a root.
func engineCgroupCPUs(t *testing.T, roots []string) []float64 {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (cc) to build dataplane/src/cgroup.c")
	}
	src, err := filepath.Abs(filepath.Join("..", "..", "dataplane", "src"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	main := filepath.Join(dir, "cgroup_cpus.c")
	// cgroup.c reads /proc/self/cgroup and /sys/fs/cgroup by their absolute paths, through fopen and access
	// alone: the driver renames those two for cgroup.c's code (a chroot without privileges), nothing else.
	if err := os.WriteFile(main, []byte(`#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *fake_root;

static const char *under_root(const char *path, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", fake_root, path);
	return buf;
}

static FILE *fopen_under_root(const char *path, const char *mode)
{
	char buf[4096];
	return fopen(under_root(path, buf, sizeof(buf)), mode);
}

static int access_under_root(const char *path, int mode)
{
	char buf[4096];
	return access(under_root(path, buf, sizeof(buf)), mode);
}

#define fopen fopen_under_root
#define access access_under_root
#include "cgroup.c"

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		fake_root = argv[i];
		printf("%.17g\n", lr_cgroup_cpus());
	}
	return 0;
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "cgroup_cpus")
	if out, err := exec.Command(cc, "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror", "-I"+src, "-o", bin, main).CombinedOutput(); err != nil {
		t.Fatalf("building dataplane/src/cgroup.c: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, roots...).Output()
	if err != nil {
		t.Fatalf("running dataplane/src/cgroup.c's lr_cgroup_cpus: %v", err)
	}
	fields := strings.Fields(string(out))
	if len(fields) != len(roots) {
		t.Fatalf("lr_cgroup_cpus gave %d answers for %d cgroup trees: %q", len(fields), len(roots), out)
	}
	cpus := make([]float64, len(fields))
	for i, f := range fields {
		if cpus[i], err = strconv.ParseFloat(f, 64); err != nil {
			t.Fatalf("lr_cgroup_cpus printed %q: %v", f, err)
		}
	}
	return cpus
}
