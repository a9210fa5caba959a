package runner

import (
	"slices"
	"strings"
	"testing"
)

func TestEngineGetsTheWindowOfItsPlan(t *testing.T) {
	extra := []string{"--mbufs", "4095"}
	cfg := processConfig(StartOptions{Binary: "/x", Control: "/run/e.sock", Extra: extra, WindowBits: 31})
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
