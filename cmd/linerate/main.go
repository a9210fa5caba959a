// Command linerate runs RFC 2544 benchmarks with the linerate engine: `linerate run` on local ports
// without a cluster, and, inside the pods the operator starts, `linerate runner` and `linerate engine`.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"linerate.dev/linerate/internal/runner"
)

func main() {
	root := newRootCommand()
	root.SetArgs(invokedAs(root, os.Args[0], os.Args[1:]))
	if cmd, err := root.ExecuteContextC(interruptible()); err != nil {
		fmt.Fprint(os.Stderr, explain(cmd, err))
		os.Exit(exitCode(err))
	}
}

// usageError is a mistake in the command line (exit 2, as flag parsing errors); anything else is a run
// that failed (exit 1).
type usageError struct{ error }

// explain is what a failed command prints: the command and the error, and for a usage error where to
// read the usage.
func explain(cmd *cobra.Command, err error) string {
	msg := fmt.Sprintf("%s: %v\n", cmd.CommandPath(), err)
	if exitCode(err) == 2 {
		msg += fmt.Sprintf("See '%s --help'.\n", cmd.CommandPath())
	}
	return msg
}

func exitCode(err error) int {
	var u usageError
	if errors.As(err, &u) {
		return 2
	}
	return 1
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "linerate",
		Short: "RFC 2544 benchmarks: throughput, latency, frame loss, back-to-back, IMIX",
		Long: `linerate measures a device under test (a router, an IPsec gateway, a VPN concentrator) the way
RFC 2544 says: the highest rate it forwards without loss (NDR), its latency at that rate, its loss
curve, the longest burst it takes, and its throughput with an IMIX.

In a cluster, the operator runs TrafficTests (kubectl apply -f test.yaml). Without one, 'linerate run'
runs the same TrafficTest file on local ports.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return usageError{err}
	})
	root.AddCommand(newRunCommand(), newCalibrateCommand(), newReportCommand(), newRunnerCommand(), newEngineCommand(), newVersionCommand())
	return root
}

// The names kubectl gives a plugin: it runs kubectl-linerate for 'kubectl linerate ...', and, to complete
// 'kubectl linerate <TAB>', kubectl_complete-linerate with the words to complete.
const (
	kubectlPlugin           = "kubectl-linerate"
	kubectlPluginCompletion = "kubectl_complete-linerate"
)

// invokedAs fits the command to the name it was run by, and returns its arguments. Run as a kubectl
// plugin, it speaks as one: help, usage and errors say "kubectl linerate report", not "linerate report";
// run as its completion helper, it answers cobra's completion request for the words kubectl hands it.
func invokedAs(root *cobra.Command, argv0 string, args []string) []string {
	switch filepath.Base(argv0) {
	case kubectlPlugin:
	case kubectlPluginCompletion:
		args = append([]string{cobra.ShellCompRequestCmd}, args...)
	default:
		return args
	}
	root.Use = kubectlPlugin
	if root.Annotations == nil {
		root.Annotations = map[string]string{}
	}
	root.Annotations[cobra.CommandDisplayNameAnnotation] = "kubectl linerate"
	return args
}

// interruptible is a context that SIGINT or SIGTERM cancels with the signal's name as its cause, so that a
// run can say what stopped it and keep what it measured. A second signal ends the process at once.
func interruptible() context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		signal.Reset(os.Interrupt, syscall.SIGTERM)
		name := "SIGTERM"
		if sig == os.Interrupt {
			name = "SIGINT"
		}
		cancel(fmt.Errorf("%w by %s", runner.ErrInterrupted, name))
	}()
	return ctx
}

// noArgs refuses positional arguments as a usage error: the test file is given with -f.
func noArgs(cmd *cobra.Command, args []string) error {
	if err := cobra.NoArgs(cmd, args); err != nil {
		return usageError{fmt.Errorf("%w (the TrafficTest is given with -f)", err)}
	}
	return nil
}
