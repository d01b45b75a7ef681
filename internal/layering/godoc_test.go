package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestSettableTypesShowTheirFields: `go doc ./connector <Type>` lists the
// fields of every struct an application fills in: Config, the structs its
// fields lead to (SecurityConfig, ...), and the structs an application
// returns from the interfaces it implements for them (a TokenProvider's
// AccessToken). Such a type must be declared in connector; an alias of a
// type declared elsewhere shows no fields there.
func TestSettableTypesShowTheirFields(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks connector from source")
	}
	pkg, err := fromSource().imp.ImportFrom(module+"connector", ".", 0)
	if err != nil {
		t.Fatalf("type-checking connector: %v", err)
	}
	seen := map[types.Type]bool{}
	var visit func(typ types.Type, via string)
	visit = func(typ types.Type, via string) {
		if seen[typ] {
			return
		}
		seen[typ] = true
		switch u := typ.(type) {
		case *types.Alias:
			visit(types.Unalias(u), via)
		case *types.Pointer:
			visit(u.Elem(), via)
		case *types.Slice:
			visit(u.Elem(), via)
		case *types.Map:
			visit(u.Elem(), via)
		case *types.Named:
			obj := u.Obj()
			if obj.Pkg() == nil || isStd(obj.Pkg().Path()) {
				return
			}
			switch under := u.Underlying().(type) {
			case *types.Struct:
				if obj.Pkg() != pkg {
					t.Errorf("%s (via %s) is set by applications but declared in %s: go doc ./connector shows no fields of it", obj.Name(), via, obj.Pkg().Path())
				}
				for i := range under.NumFields() {
					if f := under.Field(i); f.Exported() {
						visit(f.Type(), via+"."+f.Name())
					}
				}
			case *types.Interface:
				// The application implements it: what it returns, it fills in.
				for i := range under.NumMethods() {
					res := under.Method(i).Type().(*types.Signature).Results()
					for j := range res.Len() {
						visit(res.At(j).Type(), via+"."+under.Method(i).Name())
					}
				}
			}
		}
	}
	visit(pkg.Scope().Lookup("Config").Type(), "Config")
	if !seen[types.NewPointer(pkg.Scope().Lookup("AccessToken").Type())] && !seen[pkg.Scope().Lookup("AccessToken").Type()] {
		t.Errorf("the walk from Config did not reach AccessToken: it no longer follows what applications fill in")
	}
}

// TestZooKeeperIsSpelledOneWay: every identifier this module exports
// spells ZooKeeper as the project does, never Zookeeper (Kafka's own class
// names, quoted in comments, aside).
func TestZooKeeperIsSpelledOneWay(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	checked := 0
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
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			var names []*ast.Ident
			switch n := n.(type) {
			case *ast.FuncDecl:
				names = append(names, n.Name)
			case *ast.TypeSpec:
				names = append(names, n.Name)
			case *ast.ValueSpec:
				names = append(names, n.Names...)
			case *ast.Field:
				names = append(names, n.Names...)
			}
			for _, id := range names {
				if id.IsExported() && strings.Contains(id.Name, "Zookeeper") {
					t.Errorf("%s: %s: spell it ZooKeeper", fset.Position(id.Pos()), id.Name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked only %d files: the walk missed the module", checked)
	}
}
