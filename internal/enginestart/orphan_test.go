package enginestart_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"linerate.dev/linerate/internal/devices"
	"linerate.dev/linerate/internal/enginestart"
	"linerate.dev/linerate/internal/enginestart/enginetest"
)

// starterEnv makes this test binary the process that starts an engine and then dies without a word (a
// `linerate run` that crashed, or was killed).
const starterEnv = "LR_TEST_ENGINE_STARTER"

func TestMain(m *testing.M) {
	if eng := os.Getenv(starterEnv); eng != "" {
		startAndHang(eng)
		return
	}
	os.Exit(m.Run())
}

func startAndHang(eng string) {
	dir, err := os.MkdirTemp("", "lrorphan")
	if err != nil {
		panic(err)
	}
	p, err := enginestart.StartProcess(context.Background(), enginestart.ProcessConfig{Binary: eng,
		Control: filepath.Join(dir, "ctl.sock"), FilePrefix: fmt.Sprintf("lro%d", os.Getpid()), NoHuge: true,
		EAL: []string{"--no-shconf", "-l", "0,1"}, Devices: []devices.Device{{Devargs: "net_ring0"}, {Devargs: "net_ring1"}},
		Stdout: os.Stderr, Stderr: os.Stderr})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("engine", p.Cmd.Process.Pid)
	select {}
}

// An engine whose starter died (a CLI that crashed before it could stop it: a Go fatal error runs no
// deferred Close) must not live on: it polls its lcores, two CPUs of a small machine, for nobody. A CLI
// that panicked left two such engines spinning, which then spoiled every other test of the machine.
func TestAnEngineDiesWithTheProcessThatStartedIt(t *testing.T) {
	eng := enginetest.Binary(t)
	starter := exec.Command(os.Args[0], "-test.run=^$")
	starter.Env = append(os.Environ(), starterEnv+"="+eng)
	out, err := starter.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := starter.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	fields := strings.Fields(line)
	if err != nil || len(fields) != 2 || fields[0] != "engine" {
		_ = starter.Process.Kill()
		_ = starter.Wait()
		t.Fatalf("the starter said %q (%v)", line, err)
	}
	pid, _ := strconv.Atoi(fields[1])
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	_ = starter.Process.Kill()
	_ = starter.Wait()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if !alive(pid) {
			return
		}
	}
	t.Errorf("the engine (PID %d) still runs 20 s after the process that started it was killed", pid)
}

// alive says whether pid runs (a zombie, whose parent has not reaped it, has ended).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
