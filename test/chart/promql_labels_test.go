package chart

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// labelReference is a label a query expects a linerate_* metric to carry: a matcher of its selector, a
// by/without clause of an aggregation over it, or the label a Grafana label_values() variable lists.
type labelReference struct {
	metric, label, clause string
}

type promqlToken struct {
	kind rune // 'i' identifier, 'n' number or duration, 's' string, 'v' Grafana variable, else the operator's first byte
	text string
}

// aggregations are PromQL's aggregation operators: a by/without clause right after one of them comes
// before the aggregated expression (`sum by (l) (x)`), anywhere else after it (`sum(x) by (l)`).
var aggregations = map[string]bool{"sum": true, "min": true, "max": true, "avg": true, "group": true,
	"stddev": true, "stdvar": true, "count": true, "count_values": true, "bottomk": true, "topk": true,
	"quantile": true, "limitk": true, "limit_ratio": true}

// labelReferences reads the labels a PromQL expression (or a Grafana label_values() query) names for each
// linerate_* metric. It is not a PromQL parser (the project does not depend on Prometheus itself), only
// enough of its syntax to read the dashboard's and the alerts' queries; it errs on what it cannot read, so
// that no query goes unchecked.
func labelReferences(expr string) ([]labelReference, error) {
	toks, err := promqlTokens(expr)
	if err != nil {
		return nil, err
	}
	var refs []labelReference
	for i := 0; i < len(toks); i++ {
		tok := toks[i]
		if tok.kind != 'i' || i+1 >= len(toks) || toks[i+1].kind != '(' && toks[i+1].kind != '{' {
			continue
		}
		switch {
		case strings.HasPrefix(tok.text, "linerate_") && toks[i+1].kind == '{':
			matchers, end, err := selectorMatchers(toks, i+1)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", tok.text, err)
			}
			for _, l := range matchers {
				refs = append(refs, labelReference{tok.text, l, "{" + l + "…}"})
			}
			i = end
		case tok.text == "by" || tok.text == "without":
			grouped, end, err := aggregationGrouping(toks, i)
			if err != nil {
				return nil, err
			}
			refs = append(refs, grouped...)
			i = end
		case tok.text == "on" && toks[i+1].kind == '(':
			// vector matching on labels: both sides must carry each
			end := matching(toks, i+1)
			if end < 0 {
				return nil, fmt.Errorf("no closing parenthesis after on in %q", expr)
			}
			for _, m := range metricNames(toks) {
				for _, l := range toks[i+2 : end] {
					if l.kind == 'i' {
						refs = append(refs, labelReference{m, l.text, "on (" + l.text + ")"})
					}
				}
			}
			i = end
		case tok.text == "label_values":
			r, err := labelValuesReference(toks, i+1)
			if err != nil {
				return nil, err
			}
			refs = append(refs, r...)
		}
	}
	return refs, nil
}

// selectorMatchers reads the label names of the matchers in the braces that open at toks[open], and
// returns where the braces close.
func selectorMatchers(toks []promqlToken, open int) ([]string, int, error) {
	var labels []string
	for i := open + 1; i < len(toks); i += 4 {
		if toks[i].kind == '}' {
			return labels, i, nil // `{}`, or a trailing comma
		}
		if i+3 >= len(toks) || toks[i].kind != 'i' || !isMatchOperator(toks[i+1].text) || toks[i+2].kind != 's' {
			return nil, 0, fmt.Errorf("cannot read the matcher at %q", joinTokens(toks[i:]))
		}
		labels = append(labels, toks[i].text)
		switch toks[i+3].kind {
		case '}':
			return labels, i + 3, nil
		case ',':
		default:
			return nil, 0, fmt.Errorf("cannot read the matcher at %q", joinTokens(toks[i:]))
		}
	}
	return nil, 0, fmt.Errorf("no closing brace in %q", joinTokens(toks[open:]))
}

func isMatchOperator(op string) bool { return op == "=" || op == "!=" || op == "=~" || op == "!~" }

// aggregationGrouping reads the labels of the by/without clause at toks[at] and pairs each with every
// linerate_* metric of the expression the clause aggregates; it returns where the clause ends.
func aggregationGrouping(toks []promqlToken, at int) ([]labelReference, int, error) {
	clause := toks[at].text
	closeList := matching(toks, at+1)
	if closeList < 0 {
		return nil, 0, fmt.Errorf("no closing parenthesis after %s in %q", clause, joinTokens(toks[at:]))
	}
	var labels []string
	for i := at + 2; i < closeList; i++ {
		switch {
		case toks[i].kind == 'i':
			labels = append(labels, toks[i].text)
		case toks[i].kind != ',':
			return nil, 0, fmt.Errorf("cannot read the labels of %q", joinTokens(toks[at:closeList+1]))
		}
	}
	var from, to int // the aggregated expression, its parentheses included
	switch {
	case at > 0 && toks[at-1].kind == 'i' && aggregations[toks[at-1].text]:
		from, to = closeList+1, matching(toks, closeList+1)
	case at > 0 && toks[at-1].kind == ')':
		from, to = matching(toks, at-1), at-1
	default:
		return nil, 0, fmt.Errorf("%s follows no aggregation in %q", clause, joinTokens(toks))
	}
	if from < 0 || to < 0 {
		return nil, 0, fmt.Errorf("cannot find what %s (…) aggregates in %q", clause, joinTokens(toks))
	}
	var refs []labelReference
	for _, m := range metricNames(toks[from : to+1]) {
		for _, l := range labels {
			refs = append(refs, labelReference{m, l, clause + " (" + l + ")"})
		}
	}
	return refs, closeList, nil
}

// labelValuesReference reads Grafana's label_values(metric{…}, label): the label must be one of the
// metric's (label_values(label) alone names no metric).
func labelValuesReference(toks []promqlToken, open int) ([]labelReference, error) {
	end := matching(toks, open)
	if end < 0 || toks[end-1].kind != 'i' {
		return nil, fmt.Errorf("cannot read %q", joinTokens(toks[open-1:]))
	}
	label := toks[end-1].text
	var refs []labelReference
	for _, m := range metricNames(toks[open:end]) {
		refs = append(refs, labelReference{m, label, "label_values(…, " + label + ")"})
	}
	return refs, nil
}

func metricNames(toks []promqlToken) []string {
	var names []string
	for _, t := range toks {
		if t.kind == 'i' && strings.HasPrefix(t.text, "linerate_") {
			names = append(names, t.text)
		}
	}
	return names
}

// matching returns the index of the parenthesis that pairs with the one at toks[at] (forward from an
// opening one, backward from a closing one), or -1.
func matching(toks []promqlToken, at int) int {
	if at < 0 || at >= len(toks) {
		return -1
	}
	step, inward, outward := 1, '(', ')'
	switch toks[at].kind {
	case '(':
	case ')':
		step, inward, outward = -1, ')', '('
	default:
		return -1
	}
	depth := 0
	for i := at; i >= 0 && i < len(toks); i += step {
		switch toks[i].kind {
		case inward:
			depth++
		case outward:
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func joinTokens(toks []promqlToken) string {
	var b strings.Builder
	for i, t := range toks {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t.text)
	}
	return b.String()
}

// promqlTokens splits a query into identifiers, numbers and durations, strings, Grafana's $variables, and
// operators; it drops spaces and # comments.
func promqlTokens(expr string) ([]promqlToken, error) {
	var toks []promqlToken
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#':
			for i < len(expr) && expr[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'' || c == '`':
			end := i + 1
			for end < len(expr) && expr[end] != c {
				if expr[end] == '\\' && c != '`' {
					end++
				}
				end++
			}
			if end >= len(expr) {
				return nil, fmt.Errorf("unterminated string in %q", expr)
			}
			toks = append(toks, promqlToken{'s', expr[i : end+1]})
			i = end + 1
		case c == '$':
			end := i + 1
			if end < len(expr) && expr[end] == '{' {
				end = strings.IndexByte(expr[i:], '}')
				if end < 0 {
					return nil, fmt.Errorf("unterminated ${ in %q", expr)
				}
				end += i + 1
			} else {
				end = i + 1 + wordLength(expr[i+1:])
			}
			toks = append(toks, promqlToken{'v', expr[i:end]})
			i = end
		case isWordByte(c):
			kind := 'i'
			if c >= '0' && c <= '9' || c == '.' {
				kind = 'n'
			}
			n := wordLength(expr[i:])
			toks = append(toks, promqlToken{kind, expr[i : i+n]})
			i += n
		case strings.HasPrefix(expr[i:], "=~") || strings.HasPrefix(expr[i:], "!~") || strings.HasPrefix(expr[i:], "!=") ||
			strings.HasPrefix(expr[i:], "==") || strings.HasPrefix(expr[i:], "<=") || strings.HasPrefix(expr[i:], ">="):
			toks = append(toks, promqlToken{rune(c), expr[i : i+2]})
			i += 2
		default:
			toks = append(toks, promqlToken{rune(c), expr[i : i+1]})
			i++
		}
	}
	return toks, nil
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == ':' || c == '.'
}

func wordLength(s string) int {
	n := 0
	for n < len(s) && isWordByte(s[n]) {
		n++
	}
	return n
}

func TestLabelReferences(t *testing.T) {
	cases := []struct {
		name, expr string
		want       []labelReference
	}{
		{"equality, regex and negated matchers",
			`linerate_a{namespace=~"$namespace", statistic="p99", reason!="Cancelled", phase!~"Pend.*"} == 1`,
			[]labelReference{{"linerate_a", "namespace", "{namespace…}"}, {"linerate_a", "statistic", "{statistic…}"},
				{"linerate_a", "reason", "{reason…}"}, {"linerate_a", "phase", "{phase…}"}}},
		{"a value holding braces, commas, quotes and by",
			`linerate_a{x="a{b}, by (c) \"d\"", y='e'}`,
			[]labelReference{{"linerate_a", "x", "{x…}"}, {"linerate_a", "y", "{y…}"}}},
		{"without matchers, a trailing comma, a range and a Grafana interval",
			`rate(linerate_a[$__rate_interval]) + linerate_b{} * linerate_c{x="1",}`,
			[]labelReference{{"linerate_c", "x", "{x…}"}}},
		{"by before the aggregated expression",
			`sum by (traffictest, outcome) (increase(linerate_a{namespace=~"$namespace"}[5m]))`,
			[]labelReference{{"linerate_a", "traffictest", "by (traffictest)"}, {"linerate_a", "outcome", "by (outcome)"},
				{"linerate_a", "namespace", "{namespace…}"}}},
		{"without after the aggregated expression, other metrics outside it",
			`max(linerate_a{goal="pdr"}) without (goal) / on (dut) group_left linerate_b`,
			[]labelReference{{"linerate_a", "goal", "{goal…}"}, {"linerate_a", "goal", "without (goal)"},
				{"linerate_a", "dut", "on (dut)"}, {"linerate_b", "dut", "on (dut)"}}},
		{"an aggregation over other metrics names none of linerate's",
			`sum by (job) (up) * 0 + linerate_a`, nil},
		{"Grafana's label_values",
			`label_values(linerate_a{namespace=~"$namespace"}, percent_of_ndr)`,
			[]labelReference{{"linerate_a", "percent_of_ndr", "label_values(…, percent_of_ndr)"}, {"linerate_a", "namespace", "{namespace…}"}}},
		{"label_values of a label alone", `label_values(namespace)`, nil},
		{"a comment", "linerate_a # {x=\"y\"}\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := labelReferences(c.expr)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("labelReferences(%q)\n got %v\nwant %v", c.expr, got, c.want)
			}
		})
	}
}

// A query it cannot read is an error, not a query with no labels to check.
func TestLabelReferencesErrs(t *testing.T) {
	for _, expr := range []string{
		`linerate_a{namespace=~$namespace}`,
		`linerate_a{namespace="x"`,
		`linerate_a{"x"="y"}`,
		`linerate_a{x="y`,
		`sum by (a (linerate_a)`,
		`linerate_a by (x)`,
		`sum by (x, "y") (linerate_a)`,
		`label_values(linerate_a{x="y"}, )`,
	} {
		if refs, err := labelReferences(expr); err == nil {
			t.Errorf("labelReferences(%q) = %v, want an error", expr, refs)
		}
	}
}
