package chart

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// tablePanel is a dashboard panel with the transformations Grafana applies to its queries' frames.
type tablePanel struct {
	Title   string `json:"title"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Transformations []struct {
		ID      string          `json:"id"`
		Options json.RawMessage `json:"options"`
	} `json:"transformations"`
	Panels []tablePanel `json:"panels"`
}

func transformedPanels(t *testing.T) []tablePanel {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "config", "grafana", "linerate-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []tablePanel `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatal(err)
	}
	var out []tablePanel
	var walk func([]tablePanel)
	walk = func(ps []tablePanel) {
		for _, p := range ps {
			if len(p.Transformations) > 0 {
				out = append(out, p)
			}
			walk(p.Panels)
		}
	}
	walk(dash.Panels)
	if len(out) < 5 {
		t.Fatalf("only %d panels transform their queries", len(out))
	}
	return out
}

// carriedLabels are the labels of every metric the dashboard and the alerts can query: the operator's
// (from its collector) and the tester pods' (from the runner's /metrics, with those their scrape adds).
func carriedLabels(t *testing.T) map[string]map[string]bool {
	carried := exportedLabels(t)
	for name, labels := range runnerLabels(t) {
		carried[name] = labels
	}
	return carried
}

// A table that merges several queries shows one row per frame size and direction only when every query
// returns series with the same labels: Grafana joins rows on the fields they share, so a query that keeps
// its metric's name (a plain selector), or a label the others lack (statistic), makes rows of its own and
// the table a staircase of half-empty rows.
func TestMergedTablesJoinTheirRows(t *testing.T) {
	carried := carriedLabels(t)
	merged := 0
	for _, p := range transformedPanels(t) {
		if p.Transformations[0].ID != "merge" {
			continue
		}
		merged++
		var first []string
		for i, target := range p.Targets {
			res, err := queryLabels(target.Expr, carried)
			if err != nil {
				t.Errorf("panel %q (%s): %v", p.Title, target.RefID, err)
				continue
			}
			if res.metricName {
				t.Errorf("panel %q (%s) keeps the metric's name (__name__), which differs from its neighbours' and splits the rows: %q",
					p.Title, target.RefID, target.Expr)
			}
			labels := keys(res.labels)
			if i == 0 {
				first = labels
			} else if !reflect.DeepEqual(labels, first) {
				t.Errorf("panel %q: %s returns series labelled %v, %s %v: their rows do not join",
					p.Title, target.RefID, labels, p.Targets[0].RefID, first)
			}
		}
	}
	if merged < 4 {
		t.Fatalf("only %d panels merge queries", merged)
	}
}

// Every field a transformation names (a column to group, sort, convert or rename) is one the panel's
// queries return, or one an earlier transformation made: a misnamed field is silently ignored, and the
// table is not what its description says.
func TestTransformationsNameFieldsTheirQueriesReturn(t *testing.T) {
	carried := carriedLabels(t)
	checked := 0
	for _, p := range transformedPanels(t) {
		// Grafana names a table's value column "Value" for one query, "Value #<refId>" for several
		fields := map[string]bool{"Time": true, "Value": len(p.Targets) == 1}
		for _, target := range p.Targets {
			fields["Value #"+target.RefID] = len(p.Targets) > 1
			res, err := queryLabels(target.Expr, carried)
			if err != nil {
				t.Errorf("panel %q (%s): %v", p.Title, target.RefID, err)
				continue
			}
			for l := range res.labels {
				fields[l] = true
			}
			if res.metricName {
				fields["__name__"] = true
			}
		}
		for _, tr := range p.Transformations {
			var o struct {
				ColumnField  string            `json:"columnField"`
				RowField     string            `json:"rowField"`
				ValueField   string            `json:"valueField"`
				RenameByName map[string]string `json:"renameByName"`
				Sort         []struct {
					Field string `json:"field"`
				} `json:"sort"`
				Conversions []struct {
					TargetField string `json:"targetField"`
				} `json:"conversions"`
			}
			if err := json.Unmarshal(tr.Options, &o); err != nil {
				t.Fatalf("panel %q, %s: %v", p.Title, tr.ID, err)
			}
			var named []string
			switch tr.ID {
			case "merge":
			case "groupingToMatrix":
				named = []string{o.ColumnField, o.RowField, o.ValueField}
			case "sortBy":
				for _, s := range o.Sort {
					named = append(named, s.Field)
				}
			case "convertFieldType":
				for _, c := range o.Conversions {
					named = append(named, c.TargetField)
				}
			case "organize":
				named = keys(o.RenameByName)
			default:
				t.Errorf("panel %q: the transformation %s is not read by this test", p.Title, tr.ID)
			}
			for _, f := range named {
				checked++
				if !fields[f] {
					t.Errorf("panel %q: %s names the field %q, which its queries do not return (they return %s)",
						p.Title, tr.ID, f, strings.Join(keys(fields), ", "))
				}
			}
			switch tr.ID {
			case "groupingToMatrix": // its first column is named row\column
				fields[o.RowField+`\`+o.ColumnField] = true
			case "organize":
				for _, to := range o.RenameByName {
					fields[to] = true
				}
			}
		}
	}
	if checked < 30 {
		t.Fatalf("only %d fields checked", checked)
	}
}

// An alert's text names only labels its query returns: an aggregation keeps only what it groups by, and
// a summary that names another label prints it empty (a namespace missing from a kubectl command).
func TestAlertsNameOnlyLabelsTheirQueryReturns(t *testing.T) {
	carried := carriedLabels(t)
	named := regexp.MustCompile(`\$labels\.([a-zA-Z_][a-zA-Z0-9_]*)`)
	checked := 0
	for _, r := range alertRules(t) {
		res, err := queryLabels(r.Expr, carried)
		if err != nil {
			t.Errorf("%s: %v", r.Alert, err)
			continue
		}
		for _, text := range r.Annotations {
			for _, m := range named.FindAllStringSubmatch(text, -1) {
				checked++
				if !res.labels[m[1]] {
					t.Errorf("%s: its text names $labels.%s, which its query does not return (it returns %s)",
						r.Alert, m[1], strings.Join(keys(res.labels), ", "))
				}
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d label names in the alerts' texts checked", checked)
	}
}
