package runner

import "testing"

func TestParseCPUMax(t *testing.T) {
	for in, want := range map[string]float64{"max 100000\n": 0, "150000 100000\n": 1.5, "300000 100000": 3, "": 0,
		"x 100000": 0, "100000 0": 0, "-1 100000": 0} {
		if got := parseCPUMax(in); got != want {
			t.Errorf("quota %q: %v CPUs, want %v", in, got, want)
		}
	}
}

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
