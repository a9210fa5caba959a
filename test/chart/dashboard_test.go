package chart

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/results"
	"linerate.dev/linerate/internal/runner"
)

// dashboardQuery is one PromQL query of the dashboard: a panel's target, a variable's or an annotation's.
type dashboardQuery struct {
	where, expr string
}

// readDashboard returns the dashboard as JSON values, and its queries.
func readDashboard(t *testing.T) (any, []dashboardQuery) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "config", "grafana", "linerate-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query any    `json:"query"` // a string, or {"query": …} as Grafana 10 saves it
			} `json:"list"`
		} `json:"templating"`
		Annotations struct {
			List []struct {
				Name string `json:"name"`
				Expr string `json:"expr"`
			} `json:"list"`
		} `json:"annotations"`
		Panels []panelQueries `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	var all any
	if err := json.Unmarshal(data, &all); err != nil {
		t.Fatal(err)
	}
	var queries []dashboardQuery
	for _, v := range dash.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(string)
		if m, ok := v.Query.(map[string]any); ok {
			q, _ = m["query"].(string)
		}
		queries = append(queries, dashboardQuery{"variable " + v.Name, q})
	}
	for _, a := range dash.Annotations.List {
		if a.Expr != "" {
			queries = append(queries, dashboardQuery{"annotation " + a.Name, a.Expr})
		}
	}
	var walk func(panels []panelQueries)
	walk = func(panels []panelQueries) {
		for _, p := range panels {
			for _, target := range p.Targets {
				queries = append(queries, dashboardQuery{"panel " + p.Title + " (" + target.RefID + ")", target.Expr})
			}
			walk(p.Panels)
		}
	}
	walk(dash.Panels)
	if len(queries) < 10 {
		t.Fatalf("only %d queries in the dashboard", len(queries))
	}
	return all, queries
}

type panelQueries struct {
	Title   string `json:"title"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []panelQueries `json:"panels"` // a collapsed row's
}

// The Grafana dashboard queries only metrics the operator exports (the names come from the collector
// itself, not from a list kept here), uses only variables it defines, and has unique panel ids.
func TestDashboardQueriesExistingMetrics(t *testing.T) {
	all, queries := readDashboard(t)
	exported := exportedLabels(t)
	// The tester pods' live metrics are defined by the runner (internal/runner, a separate process in the
	// tester image): their names are read from its /metrics.
	runnerNames := runnerMetrics(t)
	vars := map[string]bool{}
	for _, v := range all.(map[string]any)["templating"].(map[string]any)["list"].([]any) {
		vars[v.(map[string]any)["name"].(string)] = true
	}

	ids := map[float64]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
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
	walk(all)
	used := map[string]bool{}
	name := regexp.MustCompile(`\blinerate_[a-z0-9_]+`)
	varRef := regexp.MustCompile(`\$\{?([a-z_]+)`)
	for _, q := range queries {
		for _, n := range name.FindAllString(q.expr, -1) {
			if strings.HasPrefix(n, "linerate_runner_") {
				if !runnerNames[strings.TrimSuffix(n, "_total")] && !runnerNames[n] {
					t.Errorf("%s: %q uses %s, which internal/runner does not define", q.where, q.expr, n)
				}
				continue
			}
			if exported[n] == nil {
				t.Errorf("%s: %q uses %s, which internal/metrics does not export", q.where, q.expr, n)
			}
			used[n] = true
		}
		for _, m := range varRef.FindAllStringSubmatch(q.expr, -1) {
			if !vars[m[1]] && !strings.HasPrefix(m[1], "__") {
				t.Errorf("%s: %q uses $%s, which the dashboard does not define", q.where, q.expr, m[1])
			}
		}
	}
	for n := range exported {
		if !used[n] {
			t.Errorf("the dashboard shows nothing of %s", n)
		}
	}
}

// Every label a query filters on, groups by or lists names a label its metric carries: a selector with a
// label its metric lacks matches no series, and the panel stays empty without an error (the latency-change
// panel once filtered on percent_of_ndr, which linerate_latency_change_seconds does not have). The labels
// come from the collector and the runner themselves.
func TestDashboardQueriesOnlyLabelsTheirMetricsCarry(t *testing.T) {
	_, queries := readDashboard(t)
	carried := exportedLabels(t)
	for name, labels := range runnerLabels(t) {
		carried[name] = labels
	}
	checked := 0
	for _, q := range queries {
		refs, err := labelReferences(q.expr)
		if err != nil {
			t.Errorf("%s: %v", q.where, err)
			continue
		}
		for _, r := range refs {
			labels := carried[r.metric]
			if labels == nil {
				labels = carried[r.metric+"_total"] // a counter's samples are named as its family
			}
			if labels == nil {
				continue // an unknown metric: TestDashboardQueriesExistingMetrics says so
			}
			checked++
			if !labels[r.label] {
				t.Errorf("%s: %s names the label %q, which %s does not carry (it has %s): %q",
					q.where, r.clause, r.label, r.metric, strings.Join(keys(labels), ", "), q.expr)
			}
		}
	}
	if checked < 50 {
		t.Fatalf("only %d label references checked", checked)
	}
	t.Logf("%d label references in %d queries checked", checked, len(queries))
}

// runnerMetrics returns the names of the metrics internal/runner serves.
func runnerMetrics(t *testing.T) map[string]bool {
	names := map[string]bool{}
	for n := range runnerLabels(t) {
		names[n] = true
	}
	return names
}

// runnerLabels returns the tester pods' live metrics with the labels they carry in Prometheus: their own,
// read from internal/runner's /metrics after a trial, and those the scrape adds.
func runnerLabels(t *testing.T) map[string]map[string]bool {
	t.Helper()
	live := runner.NewLive()
	live.Trial(results.Trial{Test: v1alpha1.TestThroughput, Direction: "west->east", Pass: true})
	live.Progress(v1alpha1.Progress{OfferedRate: "50"})
	rec := httptest.NewRecorder()
	live.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("reading the runner's /metrics: %v", err)
	}
	scraped := podMonitorTargetLabels(t)
	out := map[string]map[string]bool{}
	for name, f := range families {
		labels := map[string]bool{}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = true
			}
		}
		for _, l := range scraped {
			labels[l] = true
		}
		out[name] = labels
	}
	if len(out) < 5 {
		t.Fatalf("the runner serves only %v", keys(out))
	}
	return out
}

// podMonitorTargetLabels are the labels the chart's PodMonitor gives a tester pod's series: the targets of
// its relabelings (traffictest, role), and those Prometheus Operator gives every PodMonitor's target.
func podMonitorTargetLabels(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(chartDir(), "templates", "podmonitor.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	labels := []string{"namespace", "pod", "container", "endpoint", "job", "instance"}
	relabeled := regexp.MustCompile(`targetLabel:\s*([a-zA-Z_][a-zA-Z0-9_]*)`).FindAllStringSubmatch(string(data), -1)
	if len(relabeled) == 0 {
		t.Fatal("the chart's PodMonitor relabels nothing: where does the traffictest label of the runner's metrics come from?")
	}
	for _, m := range relabeled {
		labels = append(labels, m[1])
	}
	return labels
}
