package runner

import (
	"slices"
	"strings"
	"testing"
	"time"

	"linerate.dev/linerate/internal/plan"
)

func TestEngineGetsTheWindowOfItsPlan(t *testing.T) {
	extra := []string{"--mbufs", "4095"}
	// 120 s trials + 1 s slack at 10 GbE: 1.83 G frames, a window of 2^31
	p := &plan.Plan{Traffic: plan.Traffic{LineRateBps: 10e9}, Durations: plan.Durations{ValidationTrial: 120 * time.Second}}
	cfg := processConfig(StartOptions{Binary: "/x", Control: "/run/e.sock", Extra: extra, Plan: p})
	args := cfg.EALArgs()
	tail := strings.Join(args[slices.Index(args, "--"):], " ")
	if tail != "-- --control /run/e.sock --mbufs 4095 --window-bits 31" {
		t.Errorf("engine args after --: %q", tail)
	}
	if len(extra) != 2 {
		t.Errorf("the caller's Extra was changed: %q", extra)
	}
	cfg = processConfig(StartOptions{Binary: "/x", Control: "/run/e.sock"})
	args = cfg.EALArgs()
	if slices.Contains(args, "--window-bits") {
		t.Errorf("no plan window: the engine's default, got %q", args)
	}
}
