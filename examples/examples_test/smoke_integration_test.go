package examples_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

func TestSimple(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 3*time.Minute)
	bin, topic, group, produced := prepare(t, ctx, c, "simple", "smoke-simple", 2, 30)
	args := []string{"-zookeeper", c.ZKConnect(), "-topic", topic, "-group", group}

	p := start(t, ctx, bin, args...)
	p.waitLines(t, 30)
	p.interrupt(t)
	requireSeqs(t, p.lines(), topic, 0, 30)
	requireCommitted(t, ctx, c, group, map[string]testcluster.Produced{topic: produced})

	// A second run continues after what the first one committed.
	more, err := c.Produce(ctx, topic, 10, testcluster.ProduceOptions{Partition: -1, FirstSeq: 30})
	require.NoError(t, err)
	p = start(t, ctx, bin, args...)
	p.waitLines(t, 10)
	p.interrupt(t)
	requireSeqs(t, p.lines(), topic, 30, 10)
	requireCommitted(t, ctx, c, group, map[string]testcluster.Produced{topic: merge(produced, more)})
}

func TestWorkers(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 3*time.Minute)
	bin, topic, group, produced := prepare(t, ctx, c, "workers", "smoke-workers", 4, 200)

	p := start(t, ctx, bin, "-zookeeper", c.ZKConnect(), "-topic", topic, "-group", group, "-streams", "4")
	testwait.WaitFor(t, time.Minute, func() bool { return strings.Contains(p.stderr.String(), " 200 messages so far") },
		"workers to report 200 messages; stderr:\n%s", &p.stderr)
	p.interrupt(t)
	require.Contains(t, p.stderr.String(), "consumed 200 messages")
	requireCommitted(t, ctx, c, group, map[string]testcluster.Produced{topic: produced})
}

// TestPool: the worker pool commits, with CommitMessages and automatic
// commits off, every message its workers processed, and its last batches
// when it is interrupted.
func TestPool(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 3*time.Minute)
	bin, topic, group, produced := prepare(t, ctx, c, "pool", "smoke-pool", 4, 200)

	p := start(t, ctx, bin, "-zookeeper", c.ZKConnect(), "-topic", topic, "-group", group, "-workers", "3", "-batch", "7")
	testwait.WaitFor(t, time.Minute, func() bool { return strings.Contains(p.stderr.String(), "200 messages processed, 200 committed") },
		"the pool to report 200 messages processed and committed; stderr:\n%s", &p.stderr)
	requireCommitted(t, ctx, c, group, map[string]testcluster.Produced{topic: produced})
	p.interrupt(t)
	require.Contains(t, p.stderr.String(), "200 messages processed, 200 committed (final)")
	require.NotContains(t, p.stderr.String(), "commit: ")
	requireCommitted(t, ctx, c, group, map[string]testcluster.Produced{topic: produced})
}

func TestWildcard(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 3*time.Minute)
	bin := build(t, "wildcard")
	base, group := testcluster.UniqueName("smoke-wild"), testcluster.UniqueName("smoke-wild")
	first, second, other := base+".a", base+".b", base+"-not"
	require.NoError(t, c.CreateTopic(ctx, first, 2, 1))
	require.NoError(t, c.CreateTopic(ctx, other, 1, 1))
	producedFirst, err := c.Produce(ctx, first, 20, testcluster.ProduceOptions{Partition: -1})
	require.NoError(t, err)
	_, err = c.Produce(ctx, other, 5, testcluster.ProduceOptions{Partition: -1, FirstSeq: 500})
	require.NoError(t, err)

	p := start(t, ctx, bin, "-zookeeper", c.ZKConnect(), "-whitelist", regexp.QuoteMeta(base)+`\..*`, "-group", group)
	p.waitLines(t, 20)

	// A matching topic created while it runs is picked up.
	require.NoError(t, c.CreateTopic(ctx, second, 1, 1))
	producedSecond, err := c.Produce(ctx, second, 10, testcluster.ProduceOptions{Partition: -1, FirstSeq: 100})
	require.NoError(t, err)
	p.waitLines(t, 30)
	p.interrupt(t)

	byTopic := map[string][]string{}
	for _, l := range p.lines() {
		m := lineRE.FindStringSubmatch(l)
		require.NotNil(t, m, "line %q", l)
		byTopic[m[1]] = append(byTopic[m[1]], l)
	}
	require.Len(t, byTopic, 2, "only the whitelisted topics: %v", p.lines())
	requireSeqs(t, byTopic[first], first, 0, 20)
	requireSeqs(t, byTopic[second], second, 100, 10)
	requireCommitted(t, ctx, c, group, map[string]testcluster.Produced{first: producedFirst, second: producedSecond})
}

func TestManualCommit(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 3*time.Minute)
	bin, topic, group, produced := prepare(t, ctx, c, "manual-commit", "smoke-manual", 2, 300)

	p := start(t, ctx, bin, "-zookeeper", c.ZKConnect(), "-topic", topic, "-group", group, "-batch", "100")
	testwait.WaitFor(t, time.Minute, func() bool { return strings.Contains(p.stderr.String(), "committed after 300 messages") },
		"the commit after 300 messages; stderr:\n%s", &p.stderr)
	// Every batch was committed while it ran (auto-commit is off).
	requireCommitted(t, ctx, c, group, map[string]testcluster.Produced{topic: produced})
	p.interrupt(t)
	require.Contains(t, p.stderr.String(), "starting to fetch map["+topic+":[0 1]]")
	require.Contains(t, p.stderr.String(), "committed after 300 messages (final)")
	requireCommitted(t, ctx, c, group, map[string]testcluster.Produced{topic: produced})

	_, err := exec.Command(bin, "-batch", "0").CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "-batch 0 is refused")
}

// prepare builds the example name and makes what a run of it reads: a
// topic of partitions partitions holding n messages (round-robin over the
// partitions, sequence numbers from 0), and a group name. The topic and
// the group, both named after prefix, are the test's alone.
func prepare(t *testing.T, ctx context.Context, c *testcluster.Cluster, name, prefix string, partitions int32, n int) (bin, topic, group string, produced testcluster.Produced) {
	t.Helper()
	bin = build(t, name)
	topic, group = testcluster.UniqueName(prefix), testcluster.UniqueName(prefix)
	require.NoError(t, c.CreateTopic(ctx, topic, partitions, 1))
	produced, err := c.Produce(ctx, topic, n, testcluster.ProduceOptions{Partition: -1})
	require.NoError(t, err)
	return bin, topic, group, produced
}

// build compiles an example into a temporary directory, with -race when
// the tests run with it.
func build(t *testing.T, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "github.com/zkconsumer/zkconsumer/examples/"+name)
	out, err := exec.Command("go", args...).CombinedOutput()
	require.NoError(t, err, "go %s:\n%s", strings.Join(args, " "), out)
	return bin
}

// proc is a running example.
type proc struct {
	cmd            *exec.Cmd
	stdout, stderr testcluster.LockedBuffer
	done           chan struct{}
	err            error // set before done is closed
}

func start(t *testing.T, ctx context.Context, bin string, args ...string) *proc {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	p := &proc{cmd: exec.CommandContext(ctx, bin, args...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	p.cmd.WaitDelay = 5 * time.Second
	require.NoError(t, p.cmd.Start())
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		cancel() // kills it if the test ended early
		<-p.done
		if t.Failed() {
			t.Logf("%s stdout:\n%s\nstderr:\n%s", filepath.Base(bin), &p.stdout, &p.stderr)
		}
	})
	return p
}

// interrupt sends SIGINT and requires a clean exit within the shutdown
// budget.
func (p *proc) interrupt(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	select {
	case <-p.done:
	case <-time.After(45 * time.Second):
		t.Fatalf("no exit within 45s of SIGINT; stderr:\n%s", &p.stderr)
	}
	require.NoError(t, p.err, "exit status after SIGINT; stderr:\n%s", &p.stderr)
}

func (p *proc) lines() []string {
	s := strings.TrimSuffix(p.stdout.String(), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func (p *proc) waitLines(t *testing.T, n int) {
	t.Helper()
	testwait.WaitFor(t, time.Minute, func() bool { return len(p.lines()) >= n }, "%d lines on stdout; stdout:\n%s", n, &p.stdout)
}

// lineRE matches what simple and wildcard print: topic-partition@offset: value.
var lineRE = regexp.MustCompile(`^(.+)-(\d+)@(\d+): seq=(\d+);$`)

// requireSeqs checks that lines are the messages of topic with sequence
// numbers first..first+n-1, each once, in offset order within a partition.
func requireSeqs(t *testing.T, lines []string, topic string, first, n int) {
	t.Helper()
	seen := map[int]bool{}
	lastOffset := map[string]int64{}
	for _, l := range lines {
		m := lineRE.FindStringSubmatch(l)
		require.NotNil(t, m, "line %q", l)
		require.Equal(t, topic, m[1], "line %q", l)
		seq, _ := strconv.Atoi(m[4])
		off, _ := strconv.ParseInt(m[3], 10, 64)
		require.False(t, seen[seq], "seq %d twice", seq)
		seen[seq] = true
		if last, ok := lastOffset[m[2]]; ok {
			require.Greater(t, off, last, "partition %s out of order", m[2])
		}
		lastOffset[m[2]] = off
	}
	require.Len(t, seen, n, "lines: %q", lines)
	for s := first; s < first+n; s++ {
		require.True(t, seen[s], "seq %d missing", s)
	}
}

// requireCommitted checks that group has committed, for every partition
// written to, the offset after the last message produced.
func requireCommitted(t *testing.T, ctx context.Context, c *testcluster.Cluster, group string, produced map[string]testcluster.Produced) {
	t.Helper()
	s, err := zksession.Dial(ctx, zksession.SessionConfig{Connect: c.ZKConnect()})
	require.NoError(t, err)
	defer s.Close()
	for topic, pr := range produced {
		for p, offsets := range pr.Offsets {
			path := zkutil.OffsetPath(group, topic, p)
			data, _, err := s.Get(ctx, path)
			require.NoError(t, err, "no offset committed at %s", path)
			got, err := zkutil.DecodeOffset(path, data)
			require.NoError(t, err)
			require.Equal(t, offsets[len(offsets)-1]+1, got, "committed offset at %s", path)
		}
	}
}

func merge(a, b testcluster.Produced) testcluster.Produced {
	out := testcluster.Produced{Offsets: map[int32][]int64{}, Seqs: map[int32][]int{}}
	for _, pr := range []testcluster.Produced{a, b} {
		for p, o := range pr.Offsets {
			out.Offsets[p] = append(out.Offsets[p], o...)
			out.Seqs[p] = append(out.Seqs[p], pr.Seqs[p]...)
		}
	}
	return out
}
