// Package check tests the monitoring files of plugin/prometheus: the
// alerting and recording rules parse and validate as Prometheus loads them
// (rulefmt, what `promtool check rules` runs), every metric and label they
// and the Grafana dashboard use is one the Collector exports
// (../metrics.txt, which plugin/prometheus's TestMetricsList keeps true) or
// one a recording rule makes, each alert fires on the series of the
// failure it is for and stays quiet on healthy ones (Prometheus's own
// PromQL engine evaluates them), and each alias has the name and labels of
// the exporter it stands in for.
package check

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	alertsFile    = "../alerts.yml"
	recordingFile = "../recording.yml"
	dashboardFile = "../dashboard.json"
	metricsFile   = "../metrics.txt"
)

var pql = parser.NewParser(parser.Options{})

// exported reads ../metrics.txt: every series name the Collector exports
// (a histogram's _bucket, _sum and _count) with its labels.
func exported(t *testing.T) map[string][]string {
	t.Helper()
	f, err := os.Open(metricsFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 3 {
			t.Fatalf("%s: %q is not `name type labels`", metricsFile, line)
		}
		name, typ, lbls := fields[0], fields[1], strings.Split(fields[2], ",")
		if typ == "histogram" {
			out[name+"_bucket"] = append(slices.Clone(lbls), "le")
			out[name+"_sum"] = lbls
			out[name+"_count"] = lbls
			continue
		}
		out[name] = lbls
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) < 20 {
		t.Fatalf("%s lists %d series names", metricsFile, len(out))
	}
	return out
}

// loadRules parses a rule file as Prometheus does when it loads it
// (promtool check rules: strict YAML, legacy metric and label names, every
// expression and template parsed).
func loadRules(t *testing.T, file string) *rulefmt.RuleGroups {
	t.Helper()
	groups, errs := rulefmt.ParseFile(file, false, model.LegacyValidation, pql, nil)
	for _, err := range errs {
		t.Errorf("%v", err)
	}
	if groups == nil || len(groups.Groups) == 0 {
		t.Fatalf("%s: no rule group", file)
	}
	return groups
}

// known is what an expression may select: the exported series and the
// recorded ones, with their labels (nil: not known, not checked).
func known(t *testing.T) map[string][]string {
	t.Helper()
	out := exported(t)
	for _, g := range loadRules(t, recordingFile).Groups {
		for _, r := range g.Rules {
			expr, err := pql.ParseExpr(r.Expr)
			if err != nil {
				t.Fatalf("%s: %v", r.Record, err)
			}
			out[r.Record] = outputLabels(expr)
		}
	}
	return out
}

// outputLabels are the labels of an aggregation by (...)'s result; nil
// when they are not evident from the expression.
func outputLabels(expr parser.Expr) []string {
	if a, ok := expr.(*parser.AggregateExpr); ok && !a.Without && a.Op != parser.TOPK && a.Op != parser.BOTTOMK {
		return a.Grouping
	}
	return nil
}

// checkExpr fails the test for every series name expr selects that is
// neither exported nor recorded, every label a selector matches on that
// its series does not have, and every label an aggregation or a vector
// match names that none of the series below it has (label_replace's
// targets count).
func checkExpr(t *testing.T, where, expr string, names map[string][]string) {
	t.Helper()
	e, err := pql.ParseExpr(expr)
	if err != nil {
		t.Errorf("%s: %v", where, err)
		return
	}
	var walk func(n parser.Node) (labels []string, complete bool)
	walk = func(n parser.Node) ([]string, bool) {
		switch n := n.(type) {
		case *parser.VectorSelector:
			lbls, ok := names[n.Name]
			if !ok {
				t.Errorf("%s: %s is neither exported (%s) nor recorded (%s)", where, n.Name, metricsFile, recordingFile)
				return nil, false
			}
			for _, m := range n.LabelMatchers {
				if m.Name != labels.MetricName && lbls != nil && !slices.Contains(lbls, m.Name) && !scrapeLabel(m.Name) {
					t.Errorf("%s: %s has no label %q (it has %v)", where, n.Name, m.Name, lbls)
				}
			}
			return lbls, lbls != nil
		case *parser.Call:
			var all []string
			complete := true
			for _, a := range n.Args {
				l, c := walk(a)
				all, complete = append(all, l...), complete && c
			}
			if n.Func.Name == "label_replace" {
				if dst, ok := n.Args[1].(*parser.StringLiteral); ok {
					all = append(all, dst.Val)
				}
			}
			return all, complete
		case *parser.AggregateExpr:
			l, complete := walk(n.Expr)
			if n.Param != nil {
				walk(n.Param)
			}
			if complete {
				for _, g := range n.Grouping {
					if !slices.Contains(l, g) && !scrapeLabel(g) {
						t.Errorf("%s: %s by/without %q: no series below has it (%v)", where, n.Op, g, l)
					}
				}
			}
			if !n.Without && n.Op != parser.TOPK && n.Op != parser.BOTTOMK {
				return n.Grouping, true
			}
			return l, complete
		case *parser.BinaryExpr:
			l1, c1 := walk(n.LHS)
			l2, c2 := walk(n.RHS)
			if n.VectorMatching != nil && c1 && c2 {
				for _, m := range append(slices.Clone(n.VectorMatching.MatchingLabels), n.VectorMatching.Include...) {
					if !slices.Contains(l1, m) && !slices.Contains(l2, m) && !scrapeLabel(m) {
						t.Errorf("%s: on/ignoring/group %q: neither side has it (%v, %v)", where, m, l1, l2)
					}
				}
			}
			return append(l1, l2...), c1 && c2
		case *parser.ParenExpr:
			return walk(n.Expr)
		case *parser.UnaryExpr:
			return walk(n.Expr)
		case *parser.MatrixSelector:
			return walk(n.VectorSelector)
		case *parser.SubqueryExpr:
			return walk(n.Expr)
		case *parser.StepInvariantExpr:
			return walk(n.Expr)
		}
		return nil, true // literals
	}
	walk(e)
}

// scrapeLabel reports whether name is a label Prometheus adds to every
// series it scrapes.
func scrapeLabel(name string) bool { return name == "job" || name == "instance" }

// TestRulesAreValid: both files load as Prometheus loads them, names are
// unique, and every alert says how bad it is and what it means.
func TestRulesAreValid(t *testing.T) {
	for _, file := range []string{alertsFile, recordingFile} {
		seen := map[string]bool{}
		for _, g := range loadRules(t, file).Groups {
			if seen["group "+g.Name] {
				t.Errorf("%s: group %s twice", file, g.Name)
			}
			seen["group "+g.Name] = true
			for _, r := range g.Rules {
				name := r.Alert + r.Record
				if r.Record != "" && seen[name] {
					t.Errorf("%s: %s recorded twice", file, name)
				}
				seen[name] = true
				if r.Alert == "" {
					continue
				}
				if sev := r.Labels["severity"]; sev != "warning" && sev != "critical" {
					t.Errorf("%s: %s: severity %q, want warning or critical", file, r.Alert, sev)
				}
				for _, a := range []string{"summary", "description"} {
					if r.Annotations[a] == "" {
						t.Errorf("%s: %s has no %s", file, r.Alert, a)
					}
				}
			}
		}
	}
}

// TestRulesUseExportedMetrics: every series the rules select is exported
// or recorded, with the labels they match and group on.
func TestRulesUseExportedMetrics(t *testing.T) {
	names := known(t)
	for _, file := range []string{alertsFile, recordingFile} {
		for _, g := range loadRules(t, file).Groups {
			for _, r := range g.Rules {
				checkExpr(t, fmt.Sprintf("%s: %s%s", file, r.Alert, r.Record), r.Expr, names)
			}
		}
	}
}

// grafanaVars are values for the dashboard's variables, so that its
// queries parse as Prometheus would receive them.
var grafanaVars = strings.NewReplacer(
	"$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h",
	"${group}", "orders", "$group", "orders",
	"${client_id}", "orders", "$client_id", "orders",
)

// labelValues is Grafana's label_values(selector, label) variable query.
var labelValues = regexp.MustCompile(`^label_values\((.+),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$`)

// TestDashboard: the dashboard is valid JSON with unique panel ids, every
// panel uses the datasource variable, and every query (panels and
// variables) selects exported or recorded series with labels they have.
func TestDashboard(t *testing.T) {
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title, UID string
		Panels     []struct {
			ID         int
			Type       string
			Title      string
			Datasource struct{ Type, UID string }
			GridPos    struct{ H, W, X, Y int }
			Targets    []struct {
				Expr  string
				RefID string `json:"refId"`
			}
		}
		Templating struct {
			List []struct {
				Name, Type string
				Query      json.RawMessage
			}
		}
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if dash.Title == "" || dash.UID == "" {
		t.Errorf("%s: no title or uid", dashboardFile)
	}
	names := known(t)
	ids := map[int]bool{}
	var queries int
	for _, p := range dash.Panels {
		where := fmt.Sprintf("%s: panel %d %q", dashboardFile, p.ID, p.Title)
		if ids[p.ID] || p.ID == 0 {
			t.Errorf("%s: id 0 or used twice", where)
		}
		ids[p.ID] = true
		if p.Title == "" || p.GridPos.W == 0 || p.GridPos.H == 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("%s: no title or a bad position %+v", where, p.GridPos)
		}
		if p.Type == "row" {
			continue
		}
		if p.Datasource.UID != "${datasource}" || p.Datasource.Type != "prometheus" {
			t.Errorf("%s: datasource %+v, want the ${datasource} variable", where, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("%s: no query", where)
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			if refs[tg.RefID] || tg.RefID == "" {
				t.Errorf("%s: refId %q empty or used twice", where, tg.RefID)
			}
			refs[tg.RefID] = true
			checkExpr(t, where, grafanaVars.Replace(tg.Expr), names)
			queries++
		}
	}
	for _, v := range dash.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct{ Query string }
		if err := json.Unmarshal(v.Query, &q); err != nil {
			t.Fatalf("variable %s: %v", v.Name, err)
		}
		m := labelValues.FindStringSubmatch(q.Query)
		if m == nil {
			t.Errorf("variable %s: %q is not label_values(selector, label)", v.Name, q.Query)
			continue
		}
		selector := grafanaVars.Replace(m[1])
		checkExpr(t, "variable "+v.Name, selector, names)
		e, err := pql.ParseExpr(selector)
		if err != nil {
			continue // reported by checkExpr
		}
		if vs, ok := e.(*parser.VectorSelector); ok && !slices.Contains(names[vs.Name], m[2]) {
			t.Errorf("variable %s: %s has no label %s", v.Name, vs.Name, m[2])
		}
		queries++
	}
	if queries < 20 {
		t.Errorf("%s: %d queries", dashboardFile, queries)
	}
}

// The rule files are where the README and doc.go say they are, next to
// this module.
func TestFilesInPlace(t *testing.T) {
	for _, f := range []string{alertsFile, recordingFile, dashboardFile, metricsFile} {
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
	abs, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(filepath.ToSlash(abs), "plugin/prometheus/monitoring") {
		t.Errorf("the monitoring files are in %s", abs)
	}
}

// eval runs expr at ts on the series of st.
func (st *store) eval(t *testing.T, expr string, ts time.Time) []sampleOut {
	t.Helper()
	q, err := engine.NewInstantQuery(context.Background(), st.queryable(), nil, expr, ts)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	defer q.Close()
	res := q.Exec(context.Background())
	vec, err := res.Vector()
	if err != nil {
		t.Fatalf("%s at %v: %v", expr, ts, err)
	}
	out := make([]sampleOut, 0, len(vec))
	for _, s := range vec {
		if math.IsNaN(s.F) {
			continue
		}
		out = append(out, sampleOut{labels: s.Metric, value: s.F})
	}
	return out
}

// sampleOut is one element of an instant vector.
type sampleOut struct {
	labels labels.Labels
	value  float64
}
