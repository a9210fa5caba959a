package runner

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"sigs.k8s.io/yaml"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/calibration"
	"linerate.dev/linerate/internal/devices"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/report"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/rfc2544"
)

// LoadTest reads the TrafficTest (and the ImixProfile it refers to, if any) from YAML files, the very
// files a user would kubectl apply.
func LoadTest(files []string) (*v1alpha1.TrafficTest, *v1alpha1.ImixProfile, error) {
	var tt *v1alpha1.TrafficTest
	profiles := map[string]*v1alpha1.ImixProfile{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, err
		}
		for i, doc := range bytes.Split(raw, []byte("\n---")) {
			var meta struct{ Kind string }
			if err := yaml.Unmarshal(doc, &meta); err != nil {
				return nil, nil, fmt.Errorf("%s document %d: %w", f, i+1, err)
			}
			switch meta.Kind {
			case "TrafficTest":
				if tt != nil {
					return nil, nil, fmt.Errorf("%s: more than one TrafficTest given", f)
				}
				tt = &v1alpha1.TrafficTest{}
				if err := yaml.UnmarshalStrict(doc, tt); err != nil {
					return nil, nil, fmt.Errorf("%s: %w", f, err)
				}
			case "ImixProfile":
				p := &v1alpha1.ImixProfile{}
				if err := yaml.UnmarshalStrict(doc, p); err != nil {
					return nil, nil, fmt.Errorf("%s: %w", f, err)
				}
				profiles[p.Name] = p
			case "":
			default:
				return nil, nil, fmt.Errorf("%s document %d: kind %s is neither TrafficTest nor ImixProfile", f, i+1, meta.Kind)
			}
		}
	}
	if tt == nil {
		return nil, nil, fmt.Errorf("no TrafficTest in %s", strings.Join(files, ", "))
	}
	var profile *v1alpha1.ImixProfile
	if tt.Spec.Imix != nil && tt.Spec.Imix.ProfileRef != nil {
		profile = profiles[tt.Spec.Imix.ProfileRef.Name]
		if profile == nil {
			return nil, nil, fmt.Errorf("the TrafficTest uses ImixProfile %q: give its YAML with another -f", tt.Spec.Imix.ProfileRef.Name)
		}
	}
	return tt, profile, nil
}

// LocalOptions are the flags of `linerate run`.
type LocalOptions struct {
	Files  []string
	Ports  map[string]string // port name -> DPDK devargs
	Engine string
	Output string // table or json
	Report string // directory, optional
	// Baseline is a file with the results of a baseline run (the -o json output of linerate run, or the
	// results.json of a results ConfigMap): the throughput penalty against it is reported.
	Baseline string
	HugeDir  string
	RunDir   string
	// CPUs the engine may take, control included (0: every one of the cpuset, as the CPU quota allows).
	CPUs int
	// Calibration is a file `linerate calibrate` wrote: rows within CeilingMargin percent of the tester's
	// ceiling are marked tester-limited (0: spec.tester.calibration.ceilingMargin, else the default).
	Calibration   string
	CeilingMargin float64
	// CgroupRoot is where the cgroup file system that holds spec.dut.cpu.cgroup is mounted ("":
	// /sys/fs/cgroup).
	CgroupRoot string
	Stdout     io.Writer
	Stderr     io.Writer
}

// consoleSink prints one line per trial while the run goes on, and the time left as each step of the plan
// starts (the estimate the status carries, updated from what was measured, with its range where the DUT
// decides).
type consoleSink struct {
	w    io.Writer
	step int32 // the step whose start was last printed (0: none yet)
}

func (c *consoleSink) OnTrial(t results.Trial) {
	what := fmt.Sprintf("%s %dB", t.Test, t.FrameSize)
	if t.FrameSize == 0 {
		what = string(t.Test)
	}
	offered := fmt.Sprintf("%.3f%%", t.OfferedPercent)
	if t.Burst > 0 {
		offered = fmt.Sprintf("burst %d", t.Burst)
	}
	verdict := "fail"
	switch {
	case t.Aborted != "":
		verdict = "aborted: " + t.Aborted
	case t.TesterLimited:
		verdict = fmt.Sprintf("tester limited (%.0f of %.0f frames/s)", t.AchievedFPS, t.TargetFPS)
	case t.Pass:
		verdict = "pass"
	}
	fmt.Fprintf(c.w, "trial %3d  %-22s %-12s %-10s %-11s %5.1fs  tx %d rx %d lost %d (%s%%)  %s\n", t.Seq, what,
		t.Direction, t.Purpose, offered, t.DurationS, t.TxFrames, t.RxFrames, t.Lost, plan.FormatPercent(t.LossPercent), verdict)
}
func (c *consoleSink) OnProgress(p v1alpha1.Progress) {
	step := p.StepsDone + 1
	// the report before the first step (setting up) names no test yet
	if p.StepsTotal == 0 || p.Test == "" || step == c.step || step > p.StepsTotal || p.EstimatedSecondsLeft <= 0 {
		return
	}
	c.step = step
	what := string(p.Test)
	if p.FrameSize > 0 {
		what = fmt.Sprintf("%s %dB", p.Test, p.FrameSize)
	}
	// the runner's own words: with the range where the DUT decides how long the rest takes
	fmt.Fprintf(c.w, "linerate: step %d/%d (%s): %s\n", step, p.StepsTotal, what, rfc2544.TimeLeft(p))
}

func (*consoleSink) OnResults(*v1alpha1.Results) {}

// ErrInterrupted is the cause of a run's context that a signal cancelled (wrapped with the signal's name).
var ErrInterrupted = errors.New("interrupted")

// RunLocal runs a TrafficTest on local ports, without a cluster.
func RunLocal(ctx context.Context, o LocalOptions) (*v1alpha1.Results, error) {
	tt, p, err := loadPlan(o.Files)
	if err != nil {
		return nil, err
	}
	var ropt rfc2544.Options
	cpu, err := dutCPUMeter(p, cmp.Or(o.CgroupRoot, "/sys/fs/cgroup"))
	if err != nil {
		return nil, err
	}
	withDUTCPU(&ropt, cpu, "this machine")
	if o.Baseline != "" {
		if ropt.Baseline, err = ReadBaseline(o.Baseline); err != nil {
			return nil, err
		}
	}
	if o.Calibration != "" {
		if p.Calibration, err = calibration.Read(o.Calibration); err != nil {
			return nil, err
		}
		// the flag, else the spec's, else the default
		p.CeilingMarginPercent = cmp.Or(o.CeilingMargin, p.CeilingMarginPercent, calibration.DefaultMarginPercent)
	} else if c := tt.Spec.Tester.Calibration; c != nil {
		return nil, fmt.Errorf("spec.tester.calibration names ConfigMap %s: give its %s with --calibration", c.ConfigMapName, calibration.ConfigMapKey)
	}
	return runPlan(ctx, o, tt.Name, p, ropt)
}

// loadPlan reads the TrafficTest (and its ImixProfile) from files and resolves its plan.
func loadPlan(files []string) (*v1alpha1.TrafficTest, *plan.Plan, error) {
	tt, profile, err := LoadTest(files)
	if err != nil {
		return nil, nil, err
	}
	p, err := plan.Resolve(tt, profile)
	if err == nil {
		err = p.UnreachableExpectation()
	}
	return tt, p, err
}

// runPlan runs a plan on local ports with an engine it starts, and prints and reports what it measured.
func runPlan(ctx context.Context, o LocalOptions, name string, p *plan.Plan, ropt rfc2544.Options) (*v1alpha1.Results, error) {
	devs, err := localDevices(p, o.Ports)
	if err != nil {
		return nil, err
	}
	bin, err := EngineBinary(o.Engine)
	if err != nil {
		return nil, err
	}
	logf, err := os.CreateTemp("", "linerate-engine-*.log")
	if err != nil {
		return nil, err
	}
	defer func() { _ = logf.Close() }() // the engine's log: the run's result does not depend on it
	fmt.Fprintf(o.Stderr, "linerate: %s: %d test(s), ports %s; engine log %s\n", name, len(p.Tests), describe(p, devs), logf.Name())
	proc, err := Start(ctx, StartOptions{Binary: bin, Devices: devs, RunDir: o.RunDir, HugeDir: o.HugeDir, Log: logf,
		Plan: p, CPUs: o.CPUs})
	if err != nil {
		return nil, err
	}
	defer func() { _ = proc.Close() }() // the engine stops after the run; the run's own error is the one to report
	r := rfc2544.New(p, proc.Client, &consoleSink{w: o.Stderr}, ropt)
	fmt.Fprintf(o.Stderr, "linerate: %s: expected to take %s\n", name, r.Estimate())
	res, runErr := r.Run(ctx)
	incomplete := ""
	if ctx.Err() != nil {
		// what was measured before the interruption is kept, and said to be all there is
		incomplete = fmt.Sprintf("%v after %d trials: the results hold what was measured until then, and are incomplete",
			context.Cause(ctx), len(r.Trials()))
		if res == nil {
			res = &v1alpha1.Results{}
		}
		res.Notes = append(res.Notes, "the run was "+incomplete)
		runErr = errors.New(incomplete)
	}
	if o.Report != "" {
		if err := WriteReport(o.Report, p, res, r.Trials(), runErr); err != nil {
			fmt.Fprintf(o.Stderr, "linerate: report: %v\n", err)
		} else {
			fmt.Fprintf(o.Stderr, "linerate: report in %s/index.html\n", o.Report)
		}
	}
	if o.Output == "json" {
		enc := json.NewEncoder(o.Stdout)
		enc.SetIndent("", "  ")
		out := map[string]any{"name": name, "results": res, "trials": r.Trials(), "error": errString(runErr)}
		if incomplete != "" {
			out["incomplete"] = incomplete
		}
		_ = enc.Encode(out)
	} else {
		PrintTable(o.Stdout, res, plan.FormatPercent(p.Throughput.LossTolerancePercent))
	}
	return res, runErr
}

// ReadBaseline reads the results of a baseline run: the -o json output of linerate run ({"results": ...})
// or a bare v1alpha1.Results (results.json of a results ConfigMap).
func ReadBaseline(file string) (*v1alpha1.Results, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var wrapped struct {
		Results *v1alpha1.Results `json:"results"`
	}
	if err := json.Unmarshal(raw, &wrapped); err != nil {
		return nil, fmt.Errorf("baseline %s: %w", file, err)
	}
	res := wrapped.Results
	if res == nil {
		res = &v1alpha1.Results{}
		if err := json.Unmarshal(raw, res); err != nil {
			return nil, fmt.Errorf("baseline %s: %w", file, err)
		}
	}
	if len(res.Throughput) == 0 {
		return nil, fmt.Errorf("baseline %s: no throughput results to compare with", file)
	}
	return res, nil
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func localDevices(p *plan.Plan, flags map[string]string) ([]devices.Device, error) {
	var devs []devices.Device
	planner := devices.NewDevicePlanner(nil, nil, p.Ports)
	for i, port := range p.Ports {
		if v, ok := flags[port.Name]; ok {
			d, err := devices.ParseDevargs(v)
			if err != nil {
				return nil, fmt.Errorf("--port %s: %w", port.Name, err)
			}
			devs = append(devs, d)
			continue
		}
		d, err := planner.Device(i, port)
		if err != nil {
			return nil, fmt.Errorf("port %s: give --port %s=<DPDK devargs> (e.g. net_af_packet0,iface=eth1): %w", port.Name, port.Name, err)
		}
		devs = append(devs, d)
	}
	for name := range flags {
		found := false
		for _, port := range p.Ports {
			found = found || port.Name == name
		}
		if !found {
			return nil, fmt.Errorf("--port %s: the TrafficTest has no port named %s", name, name)
		}
	}
	return devs, nil
}

func describe(p *plan.Plan, devs []devices.Device) string {
	var s []string
	for i, port := range p.Ports {
		s = append(s, port.Name+"="+devs[i].Devargs)
	}
	return strings.Join(s, " ")
}

// WriteReport writes the HTML report of a run; runErr is why it ended early, if it did.
func WriteReport(dir string, p *plan.Plan, res *v1alpha1.Results, trials []results.Trial, runErr error) error {
	return report.Write(dir, report.Run{Name: p.Name, Results: res, Trials: trials, Failure: errString(runErr)})
}
