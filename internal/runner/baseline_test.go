package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"linerate.dev/linerate/api/v1alpha1"
)

// A baseline is accepted both as the -o json output of linerate run and as a ConfigMap's results.json;
// a file without throughput results is refused rather than silently giving no penalty.
func TestReadBaseline(t *testing.T) {
	dir := t.TempDir()
	res := v1alpha1.Results{Throughput: []v1alpha1.ThroughputResult{{FrameSize: 64, Direction: "west->east",
		NDR: v1alpha1.Rate{FramesPerSecond: 1000, L2BitsPerSecond: 512000}}}}
	write := func(name string, v any) string {
		b, _ := json.Marshal(v)
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, f := range []string{
		write("cli.json", map[string]any{"name": "x", "results": res, "trials": []any{}, "error": ""}),
		write("results.json", res),
	} {
		got, err := ReadBaseline(f)
		if err != nil || len(got.Throughput) != 1 || got.Throughput[0].NDR.FramesPerSecond != 1000 {
			t.Errorf("%s: %+v %v", f, got, err)
		}
	}
	if _, err := ReadBaseline(write("empty.json", map[string]any{"results": v1alpha1.Results{}})); err == nil {
		t.Error("a baseline without throughput results must be refused")
	}
	if _, err := ReadBaseline(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing baseline must be an error")
	}
}
