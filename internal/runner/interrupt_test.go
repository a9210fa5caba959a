package runner_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
)

// A `linerate run` stopped by SIGTERM (a CI timeout, a user's kill) or SIGINT (Ctrl-C) keeps what it measured:
// its JSON holds every trial it finished and says the run is incomplete, and the report is written and says
// so too.
func TestInterruptedRunKeepsWhatItMeasured(t *testing.T) {
	eng := need(t)
	for _, c := range []struct {
		sig  syscall.Signal
		name string
	}{{syscall.SIGTERM, "SIGTERM"}, {syscall.SIGINT, "SIGINT"}} {
		sig := c.sig
		t.Run(c.name, func(t *testing.T) {
			tns, _ := router(t, "in")
			dir := t.TempDir()
			bin := filepath.Join(dir, "linerate")
			sh(t, "go", "build", "-o", bin, "linerate.dev/linerate/cmd/linerate")
			f := filepath.Join(dir, "test.yaml")
			// seven sizes of throughput and latency: far more trials than the test waits for
			tt := routedTest("interrupted", []v1alpha1.TestKind{v1alpha1.TestThroughput, v1alpha1.TestLatency},
				[]int32{64, 128, 256, 512, 1024, 1280, 1518}, "0.5", "2")
			if err := os.WriteFile(f, []byte(asYAML(t, tt)), 0o644); err != nil {
				t.Fatal(err)
			}
			report := filepath.Join(dir, "report")
			cmd := exec.Command("ip", "netns", "exec", tns, bin, "run", "-f", f, "--engine", eng, "-o", "json", "--report", report)
			var stdout strings.Builder
			cmd.Stdout = &stdout
			pipe, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// `ip netns exec` execs the CLI: the PID is the CLI's own
			const want = 4
			seen, stderr := 0, &strings.Builder{}
			lines := bufio.NewScanner(pipe)
			deadline := time.AfterFunc(90*time.Second, func() { _ = cmd.Process.Kill() })
			defer deadline.Stop()
			for lines.Scan() {
				stderr.WriteString(lines.Text() + "\n")
				if strings.HasPrefix(lines.Text(), "trial ") {
					if seen++; seen == want {
						_ = cmd.Process.Signal(sig)
					}
				}
			}
			err = cmd.Wait()
			if seen < want {
				t.Fatalf("only %d trials before the CLI ended (%v):\n%s", seen, err, stderr)
			}
			if err == nil {
				t.Errorf("an interrupted run exited 0")
			}
			var o cliOut
			if err := json.Unmarshal([]byte(stdout.String()), &o); err != nil {
				t.Fatalf("no JSON from the interrupted run: %v\n%s\nstderr:\n%s", err, stdout.String(), stderr)
			}
			if len(o.Trials) < want {
				t.Errorf("JSON keeps %d trials, the run had finished %d", len(o.Trials), want)
			}
			if !strings.Contains(o.Incomplete, "interrupted") || !strings.Contains(o.Incomplete, c.name) {
				t.Errorf(`JSON "incomplete": %q, want it to say the run was interrupted by %s`, o.Incomplete, c.name)
			}
			page, err := os.ReadFile(filepath.Join(report, "index.html"))
			if err != nil {
				t.Fatalf("no report from the interrupted run: %v\nstderr:\n%s", err, stderr)
			}
			if !strings.Contains(string(page), "interrupted by "+c.name) || !strings.Contains(string(page), "incomplete") {
				t.Errorf("the report does not say the run was interrupted")
			}
		})
	}
}
