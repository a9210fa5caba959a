package runner

import (
	"slices"
	"testing"
)

func TestCPUsAreOwnOnlyWhereTheKubeletGaveThemWhole(t *testing.T) {
	const guaranteed = "/kubepods/pod9d359df5-c964-4027-9e0c-9b70b465e231/9bb370764eec"
	for _, c := range []struct {
		name            string
		allowed, online int
		quota           float64
		path            string
		want            bool
	}{
		{"static policy, quota dropped for exclusive CPUs (kubelet 1.37, as measured in the demo's cluster)", 2, 4, 0, guaranteed, true},
		{"static policy, systemd driver", 2, 8, 0, "/kubepods.slice/kubepods-pod9d359df5_c964_4027.slice/cri-containerd-9bb3.scope", true},
		{"static policy with the quota kept", 2, 8, 2, guaranteed, true},
		{"one exclusive CPU: the worker would poll beside its control lcore and the runner", 1, 2, 0, guaranteed, false},
		{"policy none: a Guaranteed pod's cpuset is every CPU", 2, 2, 1, guaranteed, false},
		{"policy none, quota below the cpuset", 4, 8, 2, guaranteed, false},
		{"a fractional CPU runs in the shared pool, which may be narrower than the node", 2, 8, 1.5, guaranteed, false},
		{"a quota wider than the cpuset: shared pool", 2, 8, 3, guaranteed, false},
		{"Burstable pod with a limit as wide as a narrowed shared pool", 2, 4, 2, "/kubepods/burstable/pod9d35/9bb3", false},
		{"Burstable pod in the shared pool, no limit", 2, 4, 0, "/kubepods/burstable/pod9d35/9bb3", false},
		{"BestEffort, systemd driver", 2, 4, 0, "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod9d35.slice/x", false},
		{"private cgroup namespace: nothing says the CPUs are its own", 2, 4, 0, "/", false},
		{"taskset on a host, no pod", 2, 4, 0, "/user.slice/session-1.scope", false},
		{"online CPUs unknown", 2, 0, 0, guaranteed, false},
	} {
		if got := cpusAreOwn(c.allowed, c.online, c.quota, c.path); got != c.want {
			t.Errorf("%s: cpusAreOwn(%d of %d, quota %v, %q) = %v, want %v", c.name, c.allowed, c.online, c.quota, c.path, got, c.want)
		}
	}
}

func TestTheEngineSpinsOnItsOwnCPUsOnly(t *testing.T) {
	if got := withSpin([]string{"--window-bits", "20"}, true); !slices.Equal(got, []string{"--window-bits", "20", "--spin"}) {
		t.Errorf("own CPUs: %v", got)
	}
	if got := withSpin([]string{"--spin"}, true); !slices.Equal(got, []string{"--spin"}) {
		t.Errorf("--spin given: %v", got)
	}
	if got := withSpin(nil, false); len(got) != 0 {
		t.Errorf("shared CPUs: %v", got)
	}
}

func TestPollingSaysWhetherTheWorkersSpin(t *testing.T) {
	own, shared := func() bool { return true }, func() bool { return false }
	for _, c := range []struct {
		polling string
		own     func() bool
		want    bool
	}{
		{"", own, true}, {"", shared, false}, {"Auto", own, true}, {"Auto", shared, false},
		{"Spin", shared, true}, {"Sleep", own, false},
	} {
		if got := spins(c.polling, c.own); got != c.want {
			t.Errorf("polling %q, own CPUs %v: spins %v, want %v", c.polling, c.own(), got, c.want)
		}
	}
}

func TestCountCPUList(t *testing.T) {
	for list, want := range map[string]int{"0-1": 2, "0": 1, "0-3,6": 5, "0-3,8-11": 8, "": 0, "x": 0, "3-1": 0} {
		if got := countCPUList(list); got != want {
			t.Errorf("countCPUList(%q) = %d, want %d", list, got, want)
		}
	}
}
