package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The CLI speaks as kubectl and helm do: --help with examples, --flag spelling, a usage error (exit 2)
// that names the flag, completion scripts and a version.
func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		exit     int
		out, err []string // substrings of standard output and of what the failure prints
	}{
		{"run help", []string{"run", "--help"}, 0, []string{"Examples:", "linerate run -f throughput-test.yaml", "-f, --file", "-o, --output", "--port", "--report"}, nil},
		{"root help lists the commands", []string{"--help"}, 0, []string{"run ", "runner ", "engine ", "version ", "completion "}, nil},
		{"version", []string{"version"}, 0, []string{"linerate "}, nil},
		{"bash completion", []string{"completion", "bash"}, 0, []string{"bash completion", "__start_linerate"}, nil},
		{"zsh completion", []string{"completion", "zsh"}, 0, []string{"#compdef linerate"}, nil},
		{"unknown flag", []string{"run", "--frames", "64"}, 2, nil, []string{"unknown flag: --frames", "linerate run --help"}},
		{"single-dash long flag", []string{"run", "-file", "x.yaml"}, 2, nil, []string{"unknown command \"x.yaml\""}},
		{"no test file", []string{"run"}, 2, nil, []string{"give the TrafficTest with -f"}},
		{"bad output", []string{"run", "-f", "x.yaml", "-o", "yaml"}, 2, nil, []string{"-o yaml: want table or json"}},
		{"bad port", []string{"run", "-f", "x.yaml", "--port", "west"}, 2, nil, []string{"--port west: want NAME=DEVARGS"}},
		{"margin without calibration", []string{"run", "-f", "x.yaml", "--ceiling-margin", "5"}, 2, nil, []string{"--ceiling-margin is a margin to the ceiling --calibration gives"}},
		{"margin of all", []string{"run", "-f", "x.yaml", "--calibration", "c.json", "--ceiling-margin", "100"}, 2, nil, []string{"--ceiling-margin 100: want a percent"}},
		{"calibrate without a test", []string{"calibrate"}, 2, nil, []string{"give the TrafficTest with -f"}},
		{"calibrate no search", []string{"calibrate", "-f", "x.yaml", "--repetitions", "0"}, 2, nil, []string{"--repetitions 0: want 1 to 20"}},
		{"calibrate a bad port", []string{"calibrate", "-f", "x.yaml", "--port", "west"}, 2, nil, []string{"--port west: want NAME=DEVARGS"}},
		{"runner needs its plan", []string{"runner", "--namespace", "lab"}, 2, nil, []string{"--plan, --namespace and --results-configmap are required"}},
		{"missing file is a failed run", []string{"run", "-f", "/nonexistent/test.yaml"}, 1, nil, []string{"/nonexistent/test.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := newRootCommand()
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetErr(&out)
			root.SetArgs(tc.args)
			cmd, err := root.ExecuteContextC(context.Background())
			code, printed := 0, ""
			if err != nil {
				code, printed = exitCode(err), explain(cmd, err)
			}
			if code != tc.exit {
				t.Fatalf("exit %d, want %d (%v)\n%s", code, tc.exit, err, out.String())
			}
			for _, s := range tc.out {
				if !strings.Contains(out.String(), s) {
					t.Errorf("output lacks %q:\n%s", s, out.String())
				}
			}
			for _, s := range tc.err {
				if !strings.Contains(printed, s) {
					t.Errorf("the error printed lacks %q: %q", s, printed)
				}
			}
		})
	}
}
