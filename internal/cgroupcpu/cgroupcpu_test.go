package cgroupcpu

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseCPUMax(t *testing.T) {
	for in, want := range map[string]float64{"max 100000\n": 0, "150000 100000\n": 1.5, "300000 100000": 3, "": 0,
		"x 100000": 0, "100000 0": 0, "-1 100000": 0} {
		if got := ParseCPUMax(in); got != want {
			t.Errorf("quota %q: %v CPUs, want %v", in, got, want)
		}
	}
}

// A DUT's CPU time and quota are read from the files the kernel writes, on either cgroup version.
func TestUsage(t *testing.T) {
	for _, c := range []struct {
		name    string
		files   map[string]string // below the mount root
		path    string
		want    time.Duration
		allowed float64
		err     string
	}{
		{name: "v2", path: "/system.slice/dut.service", want: 1234567 * time.Microsecond, allowed: 0.5,
			files: map[string]string{"cgroup.controllers": "cpu\n",
				"system.slice/dut.service/cpu.stat": "usage_usec 1234567\nuser_usec 1000000\nsystem_usec 234567\n",
				"system.slice/dut.service/cpu.max":  "50000 100000\n", "system.slice/cpu.max": "max 100000\n"}},
		{name: "v2 the quota of an ancestor (a pod's, above its container)", path: "kubepods.slice/pod1.slice/cri-1.scope",
			want: 7 * time.Microsecond, allowed: 0.25,
			files: map[string]string{"cgroup.controllers": "cpu\n",
				"kubepods.slice/pod1.slice/cri-1.scope/cpu.stat": "usage_usec 7\n",
				"kubepods.slice/pod1.slice/cpu.max":              "25000 100000\n"}},
		{name: "v1 (cpuacct for the time, cpu for the quota)", path: "/dut", want: 987654321, allowed: 0.1,
			files: map[string]string{"cpuacct/dut/cpuacct.usage": "987654321\n",
				"cpu/dut/cpu.cfs_quota_us": "1000\n", "cpu/dut/cpu.cfs_period_us": "10000\n"}},
		{name: "v1 no quota", path: "/dut", want: 5,
			files: map[string]string{"cpuacct/dut/cpuacct.usage": "5\n",
				"cpu/dut/cpu.cfs_quota_us": "-1\n", "cpu/dut/cpu.cfs_period_us": "100000\n"}},
		{name: "not there", path: "/nothere", err: "cgroup /nothere: no ",
			files: map[string]string{"cgroup.controllers": "cpu\n"}},
		{name: "up and out", path: "/a/../../etc", err: "not a cgroup path",
			files: map[string]string{"cgroup.controllers": "cpu\n"}},
		{name: "v2 without usage_usec", path: "/x", err: "has no usage_usec",
			files: map[string]string{"cgroup.controllers": "cpu\n", "x/cpu.stat": "nr_periods 0\n"}},
	} {
		root := t.TempDir()
		for f, body := range c.files {
			p := filepath.Join(root, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		u, err := OpenUsage(root, c.path)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want one saying %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got, err := u.CPUTime(); err != nil || got != c.want {
			t.Errorf("%s: CPU time %v %v, want %v", c.name, got, err, c.want)
		}
		if got := u.Allowed(); got != c.allowed {
			t.Errorf("%s: allowed %v CPUs, want %v", c.name, got, c.allowed)
		}
	}
}

// A pod's cgroup is found by its UID wherever the kubelet put it: the cgroupfs driver's pod<uid>, the
// systemd driver's ...-pod<uid with _>.slice, below kubepods at the root or nested deeper.
func TestFindPod(t *testing.T) {
	const uid = "0f1e2d3c-aaaa-bbbb-cccc-123456789abc"
	for _, c := range []struct {
		name string
		dirs []string // below the mount root
		link string   // v1: what cpuacct links to
		want string
		err  string
	}{
		{name: "v1, systemd's co-mount (cpuacct a link to cpu,cpuacct)", link: "cpu,cpuacct",
			dirs: []string{"cpu,cpuacct/kubepods.slice/kubepods-pod0f1e2d3c_aaaa_bbbb_cccc_123456789abc.slice/"},
			want: "/kubepods.slice/kubepods-pod0f1e2d3c_aaaa_bbbb_cccc_123456789abc.slice"},
		{name: "v2, systemd driver", dirs: []string{"cgroup.controllers",
			"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0f1e2d3c_aaaa_bbbb_cccc_123456789abc.slice/cri-containerd-1.scope/"},
			want: "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0f1e2d3c_aaaa_bbbb_cccc_123456789abc.slice"},
		{name: "v1, cgroupfs driver (cpuacct)", dirs: []string{"cpuacct/kubepods/besteffort/pod" + uid + "/abc/", "cpuacct/kubepods/besteffort/podother/"},
			want: "/kubepods/besteffort/pod" + uid},
		{name: "v2, guaranteed, nested in a node container", dirs: []string{"cgroup.controllers",
			"kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-pod0f1e2d3c_aaaa_bbbb_cccc_123456789abc.slice/"},
			want: "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-pod0f1e2d3c_aaaa_bbbb_cccc_123456789abc.slice"},
		{name: "another pod's UID that ends like it is not it", dirs: []string{"cgroup.controllers",
			"kubepods.slice/kubepods-pod1" + uid + ".slice/"}, err: "no cgroup of pod UID " + uid},
		{name: "not on this node", dirs: []string{"cgroup.controllers", "kubepods.slice/"}, err: "the pod is not on this node"},
	} {
		root := t.TempDir()
		for _, d := range c.dirs {
			p := filepath.Join(root, d)
			if strings.HasSuffix(d, "/") {
				if err := os.MkdirAll(p, 0o755); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if c.link != "" {
			// systemd's v1 co-mount: cpuacct links to cpu,cpuacct
			if err := os.Symlink(c.link, filepath.Join(root, "cpuacct")); err != nil {
				t.Fatal(err)
			}
		}
		got, err := FindPod(root, uid)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %q %v, want an error saying %q", c.name, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %q %v, want %q", c.name, got, err, c.want)
		}
	}
}
