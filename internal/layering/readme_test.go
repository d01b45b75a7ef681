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
)

// TestREADMESnippetsUseConnectorAlone type-checks every Go snippet of the
// README that uses only this module: it must be a set of declarations
// that compiles against connector and the standard library alone. No
// snippet, including those of other modules (plugin/prometheus), may name
// another package of ours.
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

	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := goBlocks(string(data))
	if len(blocks) == 0 {
		t.Fatal("no Go snippet found in README.md")
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

// TestREADMEReadsInUserOrder: the README is for users first. Its first
// section is Install, and the user's sections come in the order a user
// needs them: install, example, configuration, production, metrics,
// moving off ZooKeeper. Contributor material lives in CONTRIBUTING.md.
func TestREADMEReadsInUserOrder(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var sections []string
	fenced := false
	for line := range strings.SplitSeq(string(data), "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if !fenced && strings.HasPrefix(line, "## ") {
			sections = append(sections, strings.TrimPrefix(line, "## "))
		}
	}
	order := []string{"Install", "Example", "Configuration", "Running in production", "Metrics and alerts", "Moving off ZooKeeper"}
	if len(sections) == 0 || sections[0] != order[0] {
		t.Errorf("the README's first section is not %q (sections: %q)", order[0], sections)
	}
	at := -1
	for _, want := range order {
		i := slices.Index(sections, want)
		switch {
		case i < 0:
			t.Errorf("the README has no section %q (sections: %q)", want, sections)
		case i < at:
			t.Errorf("the README's section %q comes before %q (sections: %q)", want, sections[at], sections)
		default:
			at = i
		}
	}
	if _, err := os.Stat("../../CONTRIBUTING.md"); err != nil {
		t.Fatalf("contributor material belongs in CONTRIBUTING.md: %v", err)
	}
}

// TestShutdownGetsItsOwnContext: in the README's programs, the examples,
// the Prometheus example and the tools, every ConsumerConnector.Shutdown
// (and any other Shutdown) is given a context made for it, with a timeout
// or deadline on context.Background(), never the context that stopped
// the program, which is cancelled by then and would cut the last commit
// short.
func TestShutdownGetsItsOwnContext(t *testing.T) {
	fset := token.NewFileSet()
	var files []*ast.File
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range goBlocks(string(data)) {
		if !strings.HasPrefix(strings.TrimSpace(b), "package ") {
			continue
		}
		f, err := parser.ParseFile(fset, "README-program-"+strconv.Itoa(i+1)+".go", b, 0)
		if err != nil {
			t.Fatalf("README program %d: %v", i+1, err)
		}
		files = append(files, f)
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
