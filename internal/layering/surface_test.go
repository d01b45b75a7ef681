package layering

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/api/*.txt from the packages' exported surfaces")

// surfacePackages are the module's top-level packages whose exported
// names are a promise to whoever imports them.
var surfacePackages = []string{"connector", "stream", "rebalance", "fetcher", "zkutil"}

// TestExportedSurfaceIsDeliberate: every exported name of the top-level
// packages (declarations, methods, struct fields, interface methods, with
// their types) is listed in testdata/api/<package>.txt, and nothing else
// is. A name added, removed or changed fails the test until the list is
// rewritten (go test ./internal/layering -run TestExportedSurfaceIsDeliberate
// -update), so that a change of what the packages export shows in review
// as a change of that file, and happens on purpose.
func TestExportedSurfaceIsDeliberate(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the module from source")
	}
	for _, p := range surfacePackages {
		pkg, err := fromSource().imp.ImportFrom(module+p, ".", 0)
		if err != nil {
			t.Fatalf("type-checking %s: %v", p, err)
		}
		got := exportedSurface(pkg)
		file := filepath.Join("testdata", "api", strings.ReplaceAll(p, "/", "_")+".txt")
		if *update {
			header := "# The exported surface of " + module + p + ", one name a line.\n" +
				"# Checked by TestExportedSurfaceIsDeliberate (internal/layering); rewrite with -update.\n"
			if err := os.WriteFile(file, []byte(header+strings.Join(got, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("%v (create it with -update)", err)
		}
		var want []string
		for _, l := range strings.Split(string(data), "\n") {
			if l != "" && !strings.HasPrefix(l, "#") {
				want = append(want, l)
			}
		}
		for _, l := range got {
			if !slices.Contains(want, l) {
				t.Errorf("%s exports %q, which %s does not list: unexport it, or add it on purpose (-update)", p, l, file)
			}
		}
		for _, l := range want {
			if !slices.Contains(got, l) {
				t.Errorf("%s lists %q, which %s no longer exports: rewrite the list (-update) if that is meant", file, l, p)
			}
		}
	}
}

// TestNoMutableGlobals: the only exported variables of the top-level
// packages are sentinel errors, compared with errors.Is; no package
// exports state (a map, a setting, a logger) that one importer could
// change for the whole process, as rebalance.InternalTopics once was.
func TestNoMutableGlobals(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the module from source")
	}
	errType := types.Universe.Lookup("error").Type()
	for _, p := range surfacePackages {
		pkg, err := fromSource().imp.ImportFrom(module+p, ".", 0)
		if err != nil {
			t.Fatalf("type-checking %s: %v", p, err)
		}
		for _, name := range pkg.Scope().Names() {
			v, ok := pkg.Scope().Lookup(name).(*types.Var)
			if ok && v.Exported() && !types.Identical(v.Type(), errType) {
				t.Errorf("%s.%s is an exported variable of type %s: make it a constant, a function or unexported", p, name, v.Type())
			}
		}
	}
}

// exportedSurface describes each exported name of pkg on a line of its
// own, sorted.
func exportedSurface(pkg *types.Package) []string {
	qual := types.RelativeTo(pkg)
	var out []string
	for _, name := range pkg.Scope().Names() {
		obj := pkg.Scope().Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch obj := obj.(type) {
		case *types.Const:
			out = append(out, "const "+name+" "+types.TypeString(obj.Type(), qual))
		case *types.Var:
			out = append(out, "var "+name+" "+types.TypeString(obj.Type(), qual))
		case *types.Func:
			out = append(out, "func "+name+strings.TrimPrefix(types.TypeString(obj.Type(), qual), "func"))
		case *types.TypeName:
			if obj.IsAlias() {
				out = append(out, "type "+name+" = "+types.TypeString(types.Unalias(obj.Type()), qual))
				continue
			}
			named := obj.Type().(*types.Named)
			switch u := named.Underlying().(type) {
			case *types.Struct:
				out = append(out, "type "+name+" struct")
				for i := range u.NumFields() {
					if f := u.Field(i); f.Exported() {
						out = append(out, "field "+name+"."+f.Name()+" "+types.TypeString(f.Type(), qual))
					}
				}
			case *types.Interface:
				out = append(out, "type "+name+" interface")
				for i := range u.NumMethods() {
					if m := u.Method(i); m.Exported() {
						out = append(out, "method "+name+"."+m.Name()+strings.TrimPrefix(types.TypeString(m.Type(), qual), "func"))
					}
				}
			default:
				out = append(out, "type "+name+" "+types.TypeString(u, qual))
			}
			for i := range named.NumMethods() {
				m := named.Method(i)
				if !m.Exported() {
					continue
				}
				recv := name
				if _, ok := m.Type().(*types.Signature).Recv().Type().(*types.Pointer); ok {
					recv = "*" + name
				}
				out = append(out, "method ("+recv+") "+m.Name()+strings.TrimPrefix(types.TypeString(m.Type(), qual), "func"))
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestEveryExportedNameHasGodoc: every exported declaration of the
// module's packages outside internal/ (functions, types, methods,
// constants, variables, the fields of exported structs and the methods
// of exported interfaces) has a doc comment, its own or its group's.
func TestEveryExportedNameHasGodoc(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || rel == "internal" || rel == "bench" || rel == "chaos" || rel == "scripts") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil // a program: nothing of it can be imported
		}
		checked++
		for _, missing := range undocumented(fset, f) {
			t.Errorf("%s: %s has no doc comment", fset.Position(missing.Pos()), missing.Name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 40 {
		t.Fatalf("checked only %d files: the walk missed the module", checked)
	}
}

// undocumented returns the exported names declared in f without a doc
// comment. A struct field or interface method is documented by its own
// comment, by the type's doc comment naming it, or by the comment of the
// run of fields it belongs to ("// Host and Port are ..." above two
// fields on consecutive lines).
func undocumented(fset *token.FileSet, f *ast.File) []*ast.Ident {
	var out []*ast.Ident
	fields := func(list *ast.FieldList, typeDoc string) {
		if list == nil {
			return
		}
		covered, lastLine := false, -1
		for _, fl := range list.List {
			line := fset.Position(fl.Pos()).Line
			switch {
			case fl.Doc != nil || fl.Comment != nil:
				covered = true
			case line == lastLine+1 && covered:
			default:
				covered = false
			}
			lastLine = fset.Position(fl.End()).Line
			if covered {
				continue
			}
			for _, n := range fl.Names {
				if n.IsExported() && !mentions(typeDoc, n.Name) {
					out = append(out, n)
				}
			}
		}
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || d.Doc != nil {
				continue
			}
			if d.Recv != nil && !exportedReceiver(d.Recv) {
				continue
			}
			out = append(out, d.Name)
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					doc := s.Doc
					if doc == nil {
						doc = d.Doc
					}
					if doc == nil {
						out = append(out, s.Name)
					}
					switch tt := s.Type.(type) {
					case *ast.StructType:
						fields(tt.Fields, doc.Text())
					case *ast.InterfaceType:
						fields(tt.Methods, doc.Text())
					}
				case *ast.ValueSpec:
					if s.Doc != nil || s.Comment != nil || d.Doc != nil {
						continue
					}
					for _, n := range s.Names {
						if n.IsExported() {
							out = append(out, n)
						}
					}
				}
			}
		}
	}
	return out
}

// mentions reports whether doc names name as a word.
func mentions(doc, name string) bool {
	for _, w := range strings.FieldsFunc(doc, func(r rune) bool {
		return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) {
		if w == name {
			return true
		}
	}
	return false
}

// exportedReceiver reports whether a method's receiver type is exported
// (the methods of unexported types are not in the package's docs).
func exportedReceiver(recv *ast.FieldList) bool {
	typ := recv.List[0].Type
	for {
		switch tt := typ.(type) {
		case *ast.StarExpr:
			typ = tt.X
		case *ast.IndexExpr:
			typ = tt.X
		case *ast.IndexListExpr:
			typ = tt.X
		case *ast.Ident:
			return tt.IsExported()
		default:
			panic(fmt.Sprintf("receiver type %T", typ))
		}
	}
}
