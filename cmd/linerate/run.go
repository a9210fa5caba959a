package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"linerate.dev/linerate/internal/calibration"
	"linerate.dev/linerate/internal/runner"
)

func newRunCommand() *cobra.Command {
	var o runner.LocalOptions
	var ports []string
	c := &cobra.Command{
		Use:   "run -f TEST.yaml [-f IMIX.yaml] [flags]",
		Short: "Run a TrafficTest on local ports, without a cluster",
		Long: `Run the TrafficTest you would kubectl apply, on this machine's ports: the engine drives them with
DPDK (a VF or PF bound to vfio-pci, or af_packet, af_xdp, memif and other virtual devices).

The result tables go to standard output (-o table, or -o json with every trial record); --report writes
an HTML report with plots. Stopped by Ctrl-C or SIGTERM, the run keeps what it measured: the tables and
the report hold the trials it finished, marked incomplete.`,
		Example: `  # The ports as the spec names them (spec.ports[].interface, af_packet)
  linerate run -f throughput-test.yaml

  # An 82599 VF per side, given by PCI address, and an HTML report
  linerate run -f throughput-test.yaml --port west=0000:3b:02.0 --port east=0000:3b:02.1 --report ./report

  # IMIX from an ImixProfile file, JSON out, the penalty against an earlier run
  linerate run -f imix-test.yaml -f imix-profile.yaml -o json --baseline baseline.json > results.json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(o.Files) == 0 {
				return usageError{fmt.Errorf("give the TrafficTest with -f")}
			}
			if o.Output != "table" && o.Output != "json" {
				return usageError{fmt.Errorf("-o %s: want table or json", o.Output)}
			}
			if o.CPUs < 0 {
				return usageError{fmt.Errorf("--cpus %d: want at least 1 (or 0: all)", o.CPUs)}
			}
			if o.CeilingMargin < 0 || o.CeilingMargin >= 100 {
				return usageError{fmt.Errorf("--ceiling-margin %g: want a percent of the ceiling below 100", o.CeilingMargin)}
			}
			if cmd.Flags().Changed("ceiling-margin") && o.Calibration == "" {
				return usageError{fmt.Errorf("--ceiling-margin is a margin to the ceiling --calibration gives: give both")}
			}
			var err error
			if o.Ports, err = portFlags(ports); err != nil {
				return err
			}
			o.Stdout, o.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			_, err = runner.RunLocal(cmd.Context(), o)
			return err
		},
	}
	f := c.Flags()
	f.StringArrayVarP(&o.Files, "file", "f", nil, "TrafficTest YAML; repeat for the ImixProfiles it names")
	f.StringArrayVar(&ports, "port", nil, "NAME=DPDK devargs of a port, e.g. west=net_af_packet0,iface=eth1 or west=0000:3b:02.0 (repeatable)")
	f.StringVar(&o.Engine, "engine", "", "path of linerate-engine (default $LINERATE_ENGINE, /usr/local/bin, $PATH)")
	f.StringVarP(&o.Output, "output", "o", "table", "output format: table or json")
	f.StringVar(&o.Report, "report", "", "write an HTML report with plots into this directory")
	f.StringVar(&o.HugeDir, "huge-dir", "", "hugetlbfs mount for the engine (default: ordinary memory)")
	f.IntVar(&o.CPUs, "cpus", 0, "CPUs the engine takes, control included (default: all of this process's cpuset, as its CPU quota allows); those beyond a worker per port become queue pairs")
	f.StringVar(&o.Baseline, "baseline", "", "results of a baseline run (-o json output or results.json): report the throughput penalty against it")
	f.StringVar(&o.Calibration, "calibration", "", "the tester's calibration (linerate calibrate): state each row's margin to its ceiling")
	f.StringVar(&o.CgroupRoot, "cgroup-root", "/sys/fs/cgroup", "where the cgroup file system holding spec.dut.cpu.cgroup is mounted (`ip netns exec` mounts a /sys without it)")
	f.Float64Var(&o.CeilingMargin, "ceiling-margin", 0, fmt.Sprintf("a row whose NDR is within this percent of the calibrated ceiling is tester-limited (default: spec.tester.calibration.ceilingMargin, else %g)", calibration.DefaultMarginPercent))
	_ = c.MarkFlagFilename("file", "yaml", "yml")
	_ = c.MarkFlagFilename("calibration", "json")
	_ = c.MarkFlagFilename("baseline", "json")
	_ = c.MarkFlagDirname("report")
	_ = c.MarkFlagDirname("huge-dir")
	_ = c.MarkFlagDirname("cgroup-root")
	_ = c.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"table\ttables for people", "json\tresults and every trial record"}, cobra.ShellCompDirectiveNoFileComp
	})
	return c
}

// portFlags parses repeated --port NAME=DEVARGS flags.
func portFlags(flags []string) (map[string]string, error) {
	ports := map[string]string{}
	for _, p := range flags {
		name, val, ok := strings.Cut(p, "=")
		if !ok {
			return nil, usageError{fmt.Errorf("--port %s: want NAME=DEVARGS", p)}
		}
		ports[name] = val
	}
	return ports, nil
}
