package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestErrorTextsNameNoInternalPackage: no error text, nor any other
// string, begins with the name of a package under internal/
// ("kafkagroup: ..."), and none written in a package under internal/
// begins with the name of one of the module's packages at all. The rule
// (issue #28): only the package the user called names itself, once, at
// the start of the text ("connector: join group g: heartbeats failing
// ..."); a package under internal/ says what happened and what to do,
// and leaves the prefix to the package that hands the error to the user,
// so that no text reads as a chain of packages ("connector: kafkagroup:
// coordinator: ...") a user cannot import. Sentinels keep their values,
// so errors.Is and errors.As see no change. The test rig's packages
// (internal/testrig), whose errors reach the project's tests and no
// user, are left out.
func TestErrorTextsNameNoInternalPackage(t *testing.T) {
	root := filepath.Join("..", "..")
	internalNames := unimportableNames(t, root)
	ours := append(slices.Clone(internalNames), surfacePackages...)
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || rel == filepath.Join("internal", "testrig") || rel == filepath.Join("internal", "layering")) {
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
		forbidden := internalNames
		if strings.HasPrefix(rel, "internal"+string(filepath.Separator)) {
			forbidden = ours
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if name := packagePrefix(s, forbidden); name != "" {
				t.Errorf("%s: %q begins with %q: %s", fset.Position(lit.Pos()), s, name+": ", prefixAdvice(rel, name))
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 200 {
		t.Fatalf("checked only %d files: the walk missed the module", checked)
	}
}

// packagePrefix returns the name of the package of names that s begins
// with as a prefix ("kafkagroup: ..."), or "".
func packagePrefix(s string, names []string) string {
	name, _, ok := strings.Cut(s, ": ")
	if ok && slices.Contains(names, name) {
		return name
	}
	return ""
}

// prefixAdvice says how to fix a text of the package at rel that begins
// with name.
func prefixAdvice(rel, name string) string {
	if strings.HasPrefix(rel, "internal"+string(filepath.Separator)) {
		return "a package under internal/ names no package; the one that hands the error to the user puts its name in front"
	}
	return name + " is a package a user cannot import: say what happened instead"
}

// TestPackagePrefixCatches pins what TestErrorTextsNameNoInternalPackage
// looks for.
func TestPackagePrefixCatches(t *testing.T) {
	names := []string{"kafkagroup", "coordinator", "connector"}
	for s, want := range map[string]string{
		"kafkagroup: member closed":         "kafkagroup",
		"coordinator: find %s: %w":          "coordinator",
		"connector: join group %s: %w":      "connector",
		"join group %s: %w":                 "",
		"the coordinator: broker %d":        "",
		"kafkagroup:no space":               "",
		"group.protocol %q: %q or %q":       "",
		"zkutil: decode /consumers/g: %w":   "",
		"coordinator moved: kafkagroup: %w": "",
	} {
		if got := packagePrefix(s, names); got != want {
			t.Errorf("packagePrefix(%q) = %q, want %q", s, got, want)
		}
	}
}
