package cmdhelp

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// optional is an OptionalArg for the tests.
type optional struct{ v string }

func (o *optional) String() string     { return o.v }
func (o *optional) Set(v string) error { o.v = v; return nil }
func (*optional) IsBoolFlag() bool     { return true }
func (*optional) OptionalArg()         {}

func TestPrintShowsEachDefaultOnce(t *testing.T) {
	fs := flag.NewFlagSet("tool", flag.ContinueOnError)
	fs.String("format", "csv", "The output `format`.")
	fs.Int("max", -1, "At most this `number` of things. (default: no limit)")
	fs.Int("count", 0, "A `count`.")
	fs.Bool("all", false, "Everything.")
	fs.String("name", "", "A `name`.")
	fs.Var(&optional{}, "state", "With or without `states`.")
	fs.String("a-very-long-option-name-that-fills-the-column", "", "Its `value-with-a-long-name`.")
	var out bytes.Buffer
	require.NoError(t, Print(&out, "Intro line.\n\n", fs))
	help := out.String()
	t.Log("\n" + help)
	require.True(t, strings.HasPrefix(help, "Intro line.\n\nOption"), "intro, then the table")
	entries := Entries(help)
	require.Len(t, entries, 7)
	require.Contains(t, entries["--format <format>"], "The output format. (default: csv)")
	require.Contains(t, entries["--max <number>"], "(default: no limit)")
	require.NotContains(t, entries["--max <number>"], "-1", "a usage that words its default keeps it")
	require.NotContains(t, entries["--count <count>"], "(default")
	require.NotContains(t, entries["--all"], "(default")
	require.NotContains(t, entries["--name <name>"], "(default")
	require.Contains(t, entries, "--state [<states>]")
	require.Contains(t, entries, "--a-very-long-option-name-that-fills-the-column <value-with-a-long-name>")
	_, problems := Problems(help, fs)
	require.Empty(t, problems)
	// What Problems catches: a default twice, as Go's flag layout printed
	// one the usage words itself, and an option left out.
	doubled := strings.Replace(help, "(default: csv)", "(default: csv) (default \"csv\")", 1)
	require.NotEqual(t, help, doubled)
	_, problems = Problems(doubled, fs)
	require.Len(t, problems, 1)
	require.Contains(t, problems[0], "a default twice")
	fs.String("new", "x", "A `thing`.")
	_, problems = Problems(help, fs)
	require.Len(t, problems, 2, "the new option is missing, and the counts differ: %v", problems)
	for _, line := range strings.Split(help, "\n") {
		if strings.HasPrefix(line, " ") {
			require.LessOrEqual(t, len(line), lineWidth, "description lines wrap at %d: %q", lineWidth, line)
		}
	}
}

func TestVersionNamesTheModuleVersion(t *testing.T) {
	want := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		want = bi.Main.Version
	}
	require.Equal(t, "tool "+want, Version("tool"))
}

// TestToolsPrintTheirVersion builds both commands as a checkout does
// without version control stamping and runs --version: the tool's name
// and "(devel)", exit status 0.
func TestToolsPrintTheirVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the commands")
	}
	dir := t.TempDir()
	for _, tool := range []string{"zkconsumer-groups", "zkconsumer-console-consumer"} {
		bin := filepath.Join(dir, tool)
		build := exec.Command("go", "build", "-buildvcs=false", "-o", bin, "../../cmd/"+tool)
		out, err := build.CombinedOutput()
		require.NoError(t, err, "%s", out)
		cmd := exec.Command(bin, "--version")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), "exit status 0; stderr: %s", stderr.String())
		require.Equal(t, tool+" (devel)\n", stdout.String())
		require.Empty(t, stderr.String())
		_ = os.Remove(bin)
	}
}
