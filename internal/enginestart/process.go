// Package enginestart starts linerate-engine: its command line (the EAL arguments for its lcores, memory and
// devices, then the engine's own), the process, and a connection that has heard the engine's HELLO. An engine
// that will not start says why in the error, from its own last words and DPDK's: that error is the condition a
// user reads, not only a line in a log.
package enginestart

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"linerate.dev/linerate/internal/devices"
	"linerate.dev/linerate/internal/engine"
)

// ProcessConfig starts an engine.
type ProcessConfig struct {
	// Binary is the path of linerate-engine.
	Binary  string
	Devices []devices.Device
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
	*engine.Client
	Cmd    *exec.Cmd
	Hello  *engine.Hello
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
	// the engine ends with the process that started it, also one that dies without a word (a Go fatal
	// error runs no deferred Close): an orphaned engine polls its lcores for nobody. (The kernel sends it
	// when the thread that forked exits: Go keeps its threads, except one a goroutine locked and never
	// unlocked; StartProcess is never called from such a goroutine.)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
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
		c, err := engine.Dial(dctx, cfg.Control)
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
			if errors.Is(herr, engine.ErrProtocolVersion) {
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

func deviceList(devs []devices.Device) string {
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
