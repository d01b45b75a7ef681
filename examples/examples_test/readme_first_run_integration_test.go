package examples_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestREADMEFirstRun follows the README's first run against the shared
// cluster (what `make cluster-up` starts): it puts messages in a topic with
// the README's producer command (Kafka 3.9's console producer from the jars
// the cluster runs on, the topic created by the broker), runs the README's
// Example with ZOOKEEPER_CONNECT set, and requires the output the README
// shows: the messages already in the topic, read on a first run. A second
// run prints only what was produced since, as the README says: the group
// resumes after what the first committed on Ctrl-C.
func TestREADMEFirstRun(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 4*time.Minute)
	root := repoRoot(t)
	readme := readPage(t, "README.md")
	topic, group := testcluster.UniqueName("readme-orders"), testcluster.UniqueName("readme-audit")

	// The producer command, as the README writes it.
	run := section(t, "README.md", readme, "Run it against a local cluster")
	var producer string
	for _, b := range fencedBlocks(run, "sh") {
		for line := range strings.SplitSeq(b, "\n") {
			if strings.Contains(line, "ConsoleProducer") {
				producer = line
			}
		}
	}
	require.NotEmpty(t, producer, "no producer command in the README's %q section", "Run it against a local cluster")
	input, command, ok := strings.Cut(producer, " | ")
	require.True(t, ok, "the producer command is not `<input> | java ...`: %s", producer)
	in := strings.Fields(input)
	require.Equal(t, "seq", in[0], "the producer's input: %s", input)
	args := strings.Fields(command)
	require.GreaterOrEqual(t, len(args), 4, "the producer command: %s", command)
	require.Equal(t, []string{"java", "-cp"}, args[:2], "the producer command: %s", command)
	// The class path is the jars of the broker make cluster-up runs, which
	// testcluster.Tool runs its tools from (in a process group of their own).
	lib, err := testcluster.Kafka39Lib()
	require.NoError(t, err)
	require.Equal(t, "'"+filepath.Join(".cache", "kafka39", "lib", "*")+"'", args[2], "the producer's class path")
	require.Equal(t, filepath.Join(root, ".cache", "kafka39", "lib"), lib)
	mainClass := args[3]
	toolArgs := make([]string, 0, len(args)-4)
	for _, a := range args[4:] {
		switch a {
		case `"$KAFKA_BROKERS"`:
			a = strings.Join(c.BrokerAddrs(), ",")
		case "orders":
			a = topic
		}
		require.NotContains(t, a, "$", "an unexpanded variable in the producer command: %s", command)
		toolArgs = append(toolArgs, a)
	}
	produce := func(from, to string) {
		t.Helper()
		seq, err := exec.CommandContext(ctx, "seq", from, to).Output()
		require.NoError(t, err)
		cmd, err := testcluster.Tool(ctx, mainClass, toolArgs...)
		require.NoError(t, err)
		cmd.Stdin = bytes.NewReader(seq)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s %s:\n%s", mainClass, strings.Join(toolArgs, " "), out)
	}
	produce(in[1], in[2])

	// The Example, for this test's topic and group.
	example := fencedBlocks(section(t, "README.md", readme, "Example"), "go")
	require.Len(t, example, 1, "the README's Example section has one Go program")
	src := strings.ReplaceAll(example[0], `"orders-audit"`, `"`+group+`"`)
	src = strings.ReplaceAll(src, `"orders"`, `"`+topic+`"`)
	require.Contains(t, src, topic)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644))
	bin := filepath.Join(dir, "example")
	buildArgs := []string{"build", "-o", bin}
	if raceEnabled {
		buildArgs = append(buildArgs, "-race")
	}
	build := exec.Command("go", append(buildArgs, filepath.Join(dir, "main.go"))...)
	build.Dir = root // the workspace resolves connector as it is here
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build of the README's Example:\n%s", out)

	// What the README says `go run .` prints.
	var want []string
	for _, b := range fencedBlocks(run, "") {
		for line := range strings.SplitSeq(strings.TrimSpace(b), "\n") {
			want = append(want, strings.Replace(line, "orders-", topic+"-", 1))
		}
	}
	require.Len(t, want, 5, "the README's expected output: %q", want)

	first := startWithEnv(t, ctx, []string{"ZOOKEEPER_CONNECT=" + c.ZKConnect()}, bin)
	testwait.WaitFor(t, 2*time.Minute, func() bool { return len(printed(first, topic)) >= len(want) },
		"the Example to print %d messages; stderr:\n%s", len(want), &first.stderr)
	first.interrupt(t)
	require.Equal(t, want, printed(first, topic), "the Example's first run; stderr:\n%s", &first.stderr)

	// Run it again: nothing old, only what was produced since.
	produce("6", "6")
	second := startWithEnv(t, ctx, []string{"ZOOKEEPER_CONNECT=" + c.ZKConnect()}, bin)
	testwait.WaitFor(t, 2*time.Minute, func() bool { return len(printed(second, topic)) >= 1 },
		"the Example's second run to print the new message; stderr:\n%s", &second.stderr)
	second.interrupt(t)
	require.Equal(t, []string{topic + "-0@5: 6"}, printed(second, topic), "the Example's second run; stderr:\n%s", &second.stderr)
}

// logPrefix is what the log package puts before a message by default.
var logPrefix = regexp.MustCompile(`^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d `)

// printed returns the messages of topic that the Example logged so far,
// without the log's time stamps.
func printed(p *proc, topic string) []string {
	var out []string
	for line := range strings.SplitSeq(p.stderr.String(), "\n") {
		line = logPrefix.ReplaceAllString(line, "")
		if strings.HasPrefix(line, topic+"-") {
			out = append(out, line)
		}
	}
	return out
}

// startWithEnv starts bin as start does, with env added to the test's
// environment.
func startWithEnv(t *testing.T, ctx context.Context, env []string, bin string, args ...string) *proc {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	p := &proc{cmd: exec.CommandContext(ctx, bin, args...), done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	p.cmd.WaitDelay = 5 * time.Second
	require.NoError(t, p.cmd.Start())
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		cancel()
		<-p.done
		if t.Failed() {
			t.Logf("%s stdout:\n%s\nstderr:\n%s", filepath.Base(bin), &p.stdout, &p.stderr)
		}
	})
	return p
}
