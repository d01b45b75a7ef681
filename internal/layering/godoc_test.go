package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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

// TestGodocNamesNoFileOrInternalPackage: the godoc of the top-level
// packages (each package comment, and the doc comments of every exported
// name, field and interface method) names no Go file ("kafka_group.go")
// and no package a user cannot import (anything under internal/, such as
// kafkagroup.ErrFatal or streamcore): a user reads go doc without the
// source tree, and cannot follow either.
func TestGodocNamesNoFileOrInternalPackage(t *testing.T) {
	root := filepath.Join("..", "..")
	unimportable := unimportableNames(t, root)
	fset := token.NewFileSet()
	checked := 0
	for _, p := range surfacePackages {
		for _, f := range parseDir(t, fset, filepath.Join(root, p)) {
			for _, doc := range exportedDocs(f) {
				checked++
				for _, bad := range unreadableNames(doc.Text(), unimportable) {
					t.Errorf("%s: godoc names %q, which a user of go doc cannot open or import", fset.Position(doc.Pos()), bad)
				}
			}
		}
	}
	// About 470 since zkutil and fetcher kept only their surface (issue
	// #28); fewer than 200 means the walk went wrong.
	if checked < 200 {
		t.Fatalf("checked only %d doc comments: the walk missed the packages", checked)
	}
}

// TestUnreadableNamesCatches pins what TestGodocNamesNoFileOrInternalPackage
// looks for, so that a change of its patterns cannot quietly make it pass.
func TestUnreadableNamesCatches(t *testing.T) {
	unimportable := unimportableNames(t, filepath.Join("..", ".."))
	for doc, want := range map[string][]string{
		"see kafka_group.go for the loop":                 {"kafka_group.go"},
		"(config_group_protocol.go).":                     {"config_group_protocol.go"},
		"It wraps kafkagroup.ErrFatal.":                   {"kafkagroup."},
		"a *streamcore.Message":                           {"streamcore."},
		"as internal/coordinator does":                    {"internal/coordinator"},
		"they live under internal/, out of reach":         nil,
		"the grouplease package":                          {"grouplease"},
		"the consumergroup member":                        {"consumergroup"},
		"a lease.Lease":                                   {"lease."},
		"the lease expires; the coordinator moves":        nil,
		"see https://pkg.go.dev/github.com/x and go.mod.": nil,
		"Go 1.23 and KIP-848":                             nil,
		"retry.backoff.ms, Kafka's property":              nil,
	} {
		if got := unreadableNames(doc, unimportable); !slices.Equal(got, want) {
			t.Errorf("unreadableNames(%q) = %q, want %q", doc, got, want)
		}
	}
}

// unimportableNames returns the names of the packages under internal/ and
// of the former ones a godoc may still mention (consumergroup, the Kafka
// member's package before internal/kafkagroup).
func unimportableNames(t *testing.T, root string) []string {
	t.Helper()
	names := []string{"consumergroup"}
	err := filepath.WalkDir(filepath.Join(root, "internal"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			if name := filepath.Base(filepath.Dir(path)); !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 10 {
		t.Fatalf("found only %d packages under internal/: %q", len(names), names)
	}
	return names
}

// englishWords are internal packages' names that are also words of the
// project's prose ("the lease expires"): only their qualified use
// (lease.Lease) names the package.
var englishWords = []string{"backoff", "chaos", "cmd", "coordinator", "fanout", "fetch", "groups", "layering", "lease", "secure", "zkcluster"}

// unreadableNames returns what doc names that a reader of go doc cannot
// follow: Go files, paths under internal/, and the packages in unimportable
// (by a qualified exported identifier, or by name where the name is no
// word; retry.backoff.ms is Kafka's property, not the backoff package).
func unreadableNames(doc string, unimportable []string) []string {
	var out []string
	for _, m := range goFile.FindAllStringSubmatchIndex(doc, -1) {
		if rest := doc[m[1]:]; len(rest) > 1 && rest[0] == '.' && (rest[1] >= 'a' && rest[1] <= 'z') {
			continue // a host name (pkg.go.dev)
		}
		out = append(out, doc[m[2]:m[3]])
	}
	if m := internalPath.FindString(doc); m != "" {
		out = append(out, m)
	}
	for _, name := range unimportable {
		qualified := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\.[A-Z]`)
		if qualified.MatchString(doc) {
			out = append(out, name+".")
			continue
		}
		if !slices.Contains(englishWords, name) && regexp.MustCompile(`\b`+regexp.QuoteMeta(name)+`\b`).MatchString(doc) {
			out = append(out, name)
		}
	}
	return out
}

// internalPath matches the path of a package under internal/ (saying
// that something lives under internal/, out of an application's reach,
// names no package).
var internalPath = regexp.MustCompile(`\binternal/\w+`)

// goFile matches a Go file's name.
var goFile = regexp.MustCompile(`\b(\w+\.go)\b`)

// exportedDocs returns the doc comments go doc shows for f: the package
// comment, and the comments of its exported declarations (those of an
// exported type's fields and interface methods included).
func exportedDocs(f *ast.File) []*ast.CommentGroup {
	var out []*ast.CommentGroup
	add := func(groups ...*ast.CommentGroup) {
		for _, g := range groups {
			if g != nil {
				out = append(out, g)
			}
		}
	}
	fields := func(list *ast.FieldList) {
		if list == nil {
			return
		}
		for _, fl := range list.List {
			exported := len(fl.Names) == 0 // an embedded type
			for _, n := range fl.Names {
				exported = exported || n.IsExported()
			}
			if exported {
				add(fl.Doc, fl.Comment)
			}
		}
	}
	add(f.Doc)
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() && (d.Recv == nil || exportedReceiver(d.Recv)) {
				add(d.Doc)
			}
		case *ast.GenDecl:
			docShown := false
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					docShown = true
					add(s.Doc, s.Comment)
					switch tt := s.Type.(type) {
					case *ast.StructType:
						fields(tt.Fields)
					case *ast.InterfaceType:
						fields(tt.Methods)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							docShown = true
							add(s.Doc, s.Comment)
							break
						}
					}
				}
			}
			if docShown {
				add(d.Doc)
			}
		}
	}
	return out
}

// TestConnectorGodocUsesItsOwnNames: connector's godoc names what it
// re-exports by its own name (*RegexError, ErrGroupFatal), not by the
// name in the package that declares it (*javaregex.Error), which
// would send an application to import that package to match it. The doc
// of a re-export itself may say what it is ("RegexError is
// javaregex.Error: ...").
func TestConnectorGodocUsesItsOwnNames(t *testing.T) {
	fset := token.NewFileSet()
	files := parseDir(t, fset, filepath.Join("..", "..", "connector"))
	// What connector re-exports: "javaregex.Error" -> "RegexError".
	reexports := map[string]string{}
	for _, f := range files {
		for _, decl := range f.Decls {
			d, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if sel := selector(s.Type); s.Assign.IsValid() && s.Name.IsExported() && sel != "" {
						reexports[sel] = s.Name.Name
					}
				case *ast.ValueSpec:
					for i, n := range s.Names {
						if i < len(s.Values) && n.IsExported() {
							if sel := selector(s.Values[i]); sel != "" {
								reexports[sel] = n.Name
							}
						}
					}
				}
			}
		}
	}
	if len(reexports) < 20 {
		t.Fatalf("found only %d re-exports in connector: %v", len(reexports), reexports)
	}
	qualified := regexp.MustCompile(`\b(?:stream|rebalance|fetcher|zkutil)\.[A-Z]\w*`)
	for _, f := range files {
		for _, doc := range exportedDocs(f) {
			text := doc.Text()
			first, _, _ := strings.Cut(text, " ")
			for _, q := range qualified.FindAllString(text, -1) {
				own, ok := reexports[q]
				if ok && strings.TrimSuffix(first, ":") != own {
					t.Errorf("%s: godoc names %s, which connector re-exports as %s: name that", fset.Position(doc.Pos()), q, own)
				}
			}
		}
	}
}

// parseDir parses the Go files of dir but its tests, with their comments.
func parseDir(t *testing.T, fset *token.FileSet, dir string) []*ast.File {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// selector returns "pkg.Name" for an expression pkg.Name, else "".
func selector(e ast.Expr) string {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok {
		return ""
	}
	return pkg.Name + "." + sel.Sel.Name
}

// TestGodocPointsToPagesThatExist: where the godoc of the top-level
// packages sends the reader to a page of docs/ (and a section of it:
// `docs/rebalancing.md, "Kafka mode, classic protocol"`), the page exists
// and has a heading that begins so; none sends the reader to a section of
// the README, a user's page that keeps no manual.
func TestGodocPointsToPagesThatExist(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	page := regexp.MustCompile(`\bdocs/([\w-]+\.md)(?:,\s+"([^"]+)")?`)
	readme := regexp.MustCompile(`\bREADME(?:'s)?\s+"`)
	found := 0
	for _, p := range surfacePackages {
		for _, f := range parseDir(t, fset, filepath.Join(root, p)) {
			for _, doc := range exportedDocs(f) {
				text := strings.Join(strings.Fields(doc.Text()), " ")
				if readme.MatchString(text) {
					t.Errorf("%s: godoc sends the reader to a section of the README: name the page of docs/", fset.Position(doc.Pos()))
				}
				for _, m := range page.FindAllStringSubmatch(text, -1) {
					found++
					data, err := os.ReadFile(filepath.Join(root, "docs", m[1]))
					if err != nil {
						t.Errorf("%s: godoc names docs/%s: %v", fset.Position(doc.Pos()), m[1], err)
						continue
					}
					if m[2] != "" && !hasHeading(string(data), m[2]) {
						t.Errorf("%s: docs/%s has no heading beginning %q", fset.Position(doc.Pos()), m[1], m[2])
					}
				}
			}
		}
	}
	if found == 0 {
		t.Fatal("no godoc names a page of docs/: the pattern no longer matches")
	}
}

// hasHeading reports whether the Markdown text md has a heading that
// begins with title, Markdown's code marks aside.
func hasHeading(md, title string) bool {
	for line := range strings.SplitSeq(md, "\n") {
		if h, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "#") &&
			strings.HasPrefix(strings.ReplaceAll(h, "`", ""), title) {
			return true
		}
	}
	return false
}
