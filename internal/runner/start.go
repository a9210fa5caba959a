package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"linerate.dev/linerate/internal/devices"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/enginestart"
	"linerate.dev/linerate/internal/plan"
)

// EngineBinary finds linerate-engine: the flag, $LINERATE_ENGINE, the tester image's path, $PATH, or
// the build tree.
func EngineBinary(flag string) (string, error) {
	for _, c := range []string{flag, os.Getenv("LINERATE_ENGINE"), "/usr/local/bin/linerate-engine"} {
		if c != "" {
			if _, err := os.Stat(c); err == nil {
				return c, nil
			}
		}
	}
	if p, err := exec.LookPath("linerate-engine"); err == nil {
		return p, nil
	}
	if exe, err := os.Executable(); err == nil {
		c := filepath.Join(filepath.Dir(exe), "..", "dataplane", "build", "linerate-engine")
		if _, err := os.Stat(c); err == nil {
			return c, nil
		}
	}
	return "", fmt.Errorf("linerate-engine not found: give --engine, set LINERATE_ENGINE, or run 'make engine'")
}

// lcoreLayout picks the engine's lcores from the CPUs this process may run on (the container's cpuset, e.g. the
// exclusive cores of a Guaranteed pod under the static CPU manager): the main lcore (control) and workers
// on the rest, as many as its CPU quota allows (each worker spins: more than the quota carries would have
// the kernel stop the tester mid-trial) and limit (the CPUs asked for, 0: all), laid out over the ports
// by engine.WorkerLayout, and the queue pairs per port those workers want. With a single CPU, control and
// one worker share it — the control thread sleeps almost always.
func lcoreLayout(ports, limit int) (args []string, queuesPerPort int) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return []string{"-l", "0,1"}, 1
	}
	usable := set.Count()
	if q := cgroupCPUQuota(); q > 0 {
		usable = min(usable, max(1, int(q)))
	}
	if limit > 0 {
		usable = min(usable, limit)
	}
	workers, queuesPerPort := engine.WorkerLayout(usable, ports)
	var cpus []string
	for i := 0; i < 1024 && len(cpus) < min(1+workers, usable); i++ {
		if set.IsSet(i) {
			cpus = append(cpus, strconv.Itoa(i))
		}
	}
	switch len(cpus) {
	case 0:
		return []string{"-l", "0,1"}, 1
	case 1:
		return []string{"--lcores", "0@" + cpus[0] + ",1@" + cpus[0]}, 1
	}
	return []string{"-l", strings.Join(cpus, ",")}, queuesPerPort
}

// withQueuePairs gives af_packet ports the queue pairs the workers want: af_packet's come from its vdev
// arguments (qpairs, sockets of one fanout group that the kernel hashes flows over), which the engine
// cannot change. Devargs that say qpairs already are the user's. (af_xdp binds NIC queues, whose number
// is the NIC's channel setting: left to the user's devargs.)
func withQueuePairs(devs []devices.Device, queuesPerPort int) []devices.Device {
	if queuesPerPort <= 1 {
		return devs
	}
	out := slices.Clone(devs)
	for i, d := range out {
		if strings.HasPrefix(d.Devargs, "net_af_packet") && !strings.Contains(d.Devargs, "qpairs=") {
			out[i].Devargs += ",qpairs=" + strconv.Itoa(queuesPerPort)
		}
	}
	return out
}

// withRings gives af_packet ports rings of engine.AFPacketRingFrames frames; devargs that say framecnt are the
// user's.
func withRings(devs []devices.Device) []devices.Device {
	out := slices.Clone(devs)
	for i, d := range out {
		if strings.HasPrefix(d.Devargs, "net_af_packet") && !strings.Contains(d.Devargs, "framecnt=") {
			out[i].Devargs += ",framecnt=" + strconv.Itoa(engine.AFPacketRingFrames)
		}
	}
	return out
}

// StartOptions start an engine for a run.
type StartOptions struct {
	Binary     string
	Devices    []devices.Device
	Control    string
	RunDir     string
	HugeDir    string // empty: no hugepages (--no-huge)
	FilePrefix string
	Log        io.Writer
	Extra      []string // engine args after --
	// Plan sizes the engine's sequence window (plan.SeqWindow); nil keeps the engine's default.
	Plan *plan.Plan
	// CPUs is how many CPUs the engine may take, control included (0: every one the cpuset and CPU quota
	// give); those beyond a worker per port become queue pairs (engine.WorkerLayout).
	CPUs int
}

// Start starts linerate-engine with the given ports.
func Start(ctx context.Context, o StartOptions) (*enginestart.Process, error) {
	if o.RunDir == "" {
		d, err := os.MkdirTemp("", "linerate-")
		if err != nil {
			return nil, err
		}
		o.RunDir = d
	}
	if err := os.MkdirAll(o.RunDir, 0o755); err != nil {
		return nil, err
	}
	if o.Control == "" {
		o.Control = filepath.Join(o.RunDir, "engine.sock")
	}
	if o.FilePrefix == "" {
		o.FilePrefix = fmt.Sprintf("linerate%d", os.Getpid())
	}
	return enginestart.StartProcess(ctx, processConfig(o))
}

// processConfig is the engine's command line for o (RunDir, Control and FilePrefix already set).
func processConfig(o StartOptions) enginestart.ProcessConfig {
	args := slices.Clone(o.Extra)
	if o.Plan != nil {
		if bits, _ := o.Plan.SeqWindow(); bits > 0 {
			args = append(args, "--window-bits", strconv.Itoa(bits))
		}
		// the engine's buffers hold 2048 B frames unless told more; jumbo frames need theirs
		if f := o.Plan.LargestFrame(); f > engine.DefaultMaxFrame {
			args = append(args, "--max-frame", strconv.Itoa(f))
		}
	}
	polling := ""
	if o.Plan != nil {
		polling = o.Plan.Polling
	}
	args = withSpin(args, spins(polling, ownCPUs))
	lcores, queues := lcoreLayout(len(o.Devices), o.CPUs)
	cfg := enginestart.ProcessConfig{Binary: o.Binary, Devices: withRings(withQueuePairs(o.Devices, queues)), Control: o.Control, FilePrefix: o.FilePrefix,
		EAL: append(lcores, "--log-level", "lib.eal:notice"), Args: args, Stdout: o.Log, Stderr: o.Log}
	if o.HugeDir != "" && hasHugepages(o.HugeDir) {
		cfg.HugeDir = o.HugeDir
		// no hugepage files left behind in the pod's small HugePages emptyDir
		cfg.EAL = append(cfg.EAL, "--huge-unlink")
	} else {
		cfg.NoHuge, cfg.MemoryMB = true, 512
		cfg.EAL = append(cfg.EAL, "--no-shconf")
	}
	return cfg
}

// hasHugepages says whether dir is a hugetlbfs mount.
func hasHugepages(dir string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return false
	}
	return st.Type == unix.HUGETLBFS_MAGIC
}

func parseFloat(s string) (float64, bool) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return v, err == nil
}
