package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// clusterStarts are the testcluster functions that give a test a real
// cluster.
var clusterStarts = map[string]bool{
	"Shared": true, "SharedKRaft": true, "SharedSecure": true, "SharedSecureKRaft": true,
	"Private": true, "Start": true,
}

// TestClusterTestsLiveInIntegrationFiles: a test that needs a real
// ZooKeeper or Kafka lives in a file named *integration_test.go, so that
// the name of a file says whether its tests start or share a cluster (and
// take seconds, and are skipped by -short). A file of benchmarks alone is
// exempt: make test does not run it.
func TestClusterTestsLiveInIntegrationFiles(t *testing.T) {
	root := filepath.Join("..", "..")
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
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		checked++
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		call, tests, benches := clusterCall(f)
		if call == "" || strings.HasSuffix(path, "integration_test.go") || (benches && !tests) {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		t.Errorf("%s calls %s but is not named *_integration_test.go", filepath.ToSlash(rel), call)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d test files checked", checked)
	}
}

// clusterCall returns the first call in f of a function that gives a test a
// cluster ("" if none), and whether f declares tests and benchmarks.
func clusterCall(f *ast.File) (call string, tests, benches bool) {
	inRig := f.Name.Name == "testcluster"
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
			tests = tests || strings.HasPrefix(fd.Name.Name, "Test") || strings.HasPrefix(fd.Name.Name, "Example")
			benches = benches || strings.HasPrefix(fd.Name.Name, "Benchmark")
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		ce, ok := n.(*ast.CallExpr)
		if !ok || call != "" {
			return call == ""
		}
		switch fn := ce.Fun.(type) {
		case *ast.SelectorExpr:
			if x, ok := fn.X.(*ast.Ident); ok && x.Name == "testcluster" && clusterStarts[fn.Sel.Name] {
				call = "testcluster." + fn.Sel.Name
			}
		case *ast.Ident:
			if inRig && clusterStarts[fn.Name] {
				call = fn.Name
			}
		}
		return true
	})
	return call, tests, benches
}
