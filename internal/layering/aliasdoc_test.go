package layering

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// aliasDocPackages are the packages whose type aliases must show, in their
// own doc comment, the declaration they stand for: go doc prints an alias
// as "type Message = stream.Message" and nothing of the type's fields or
// methods, which an application should not have to look up in a package it
// cannot import.
var aliasDocPackages = []string{"connector", "stream"}

// TestAliasesShowWhatTheyStandFor: the doc comment of every exported type
// alias in connector and stream ends with the declaration of the type it
// stands for, as go doc would print it for the type itself: the type's
// doc, its exported fields with their comments and its methods with their
// docs. The block is
// written by this test with -update from the declaring package's source,
// and compared without it, so it cannot drift from the type.
func TestAliasesShowWhatTheyStandFor(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, pkg := range aliasDocPackages {
		dir := filepath.Join(root, pkg)
		paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range paths {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want, n := aliasDocs(t, root, path, src, reexportsOf(t, dir))
			if n == 0 {
				continue
			}
			if bytes.Equal(src, want) {
				continue
			}
			if *update {
				if err := os.WriteFile(path, want, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			t.Errorf("%s: the doc comment of an alias does not show the declaration it stands for as it is now; rewrite it with -update", path)
		}
	}
}

// aliasDocs returns src with the doc comment of each exported type alias
// ending in the rendered declaration of its target, and how many aliases
// it found.
func aliasDocs(t *testing.T, root, path string, src []byte, own map[string]string) ([]byte, int) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	type edit struct {
		from, to int
		text     string
	}
	var edits []edit
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, spec := range gd.Specs {
			ts := spec.(*ast.TypeSpec)
			if !ts.Assign.IsValid() || !ts.Name.IsExported() {
				continue
			}
			doc := ts.Doc
			if doc == nil && len(gd.Specs) == 1 {
				doc = gd.Doc
			}
			if doc == nil {
				t.Errorf("%s: alias %s has no doc comment", path, ts.Name.Name)
				continue
			}
			block := renderTarget(t, root, f, ts.Type)
			if block == "" {
				continue
			}
			// Name what the package re-exports by its own name.
			block = qualifiedName.ReplaceAllStringFunc(block, func(q string) string {
				if n, ok := own[q]; ok {
					return n
				}
				return q
			})
			from, to := fset.Position(doc.Pos()).Offset, fset.Position(doc.End()).Offset
			edits = append(edits, edit{from, to, leadOf(string(src[from:to])) + "//\n" + block})
		}
	}
	var out []byte
	at := 0
	for _, e := range edits {
		out = append(out, src[at:e.from]...)
		out = append(out, strings.TrimSuffix(e.text, "\n")...)
		at = e.to
	}
	return append(out, src[at:]...), len(edits)
}

var qualifiedName = regexp.MustCompile(`\b[a-z]\w*\.[A-Z]\w*`)

// reexportsOf maps what the package in dir re-exports as type aliases
// ("zkutil.TopicPartition") to its own name for it ("TopicPartition").
func reexportsOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range parseDir(t, token.NewFileSet(), dir) {
		for _, decl := range f.Decls {
			if gd, ok := decl.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
				for _, spec := range gd.Specs {
					ts := spec.(*ast.TypeSpec)
					if sel := selector(ts.Type); ts.Assign.IsValid() && ts.Name.IsExported() && sel != "" {
						out[sel] = ts.Name.Name
					}
				}
			}
		}
	}
	return out
}

// leadOf returns the hand-written part of an alias's doc comment: its
// lines up to the first line of a code block (the rendered declaration),
// without a trailing empty comment line, each ending in a newline.
func leadOf(comment string) string {
	var b strings.Builder
	lines := strings.Split(comment, "\n")
	end := len(lines)
	for i, l := range lines {
		if strings.HasPrefix(l, "//\t") {
			end = i
			break
		}
	}
	for end > 0 && strings.TrimSpace(lines[end-1]) == "//" {
		end--
	}
	for _, l := range lines[:end] {
		b.WriteString(l)
		b.WriteString("\n")
	}
	return strings.TrimSuffix(b.String(), "\n\n") // never two newlines before the block
}

// renderTarget renders, as comment lines of a code block, the declaration
// of the type expr (pkg.Name) names, following aliases to the type itself:
// what go doc prints for that type. It returns "" when expr is not a
// selector of a package of this module.
func renderTarget(t *testing.T, root string, in *ast.File, expr ast.Expr) string {
	t.Helper()
	sel, ok := expr.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return ""
	}
	var importPath string
	for _, im := range in.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		name := filepath.Base(p)
		if im.Name != nil {
			name = im.Name.Name
		}
		if name == id.Name {
			importPath = p
		}
	}
	rel, ok := strings.CutPrefix(importPath, module)
	if !ok {
		return ""
	}
	dir := filepath.Join(root, filepath.FromSlash(rel))
	fset := token.NewFileSet()
	files := parseDir(t, fset, dir)
	for _, f := range files {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				if ts.Name.Name != sel.Sel.Name {
					continue
				}
				if ts.Assign.IsValid() {
					return renderTarget(t, root, f, ts.Type)
				}
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				lines := docLines(doc)
				if len(lines) > 0 {
					lines = append(lines, "")
				}
				return commentBlock(strings.Join(lines, "\n") + declText(fset, ts) + methodsText(fset, files, ts.Name.Name))
			}
		}
	}
	t.Errorf("%s.%s: declaration not found in %s", id.Name, sel.Sel.Name, dir)
	return ""
}

// declText renders a type declaration as go doc does: a struct with its
// exported fields and their comments, a note when it has unexported ones;
// an interface with its methods; any other type as declared.
func declText(fset *token.FileSet, ts *ast.TypeSpec) string {
	var b strings.Builder
	switch typ := ts.Type.(type) {
	case *ast.StructType:
		fmt.Fprintf(&b, "type %s struct {\n", ts.Name.Name)
		hidden := false
		for _, fld := range typ.Fields.List {
			var names []string
			for _, n := range fld.Names {
				if n.IsExported() {
					names = append(names, n.Name)
				}
			}
			if len(fld.Names) == 0 { // embedded
				if s := nodeText(fset, fld.Type); ast.IsExported(strings.TrimPrefix(s[strings.LastIndex(s, ".")+1:], "*")) {
					names = append(names, "")
				}
			}
			if len(names) == 0 {
				hidden = true
				continue
			}
			for _, l := range docLines(fld.Doc) {
				b.WriteString("\t" + l + "\n")
			}
			if names[0] == "" {
				fmt.Fprintf(&b, "\t%s\n", nodeText(fset, fld.Type))
			} else {
				fmt.Fprintf(&b, "\t%s %s\n", strings.Join(names, ", "), nodeText(fset, fld.Type))
			}
		}
		if hidden {
			b.WriteString("\t// Has unexported fields.\n")
		}
		b.WriteString("}\n")
	case *ast.InterfaceType:
		fmt.Fprintf(&b, "type %s interface {\n", ts.Name.Name)
		for _, m := range typ.Methods.List {
			for _, l := range docLines(m.Doc) {
				b.WriteString("\t" + l + "\n")
			}
			if len(m.Names) == 0 {
				fmt.Fprintf(&b, "\t%s\n", nodeText(fset, m.Type))
				continue
			}
			fmt.Fprintf(&b, "\t%s%s\n", m.Names[0].Name, strings.TrimPrefix(nodeText(fset, m.Type), "func"))
		}
		b.WriteString("}\n")
	default:
		fmt.Fprintf(&b, "type %s %s\n", ts.Name.Name, nodeText(fset, ts.Type))
	}
	return b.String()
}

// methodsText renders the exported methods of the named type, in source
// order, each signature followed by its doc comment indented, as go doc
// -all lists them.
func methodsText(fset *token.FileSet, files []*ast.File, name string) string {
	var b strings.Builder
	for _, f := range files {
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || !fd.Name.IsExported() || receiverName(fd) != name {
				continue
			}
			sig := *fd
			sig.Body, sig.Doc = nil, nil
			fmt.Fprintf(&b, "\n%s\n", nodeText(fset, &sig))
			for _, l := range strings.Split(strings.TrimRight(fd.Doc.Text(), "\n"), "\n") {
				if l == "" {
					b.WriteString("\n")
					continue
				}
				b.WriteString("    " + l + "\n")
			}
		}
	}
	return b.String()
}

func receiverName(fd *ast.FuncDecl) string {
	typ := fd.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// docLines returns a comment group as "// ..." lines.
func docLines(cg *ast.CommentGroup) []string {
	if cg == nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(strings.TrimRight(cg.Text(), "\n"), "\n") {
		if l == "" {
			out = append(out, "//")
			continue
		}
		out = append(out, "// "+l)
	}
	return out
}

func nodeText(fset *token.FileSet, n any) string {
	var b bytes.Buffer
	if err := printer.Fprint(&b, fset, n); err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	return b.String()
}

// commentBlock turns text into the lines of a code block in a doc comment.
func commentBlock(text string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if l == "" {
			b.WriteString("//\n")
			continue
		}
		b.WriteString("//\t" + l + "\n")
	}
	return b.String()
}
