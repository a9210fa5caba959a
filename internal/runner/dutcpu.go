package runner

import (
	"fmt"
	"os"

	"linerate.dev/linerate/internal/cgroupcpu"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/rfc2544"
)

// dutCPUMeter opens the DUT's CPU source of the plan (spec.dut.cpu) in the cgroup file system mounted at
// root: its cgroup, or the cgroup of its pod (the operator found the pod's UID and placed this pod on its
// node); nil without one. A source that cannot be read refuses the run before any trial: the user asked for
// the DUT's cost, and a run without it would look complete.
func dutCPUMeter(p *plan.Plan, root string) (*cgroupcpu.Usage, error) {
	c := p.DUT.CPU
	if c == nil {
		return nil, nil
	}
	path := c.Cgroup
	if c.Pod != "" {
		if p.DUTPod == nil {
			return nil, fmt.Errorf("spec.dut.cpu.pod %q: a DUT pod is found by the operator, in a cluster; without one, give spec.dut.cpu.cgroup", c.Pod)
		}
		var err error
		if path, err = cgroupcpu.FindPod(root, p.DUTPod.UID); err != nil {
			return nil, fmt.Errorf("spec.dut.cpu.pod %q on node %s: %w", c.Pod, p.DUTPod.Node, err)
		}
	}
	u, err := cgroupcpu.OpenUsage(root, path)
	if err != nil {
		if entries, _ := os.ReadDir(root); len(entries) == 0 {
			// `ip netns exec` mounts a fresh /sys, without the cgroup file system
			return nil, fmt.Errorf("spec.dut.cpu: %w; no cgroup file system is mounted at %s (in `ip netns exec`, mount it elsewhere first, e.g. mount --rbind /sys/fs/cgroup /mnt/cgroup, and give --cgroup-root /mnt/cgroup)", err, root)
		}
		return nil, fmt.Errorf("spec.dut.cpu: %w", err)
	}
	return u, nil
}

// withDUTCPU gives the run the DUT's CPU meter, and says in a note where it reads (a cgroup path may exist
// on every node: the note names the one it was read on).
func withDUTCPU(o *rfc2544.Options, u *cgroupcpu.Usage, where string) {
	if u == nil {
		return
	}
	o.DUTCPU = u
	o.Notes = append(o.Notes, fmt.Sprintf("the DUT's CPU time is read from cgroup %s on %s (spec.dut.cpu)", u.Path, where))
}
