package enginestart_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"linerate.dev/linerate/internal/devices"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/enginestart"
	"linerate.dev/linerate/internal/enginestart/enginetest"
)

func TestEALArgs(t *testing.T) {
	c := enginestart.ProcessConfig{Control: "/run/x.sock", FilePrefix: "p", NoHuge: true, EAL: []string{"-l", "0,1"},
		Devices: []devices.Device{{Devargs: "net_af_packet0,iface=t0"}}}
	got := strings.Join(c.EALArgs(), " ")
	want := "-l 0,1 --file-prefix p --no-huge -m 512 --no-pci --vdev net_af_packet0,iface=t0 -- --control /run/x.sock"
	if got != want {
		t.Errorf("EAL args\n got %s\nwant %s", got, want)
	}
	// a PCI device: no --no-pci, hugepages from the mount
	c = enginestart.ProcessConfig{Control: "tcp:0.0.0.0:7777", HugeDir: "/dev/hugepages", Devices: []devices.Device{{PCI: "0000:3b:02.1", Devargs: "0000:3b:02.1"}}}
	args := c.EALArgs()
	if slices.Contains(args, "--no-pci") || !slices.Contains(args, "--huge-dir") || !slices.Contains(args, "tcp:0.0.0.0:7777") {
		t.Errorf("PCI args %v", args)
	}
}

func TestEngineThatCannotStartFailsFast(t *testing.T) {
	eng := enginetest.Binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	t0 := time.Now()
	_, err := enginestart.StartProcess(ctx, enginestart.ProcessConfig{Binary: eng, Control: filepath.Join(dir, "ctl.sock"),
		FilePrefix: fmt.Sprintf("lrf%d", os.Getpid()), NoHuge: true, EAL: []string{"--no-shconf", "-l", "0"},
		Devices: []devices.Device{{Devargs: "net_af_packet0,iface=lr-no-such-if"}}, Stdout: &strings.Builder{}, Stderr: &strings.Builder{}})
	if err == nil {
		t.Fatal("an engine on a missing interface started")
	}
	if !strings.Contains(err.Error(), "exited") {
		t.Errorf("error %v: want the exit, not a timeout", err)
	}
	// what the engine said last is in the error a user reads (the condition, the CLI), not only in a log
	if !strings.Contains(err.Error(), "exit status 1: linerate-engine: DPDK opened 0 ports") {
		t.Errorf("error %v: want the engine's own reason", err)
	}
	t.Logf("failed in %s: %v", time.Since(t0).Round(time.Millisecond), err)
}

// DPDK starts with the devices it could open and leaves out the others (here an af_xdp interface that
// is not there, after a net_ring that is): the engine would run with its ports misnumbered, so StartProcess
// refuses it at once and names the devices (it used to start, and the run failed later on "no such port").
func TestAnEngineMissingOneOfItsDevicesIsRefused(t *testing.T) {
	eng := enginetest.Binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	var log strings.Builder
	p, err := enginestart.StartProcess(ctx, enginestart.ProcessConfig{Binary: eng, Control: filepath.Join(dir, "ctl.sock"),
		FilePrefix: fmt.Sprintf("lrm%d", os.Getpid()), NoHuge: true, EAL: []string{"--no-shconf", "-l", "0,1"},
		Devices: []devices.Device{{Devargs: "net_ring0"}, {Devargs: "net_af_xdp1,iface=lr-no-such-if"}},
		Stdout:  &log, Stderr: &log})
	if err == nil {
		_ = p.Close()
		t.Fatalf("an engine that opened %d of 2 devices was started", p.Hello.Ports)
	}
	// the devices named, and DPDK's reason for the one it refused (its driver's line, then the bus's)
	if !strings.Contains(err.Error(), "opened 1 of the 2 devices") || !strings.Contains(err.Error(), "net_af_xdp1,iface=lr-no-such-if") ||
		!strings.Contains(err.Error(), "failed to initialize net_af_xdp1 device") {
		t.Errorf("error %q: want the count and the devices named\n%s", err, log.String())
	}
	t.Log(err)
}

// The runner gives the engine one log for stdout and stderr: the refusal the engine writes to stderr is
// the last of its lines there, not the informational lines it wrote to stdout before it (stdout is a pipe,
// which C buffers whole unless told otherwise: they came out at exit, after the refusal). Here the engine
// refuses two af_packet ports on one interface (they would split its frames).
func TestAnEngineRefusingAPortSaysWhyInTheError(t *testing.T) {
	eng := enginetest.Binary(t)
	ns := fmt.Sprintf("lrw%d", os.Getpid()%100000)
	enginetest.Wire(t, ns, "02:4c:52:00:07")
	var log strings.Builder
	p, err := enginetest.StartInNS(t, eng, ns, "lrw", []string{"-l", "0,1"}, nil, &log,
		devices.Device{Devargs: "net_af_packet0,iface=t0"}, devices.Device{Devargs: "net_af_packet1,iface=t0"})
	if err == nil {
		_ = p.Close()
		t.Fatal("an engine with two af_packet ports on one interface started")
	}
	if !strings.Contains(err.Error(), "exit status 1: linerate-engine: port 0 (net_af_packet): 2 packet sockets on interface t0, 1 of them polled") {
		t.Errorf("error %q: want the engine's refusal\n%s", err, log.String())
	}
}

// An engine of another protocol version is an answer, not a start-up still under way: StartProcess says so
// at once (it used to retry HELLO until its context ended and report only the deadline). The "engine" here
// is a script that answers HELLO as an engine of protocol 3 would.
func TestAnEngineOfAnotherProtocolIsRefusedAtOnce(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 for the stand-in engine")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "old-engine")
	body := `#!/usr/bin/env python3
import socket, sys
path = sys.argv[sys.argv.index("--control") + 1]
s = socket.socket(socket.AF_UNIX)
s.bind(path)
s.listen(4)
while True:
    c, _ = s.accept()
    f = c.makefile("r")
    for line in f:
        c.sendall(b'{"ok":true,"proto":3,"engine":"linerate-engine old","ports":1}\n')
    c.close()
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	p, err := enginestart.StartProcess(ctx, enginestart.ProcessConfig{Binary: script, Control: filepath.Join(dir, "ctl.sock"), NoHuge: true})
	if err == nil {
		_ = p.Close()
		t.Fatal("an engine speaking protocol 3 was accepted")
	}
	if !errors.Is(err, engine.ErrProtocolVersion) || !strings.Contains(err.Error(), "protocol version 3") {
		t.Errorf("error %q: want one naming the engine's protocol version", err)
	}
	if waited := time.Since(start); waited > 20*time.Second {
		t.Errorf("refused after %s: a version answer needs no retry", waited)
	}
}
