// Command linerate runs RFC 2544 benchmarks with the linerate engine.
//
//	linerate run -f throughput-test.yaml [--port west=<devargs>] [--port east=<devargs>] [-o table|json] [--report DIR] [--baseline FILE]
//	linerate runner --plan FILE --namespace NS --results-configmap NAME ...   (inside the tester pod)
//	linerate engine --plan FILE --ports east --listen :7777 ...               (receiver pod of a two-node testbed)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"linerate.dev/linerate/internal/runner"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func usage() {
	fmt.Fprint(os.Stderr, `linerate: RFC 2544 benchmarks (throughput, latency, frame loss, back-to-back, IMIX)

  linerate run -f TEST.yaml [-f IMIX.yaml] [--port NAME=DEVARGS]... [-o table|json] [--report DIR] [--baseline FILE]
      runs the TrafficTest you would kubectl apply, on local ports, without a cluster
  linerate runner ...   the tester pod's runner (started by the operator)
  linerate engine ...   the receiver pod's engine of a two-node testbed (started by the operator)
`)
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

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	ctx := interruptible()
	var err error
	switch os.Args[1] {
	case "run":
		err = run(ctx, os.Args[2:])
	case "runner":
		err = podRunner(ctx, os.Args[2:])
	case "engine":
		err = engineCmd(ctx, os.Args[2:])
	case "-h", "--help", "help":
		usage()
		return
	default:
		usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "linerate %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	var files, ports multi
	fs.Var(&files, "f", "TrafficTest YAML (repeat for ImixProfiles)")
	fs.Var(&ports, "port", "NAME=DPDK devargs of a port, e.g. west=net_af_packet0,iface=eth1 or west=0000:3b:02.0")
	eng := fs.String("engine", "", "path of linerate-engine (default $LINERATE_ENGINE, /usr/local/bin, $PATH)")
	out := fs.String("o", "table", "output: table or json")
	report := fs.String("report", "", "write an HTML report with plots into this directory")
	huge := fs.String("huge-dir", "", "hugetlbfs mount for the engine (default: ordinary memory)")
	baseline := fs.String("baseline", "", "results of a baseline run (-o json output or results.json): report the throughput penalty against it")
	_ = fs.Parse(args)
	if len(files) == 0 {
		return fmt.Errorf("give the test with -f")
	}
	if *out != "table" && *out != "json" {
		return fmt.Errorf("-o %s: want table or json", *out)
	}
	pm := map[string]string{}
	for _, p := range ports {
		name, val, ok := strings.Cut(p, "=")
		if !ok {
			return fmt.Errorf("--port %s: want NAME=DEVARGS", p)
		}
		pm[name] = val
	}
	_, err := runner.RunLocal(ctx, runner.LocalOptions{Files: files, Ports: pm, Engine: *eng, Output: *out,
		Report: *report, HugeDir: *huge, Baseline: *baseline, Stdout: os.Stdout, Stderr: os.Stderr})
	return err
}

func podRunner(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("runner", flag.ExitOnError)
	o := runner.PodOptions{Log: os.Stderr, RemoteEngine: map[string]string{}}
	fs.StringVar(&o.PlanFile, "plan", "", "the operator's plan (plan.json)")
	fs.StringVar(&o.Namespace, "namespace", os.Getenv("POD_NAMESPACE"), "namespace of the TrafficTest")
	fs.StringVar(&o.ResultsConfigMap, "results-configmap", "", "the results ConfigMap")
	fs.StringVar(&o.HugeDir, "huge-dir", "/dev/hugepages", "hugetlbfs mount")
	fs.StringVar(&o.RunDir, "run-dir", "/run/linerate", "runtime directory (control socket)")
	fs.StringVar(&o.Engine, "engine", "", "path of linerate-engine")
	fs.StringVar(&o.MetricsAddr, "metrics-addr", ":9102", "live metrics address (empty: off)")
	ports := fs.String("ports", "", "comma-separated plan ports this pod drives (default all)")
	var remote multi
	fs.Var(&remote, "remote-engine", "NAME=tcp:HOST:PORT of the engine driving port NAME in another pod")
	_ = fs.Parse(args)
	if o.PlanFile == "" || o.Namespace == "" || o.ResultsConfigMap == "" {
		return fmt.Errorf("--plan, --namespace and --results-configmap are required")
	}
	if *ports != "" {
		o.Ports = strings.Split(*ports, ",")
	}
	for _, r := range remote {
		name, addr, ok := strings.Cut(r, "=")
		if !ok {
			return fmt.Errorf("--remote-engine %s: want NAME=tcp:HOST:PORT", r)
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
	return runner.RunPod(ctx, o)
}

func engineCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("engine", flag.ExitOnError)
	planFile := fs.String("plan", "", "the operator's plan (plan.json)")
	ports := fs.String("ports", "", "comma-separated plan ports this pod drives")
	listen := fs.String("listen", ":7777", "control address for the generator's runner")
	huge := fs.String("huge-dir", "/dev/hugepages", "hugetlbfs mount")
	runDir := fs.String("run-dir", "/run/linerate", "runtime directory")
	eng := fs.String("engine", "", "path of linerate-engine")
	_ = fs.Parse(args)
	if *planFile == "" || *ports == "" {
		return fmt.Errorf("--plan and --ports are required")
	}
	return runner.ServeEngine(ctx, *planFile, strings.Split(*ports, ","), *listen, *huge, *runDir, *eng, os.Stderr)
}
