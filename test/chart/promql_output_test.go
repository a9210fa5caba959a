package chart

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// queryResult is what a query returns: the labels of its series (metricName: they keep their
// __name__), or a scalar.
type queryResult struct {
	labels     map[string]bool
	metricName bool
	scalar     bool
}

// labelsPreserving are the functions whose result keeps the labels of their vector argument (without
// its __name__): the ones the dashboard and the alerts use.
var labelsPreserving = map[string]bool{"rate": true, "increase": true, "irate": true, "delta": true, "changes": true,
	"resets": true, "deriv": true, "abs": true, "ceil": true, "floor": true, "round": true, "clamp_min": true,
	"clamp_max": true, "max_over_time": true, "min_over_time": true, "avg_over_time": true, "last_over_time": true}

// arithmetic are the binary operators whose result drops the metric name; the comparisons without
// bool and the set operators keep the left side's series as they are.
var arithmetic = map[string]bool{"+": true, "-": true, "*": true, "/": true, "%": true, "^": true}

// queryLabels reads which labels the series of a query carry, from the labels each linerate_* metric is
// exported with (carried). Like labelReferences it reads only the PromQL the dashboard and the alerts
// use, and errs on the rest, so that no query goes unchecked.
func queryLabels(expr string, carried map[string]map[string]bool) (queryResult, error) {
	toks, err := promqlTokens(expr)
	if err != nil {
		return queryResult{}, err
	}
	r := resultReader{toks: toks, carried: carried}
	res, err := r.expression()
	if err != nil {
		return queryResult{}, err
	}
	if r.at < len(toks) {
		return queryResult{}, fmt.Errorf("cannot read %q", joinTokens(toks[r.at:]))
	}
	return res, nil
}

type resultReader struct {
	toks    []promqlToken
	at      int
	carried map[string]map[string]bool
}

func (r *resultReader) peek() promqlToken {
	if r.at < len(r.toks) {
		return r.toks[r.at]
	}
	return promqlToken{}
}

// expression reads operands joined by binary operators (left to right: precedence does not change
// which labels the dashboard's and alerts' expressions return).
func (r *resultReader) expression() (queryResult, error) {
	left, err := r.operand()
	if err != nil {
		return left, err
	}
	for r.at < len(r.toks) && r.peek().kind != ')' && r.peek().kind != ',' {
		op := r.peek().text
		r.at++
		if r.peek().text == "bool" {
			return queryResult{}, fmt.Errorf("bool modifiers are not read")
		}
		matching, matched := "", []string(nil)
		if t := r.peek().text; t == "on" || t == "ignoring" {
			r.at++
			list, err := r.labelList()
			if err != nil {
				return queryResult{}, err
			}
			matching, matched = t, list
		}
		if t := r.peek().text; t == "group_left" || t == "group_right" {
			return queryResult{}, fmt.Errorf("%s is not read", t)
		}
		right, err := r.operand()
		if err != nil {
			return left, err
		}
		switch {
		case op == "and" || op == "or" || op == "unless":
			if op == "or" && !reflect.DeepEqual(left.labels, right.labels) {
				return queryResult{}, fmt.Errorf("or of series with different labels is not read")
			}
		case !arithmetic[op] && op != "==" && op != "!=" && op != "<" && op != ">" && op != "<=" && op != ">=":
			return queryResult{}, fmt.Errorf("cannot read the operator %q", op)
		case left.scalar:
			left = right
			if arithmetic[op] {
				left.metricName = false
			}
		case arithmetic[op]:
			left.metricName = false
		}
		// one-to-one matching of vectors (arithmetic, comparison): on (…) keeps only those labels,
		// ignoring (…) drops them; the set operators keep the left side's series as they are
		if op != "and" && op != "or" && op != "unless" && !right.scalar && matching != "" {
			kept := map[string]bool{}
			for l := range left.labels {
				if slices.Contains(matched, l) == (matching == "on") {
					kept[l] = true
				}
			}
			left.labels = kept
			if matching == "on" {
				left.metricName = false // kept only if listed
			}
		}
	}
	return left, nil
}

// operand reads a number, a selector, a function call, an aggregation or a parenthesised expression.
func (r *resultReader) operand() (queryResult, error) {
	tok := r.peek()
	switch {
	case tok.kind == 'n':
		r.at++
		return queryResult{scalar: true}, nil
	case (tok.kind == '-' || tok.kind == '+') && r.at+1 < len(r.toks) && r.toks[r.at+1].kind == 'n':
		r.at += 2
		return queryResult{scalar: true}, nil
	case tok.kind == '(':
		r.at++
		res, err := r.expression()
		if err != nil {
			return res, err
		}
		return res, r.expect(')')
	case tok.kind == 'i' && aggregations[tok.text]:
		return r.aggregation()
	case tok.kind == 'i' && strings.HasPrefix(tok.text, "linerate_"):
		return r.selector()
	case tok.kind == 'i' && labelsPreserving[tok.text]:
		r.at++
		if err := r.expect('('); err != nil {
			return queryResult{}, err
		}
		res, err := r.expression()
		if err != nil {
			return res, err
		}
		for r.peek().kind == ',' { // clamp_min(v, 0): the further arguments are scalars
			r.at++
			if _, err := r.operand(); err != nil {
				return res, err
			}
		}
		res.metricName = false
		return res, r.expect(')')
	}
	return queryResult{}, fmt.Errorf("cannot read %q", joinTokens(r.toks[r.at:]))
}

func (r *resultReader) expect(kind rune) error {
	if r.peek().kind != kind {
		return fmt.Errorf("expected %q at %q", kind, joinTokens(r.toks[r.at:]))
	}
	r.at++
	return nil
}

// selector reads metric{…}[range] offset d.
func (r *resultReader) selector() (queryResult, error) {
	name := r.peek().text
	r.at++
	labels, ok := r.carried[name]
	if !ok {
		labels, ok = r.carried[strings.TrimSuffix(name, "_total")]
	}
	if !ok {
		return queryResult{}, fmt.Errorf("%s is not exported", name)
	}
	if r.peek().kind == '{' {
		_, end, err := selectorMatchers(r.toks, r.at)
		if err != nil {
			return queryResult{}, err
		}
		r.at = end + 1
	}
	if r.peek().kind == '[' {
		for r.at < len(r.toks) && r.peek().kind != ']' {
			r.at++
		}
		if err := r.expect(']'); err != nil {
			return queryResult{}, err
		}
	}
	if r.peek().text == "offset" {
		r.at += 2
	}
	out := map[string]bool{}
	for l := range labels {
		out[l] = true
	}
	return queryResult{labels: out, metricName: true}, nil
}

// aggregation reads agg [by|without (…)] (expr) [by|without (…)].
func (r *resultReader) aggregation() (queryResult, error) {
	r.at++
	clause, list := "", []string(nil)
	readClause := func() error {
		if t := r.peek().text; t == "by" || t == "without" {
			r.at++
			l, err := r.labelList()
			clause, list = t, l
			return err
		}
		return nil
	}
	if err := readClause(); err != nil {
		return queryResult{}, err
	}
	if err := r.expect('('); err != nil {
		return queryResult{}, err
	}
	inner, err := r.expression()
	if err != nil {
		return inner, err
	}
	if err := r.expect(')'); err != nil {
		return queryResult{}, err
	}
	if clause == "" {
		if err := readClause(); err != nil {
			return queryResult{}, err
		}
	}
	out := map[string]bool{}
	switch clause {
	case "by":
		for _, l := range list {
			out[l] = true
		}
	case "without":
		for l := range inner.labels {
			if !slices.Contains(list, l) {
				out[l] = true
			}
		}
	}
	return queryResult{labels: out}, nil
}

// labelList reads (a, b, …).
func (r *resultReader) labelList() ([]string, error) {
	if err := r.expect('('); err != nil {
		return nil, err
	}
	var labels []string
	for r.peek().kind != ')' {
		switch tok := r.peek(); tok.kind {
		case 'i':
			labels = append(labels, tok.text)
		case ',':
		default:
			return nil, fmt.Errorf("cannot read the label list at %q", joinTokens(r.toks[r.at:]))
		}
		r.at++
		if r.at >= len(r.toks) {
			return nil, fmt.Errorf("no closing parenthesis in a label list")
		}
	}
	r.at++
	return labels, nil
}

func TestQueryLabels(t *testing.T) {
	carried := map[string]map[string]bool{
		"linerate_a":       {"x": true, "y": true, "s": true},
		"linerate_b_total": {"x": true, "o": true},
	}
	cases := []struct {
		expr   string
		labels []string
		name   bool
	}{
		{`linerate_a{x="1"}`, []string{"s", "x", "y"}, true},
		{`linerate_a == 1`, []string{"s", "x", "y"}, true},
		{`linerate_a * 1000`, []string{"s", "x", "y"}, false},
		{`linerate_a < -0.05`, []string{"s", "x", "y"}, true},
		{`sum without () (linerate_a)`, []string{"s", "x", "y"}, false},
		{`sum without (s) (linerate_a{s="p99"}) * 1000`, []string{"x", "y"}, false},
		{`max(linerate_a) by (x)`, []string{"x"}, false},
		{`60 * rate(linerate_b_total{x=~"$x"}[2m])`, []string{"o", "x"}, false},
		{`sum by (x, o) (increase(linerate_b_total[5m]))`, []string{"o", "x"}, false},
		{`linerate_a == 1 and on (x) changes(linerate_b_total[2h]) == 0`, []string{"s", "x", "y"}, true},
		{"max by (x) (linerate_a)\n < 0.9 * max by (x) (max_over_time(linerate_a[7d] offset 1h))", []string{"x"}, false},
		{`linerate_a / on (x, y) linerate_a`, []string{"x", "y"}, false},
		{`linerate_a > ignoring (s) linerate_a`, []string{"x", "y"}, true},
	}
	for _, c := range cases {
		got, err := queryLabels(c.expr, carried)
		if err != nil {
			t.Errorf("queryLabels(%q): %v", c.expr, err)
			continue
		}
		if k := keys(got.labels); !reflect.DeepEqual(k, c.labels) || got.metricName != c.name {
			t.Errorf("queryLabels(%q) = %v (name %v), want %v (name %v)", c.expr, k, got.metricName, c.labels, c.name)
		}
	}
	for _, expr := range []string{`linerate_z`, `label_replace(linerate_a, "a", "b", "c", "d")`, `linerate_a / on (x) group_left linerate_a`} {
		if got, err := queryLabels(expr, carried); err == nil {
			t.Errorf("queryLabels(%q) = %v, want an error", expr, got)
		}
	}
}
