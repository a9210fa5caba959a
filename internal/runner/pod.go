package runner

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/calibration"
	"linerate.dev/linerate/internal/cgroupcpu"
	"linerate.dev/linerate/internal/devices"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/rfc2544"
)

// PodOptions are the flags of `linerate runner` (the tester pod, see internal/tester).
type PodOptions struct {
	PlanFile         string
	Namespace        string
	ResultsConfigMap string
	HugeDir          string
	RunDir           string
	// Ports are the plan ports this pod drives (empty: all).
	Ports []string
	// RemoteEngine maps a port name to the control address of the engine that drives it elsewhere.
	RemoteEngine map[string]string
	Engine       string
	MetricsAddr  string
	// NetworkStatus is the downward API file of the pod's Multus network-status annotation: which VF each
	// port's attachment got.
	NetworkStatus string
	Client        client.Client
	Log           io.Writer
}

// ReadPlan reads the operator's plan.
func ReadPlan(file string) (*plan.Plan, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var p plan.Plan
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if p.Version != plan.Version {
		return nil, fmt.Errorf("%s: plan version %d, this runner reads version %d", file, p.Version, plan.Version)
	}
	return &p, nil
}

// portsByName returns the plan ports with the given names, in plan order, and their indexes.
func portsByName(p *plan.Plan, names []string) ([]plan.Port, error) {
	if len(names) == 0 {
		return p.Ports, nil
	}
	var out []plan.Port
	for _, n := range names {
		found := false
		for _, port := range p.Ports {
			if port.Name == n {
				out = append(out, port)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("the plan has no port %q", n)
		}
	}
	return out, nil
}

// RunPod runs the plan inside the tester pod and reports through the results ConfigMap. Whatever
// happens, it tries to leave a state the operator can explain.
func RunPod(ctx context.Context, o PodOptions) error {
	logf := func(format string, args ...any) { fmt.Fprintf(o.Log, "runner: "+format+"\n", args...) }
	sink := &ConfigMapSink{Client: o.Client, Key: types.NamespacedName{Namespace: o.Namespace, Name: o.ResultsConfigMap},
		ProgressEvery: 5 * time.Second, Log: logf, live: NewLive()}
	fail := func(reason string, err error) error {
		st := results.State{State: results.StateFailed, Reason: reason, Message: err.Error(), Time: time.Now()}
		if werr := sink.Finish(context.Background(), nil, st); werr != nil {
			logf("could not report the failure: %v", werr)
		}
		return err
	}
	p, err := ReadPlan(o.PlanFile)
	if err != nil {
		return fail("InvalidPlan", err)
	}
	// a calibration run (spec.tester.calibration.measure) measures the tester with its ports joined, as
	// linerate calibrate does on a node
	calibrating := p.CalibrationRepetitions > 0
	if calibrating {
		p.AsCalibration(p.CalibrationRepetitions)
	}
	if o.MetricsAddr != "" {
		ln, err := net.Listen("tcp", o.MetricsAddr)
		if err != nil {
			return fail("TesterFailed", fmt.Errorf("metrics on %s: %w", o.MetricsAddr, err))
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", sink.live.Handler())
		go func() { _ = http.Serve(ln, mux) }()
	}
	_ = sink.State(ctx, results.State{State: results.StateRunning, Time: time.Now()})
	hbCtx, stopHeartbeat := context.WithCancel(ctx)
	defer stopHeartbeat()
	go sink.Heartbeat(hbCtx)
	local, err := portsByName(p, o.Ports)
	if err != nil {
		return fail("InvalidPlan", err)
	}
	var cpu *cgroupcpu.Usage
	if !calibrating {
		if cpu, err = dutCPUMeter(p, cgroupcpu.NodeMount); err != nil {
			return fail("DUTCPUUnreadable", err)
		}
	}
	atts := podAttachments(ctx, o.NetworkStatus, local, logf)
	devs, err := devices.PlanDevices(local, nil, atts)
	if err != nil {
		return fail("PortsUnavailable", err)
	}
	bin, err := EngineBinary(o.Engine)
	if err != nil {
		return fail("EngineFailed", err)
	}
	proc, err := Start(ctx, StartOptions{Binary: bin, Devices: devs, RunDir: o.RunDir, HugeDir: o.HugeDir,
		FilePrefix: "linerate-" + hostname(), Log: o.Log, Plan: p, Extra: clockArgs(p, len(o.RemoteEngine) > 0)})
	if err != nil {
		return fail("EngineFailed", err)
	}
	defer func() { _ = proc.Close() }() // the engine stops after the run; the run's own error is the one to report
	var eng engine.Engine = proc.Client
	var notes []string
	if len(o.RemoteEngine) > 0 {
		if len(local) != 1 || len(p.Ports) != 2 || o.RemoteEngine[p.Ports[1].Name] == "" || local[0].Name != p.Ports[0].Name {
			return fail("InvalidPlan", errors.New("--remote-engine: this pod must drive the first port and the remote engine the second"))
		}
		addr := o.RemoteEngine[p.Ports[1].Name]
		remote, err := dialRetry(ctx, addr, 3*time.Minute)
		if err != nil {
			return fail("EngineFailed", fmt.Errorf("remote engine %s: %w", addr, err))
		}
		pair := &engine.Pair{Local: proc.Client, Remote: remote, MaxClockOffset: p.MaxClockOffset}
		eng = pair
		logf("port %s is driven by the engine at %s", p.Ports[1].Name, addr)
		if p.MaxClockOffset > 0 {
			if pair.Clock, err = engine.BoundClocks(ctx, proc.Client, remote, clockSamples); err != nil {
				notes = append(notes, fmt.Sprintf("latency across the two nodes is not measurable: the clocks could not be compared (%v)", err))
			} else {
				notes = append(notes, fmt.Sprintf("the clocks of the two nodes: %s; latency across them is reported only within tester.maxClockOffset %s",
					pair.Clock, p.MaxClockOffset))
			}
			logf("%s", notes[len(notes)-1])
		} else {
			notes = append(notes, "latency across the two nodes is not measured: set tester.maxClockOffset, with the nodes' clocks kept in step (PTP)")
		}
	}
	// A runner started after a suspension (or a crash) goes on from the last checkpoint: the records stay,
	// complete steps are not measured again.
	cp, lastSeq, err := sink.Resume(ctx)
	if err != nil {
		return fail("ResultsUnreadable", fmt.Errorf("reading what the run measured before: %w", err))
	}
	hash, err := plan.MeasurementHash(p)
	if err != nil {
		return fail("InvalidPlan", err)
	}
	if cp != nil {
		logf("resuming after %d complete step(s), trial records up to seq %d kept", cp.StepsDone, lastSeq)
	}
	ropt := rfc2544.Options{PlanHash: hash, Resume: cp, LastSeq: lastSeq, Notes: notes, JoinedPorts: calibrating}
	withDUTCPU(&ropt, cpu, "node "+cmp.Or(os.Getenv("NODE_NAME"), "of this pod"))
	r := rfc2544.New(p, eng, sink, ropt)
	res, runErr := r.Run(ctx)
	stopHeartbeat()
	sink.writeProgress(false)
	if calibrating {
		if err := writeCalibration(ctx, sink, p, res, runErr); err != nil {
			logf("%v", err)
			if runErr == nil {
				runErr = err
			}
		}
	}
	st := results.State{State: results.StateSucceeded, Time: time.Now()}
	if runErr != nil {
		st.State, st.Message = results.StateFailed, runErr.Error()
		pe, refused := rfc2544.IsPreflight(runErr)
		switch {
		case refused:
			st.Reason = pe.Reason
		case errors.Is(runErr, rfc2544.ErrDUTStalled):
			st.Reason = "DUTStalled"
		case errors.Is(runErr, context.Canceled):
			st.Reason = "Cancelled"
		default:
			st.Reason = "EngineFailed"
		}
	}
	if err := sink.Finish(context.Background(), res, st); err != nil {
		logf("final write: %v", err)
		if runErr == nil {
			runErr = err
		}
	}
	PrintTable(o.Log, res, plan.FormatPercent(p.Throughput.LossTolerancePercent))
	return runErr
}

// writeCalibration puts what a calibration run measured into the results ConfigMap (calibration.json),
// from where the operator copies it to spec.tester.calibration.configMapName once the run succeeded. An
// interrupted run's is marked incomplete: kept to read, refused as a calibration.
func writeCalibration(ctx context.Context, sink *ConfigMapSink, p *plan.Plan, res *v1alpha1.Results, runErr error) error {
	measured := res != nil && (len(res.Throughput) > 0 || len(res.Imix) > 0)
	if !measured && runErr == nil {
		return errors.New("the calibration measured no ceiling")
	}
	if !measured {
		return nil // the run's own error says why nothing was measured
	}
	c := calibration.FromResults(p.Name, res, p.CalibrationShape(), p.Throughput.PrecisionPercent(100), time.Now())
	if runErr != nil {
		c.Incomplete = runErr.Error()
	}
	raw, err := c.Marshal()
	if err != nil {
		return err
	}
	if err := sink.patch(ctx, map[string]string{calibration.ConfigMapKey: string(raw)}, nil); err != nil {
		return fmt.Errorf("writing the calibration: %w", err)
	}
	return nil
}

// clockSamples is how many control round trips bound the offset between two nodes' engines.
const clockSamples = 32

// clockArgs stamps frames with CLOCK_REALTIME when latency is measured across two nodes' clocks.
func clockArgs(p *plan.Plan, twoNodes bool) []string {
	if twoNodes && p.MaxClockOffset > 0 {
		return []string{"--clock", "realtime"}
	}
	return nil
}

func hostname() string {
	h, _ := os.Hostname()
	if h == "" {
		return fmt.Sprint(os.Getpid())
	}
	return h
}

func dialRetry(ctx context.Context, addr string, within time.Duration) (*engine.Client, error) {
	deadline := time.Now().Add(within)
	for {
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		c, err := engine.Dial(dctx, addr)
		cancel()
		if err == nil {
			return c, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, err
		}
		time.Sleep(2 * time.Second)
	}
}

// ServeEngine is `linerate engine`: the receiver pod of a two-node testbed. It starts the engine on this
// pod's ports with a TCP control socket and lets the generator pod's runner drive it.
func ServeEngine(ctx context.Context, planFile string, ports []string, listen, hugeDir, runDir, bin, networkStatus string, log io.Writer) error {
	p, err := ReadPlan(planFile)
	if err != nil {
		return err
	}
	local, err := portsByName(p, ports)
	if err != nil {
		return err
	}
	atts := podAttachments(ctx, networkStatus, local, func(format string, args ...any) { fmt.Fprintf(log, "engine: "+format+"\n", args...) })
	devs, err := devices.PlanDevices(local, nil, atts)
	if err != nil {
		return err
	}
	if bin, err = EngineBinary(bin); err != nil {
		return err
	}
	if !strings.Contains(listen, ":") {
		return fmt.Errorf("--listen %q: want [host]:port", listen)
	}
	host, port, _ := strings.Cut(listen, ":")
	if host == "" {
		host = "0.0.0.0"
	}
	proc, err := Start(ctx, StartOptions{Binary: bin, Devices: devs, RunDir: runDir, HugeDir: hugeDir,
		Control: "tcp:" + host + ":" + port, FilePrefix: "linerate-" + hostname(), Log: log, Plan: p, Extra: clockArgs(p, true)})
	if err != nil {
		return err
	}
	// Free the single control connection for the generator's runner; the engine keeps running.
	_ = proc.Client.Close()
	fmt.Fprintf(log, "engine: ports %v under control on %s\n", ports, listen)
	select {
	case <-proc.Done():
		return errors.New("the engine exited")
	case <-ctx.Done():
		proc.Client = nil
		return proc.Close()
	}
}

// podAttachments reads the pod's attachments from the network-status file. Multus writes the annotation
// while the pod's network is set up, after kubelet first fills the downward API volume, so the file may
// still be empty when the container starts: it is read again until it is there (at most 2 min) when a
// VF port needs it.
func podAttachments(ctx context.Context, file string, ports []plan.Port, logf func(string, ...any)) []devices.Attachment {
	if file == "" {
		return nil
	}
	need := false
	for _, p := range ports {
		need = need || ((p.Driver == v1alpha1.DriverVFIO || p.Driver == "") && p.Network != "")
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		raw, err := os.ReadFile(file)
		atts, perr := devices.ParseNetworkStatus(raw)
		switch {
		case err == nil && perr == nil && (len(atts) > 0 || !need):
			return atts
		case perr != nil:
			logf("%v", perr)
		}
		if !need || time.Now().After(deadline) || ctx.Err() != nil {
			logf("no network-status in %s: VFs are taken from the device plugin's environment where that is unambiguous", file)
			return nil
		}
		time.Sleep(time.Second)
	}
}
