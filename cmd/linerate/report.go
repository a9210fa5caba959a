package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/report"
	"linerate.dev/linerate/internal/results"
)

// clusterOptions say which cluster and namespace, as kubectl's flags do: a kubectl plugin is handed its
// flags verbatim and reads the kubeconfig itself.
type clusterOptions struct {
	kubeconfig, context, namespace string
}

func (o *clusterOptions) addFlags(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "the kubeconfig file (default $KUBECONFIG, else ~/.kube/config)")
	f.StringVar(&o.context, "context", "", "the kubeconfig context (default its current context)")
	f.StringVarP(&o.namespace, "namespace", "n", "", "namespace of the TrafficTest (default the context's)")
	_ = c.MarkFlagFilename("kubeconfig")
}

// client connects to the API server of the kubeconfig, and says which namespace is meant.
func (o *clusterOptions) client() (client.Client, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.context})
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig: %w", err)
	}
	ns := o.namespace
	if ns == "" {
		if ns, _, err = loader.Namespace(); err != nil {
			return nil, "", fmt.Errorf("kubeconfig: %w", err)
		}
	}
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	return c, ns, err
}

func newReportCommand() *cobra.Command {
	var cluster clusterOptions
	var dir string
	c := &cobra.Command{
		Use:   "report TRAFFICTEST [-n NAMESPACE] [-o DIR]",
		Short: "Write the HTML report of a TrafficTest from its results in the cluster",
		Long: `Write the report 'linerate run --report' writes (the plots, the result tables, results.json and every
trial record in trials.jsonl) for a TrafficTest in the cluster of the current kubeconfig: from its results
ConfigMap (status.resultsConfigMap) and every trial segment ConfigMap it lists.

A test still running gets a report of what it measured so far, marked as not finished; a failed one says
why it did not finish. Installed as kubectl-linerate on the PATH, it is 'kubectl linerate report'.`,
		Example: `  # The nightly test's report in ./nightly-report/index.html
  linerate report nightly -n lab

  # As a kubectl plugin (ln -s "$(command -v linerate)" ~/.local/bin/kubectl-linerate), into ./out
  kubectl linerate report nightly -n lab -o out`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Errorf("give one TrafficTest by name (got %d arguments)", len(args))}
			}
			return nil
		},
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return trafficTestNames(&cluster), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ns, err := cluster.client()
			if err != nil {
				return err
			}
			name := args[0]
			out := dir
			if out == "" {
				out = name + "-report"
			}
			run, err := clusterRun(cmd.Context(), c, types.NamespacedName{Namespace: ns, Name: name})
			if err != nil {
				return err
			}
			if err := report.Write(out, run); err != nil {
				return fmt.Errorf("writing the report: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "report of TrafficTest %s/%s (%d trials) in %s/index.html\n", ns, name, len(run.Trials), out)
			return nil
		},
	}
	cluster.addFlags(c)
	c.Flags().StringVarP(&dir, "output", "o", "", "the directory to write the report into (default ./TRAFFICTEST-report)")
	_ = c.MarkFlagDirname("output")
	return c
}

// trafficTestNames are the TrafficTests of the namespace, for shell completion (none when the cluster
// cannot be asked).
func trafficTestNames(cluster *clusterOptions) []string {
	c, ns, err := cluster.client()
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var list v1alpha1.TrafficTestList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil
	}
	var names []string
	for _, tt := range list.Items {
		names = append(names, tt.Name+"\t"+string(tt.Status.Phase))
	}
	return names
}

// clusterRun reads what a TrafficTest has measured, from its results ConfigMap and its trial segments, into
// what a report shows, with how far the run got.
func clusterRun(ctx context.Context, c client.Reader, key types.NamespacedName) (report.Run, error) {
	tt := &v1alpha1.TrafficTest{}
	if err := c.Get(ctx, key, tt); err != nil {
		switch {
		case apierrors.IsNotFound(err):
			return report.Run{}, fmt.Errorf("TrafficTest %q not found in namespace %q", key.Name, key.Namespace)
		case apimeta.IsNoMatchError(err):
			return report.Run{}, fmt.Errorf("the cluster knows no TrafficTest kind: is the linerate operator installed? (%w)", err)
		}
		return report.Run{}, fmt.Errorf("TrafficTest %s: %w", key, err)
	}
	phase := phaseOf(tt)
	if tt.Status.ResultsConfigMap == "" {
		return report.Run{}, fmt.Errorf("TrafficTest %s has no results ConfigMap yet (status.resultsConfigMap is empty, phase %s): the operator makes it when it plans the run", key, phase)
	}
	cmKey := types.NamespacedName{Namespace: key.Namespace, Name: tt.Status.ResultsConfigMap}
	stored, err := results.Read(ctx, c, cmKey)
	if apierrors.IsNotFound(err) {
		return report.Run{}, fmt.Errorf("the results ConfigMap %s of TrafficTest %s (status.resultsConfigMap) is not there", cmKey, key)
	}
	if err != nil {
		return report.Run{}, fmt.Errorf("TrafficTest %s: %w", key, err)
	}
	if stored.Empty() {
		return report.Run{}, fmt.Errorf("TrafficTest %s has measured nothing yet (phase %s): its results ConfigMap %s holds no results, progress or trial", key, phase, cmKey.Name)
	}
	res := stored.Results
	if res == nil {
		res = &v1alpha1.Results{}
	}
	if res.DUT == nil && tt.Spec.DUT != (v1alpha1.DUTSpec{}) {
		res.DUT = tt.Spec.DUT.DeepCopy()
	}
	run := report.Run{Name: tt.Name, Results: res, Trials: stored.Trials}
	run.Failure, run.Running = howFar(tt, stored)
	return run, nil
}

// howFar says why a run did not finish (failure), or where a run that goes on stands (running); both
// are empty for one that succeeded. Only the operator's phase Succeeded makes a run finished: a tester that
// says it is done is not judged yet.
func howFar(tt *v1alpha1.TrafficTest, stored *results.Stored) (failure, running string) {
	st := stored.State
	switch tt.Status.Phase {
	case v1alpha1.PhaseSucceeded:
		return "", ""
	case v1alpha1.PhaseFailed:
		if c := apimeta.FindStatusCondition(tt.Status.Conditions, v1alpha1.ConditionFailed); c != nil && c.Status == metav1.ConditionTrue {
			return strings.TrimSpace(c.Reason + ": " + c.Message), ""
		}
		if st != nil && st.Reason != "" {
			return strings.TrimSpace(st.Reason + ": " + st.Message), ""
		}
		return "the TrafficTest failed", ""
	}
	running = "the TrafficTest is " + phaseOf(tt)
	if p := stored.Progress; p != nil {
		if p.StepsTotal > 0 {
			running += fmt.Sprintf(", %d of %d steps done", p.StepsDone, p.StepsTotal)
		}
		if p.Summary != "" {
			running += "; the tester last reported: " + p.Summary
		}
		if p.UpdateTime != nil {
			running += " (at " + p.UpdateTime.UTC().Format(time.DateTime) + " UTC)"
		}
	}
	if st != nil && st.State != results.StateRunning && st.State != "" {
		running += fmt.Sprintf("; the tester ended it (%s", st.State)
		if st.Reason != "" {
			running += ", " + st.Reason
		}
		running += ") and the operator has not judged it yet"
	}
	return "", running
}

// phaseOf is the TrafficTest's phase as a reader is told it.
func phaseOf(tt *v1alpha1.TrafficTest) string {
	if tt.Status.Phase == "" {
		return "not yet planned"
	}
	return string(tt.Status.Phase)
}
