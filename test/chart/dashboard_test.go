package chart

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"linerate.dev/linerate/internal/metrics"
)

// The Grafana dashboard queries only metrics the operator exports (the names come from the collector
// itself, not from a list kept here), uses only variables it defines, and has unique panel ids.
func TestDashboardQueriesExistingMetrics(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "config", "grafana", "linerate-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		UID        string `json:"uid"`
		Templating struct {
			List []struct {
				Name string `json:"name"`
			} `json:"list"`
		} `json:"templating"`
		Panels []json.RawMessage `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	exported := map[string]bool{}
	ch := make(chan *prometheus.Desc, 64)
	(&metrics.ResultsCollector{}).Describe(ch)
	close(ch)
	fq := regexp.MustCompile(`fqName: "([^"]+)"`)
	for d := range ch {
		if m := fq.FindStringSubmatch(d.String()); m != nil {
			exported[m[1]] = true
		}
	}
	if len(exported) < 10 {
		t.Fatalf("found only %d metrics in the collector: %v", len(exported), exported)
	}
	// The tester pods' live metrics are defined by the runner (internal/runner, a separate process in the
	// tester image): their names are read from its source, which registers them with literal names.
	runner := runnerMetrics(t)
	vars := map[string]bool{}
	for _, v := range dash.Templating.List {
		vars[v.Name] = true
	}

	var exprs []string
	ids := map[float64]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if e, ok := x["expr"].(string); ok {
				exprs = append(exprs, e)
			}
			if id, ok := x["id"].(float64); ok && x["gridPos"] != nil {
				if ids[id] {
					t.Errorf("panel id %v used twice", id)
				}
				ids[id] = true
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	var all any
	_ = json.Unmarshal(data, &all)
	walk(all)
	if len(exprs) < 10 {
		t.Fatalf("only %d queries in the dashboard", len(exprs))
	}
	used := map[string]bool{}
	name := regexp.MustCompile(`\blinerate_[a-z0-9_]+`)
	varRef := regexp.MustCompile(`\$\{?([a-z_]+)`)
	for _, e := range exprs {
		for _, n := range name.FindAllString(e, -1) {
			if strings.HasPrefix(n, "linerate_runner_") {
				if runner != nil && !runner[strings.TrimSuffix(n, "_total")] && !runner[n] {
					t.Errorf("query %q uses %s, which internal/runner does not define", e, n)
				}
				continue
			}
			if !exported[n] {
				t.Errorf("query %q uses %s, which internal/metrics does not export", e, n)
			}
			used[n] = true
		}
		for _, m := range varRef.FindAllStringSubmatch(e, -1) {
			if !vars[m[1]] && !strings.HasPrefix(m[1], "__") {
				t.Errorf("query %q uses $%s, which the dashboard does not define", e, m[1])
			}
		}
	}
	for n := range exported {
		if !used[n] {
			t.Errorf("the dashboard shows nothing of %s", n)
		}
	}
}

// runnerMetrics returns the metric names internal/runner registers (`Name: "linerate_runner_..."`), or nil
// when the package is not in the tree.
func runnerMetrics(t *testing.T) map[string]bool {
	files, _ := filepath.Glob(filepath.Join(root, "internal", "runner", "*.go"))
	if len(files) == 0 {
		t.Log("internal/runner not found: the dashboard's runner metrics are not checked")
		return nil
	}
	names := map[string]bool{}
	re := regexp.MustCompile(`Name:\s*"(linerate_runner_[a-z0-9_]+)"`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(data), -1) {
			names[m[1]] = true
		}
	}
	return names
}
