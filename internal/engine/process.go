package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/plan"
)

// Device is how EAL finds one port: a PCI address (allow-listed with -a) or a virtual device (--vdev).
type Device struct {
	PCI     string // e.g. 0000:3b:02.1
	Devargs string // e.g. net_af_packet0,iface=net1 (vdev) or 0000:3b:02.1,foo=bar (PCI with devargs)
}

// IsPCI says whether the device is probed from the PCI bus.
func (d Device) IsPCI() bool { return d.PCI != "" }

// EALArg is the EAL argument pair that attaches the device.
func (d Device) EALArg() []string {
	if d.IsPCI() {
		return []string{"-a", d.Devargs}
	}
	return []string{"--vdev", d.Devargs}
}

// PCIDeviceEnv is the environment variable in which the SR-IOV device plugin passes the PCI addresses of
// a resource: PCIDEVICE_<prefix>_<name> upper-cased with '.' as '_' (a '-' stays, as the plugin leaves it).
func PCIDeviceEnv(resource string) string {
	r := strings.NewReplacer(".", "_", "/", "_")
	return "PCIDEVICE_" + strings.ToUpper(r.Replace(resource))
}

// PlanDevices makes the engine's device list for the ports of a plan: vdevs for kernel interfaces, and for
// VFs the PCI address of the VF each port's attachment got (Attachment), or the device plugin's only
// address of the port's resource (getenv) where that is unambiguous.
func PlanDevices(ports []plan.Port, getenv func(string) string, atts []Attachment) ([]Device, error) {
	dp := NewDevicePlanner(getenv, atts, ports)
	var out []Device
	for i, p := range ports {
		d, err := dp.Device(i, p)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// DevicePlanner builds the device of one port at a time, for callers that take some ports' devices
// from elsewhere (the CLI's --port): vdev names carry the port's position so they stay unique in one
// EAL.
type DevicePlanner struct {
	getenv func(string) string
	atts   []Attachment
	ports  []plan.Port
}

// NewDevicePlanner reads the device plugin's variables through getenv (os.Getenv when nil) and the pod's
// attachments atts; ports are the ports planned together (which of them share a resource).
func NewDevicePlanner(getenv func(string) string, atts []Attachment, ports []plan.Port) *DevicePlanner {
	if getenv == nil {
		getenv = os.Getenv
	}
	return &DevicePlanner{getenv: getenv, atts: atts, ports: ports}
}

// Device is the device of port p at position index of the plan.
func (dp *DevicePlanner) Device(index int, p plan.Port) (Device, error) {
	switch p.Driver {
	case v1alpha1.DriverAFPacket:
		return Device{Devargs: fmt.Sprintf("net_af_packet%d,iface=%s", index, p.Interface)}, nil
	case v1alpha1.DriverAFXDP:
		return Device{Devargs: fmt.Sprintf("net_af_xdp%d,iface=%s", index, p.Interface)}, nil
	case v1alpha1.DriverVFIO, "":
		addr, err := dp.vf(p)
		if err != nil {
			return Device{}, err
		}
		return Device{PCI: addr, Devargs: addr}, nil
	default:
		return Device{}, fmt.Errorf("port %s: unknown driver %q", p.Name, p.Driver)
	}
}

// vf is the PCI address of a VF port. The device plugin lists a resource's VFs in no promised order
// (kubelet allocates devices as a set), so with two ports on one resource the list cannot say which VF
// is whose: only the attachment Multus reports for the port's network can.
func (dp *DevicePlanner) vf(p plan.Port) (string, error) {
	env := PCIDeviceEnv(p.Resource)
	var listed []string
	if val := strings.TrimSpace(dp.getenv(env)); val != "" {
		for _, a := range strings.Split(val, ",") {
			listed = append(listed, strings.TrimSpace(a))
		}
	}
	if a, ok := attachmentOf(dp.atts, p.Interface, p.Network); ok && a.PCIAddress() != "" {
		addr := a.PCIAddress()
		if len(listed) > 0 && !slices.Contains(listed, addr) {
			return "", fmt.Errorf("port %s: its attachment %s has VF %s, which is not among the devices of resource %q the device plugin gave this pod (%s=%s): the port's network and resource name different pools",
				p.Name, a.Name, addr, p.Resource, env, strings.Join(listed, ","))
		}
		return addr, nil
	}
	if len(listed) == 0 {
		return "", fmt.Errorf("port %s: %s is empty: the SR-IOV device plugin gave this pod no device of resource %q", p.Name, env, p.Resource)
	}
	var sharing []string
	for _, q := range dp.ports {
		if q.Resource == p.Resource && (q.Driver == v1alpha1.DriverVFIO || q.Driver == "") {
			sharing = append(sharing, q.Name)
		}
	}
	if len(sharing) > 1 || len(listed) > 1 {
		why := fmt.Sprintf("%s lists %d VFs (%s)", env, len(listed), strings.Join(listed, ","))
		if len(sharing) > 1 {
			why = fmt.Sprintf("ports %s share resource %q", strings.Join(sharing, " and "), p.Resource)
		}
		return "", fmt.Errorf("port %s: %s, and the pod's network-status names no VF for the port: the device plugin lists VFs in no fixed order, so the ports could swap. Give each port a network whose attachment Multus reports with its device (SR-IOV CNI and device plugin), or each port its own resource (one SriovNetworkNodePolicy per PF)",
			p.Name, why)
	}
	return listed[0], nil
}

// ParseDevargs turns a --port value of the CLI (raw DPDK devargs) into a Device: names starting with
// net_ are virtual devices, anything else is taken as a PCI address with optional devargs.
func ParseDevargs(s string) (Device, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Device{}, errors.New("empty devargs")
	}
	name, _, _ := strings.Cut(s, ",")
	if strings.HasPrefix(name, "net_") || strings.HasPrefix(name, "eth_") {
		return Device{Devargs: s}, nil
	}
	if strings.Count(name, ":") >= 1 && strings.Contains(name, ".") {
		return Device{PCI: name, Devargs: s}, nil
	}
	return Device{}, fmt.Errorf("%q is neither a virtual device (net_af_packet0,iface=eth0) nor a PCI address (0000:3b:02.1)", s)
}

// ProcessConfig starts an engine.
type ProcessConfig struct {
	// Binary is the path of linerate-engine.
	Binary  string
	Devices []Device
	// Control is the control socket: a path (unix) or tcp:host:port.
	Control string
	// FilePrefix separates this engine's DPDK runtime files from others'.
	FilePrefix string
	// HugeDir is the hugetlbfs mount; with NoHuge the engine uses ordinary memory (MemoryMB, default 512).
	HugeDir  string
	NoHuge   bool
	MemoryMB int
	// EAL are extra EAL arguments (e.g. -l 0-2) placed before the device arguments.
	EAL []string
	// Args are extra engine arguments after --.
	Args   []string
	Stdout io.Writer
	Stderr io.Writer
	// StartTimeout bounds how long the engine may take to accept connections (default 60 s).
	StartTimeout time.Duration
}

// EALArgs is the full argument list of the engine process.
func (c *ProcessConfig) EALArgs() []string {
	var a []string
	a = append(a, c.EAL...)
	if c.FilePrefix != "" {
		a = append(a, "--file-prefix", c.FilePrefix)
	}
	if c.NoHuge {
		m := c.MemoryMB
		if m <= 0 {
			m = 512
		}
		a = append(a, "--no-huge", "-m", fmt.Sprint(m))
	} else if c.HugeDir != "" {
		a = append(a, "--huge-dir", c.HugeDir)
	}
	pci := false
	for _, d := range c.Devices {
		if d.IsPCI() {
			pci = true
		}
	}
	if !pci {
		a = append(a, "--no-pci")
	}
	for _, d := range c.Devices {
		a = append(a, d.EALArg()...)
	}
	a = append(a, "--", "--control", c.Control)
	a = append(a, c.Args...)
	return a
}

// Process is a running linerate-engine with a control connection.
type Process struct {
	*Client
	Cmd    *exec.Cmd
	Hello  *Hello
	done   chan struct{}
	waitEr error
}

// StartProcess starts the engine and connects to it, failing if it exits or does not answer HELLO in
// time.
func StartProcess(ctx context.Context, cfg ProcessConfig) (*Process, error) {
	if cfg.Binary == "" {
		return nil, errors.New("engine: no binary given")
	}
	if _, err := os.Stat(cfg.Binary); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	if cfg.Control == "" {
		return nil, errors.New("engine: no control socket given")
	}
	if !strings.HasPrefix(cfg.Control, "tcp:") {
		_ = os.MkdirAll(filepath.Dir(cfg.Control), 0o755)
		_ = os.Remove(cfg.Control)
	}
	cmd := exec.Command(cfg.Binary, cfg.EALArgs()...)
	// the engine's last words while it starts say why it did not (the pod's log has them too, but the
	// TrafficTest's condition and the CLI's error are what a user reads)
	// (DPDK logs to stdout, the engine's refusals go to stderr: both are read)
	errTail := &outputTail{w: cfg.Stderr}
	tail := engineOutput{errTail}
	cmd.Stderr = errTail
	if sameWriter(cfg.Stdout, cfg.Stderr) {
		cmd.Stdout = errTail // one writer, written by one goroutine at a time (os/exec's promise)
	} else {
		outTail := &outputTail{w: cfg.Stdout}
		cmd.Stdout = outTail
		tail = append(tail, outTail)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("engine: start %s: %w", cfg.Binary, err)
	}
	p := &Process{Cmd: cmd, done: make(chan struct{})}
	go func() { p.waitEr = cmd.Wait(); close(p.done) }()

	timeout := cfg.StartTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-p.done:
			return nil, fmt.Errorf("engine exited during start-up: %v%s (args: %s)", p.waitEr, tail.exitReason(), strings.Join(cfg.EALArgs(), " "))
		case <-ctx.Done():
			p.kill()
			return nil, ctx.Err()
		default:
		}
		dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		c, err := Dial(dctx, cfg.Control)
		cancel()
		if err == nil {
			hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			h, herr := c.Hello(hctx)
			cancel()
			if herr == nil && h.Ports < len(cfg.Devices) {
				// DPDK skips a device it cannot open (an af_xdp interface without the channels asked, a
				// VF not bound to vfio-pci) and starts with the others: the ports would be misnumbered
				// from there on, and the run would fail later on a port that is not there
				_ = c.Close()
				p.kill()
				return nil, fmt.Errorf("engine: DPDK opened %d of the %d devices it was given (%s)%s",
					h.Ports, len(cfg.Devices), deviceList(cfg.Devices), tail.refusals())
			}
			if herr == nil {
				p.Client, p.Hello = c, h
				return p, nil
			}
			_ = c.Close()
			if errors.Is(herr, ErrProtocolVersion) {
				p.kill()
				return nil, herr
			}
			err = herr
		}
		if time.Now().After(deadline) {
			p.kill()
			return nil, fmt.Errorf("engine did not answer on %s within %s: %v", cfg.Control, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// outputTail passes the engine's output on and keeps its last few KiB. A writer that fails downstream
// (a full disk under the log) loses those bytes, not the engine: an error here would close the pipe, and
// the engine's next line would end it with SIGPIPE.
type outputTail struct {
	w   io.Writer
	mu  sync.Mutex
	buf []byte
}

const outputTailBytes = 8 << 10

func (t *outputTail) Write(b []byte) (int, error) {
	t.mu.Lock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > outputTailBytes {
		t.buf = t.buf[len(t.buf)-outputTailBytes:]
	}
	t.mu.Unlock()
	if t.w != nil {
		_, _ = t.w.Write(b)
	}
	return len(b), nil
}

func (t *outputTail) lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Split(string(t.buf), "\n")
}

// engineOutput is the tail of the engine's stderr and, when it goes elsewhere, of its stdout.
type engineOutput []*outputTail

// driverLine is a line of DPDK's log named after the function that wrote it ("init_internals(): ...").
var driverLine = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*\(\): `)

// said is the engine's last line of its own (": linerate-engine: ..."), "" if it wrote none.
func (o engineOutput) said() string {
	for _, t := range o {
		lines := t.lines()
		for i := len(lines) - 1; i >= 0; i-- {
			if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, "linerate-engine:") {
				return ": " + l
			}
		}
	}
	return ""
}

// refusals are the lines in which DPDK said why it did not open a device, joined by "; ", or where to
// look.
func (o engineOutput) refusals() string {
	why := o.refusalLines()
	if len(why) == 0 {
		return ": the engine's log says why DPDK refused the others (a PCI device not bound to vfio-pci is skipped without a word: check its driver)"
	}
	return ": " + strings.Join(why, "; ")
}

// refusalLines: before each "failed to initialize" of the vdev bus, the driver's own lines ("function():
// ...", up to 3); and the EAL's lines of a PCI device a driver would not take.
func (o engineOutput) refusalLines() []string {
	var why []string
	for _, t := range o {
		lines := t.lines()
		for i, l := range lines {
			if strings.Contains(l, "cannot be used") || strings.Contains(l, "Driver cannot attach") {
				why = append(why, strings.TrimSpace(l))
				continue
			}
			if !strings.Contains(l, "failed to initialize") {
				continue
			}
			first := i
			for first > 0 && i-first < 3 && driverLine.MatchString(lines[first-1]) && !strings.Contains(lines[first-1], "failed to initialize") {
				first--
			}
			for _, w := range lines[first : i+1] {
				why = append(why, strings.TrimSpace(w))
			}
		}
	}
	return why
}

// exitReason is what the engine said last and, if DPDK refused a device, why.
func (o engineOutput) exitReason() string {
	r := o.said()
	if why := o.refusalLines(); len(why) > 0 {
		r += " (" + strings.Join(why, "; ") + ")"
	}
	return r
}

// sameWriter says whether a and b are one writer (as os/exec compares them: a type that cannot be
// compared is two).
func sameWriter(a, b io.Writer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

func deviceList(devs []Device) string {
	names := make([]string, len(devs))
	for i, d := range devs {
		names[i] = d.Devargs
	}
	return strings.Join(names, "; ")
}

// Close asks the engine to quit, waits for it (5 s) and kills it if it does not exit.
func (p *Process) Close() error {
	if p.Client != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		_ = p.Quit(ctx)
		cancel()
		_ = p.Client.Close()
	}
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		p.kill()
	}
	return nil
}

// Done is closed when the engine process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

func (p *Process) kill() {
	if p.Cmd.Process != nil {
		_ = p.Cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
			return
		case <-time.After(3 * time.Second):
		}
		_ = p.Cmd.Process.Kill()
		<-p.done
	}
}
