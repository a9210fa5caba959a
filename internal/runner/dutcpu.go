package runner

import (
	"fmt"
	"os"

	"linerate.dev/linerate/internal/cgroupcpu"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/rfc2544"
)

// dutCPUMeter opens the DUT's CPU source of the plan (spec.dut.cpu) in the cgroup file system mounted at
// root; nil without one. A source that cannot be read refuses the run before any trial: the user asked for
// the DUT's cost, and a run without it would look complete.
func dutCPUMeter(p *plan.Plan, root string) (rfc2544.CPUMeter, error) {
	if p.DUT.CPU == nil {
		return nil, nil
	}
	u, err := cgroupcpu.OpenUsage(root, p.DUT.CPU.Cgroup)
	if err != nil {
		if entries, _ := os.ReadDir(root); len(entries) == 0 {
			// `ip netns exec` mounts a fresh /sys, without the cgroup file system
			return nil, fmt.Errorf("spec.dut.cpu.cgroup: %w; no cgroup file system is mounted at %s (in `ip netns exec`, mount it elsewhere first, e.g. mount --rbind /sys/fs/cgroup /mnt/cgroup, and give --cgroup-root /mnt/cgroup)", err, root)
		}
		return nil, fmt.Errorf("spec.dut.cpu.cgroup: %w", err)
	}
	return u, nil
}
