package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestREADMESnippetsUseConnectorAlone type-checks every Go snippet of the
// README and of the user's pages in docs/ that uses only this module: it
// must be a set of declarations that compiles against connector and the
// standard library alone. No snippet, including those of other modules
// (plugin/prometheus), may name another package of ours.
func TestREADMESnippetsUseConnectorAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks connector from source")
	}
	// The packages a snippet may use without an import line of its own:
	// the connector and some of the standard library.
	readmeImports := map[string]string{
		"connector": module + "connector",
		"context":   "context",
		"errors":    "errors",
		"fmt":       "fmt",
		"log":       "log",
		"time":      "time",
	}
	// A use of one of the module's packages other than connector, which
	// an application should not need.
	ourPackages := regexp.MustCompile(`\b(stream|zkutil|rebalance|kafkagroup|fetcher)\.[A-Z]`)

	var blocks []string
	for _, page := range userPages(t) {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, goBlocks(string(data))...)
	}
	if len(blocks) == 0 {
		t.Fatal("no Go snippet found in README.md and docs/")
	}
	fset, imp := fromSource().fset, fromSource().imp
	checked := 0
	for i, b := range blocks {
		if m := ourPackages.FindString(b); m != "" {
			t.Errorf("README snippet %d names %q: applications should need connector alone\n%s", i+1, m, b)
		}
		if strings.HasPrefix(strings.TrimSpace(b), "import ") {
			continue // another module's snippet (plugin/prometheus): not type-checked here
		}
		if strings.HasPrefix(strings.TrimSpace(b), "package ") {
			// A whole program (examples/examples_test builds it): of this
			// module it may import connector alone, and the plugin.
			f, err := parser.ParseFile(fset, "README-program-"+strconv.Itoa(i+1)+".go", b, parser.ImportsOnly)
			if err != nil {
				t.Errorf("README program %d does not parse: %v\n%s", i+1, err, b)
				continue
			}
			for _, spec := range f.Imports {
				path, _ := strconv.Unquote(spec.Path.Value)
				if strings.HasPrefix(path, module) && path != module+"connector" && !strings.HasPrefix(path, module+"plugin/") {
					t.Errorf("README program %d imports %s: applications should need connector alone", i+1, path)
				}
			}
			checked++
			continue
		}
		var src strings.Builder
		src.WriteString("package readme\n\nimport (\n")
		for name, path := range readmeImports {
			src.WriteString("\t" + name + " " + strconv.Quote(path) + "\n")
		}
		src.WriteString(")\n\n" + b)
		f, err := parser.ParseFile(fset, "README-snippet-"+strconv.Itoa(i+1)+".go", src.String(), 0)
		if err != nil {
			t.Errorf("README snippet %d is not a Go declaration list: %v\n%s", i+1, err, b)
			continue
		}
		var errs []string
		conf := types.Config{Importer: imp, Error: func(err error) {
			if !strings.Contains(err.Error(), "imported and not used") { // the test offers every import
				errs = append(errs, err.Error())
			}
		}}
		_, _ = conf.Check("readme", fset, []*ast.File{f}, nil)
		if len(errs) > 0 {
			t.Errorf("README snippet %d does not compile against connector alone:\n%s\n%s", i+1, strings.Join(errs, "\n"), b)
		}
		checked++
	}
	if checked == 0 {
		t.Error("no README snippet was type-checked")
	}
}

// goBlocks returns the contents of the ```go blocks of a Markdown text.
func goBlocks(md string) []string {
	var blocks []string
	for {
		start := strings.Index(md, "```go\n")
		if start < 0 {
			return blocks
		}
		md = md[start+len("```go\n"):]
		end := strings.Index(md, "```")
		if end < 0 {
			return blocks
		}
		blocks = append(blocks, md[:end])
		md = md[end:]
	}
}

// userPages are the pages written for users: the README and docs/*.md
// (docs/RELEASING.md, the maintainers' page, included: it names no test
// either).
func userPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) < 10 {
		t.Fatalf("docs/ has %d pages: %v", len(pages), pages)
	}
	return append([]string{"../../README.md"}, pages...)
}

// sections returns the "## " headings of a Markdown text, outside fenced
// blocks, in order.
func sections(md string) []string {
	var out []string
	fenced := false
	for line := range strings.SplitSeq(md, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if !fenced && strings.HasPrefix(line, "## ") {
			out = append(out, strings.TrimPrefix(line, "## "))
		}
	}
	return out
}

// TestREADMEReadsInUserOrder: the README is a user's page of about 300
// lines, read top to bottom: what zkconsumer is, the two commands that try
// it on a fresh machine (make demo, make test) near the top, then install,
// the example, when a message is consumed and committed, the
// configuration, and links to docs/, where the rest lives, one page per
// topic. Contributor material lives in CONTRIBUTING.md.
func TestREADMEReadsInUserOrder(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	if n := strings.Count(readme, "\n"); n > 300 {
		t.Errorf("the README has %d lines: a user's page has about 300 at most; move the rest to docs/", n)
	}
	lines := strings.Split(readme, "\n")
	top := strings.Join(lines[:min(30, len(lines))], "\n")
	for _, cmd := range []string{"make demo", "make test"} {
		if !strings.Contains(top, cmd) {
			t.Errorf("%q is not in the README's first 30 lines: a new user on a fresh machine must find it there", cmd)
		}
	}
	got := sections(readme)
	order := []string{"Try it", "Install", "Example", "When a message is consumed, and when it is committed", "Configuration", "Documentation"}
	if len(got) == 0 || got[0] != order[0] {
		t.Errorf("the README's first section is not %q (sections: %q)", order[0], got)
	}
	at := -1
	for _, want := range order {
		i := slices.Index(got, want)
		switch {
		case i < 0:
			t.Errorf("the README has no section %q (sections: %q)", want, got)
		case i < at:
			t.Errorf("the README's section %q comes before %q (sections: %q)", want, got[at], got)
		default:
			at = i
		}
	}
	// The topics that moved out of the README, each a page of docs/ that
	// the README links to.
	for _, page := range []string{
		"configuration", "consuming", "production", "rebalancing", "safety", "security", "tuning",
		"metrics", "kafka-mode", "moving-off-zookeeper", "tools", "zookeeper-layout", "supported-brokers",
	} {
		link := "(docs/" + page + ".md)"
		if _, err := os.Stat("../../docs/" + page + ".md"); err != nil {
			t.Errorf("docs/%s.md: %v", page, err)
		}
		if !strings.Contains(readme, link) {
			t.Errorf("the README does not link to docs/%s.md", page)
		}
	}
	for _, other := range []string{"RELIABILITY.md", "BENCHMARKS.md", "CONTRIBUTING.md"} {
		if !strings.Contains(readme, "("+other+")") {
			t.Errorf("the README does not link to %s", other)
		}
		if _, err := os.Stat("../../" + other); err != nil {
			t.Error(err)
		}
	}
}

// TestUserPagesNameNoTests: the README and docs/ are written for users;
// the evidence behind their claims is in the tests, RELIABILITY.md and
// BENCHMARKS.md, and their pages name no test function and no test file.
func TestUserPagesNameNoTests(t *testing.T) {
	testName := regexp.MustCompile(`\bTest[A-Z][A-Za-z0-9_]*|\b[a-z0-9_]+_test\.go\b|\bkafka_compat\*_test`)
	for _, page := range userPages(t) {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if m := testName.FindString(line); m != "" {
				t.Errorf("%s:%d names %q: keep evidence in the tests, RELIABILITY.md and BENCHMARKS.md", filepath.Base(page), i+1, m)
			}
		}
	}
}

// TestUserPagesLinksResolve: every relative link of the README and docs/
// leads to a file of the repository and, with a #fragment, to one of its
// headings (GitHub's anchors).
func TestUserPagesLinksResolve(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	links := 0
	for _, page := range userPages(t) {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		fenced := false
		for i, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "```") {
				fenced = !fenced
			}
			if fenced {
				continue
			}
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				file, frag, _ := strings.Cut(target, "#")
				path := page
				if file != "" {
					path = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
				}
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: link %s: %v", filepath.Base(page), i+1, target, err)
					continue
				}
				if frag == "" {
					continue
				}
				target_, err := os.ReadFile(path)
				if err != nil {
					t.Errorf("%s:%d: link %s: %v", filepath.Base(page), i+1, target, err)
					continue
				}
				if !slices.Contains(anchors(string(target_)), frag) {
					t.Errorf("%s:%d: link %s: no heading of %s has the anchor #%s (anchors: %q)",
						filepath.Base(page), i+1, target, filepath.Base(path), frag, anchors(string(target_)))
				}
			}
		}
	}
	if links < 30 {
		t.Fatalf("only %d relative links found in the README and docs/: the walk missed them", links)
	}
}

// anchors returns the GitHub anchors of a Markdown text's headings:
// lower-cased, punctuation but '-' and '_' dropped, spaces turned into '-'.
func anchors(md string) []string {
	var out []string
	fenced := false
	for line := range strings.SplitSeq(md, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// TestShutdownGetsItsOwnContext: in the programs of the README and docs/, the examples,
// the Prometheus example and the tools, every ConsumerConnector.Shutdown
// (and any other Shutdown) is given a context made for it, with a timeout
// or deadline on context.Background(), never the context that stopped
// the program, which is cancelled by then and would cut the last commit
// short.
func TestShutdownGetsItsOwnContext(t *testing.T) {
	fset := token.NewFileSet()
	var files []*ast.File
	for _, page := range userPages(t) {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for i, b := range goBlocks(string(data)) {
			if !strings.HasPrefix(strings.TrimSpace(b), "package ") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Base(page)+"-program-"+strconv.Itoa(i+1)+".go", b, 0)
			if err != nil {
				t.Fatalf("%s program %d: %v", filepath.Base(page), i+1, err)
			}
			files = append(files, f)
		}
	}
	paths, err := filepath.Glob("../../examples/*/main.go")
	if err != nil {
		t.Fatal(err)
	}
	paths = append(paths, "../../plugin/prometheus/example/main.go")
	more, err := filepath.Glob("../../cmd/*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(paths, more...) {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	calls := 0
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Shutdown" || len(call.Args) != 1 {
				return true
			}
			calls++
			if !ownShutdownContext(call.Args[0]) {
				t.Errorf("%s: %s is not given a context of its own (context.WithTimeout or WithDeadline on context.Background())",
					fset.Position(call.Pos()), types.ExprString(call))
			}
			return true
		})
	}
	if calls < 8 {
		t.Fatalf("only %d Shutdown calls found: the walk missed the programs", calls)
	}
}

// ownShutdownContext reports whether arg is a variable declared, in the
// same file, by `x, cancel := context.WithTimeout(context.Background(),
// ...)` or WithDeadline.
func ownShutdownContext(arg ast.Expr) bool {
	id, ok := arg.(*ast.Ident)
	if !ok || id.Obj == nil {
		return false
	}
	as, ok := id.Obj.Decl.(*ast.AssignStmt)
	if !ok || len(as.Rhs) != 1 {
		return false
	}
	call, ok := as.Rhs[0].(*ast.CallExpr)
	if !ok || len(call.Args) < 1 {
		return false
	}
	fn := types.ExprString(call.Fun)
	return (fn == "context.WithTimeout" || fn == "context.WithDeadline") && types.ExprString(call.Args[0]) == "context.Background()"
}
