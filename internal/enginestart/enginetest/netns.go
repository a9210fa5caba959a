// Package enginetest starts the real linerate-engine on a wire inside a network namespace the test makes,
// for the tests of the engine's protocol (internal/engine) and of its start (internal/enginestart). Nothing
// here is a fake engine: where there is no engine binary or no root for namespaces, the test is skipped.
package enginetest

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"linerate.dev/linerate/internal/devices"
	"linerate.dev/linerate/internal/enginestart"
)

// Binary returns the engine binary, or skips: these tests run the real engine on a veth pair.
func Binary(t *testing.T) string {
	t.Helper()
	eng := os.Getenv("LINERATE_ENGINE")
	if eng == "" {
		_, here, _, _ := runtime.Caller(0)
		eng = filepath.Join(filepath.Dir(here), "..", "..", "..", "dataplane", "build", "linerate-engine")
	}
	if _, err := os.Stat(eng); err != nil {
		t.Skipf("no engine at %s: set LINERATE_ENGINE or run 'make engine'", eng)
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root for network namespaces")
	}
	return eng
}

// Run runs a command (ip, sysctl) and fails the test with its output if it fails.
func Run(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// Wire makes namespace ns with a veth pair t0 <-> t1 whose MACs are macPrefix:01 and macPrefix:02; the
// namespace is deleted when the test ends.
func Wire(t *testing.T, ns, macPrefix string) {
	t.Helper()
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	Run(t, "ip", "netns", "add", ns)
	Run(t, "ip", "-n", ns, "link", "add", "t0", "address", macPrefix+":01", "type", "veth", "peer", "name", "t1", "address", macPrefix+":02")
	for _, i := range []string{"t0", "t1"} {
		Run(t, "ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf."+i+".disable_ipv6=1")
		Run(t, "ip", "-n", ns, "link", "set", i, "up")
	}
}

// StartInNS starts an engine on devices inside namespace ns, through a wrapper script, since StartProcess
// execs its binary directly (`ip netns exec` execs the engine in turn, so the process is the engine itself:
// a test may signal it). prefix names its DPDK files; lcores are EAL's -l or --lcores and their value, args
// the engine's own (after --); its output goes to log.
func StartInNS(t *testing.T, eng, ns, prefix string, lcores, args []string, log io.Writer, devs ...devices.Device) (*enginestart.Process, error) {
	t.Helper()
	dir := t.TempDir()
	wrapper := filepath.Join(dir, "engine.sh")
	if err := os.WriteFile(wrapper, []byte(fmt.Sprintf("#!/bin/sh\nexec ip netns exec %s %s \"$@\"\n", ns, eng)), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return enginestart.StartProcess(ctx, enginestart.ProcessConfig{Binary: wrapper, Control: filepath.Join(dir, "ctl.sock"),
		FilePrefix: fmt.Sprintf("%s%d", prefix, os.Getpid()), NoHuge: true, EAL: append([]string{"--no-shconf"}, lcores...),
		Devices: devs, Args: args, Stdout: log, Stderr: log})
}

// StartIn is StartInNS for an engine that must start: the test fails with the engine's log if it does not,
// and the engine is stopped (and its log shown, should the test fail) when the test ends.
func StartIn(t *testing.T, eng, ns, prefix string, lcores, args []string, devs ...devices.Device) *enginestart.Process {
	t.Helper()
	var log strings.Builder
	p, err := StartInNS(t, eng, ns, prefix, lcores, args, &log, devs...)
	if err != nil {
		t.Fatalf("start in %s: %v\n%s", ns, err, log.String())
	}
	t.Cleanup(func() {
		_ = p.Cmd.Process.Signal(syscall.SIGCONT) // a test that stopped it
		_ = p.Close()
		if t.Failed() {
			t.Logf("engine %s log:\n%s", prefix, log.String())
		}
	})
	return p
}
