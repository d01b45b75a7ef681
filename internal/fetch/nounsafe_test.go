package fetch

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoUnsafe: the package does not import unsafe. It wrote fetch
// responses through unsafe.StringData, into bytes the runtime holds
// immutable. The one exception is the opt-in cgo build
// (zkconsumer_libzstd), which passes buffers to libzstd as C pointers.
func TestNoUnsafe(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(string(src), "//go:build cgo && zkconsumer_libzstd\n") {
			continue
		}
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); path == "unsafe" {
				t.Errorf("%s imports unsafe", name)
			}
		}
	}
}
