package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"linerate.dev/linerate/internal/runner"
)

// `linerate engine`: the receiver pod's engine of a two-node testbed, which the operator starts in the pods it
// makes (internal/tester); people rarely type it.

func newEngineCommand() *cobra.Command {
	var planFile, listen, huge, runDir, eng, networkStatus string
	var ports []string
	c := &cobra.Command{
		Use:   "engine --plan FILE --ports NAME [flags]",
		Short: "The receiver pod's engine of a two-node testbed (started by the operator)",
		Long: `Start the engine on this pod's ports with a TCP control socket, for the runner in the generator pod on
another node to drive.`,
		Example: `  linerate engine --plan /etc/linerate/plan.json --ports east --listen :7777`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if planFile == "" || len(ports) == 0 {
				return usageError{fmt.Errorf("--plan and --ports are required")}
			}
			return runner.ServeEngine(cmd.Context(), planFile, ports, listen, huge, runDir, eng, networkStatus, cmd.ErrOrStderr())
		},
	}
	f := c.Flags()
	f.StringVar(&planFile, "plan", "", "the operator's plan (plan.json)")
	f.StringSliceVar(&ports, "ports", nil, "plan ports this pod drives, comma-separated")
	f.StringVar(&listen, "listen", ":7777", "control address for the generator's runner")
	f.StringVar(&huge, "huge-dir", "/dev/hugepages", "hugetlbfs mount")
	f.StringVar(&runDir, "run-dir", "/run/linerate", "runtime directory")
	f.StringVar(&eng, "engine", "", "path of linerate-engine")
	f.StringVar(&networkStatus, "network-status", "", "downward API file of the pod's Multus network-status annotation (which VF each port got)")
	return c
}
