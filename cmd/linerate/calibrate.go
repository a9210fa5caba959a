package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"linerate.dev/linerate/internal/runner"
)

func newCalibrateCommand() *cobra.Command {
	var o runner.CalibrateOptions
	var ports []string
	c := &cobra.Command{
		Use:   "calibrate -f TEST.yaml [--port NAME=DEVARGS ...] [--out calibration.json]",
		Short: "Measure the tester alone: its ceiling and latency floor with its ports joined to each other",
		Long: `Calibrate runs the TrafficTest's throughput searches (its frame sizes, IMIX, directions, trial lengths and
loss tolerance) and latency on the tester's ports joined to each other, with no DUT between them: a
cable, a veth pair, or two VFs of one PF through the NIC's embedded switch. Each port sends to the other's
MAC; nothing is resolved.

What it finds is the tester's own: the highest rate it sends and counts without loss per frame size
(its ceiling, the lowest of --repetitions searches, with their spread) and the latency it measures
through no DUT at a tenth of it. 'linerate run --calibration'
then states each row's margin to that ceiling, and marks a row within --ceiling-margin of it
tester-limited instead of reporting it as the DUT's.`,
		Example: `  # Two VFs of one PF: the NIC's switch joins them
  linerate calibrate -f throughput-test.yaml --port west=0000:3b:02.0 --port east=0000:3b:02.1
  linerate run -f throughput-test.yaml --port west=0000:3b:02.0 --port east=0000:3b:03.0 --calibration calibration.json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(o.Files) == 0 {
				return usageError{fmt.Errorf("give the TrafficTest with -f")}
			}
			if o.Repetitions < 1 || o.Repetitions > 20 {
				return usageError{fmt.Errorf("--repetitions %d: want 1 to 20", o.Repetitions)}
			}
			if o.CPUs < 0 {
				return usageError{fmt.Errorf("--cpus %d: want at least 1 (or 0: all)", o.CPUs)}
			}
			var err error
			if o.Ports, err = portFlags(ports); err != nil {
				return err
			}
			o.Output = "table"
			o.Stdout, o.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			_, err = runner.Calibrate(cmd.Context(), o)
			return err
		},
	}
	f := c.Flags()
	f.StringArrayVarP(&o.Files, "file", "f", nil, "TrafficTest YAML; repeat for the ImixProfiles it names")
	f.StringArrayVar(&ports, "port", nil, "NAME=DPDK devargs of a port, e.g. west=net_af_packet0,iface=eth1 or west=0000:3b:02.0 (repeatable)")
	f.StringVar(&o.Engine, "engine", "", "path of linerate-engine (default $LINERATE_ENGINE, /usr/local/bin, $PATH)")
	f.StringVar(&o.HugeDir, "huge-dir", "", "hugetlbfs mount for the engine (default: ordinary memory)")
	f.IntVar(&o.CPUs, "cpus", 0, "CPUs the engine takes, control included (default: all of this process's cpuset, as its CPU quota allows); those beyond a worker per port become queue pairs")
	f.StringVar(&o.Out, "out", "calibration.json", "the calibration file to write")
	f.IntVar(&o.Repetitions, "repetitions", 3, "throughput searches per frame size: their spread is the tester's own, and rows within it of the ceiling are the tester's")
	_ = c.MarkFlagFilename("file", "yaml", "yml")
	_ = c.MarkFlagDirname("huge-dir")
	return c
}
