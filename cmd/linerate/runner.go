package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"linerate.dev/linerate/internal/runner"
)

// `linerate runner`: the tester pod's runner, which the operator starts in the pods it makes (internal/tester);
// people rarely type it.

func newRunnerCommand() *cobra.Command {
	o := runner.PodOptions{RemoteEngine: map[string]string{}}
	var ports, remote []string
	c := &cobra.Command{
		Use:   "runner --plan FILE --results-configmap NAME [flags]",
		Short: "The tester pod's runner (started by the operator)",
		Long: `Run the operator's plan inside the tester pod and write what it measures into the results ConfigMap:
every trial record at once, the tables and a checkpoint after every step, progress every 5 s. A runner
started after a suspension goes on from the last checkpoint.`,
		Example: `  linerate runner --plan /etc/linerate/plan.json --namespace lab --results-configmap gw-results`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.PlanFile == "" || o.Namespace == "" || o.ResultsConfigMap == "" {
				return usageError{fmt.Errorf("--plan, --namespace and --results-configmap are required")}
			}
			o.Ports = ports
			for _, r := range remote {
				name, addr, ok := strings.Cut(r, "=")
				if !ok {
					return usageError{fmt.Errorf("--remote-engine %s: want NAME=tcp:HOST:PORT", r)}
				}
				o.RemoteEngine[name] = addr
			}
			cfg, err := ctrl.GetConfig()
			if err != nil {
				return err
			}
			scheme := runtime.NewScheme()
			_ = corev1.AddToScheme(scheme)
			if o.Client, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
				return err
			}
			o.Log = cmd.ErrOrStderr()
			return runner.RunPod(cmd.Context(), o)
		},
	}
	f := c.Flags()
	f.StringVar(&o.PlanFile, "plan", "", "the operator's plan (plan.json)")
	f.StringVar(&o.Namespace, "namespace", os.Getenv("POD_NAMESPACE"), "namespace of the TrafficTest")
	f.StringVar(&o.ResultsConfigMap, "results-configmap", "", "the results ConfigMap")
	f.StringVar(&o.HugeDir, "huge-dir", "/dev/hugepages", "hugetlbfs mount")
	f.StringVar(&o.RunDir, "run-dir", "/run/linerate", "runtime directory (control socket)")
	f.StringVar(&o.Engine, "engine", "", "path of linerate-engine")
	f.StringVar(&o.MetricsAddr, "metrics-addr", ":9102", "live metrics address (empty: off)")
	f.StringVar(&o.NetworkStatus, "network-status", "", "downward API file of the pod's Multus network-status annotation (which VF each port got)")
	f.StringSliceVar(&ports, "ports", nil, "plan ports this pod drives, comma-separated (default all)")
	f.StringArrayVar(&remote, "remote-engine", nil, "NAME=tcp:HOST:PORT of the engine driving port NAME in another pod")
	return c
}
