package chart

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/yaml"

	"linerate.dev/linerate/internal/metrics"
)

// exportedLabels are the operator's metrics with their labels, read from the collector itself.
func exportedLabels(t *testing.T) map[string]map[string]bool {
	t.Helper()
	ch := make(chan *prometheus.Desc, 64)
	(&metrics.ResultsCollector{}).Describe(ch)
	close(ch)
	fq := regexp.MustCompile(`fqName: "([^"]+)"`)
	vl := regexp.MustCompile(`variableLabels: \{([^}]*)\}`)
	out := map[string]map[string]bool{}
	for d := range ch {
		m := fq.FindStringSubmatch(d.String())
		if m == nil {
			continue
		}
		labels := map[string]bool{}
		if l := vl.FindStringSubmatch(d.String()); l != nil {
			for _, n := range strings.Split(l[1], ",") {
				labels[strings.TrimSpace(n)] = true
			}
		}
		out[m[1]] = labels
	}
	if len(out) < 10 {
		t.Fatalf("found only %d metrics in the collector", len(out))
	}
	return out
}

// Every alert queries metrics the operator exports, with labels they carry: a misspelt name or label
// makes an alert that can never fire, and nothing else would say so.
func TestAlertsQueryExportedMetricsAndLabels(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "config", "prometheus", "prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rule struct {
		Spec struct {
			Groups []struct {
				Rules []struct {
					Alert string `json:"alert"`
					Expr  string `json:"expr"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &rule); err != nil {
		t.Fatal(err)
	}
	exported := exportedLabels(t)
	runner := runnerMetrics(t)
	selector := regexp.MustCompile(`\b(linerate_[a-z0-9_]+)(\{([^}]*)\})?`)
	matcher := regexp.MustCompile(`([a-z_]+)\s*(=~|!~|!=|=)`)
	alerts := 0
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			alerts++
			found := selector.FindAllStringSubmatch(r.Expr, -1)
			if len(found) == 0 {
				t.Errorf("%s: queries no linerate metric: %q", r.Alert, r.Expr)
			}
			for _, m := range found {
				name := m[1]
				if strings.HasPrefix(name, "linerate_runner_") {
					if runner != nil && !runner[strings.TrimSuffix(name, "_total")] && !runner[name] {
						t.Errorf("%s: %s is not defined by internal/runner", r.Alert, name)
					}
					continue
				}
				labels, ok := exported[name]
				if !ok {
					t.Errorf("%s: %s is not exported by internal/metrics", r.Alert, name)
					continue
				}
				for _, l := range matcher.FindAllStringSubmatch(m[3], -1) {
					if !labels[l[1]] {
						t.Errorf("%s: %s has no label %q", r.Alert, name, l[1])
					}
				}
			}
		}
	}
	if alerts < 5 {
		t.Fatalf("only %d alerts read", alerts)
	}
}
