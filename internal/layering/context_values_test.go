package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// contextValues lists every key of a context value the module's code may
// set or read, as "package.keyType", with what the value is. None carries
// a fence.
var contextValues = map[string]string{
	"connector.listenerKey": "the *ConsumerConnector calling a RebalanceListener, so that Shutdown from the listener does not wait for itself",
	"zkgroup.handlerKey":    "the *Member calling a Handler, so that Close from the handler does not wait for itself",
}

// fenceWords are what the name of a key, or the expression of a value,
// that carries a fence says: a ZooKeeper session a write is bound to, a
// lease, a fence of Kafka commits.
var fenceWords = regexp.MustCompile(`(?i)fenc|session|bound|lease`)

// TestNoFenceInContextValues: a write that must happen in one ZooKeeper
// session takes that session's handle (zksession.Bound), and a Kafka
// commit its fence as a parameter (coordinator.Client.CommitFenced), so
// that a signature says what is fenced; none travels in a context value,
// where nothing says which calls are fenced and a context that lost the
// value (context.WithoutCancel keeps it, a fresh context.Background does
// not) silently unfences a write. So every context.WithValue and every
// ctx.Value(key{}) in the module's non-test code uses a key listed in
// contextValues, and no key or value names a session, a lease, a binding,
// or a fence.
func TestNoFenceInContextValues(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		for _, p := range contextValueProblems(t, path) {
			t.Errorf("%s: %s", filepath.ToSlash(rel), p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// contextValueProblems returns what is wrong with the context values the
// Go file at path sets or reads.
func contextValueProblems(t *testing.T, path string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	contextName := ""
	for _, im := range f.Imports {
		if p, _ := strconv.Unquote(im.Path.Value); p == "context" {
			contextName = "context"
			if im.Name != nil {
				contextName = im.Name.Name
			}
		}
	}
	var problems []string
	check := func(pos token.Pos, what string, key ast.Expr, value ast.Expr) {
		name := keyName(key)
		at := fset.Position(pos).Line
		if _, ok := contextValues[f.Name.Name+"."+name]; !ok {
			problems = append(problems, "line "+strconv.Itoa(at)+": "+what+" with key "+types.ExprString(key)+
				", which contextValues does not list: pass what it carries as a parameter or a handle instead")
		}
		for _, e := range []ast.Expr{key, value} {
			if e != nil && fenceWords.MatchString(types.ExprString(e)) {
				problems = append(problems, "line "+strconv.Itoa(at)+": "+what+" carries "+types.ExprString(e)+
					", which looks like a fence: take a zksession.Bound or a fence parameter instead")
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		switch {
		case contextName != "" && selector(call.Fun) == contextName+".WithValue" && len(call.Args) == 3:
			check(call.Pos(), "context.WithValue", call.Args[1], call.Args[2])
		case sel.Sel.Name == "Value" && len(call.Args) == 1 && isKeyLiteral(call.Args[0]):
			check(call.Pos(), "Value", call.Args[0], nil)
		}
		return true
	})
	return problems
}

// keyName is the name of a key's type (fooKey for fooKey{}) or, for
// another expression, its text.
func keyName(e ast.Expr) string {
	if lit, ok := e.(*ast.CompositeLit); ok {
		if id, ok := lit.Type.(*ast.Ident); ok {
			return id.Name
		}
	}
	return types.ExprString(e)
}

// isKeyLiteral reports whether e is a composite literal of a named type
// with no fields given (key{}), the idiom of a context key.
func isKeyLiteral(e ast.Expr) bool {
	lit, ok := e.(*ast.CompositeLit)
	if !ok || len(lit.Elts) > 0 {
		return false
	}
	_, named := lit.Type.(*ast.Ident)
	return named
}
