package layering

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// sleepList is the allow-list of the sleeps tests may still make: one line
// per test file, "path count".
const sleepList = "testdata/sleeps.txt"

// TestNoNewSleepsInTests: a test waits on a condition (a helper that polls
// it, a channel, an event), not for a time it hopes is long enough, which
// makes tests slow on a quiet machine and flaky on a busy one. The sleeps
// that remain are listed, with their count per file, in
// testdata/sleeps.txt; a test file that sleeps more than its line allows
// fails here. Remove sleeps and rewrite the list with -update; adding one
// means adding it to the list on purpose, where a reviewer sees it.
func TestNoNewSleepsInTests(t *testing.T) {
	root := filepath.Join("..", "..")
	got := map[string]int{}
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
		n, err := countSleeps(path)
		if err != nil {
			return err
		}
		if n > 0 {
			rel, _ := filepath.Rel(root, path)
			got[filepath.ToSlash(rel)] = n
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		var b strings.Builder
		b.WriteString("# Sleeps tests may still make, per file (TestNoNewSleepsInTests). Replace them by\n")
		b.WriteString("# waits on conditions; rewrite with -update once removed.\n")
		paths := make([]string, 0, len(got))
		for p := range got {
			paths = append(paths, p)
		}
		slices.Sort(paths)
		for _, p := range paths {
			fmt.Fprintf(&b, "%s %d\n", p, got[p])
		}
		if err := os.WriteFile(sleepList, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	allowed, err := readSleepList()
	if err != nil {
		t.Fatalf("%v (create it with -update)", err)
	}
	for p, n := range got {
		if n > allowed[p] {
			t.Errorf("%s calls time.Sleep %d times; %s allows %d: wait on a condition instead", p, n, sleepList, allowed[p])
		}
	}
	for p, n := range allowed {
		if got[p] < n {
			t.Errorf("%s now sleeps %d times, %s still allows %d: rewrite the list with -update", p, got[p], sleepList, n)
		}
	}
}

// countSleeps counts the calls of time.Sleep in a Go file.
func countSleeps(path string) (int, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return 0, err
	}
	timeName := ""
	for _, im := range f.Imports {
		if p, _ := strconv.Unquote(im.Path.Value); p == "time" {
			timeName = "time"
			if im.Name != nil {
				timeName = im.Name.Name
			}
		}
	}
	if timeName == "" {
		return 0, nil
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		if call, ok := node.(*ast.CallExpr); ok && selector(call.Fun) == timeName+".Sleep" {
			n++
		}
		return true
	})
	return n, nil
}

func readSleepList() (map[string]int, error) {
	f, err := os.Open(sleepList)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		path, count, ok := strings.Cut(line, " ")
		n, err := strconv.Atoi(count)
		if !ok || err != nil {
			return nil, fmt.Errorf("%s: malformed line %q", sleepList, line)
		}
		out[path] = n
	}
	return out, sc.Err()
}
