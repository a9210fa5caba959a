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

// alertRule is one rule of config/prometheus/prometheusrule.yaml.
type alertRule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	Annotations map[string]string `json:"annotations"`
}

// alertRules reads the alerting rules (not the recording ones) of the PrometheusRule.
func alertRules(t *testing.T) []alertRule {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "config", "prometheus", "prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rule struct {
		Spec struct {
			Groups []struct {
				Rules []alertRule `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &rule); err != nil {
		t.Fatal(err)
	}
	var out []alertRule
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				out = append(out, r)
			}
		}
	}
	if len(out) < 5 {
		t.Fatalf("only %d alerts read", len(out))
	}
	return out
}

// Every alert queries metrics the operator exports, with labels they carry: a misspelt name or label
// makes an alert that can never fire, and nothing else would say so.
func TestAlertsQueryExportedMetricsAndLabels(t *testing.T) {
	exported := exportedLabels(t)
	runner := runnerMetrics(t)
	selector := regexp.MustCompile(`\blinerate_[a-z0-9_]+`)
	for _, r := range alertRules(t) {
		found := selector.FindAllString(r.Expr, -1)
		if len(found) == 0 {
			t.Errorf("%s: queries no linerate metric: %q", r.Alert, r.Expr)
		}
		for _, name := range found {
			if strings.HasPrefix(name, "linerate_runner_") {
				if !runner[strings.TrimSuffix(name, "_total")] && !runner[name] {
					t.Errorf("%s: %s is not defined by internal/runner", r.Alert, name)
				}
			} else if exported[name] == nil {
				t.Errorf("%s: %s is not exported by internal/metrics", r.Alert, name)
			}
		}
		// every label a matcher, a by/without or an on (…) names
		refs, err := labelReferences(r.Expr)
		if err != nil {
			t.Errorf("%s: %v", r.Alert, err)
		}
		for _, ref := range refs {
			if labels := exported[ref.metric]; labels != nil && !labels[ref.label] {
				t.Errorf("%s: %s names the label %q, which %s does not carry", r.Alert, ref.clause, ref.label, ref.metric)
			}
		}
	}
}
