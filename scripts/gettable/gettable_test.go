// Package gettable checks that the modules this repository publishes, the
// core and plugin/prometheus, can be fetched by a user's module with `go
// get` from published versions alone, as they would be from a tag: no
// replace directive, no workspace, no network.
//
// The modules are published from the working tree (tracked files and
// untracked ones git does not ignore, as a tag of the same tree would
// publish them) into a module proxy in a temporary directory
// (GOPROXY=file://...), at the version plugin/prometheus/go.mod requires
// of the core. Every other module comes from the module cache, used as a
// second file proxy, so the test needs no network once the repository's
// own modules have been downloaded.
package gettable

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

const (
	corePath   = "github.com/zkconsumer/zkconsumer"
	pluginPath = corePath + "/plugin/prometheus"
	pluginDir  = "plugin/prometheus"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// repoRoot is the repository's top directory, two levels up.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Fatalf("no go.work at the repository root %s: %v", root, err)
	}
	return root
}

// coreRequirement returns the version of the core that plugin/prometheus's
// go.mod requires, failing the test if the go.mod could not be fetched by
// a user: a replace directive (ignored in a dependency), or a requirement
// that is not a release version.
func coreRequirement(t *testing.T, root string) string {
	t.Helper()
	file := filepath.Join(root, pluginDir, "go.mod")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	mf, err := modfile.Parse(file, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if mf.Module.Mod.Path != pluginPath {
		t.Fatalf("%s: module %s, want %s", file, mf.Module.Mod.Path, pluginPath)
	}
	for _, r := range mf.Replace {
		t.Errorf("%s:%d: replace %s => %s: Go ignores replace directives in a dependency's go.mod; development wiring belongs in go.work",
			file, r.Syntax.Start.Line, r.Old.Path, r.New.Path)
	}
	var version string
	for _, r := range mf.Require {
		if r.Mod.Path == corePath {
			version = r.Mod.Version
		}
	}
	switch {
	case version == "":
		t.Fatalf("%s does not require %s", file, corePath)
	case !semver.IsValid(version) || module.IsPseudoVersion(version) || semver.Build(version) != "":
		t.Fatalf("%s requires %s %s: want a release version (vX.Y.Z, a tag)", file, corePath, version)
	case version == "v0.0.0":
		t.Fatalf("%s requires %s v0.0.0, a placeholder no tag will ever publish: require the core's release (see docs/RELEASING.md)", file, corePath)
	}
	return version
}

// The plugin requires a release of the core and go.work wires that exact
// version to the working tree: the development set-up builds the plugin
// against the core as it is here, and the published go.mod names a
// version a user can fetch.
func TestWorkspaceWiresTheRequiredCore(t *testing.T) {
	root := repoRoot(t)
	version := coreRequirement(t, root)
	file := filepath.Join(root, "go.work")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	wf, err := modfile.ParseWork(file, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uses []string
	for _, u := range wf.Use {
		uses = append(uses, path.Clean(u.Path))
	}
	for _, want := range []string{".", pluginDir} {
		if !slices.Contains(uses, want) {
			t.Errorf("go.work does not use %s (it uses %v)", want, uses)
		}
	}
	var wired bool
	for _, r := range wf.Replace {
		if r.Old.Path == corePath && r.Old.Version == version && path.Clean(r.New.Path) == "." {
			wired = true
			continue
		}
		t.Errorf("go.work:%d: replace %s %s => %s: the only replace should be %s %s => ./ (the version %s/go.mod requires)",
			r.Syntax.Start.Line, r.Old.Path, r.Old.Version, r.New.Path, corePath, version, pluginDir)
	}
	if !wired {
		t.Errorf("go.work has no `replace %s %s => ./`: in the workspace, Go would look %s %s up in the module proxy", corePath, version, corePath, version)
	}
}

// The workspace builds the core with the dependency versions of its own
// go.mod: the modules added to the workspace raise none of them, so `make
// test` tests the core as users build it.
func TestWorkspaceKeepsCoreVersions(t *testing.T) {
	root := repoRoot(t)
	list := func(gowork string) map[string]string {
		cmd := exec.Command("go", "list", "-m", "-f", "{{.Path}} {{.Version}}", "all")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOWORK="+gowork, "GOFLAGS=-mod=readonly")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOWORK=%s go list -m all: %v\n%s", gowork, err, stderrOf(err))
		}
		versions := map[string]string{}
		for line := range strings.Lines(string(out)) {
			p, v, _ := strings.Cut(strings.TrimSpace(line), " ")
			versions[p] = v
		}
		return versions
	}
	alone, workspace := list("off"), list(filepath.Join(root, "go.work"))
	if len(alone) < 5 {
		t.Fatalf("go list -m all without the workspace lists %d modules: %v", len(alone), alone)
	}
	for p, v := range alone {
		if p == corePath {
			continue
		}
		if w := workspace[p]; w != v {
			t.Errorf("%s: %s in the core's go.mod, %s in the workspace (a workspace module requires a newer one)", p, v, w)
		}
	}
}

// A user's module outside the repository gets the core at its latest
// published version with the README's Install lines, as they stand, and
// builds the README's Example; gets the plugin too with docs/metrics.md's
// line and builds its program; or gets the plugin alone; and the commands
// install with the README's go install line. With nothing but the
// published modules (the test's proxy, where the core has the version the
// plugin requires: the release a tag publishes first) and the module
// cache.
func TestModulesGoGettable(t *testing.T) {
	root := repoRoot(t)
	version := coreRequirement(t, root)
	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy")
	publish(t, proxy, module.Version{Path: corePath, Version: version}, root)
	publish(t, proxy, module.Version{Path: pluginPath, Version: version}, filepath.Join(root, pluginDir))

	cache := goEnv(t, "GOMODCACHE")
	modcache := filepath.Join(root, ".cache", "gettable", "modcache")
	emptyModcache := func() {
		// Writable (-modcacherw), so it can simply be removed.
		if err := os.RemoveAll(modcache); err != nil {
			t.Fatal(err)
		}
	}
	emptyModcache()
	t.Cleanup(emptyModcache)
	env := append(os.Environ(),
		// Our modules from the test's proxy, every other one from the
		// module cache's download directory, which has the proxy's layout;
		// no network.
		"GOPROXY=file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(filepath.Join(cache, "cache", "download")),
		"GONOPROXY=", "GOPRIVATE=", "GONOSUMDB=",
		// Neither our modules nor the cache's can be checked against
		// sum.golang.org offline.
		"GOSUMDB=off",
		// A module cache of its own, so that the published versions never
		// reach the shared one (a later run would find them there instead
		// of the working tree's), emptied before and after; at the same
		// place every run, so that the build cache knows its packages.
		"GOMODCACHE="+modcache,
		// The go command indexes the packages of a module in the module
		// cache by its directory alone, trusting that a version never
		// changes; ours does from run to run, at the same place.
		"GODEBUG=goindex=0",
		"GOFLAGS=-modcacherw",
		"GOWORK=off",
		"GOTOOLCHAIN=local",
		"GOBIN="+filepath.Join(tmp, "bin"),
	)
	run := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = dir, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		err := cmd.Run()
		t.Logf("%s: go %s (%v)", filepath.Base(dir), strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
		if err != nil {
			t.Fatalf("go %s in a user's module: %v\n%s", strings.Join(args, " "), err, out.String())
		}
		return out.String()
	}
	mkdir := func(name string) string {
		t.Helper()
		dir := filepath.Join(tmp, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}

	// Users who follow the pages literally, in a new directory: the
	// README's Install lines, then its Example saved as main.go and built
	// (a `go get` of the module root alone left "missing go.sum entry" for
	// the core's dependencies: the root is not a package); the same plus
	// docs/metrics.md's line for the plugin and its program; and one who
	// adds only the plugin, whose go.mod must then bring a core that
	// exists (with a placeholder requirement, v0.0.0 and a replace
	// directive, this is what failed).
	readme := readFile(t, filepath.Join(root, "README.md"))
	install := section(t, "README.md", string(readme), "Install")
	getLines := goLines(t, "README.md's Install section", fencedBlocks(install, "sh"), "get", "mod")
	metrics := readFile(t, filepath.Join(root, "docs", "metrics.md"))
	pluginLines := goLines(t, "docs/metrics.md", fencedBlocks(string(metrics), "sh"), "get")
	example := onlyProgram(t, "README.md's Example section", fencedBlocks(section(t, "README.md", string(readme), "Example"), "go"))
	metricsProgram := onlyProgram(t, "docs/metrics.md", fencedBlocks(string(metrics), "go"))
	for _, user := range []struct {
		name     string
		commands [][]string // go commands, without "go"
		program  string
		want     []string // the modules the user's module must resolve
	}{
		{"readme", getLines, example, []string{corePath}},
		{"metrics", append(slices.Clone(getLines), pluginLines...), metricsProgram, []string{corePath, pluginPath}},
		{"plugin-only", [][]string{{"mod", "init", "example.com/plugin-only"}, {"get", pluginPath + "@latest"}}, userProgram, []string{corePath, pluginPath}},
	} {
		dir := mkdir(user.name)
		for _, args := range user.commands {
			run(dir, args...)
		}
		write(t, filepath.Join(dir, "main.go"), user.program)
		run(dir, "build", "-o", filepath.Join(tmp, user.name+"-program"), ".")
		got := run(dir, append([]string{"list", "-m", "-f", "{{.Path}} {{.Version}}"}, user.want...)...)
		var want strings.Builder
		for _, m := range user.want {
			fmt.Fprintf(&want, "%s %s\n", m, version)
		}
		if got != want.String() {
			t.Errorf("%s: the user's module resolved\n%swant\n%s", user.name, got, want.String())
		}
		mf, err := modfile.Parse("go.mod", readFile(t, filepath.Join(dir, "go.mod")), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(mf.Replace) > 0 {
			t.Errorf("%s: the user's go.mod has replace directives: %v", user.name, mf.Replace)
		}
	}

	// The commands install with the README's `go install` line, from
	// anywhere, and one by one with `go install path@latest`.
	tools := mkdir("tools")
	cmds := commands(t, root)
	installLines := goLines(t, "README.md's Install section", fencedBlocks(install, "sh"), "install")
	if len(installLines) == 0 {
		t.Fatal("README.md's Install section has no go install line")
	}
	for _, args := range installLines {
		run(tools, args...)
	}
	for _, cmd := range cmds {
		bin := filepath.Join(tmp, "bin", path.Base(cmd))
		if _, err := os.Stat(bin); err != nil {
			t.Errorf("the README's go install lines did not install %s: %v", cmd, err)
		}
		if err := os.Remove(bin); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
	for _, cmd := range cmds {
		run(tools, "install", corePath+"/"+cmd+"@latest")
		if _, err := os.Stat(filepath.Join(tmp, "bin", path.Base(cmd))); err != nil {
			t.Errorf("go install %s/%s@latest: %v", corePath, cmd, err)
		}
	}
}

// section returns the text of a Markdown page under the heading title (of
// any level, outside fenced blocks), up to the next heading of the same or
// a higher level.
func section(t *testing.T, page, md, title string) string {
	t.Helper()
	var out strings.Builder
	level := 0
	fenced := false
	for line := range strings.SplitSeq(md, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if !fenced && strings.HasPrefix(line, "#") {
			l := len(line) - len(strings.TrimLeft(line, "#"))
			switch {
			case level == 0 && strings.TrimSpace(line[l:]) == title:
				level = l
				continue
			case level > 0 && l <= level:
				return out.String()
			}
		}
		if level > 0 {
			out.WriteString(line)
			out.WriteByte('\n')
		}
	}
	if level == 0 {
		t.Fatalf("%s has no heading %q", page, title)
	}
	return out.String()
}

// fencedBlocks returns the contents of the fenced blocks of md whose info
// string is lang, in order.
func fencedBlocks(md, lang string) []string {
	var blocks []string
	var cur *strings.Builder
	in := false
	for line := range strings.SplitSeq(md, "\n") {
		switch {
		case !in && strings.HasPrefix(line, "```"):
			in = true
			if strings.TrimSpace(strings.TrimPrefix(line, "```")) == lang {
				cur = &strings.Builder{}
			}
		case in && strings.TrimSpace(line) == "```":
			if cur != nil {
				blocks = append(blocks, cur.String())
			}
			in, cur = false, nil
		case cur != nil:
			cur.WriteString(line)
			cur.WriteByte('\n')
		}
	}
	return blocks
}

// goLines returns the arguments of the go commands in blocks whose
// subcommand is one of subs ("go get x@latest" is {"get", "x@latest"}),
// in order, with comments dropped. Every go command of the blocks must be
// a plain one the test can run as it stands.
func goLines(t *testing.T, where string, blocks []string, subs ...string) [][]string {
	t.Helper()
	var out [][]string
	for _, b := range blocks {
		for line := range strings.SplitSeq(b, "\n") {
			line, _, _ = strings.Cut(line, "#")
			f := strings.Fields(line)
			if len(f) == 0 {
				continue
			}
			if f[0] != "go" || len(f) < 2 {
				t.Fatalf("%s: %q is not a go command", where, line)
			}
			for _, a := range f {
				if strings.ContainsAny(a, "$|&;<>`'\"\\") {
					t.Fatalf("%s: %q has shell syntax the test does not run", where, line)
				}
			}
			if slices.Contains(subs, f[1]) {
				out = append(out, f[1:])
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no go %s line", where, strings.Join(subs, "/"))
	}
	return out
}

// onlyProgram returns the one Go program of blocks.
func onlyProgram(t *testing.T, where string, blocks []string) string {
	t.Helper()
	if len(blocks) != 1 || !strings.HasPrefix(blocks[0], "package main\n") {
		t.Fatalf("%s: want one Go program (package main), found %d Go blocks", where, len(blocks))
	}
	return blocks[0]
}

// userProgram uses the core and the plugin, for the user who gets the
// plugin alone.
const userProgram = `package main

import (
	"context"
	"log"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/zkconsumer/zkconsumer/connector"
	zkprom "github.com/zkconsumer/zkconsumer/plugin/prometheus"
)

func main() {
	reg := prometheus.NewRegistry()
	cfg := connector.DefaultConfig()
	cfg.ZooKeeperConnect = "localhost:2181/kafka"
	cfg.GroupID = "user"
	cfg.Metrics = zkprom.New(reg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := connector.New(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	if err := c.Shutdown(ctx); err != nil {
		log.Fatal(err)
	}
}
`

// commands are the directories of the installable programs, relative to
// the repository: every main package under cmd/.
func commands(t *testing.T, root string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(filepath.Join(root, "cmd"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte("\npackage main\n")) || bytes.HasPrefix(data, []byte("package main\n")) {
			rel, err := filepath.Rel(root, filepath.Dir(p))
			if err != nil {
				return err
			}
			if rel = filepath.ToSlash(rel); !slices.Contains(dirs, rel) {
				dirs = append(dirs, rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The README's install line names these; each must stay installable.
	for _, want := range []string{"cmd/zkconsumer-groups", "cmd/zkconsumer-console-consumer"} {
		if !slices.Contains(dirs, want) {
			t.Errorf("no main package in %s: the README's go install line installs it", want)
		}
	}
	if len(dirs) == 0 {
		t.Fatal("no command found under cmd/")
	}
	return dirs
}

// publish puts module m, made of dir's files, into the file-based module
// proxy at proxy: the files a tag of the working tree would publish (git's
// tracked files and the untracked ones it does not ignore; nested modules
// are left out, as the go command leaves them out), zipped as the go
// command zips a module, with its go.mod and a .info file.
func publish(t *testing.T, proxy string, m module.Version, dir string) {
	t.Helper()
	escaped, err := module.EscapePath(m.Path)
	if err != nil {
		t.Fatal(err)
	}
	at := filepath.Join(proxy, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files in %s: %v\n%s", dir, err, stderrOf(err))
	}
	var files []modzip.File
	for name := range strings.SplitSeq(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		full := filepath.Join(dir, filepath.FromSlash(name))
		info, err := os.Lstat(full)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, treeFile{slash: name, full: full, info: info})
	}
	checked, err := modzip.CheckFiles(files)
	if err != nil {
		t.Fatalf("%s: %v", m, err)
	}
	if err := checked.Err(); err != nil {
		t.Fatalf("%s: files a module zip cannot hold: %v", m, err)
	}
	var zipped bytes.Buffer
	if err := modzip.Create(&zipped, m, files); err != nil {
		t.Fatalf("zip %s: %v", m, err)
	}
	write(t, filepath.Join(at, m.Version+".zip"), zipped.String())
	write(t, filepath.Join(at, m.Version+".mod"), string(readFile(t, filepath.Join(dir, "go.mod"))))
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{m.Version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(at, m.Version+".info"), string(info))
	write(t, filepath.Join(at, "list"), m.Version+"\n")
	t.Logf("published %s: %d files, %d bytes zipped", m, len(checked.Valid), zipped.Len())
}

// treeFile is a file of the working tree, for modzip.Create.
type treeFile struct {
	slash, full string
	info        fs.FileInfo
}

func (f treeFile) Path() string                 { return f.slash }
func (f treeFile) Lstat() (fs.FileInfo, error)  { return f.info, nil }
func (f treeFile) Open() (io.ReadCloser, error) { return os.Open(f.full) }

func goEnv(t *testing.T, key string) string {
	t.Helper()
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		t.Fatalf("go env %s: %v\n%s", key, err, stderrOf(err))
	}
	v := strings.TrimSpace(string(out))
	if v == "" {
		t.Fatalf("go env %s is empty", key)
	}
	return v
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}

func write(t *testing.T, name, data string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
