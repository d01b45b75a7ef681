package examples_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readmePrograms returns the Go blocks of a Markdown file (```go fences),
// in order.
func readmePrograms(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var cur *strings.Builder
	for line := range strings.SplitSeq(string(data), "\n") {
		switch {
		case cur == nil && strings.TrimSpace(line) == "```go":
			cur = &strings.Builder{}
		case cur != nil && strings.TrimSpace(line) == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line)
			cur.WriteByte('\n')
		}
	}
	if cur != nil {
		t.Fatalf("%s: a ```go block is never closed", file)
	}
	return blocks
}

// TestREADMEProgramsCompile builds every Go block of README.md,
// CONTRIBUTING.md and the pages of docs/. Each must be a whole program
// (package main), so that what a user copies compiles as it stands.
func TestREADMEProgramsCompile(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"README.md", "CONTRIBUTING.md"}
	for _, p := range pages {
		names = append(names, filepath.Join("docs", filepath.Base(p)))
	}
	n := 0
	for _, name := range names {
		for i, src := range readmePrograms(t, filepath.Join(root, name)) {
			n++
			if !strings.HasPrefix(src, "package main\n") {
				t.Errorf("%s, Go block %d: not a whole program (it must start with package main):\n%s", name, i+1, src)
				continue
			}
			dir := t.TempDir()
			file := filepath.Join(dir, "main.go")
			if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			// Built from the repository, so that its workspace resolves
			// the core and the plugin as they are here.
			cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "program"), file)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s, Go block %d does not compile: %v\n%s\n%s", name, i+1, err, out, src)
			}
		}
	}
	if n == 0 {
		t.Fatal("no Go block found in README.md: the Example is one")
	}
}
