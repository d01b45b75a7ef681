package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

func TestCancelExitsCleanlyAndDeletesGeneratedGroup(t *testing.T) {
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 2*time.Minute)
	zk := zkSession(t, ctx, c)
	topic := testcluster.UniqueName("cc-cancel")
	require.NoError(t, c.CreateTopic(ctx, topic, 1, 1))
	before, err := zk.Children(ctx, "/consumers")
	require.NoError(t, err)

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan result, 1)
	go func() { done <- runOurs(runCtx, "--zookeeper", c.ZKConnect(), "--topic", topic) }()

	// The member registers in a generated group, named as Kafka names it.
	var group string
	testwait.WaitFor(t, 30*time.Second, func() bool {
		groups, err := zk.Children(ctx, "/consumers")
		require.NoError(t, err)
		for _, g := range groups {
			if !strings.HasPrefix(g, "console-consumer-") || contains(before, g) {
				continue
			}
			owners, err := zk.Children(ctx, zkutil.OwnersTopicPath(g, topic))
			if err == nil && len(owners) == 1 {
				group = g
				return true
			}
		}
		return false
	}, "a console-consumer-<random> group owning %s", topic)
	require.Regexp(t, regexp.MustCompile(`^console-consumer-\d{1,5}$`), group)

	cancel() // what SIGINT does
	var r result
	select {
	case r = <-done:
	case <-time.After(45 * time.Second):
		t.Fatal("run did not return after its context was cancelled")
	}
	require.Equal(t, 0, r.code, r.stderr)
	require.Empty(t, r.stdout)
	require.Contains(t, r.stderr, "Processed a total of 0 messages")
	ok, _, err := zk.Exists(ctx, zkutil.GroupPath(group))
	require.NoError(t, err)
	require.False(t, ok, "the generated group is deleted on exit")
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestTimeoutExitsWhenIdle(t *testing.T) {
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 2*time.Minute)
	topic := testcluster.UniqueName("cc-idle")
	require.NoError(t, c.CreateTopic(ctx, topic, 1, 1))
	_, err := c.Produce(ctx, topic, 5, testcluster.ProduceOptions{Partition: 0})
	require.NoError(t, err)

	// The connector's log records go neither to stderr nor, as they would
	// with no Logger, to slog.Default(): the tool prints what it reports.
	var global testcluster.LockedBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&global, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	start := time.Now()
	r := runOurs(ctx, "--zookeeper", c.ZKConnect(), "--topic", topic, "--from-beginning", "--timeout-ms", "2000")
	require.Equal(t, 0, r.code, r.stderr)
	require.Len(t, r.lines(), 5)
	require.Contains(t, r.stderr, "Processed a total of 5 messages")
	require.Less(t, time.Since(start), 40*time.Second)
	require.Empty(t, global.String(), "records through slog.Default()")
	require.NotContains(t, r.stderr, "level=")

	// Like Kafka, it stops when standard output is gone, and exits 0 as
	// Kafka does; nothing that was not written out is committed.
	zk := zkSession(t, ctx, c)
	group := testcluster.UniqueName("cc-failing")
	var stderr testcluster.LockedBuffer
	code := run(ctx, []string{"--zookeeper", c.ZKConnect(), "--topic", topic, "--from-beginning", "--timeout-ms", "30000", "--group", group},
		failingWriter{}, &stderr)
	require.Equal(t, 0, code, stderr.String())
	require.Contains(t, stderr.String(), "Unable to write to standard out, closing consumer.")
	require.Regexp(t, `Processed a total of [1-5] messages`, stderr.String())
	_, ok := committed(t, ctx, zk, group, topic, 0)
	require.False(t, ok, "nothing was written out, so nothing is committed")

	// Without --from-beginning a new group starts at the end: nothing.
	r = runOurs(ctx, "--zookeeper", c.ZKConnect(), "--topic", topic, "--timeout-ms", "1000")
	require.Equal(t, 0, r.code, r.stderr)
	require.Empty(t, r.stdout)
	require.Contains(t, r.stderr, "Processed a total of 0 messages")
}

func TestConsumerConfigFileAndConsumerProperty(t *testing.T) {
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 2*time.Minute)
	zk := zkSession(t, ctx, c)
	topic := testcluster.UniqueName("cc-props")
	require.NoError(t, c.CreateTopic(ctx, topic, 1, 1))
	_, err := c.Produce(ctx, topic, 20, testcluster.ProduceOptions{Partition: 0})
	require.NoError(t, err)

	group := testcluster.UniqueName("cc-props")
	file := filepath.Join(t.TempDir(), "consumer.properties")
	require.NoError(t, os.WriteFile(file, []byte(strings.Join([]string{
		"# as in Kafka's config/consumer.properties",
		"group.id=" + group,
		"auto.commit.enable=false",
		"no.such.property=1",
	}, "\n")), 0o644))
	base := []string{"--zookeeper", c.ZKConnect(), "--topic", topic, "--consumer.config", file,
		"--from-beginning", "--timeout-ms", "30000"}

	// The file's group applies; with auto.commit.enable false nothing is
	// committed; unknown keys only warn.
	r := runOurs(ctx, append(base, "--max-messages", "5")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, []string{"seq=0;", "seq=1;", "seq=2;", "seq=3;", "seq=4;"}, r.lines())
	require.Contains(t, r.stderr, "no.such.property is not valid")
	_, ok := committed(t, ctx, zk, group, topic, 0)
	require.False(t, ok, "auto.commit.enable=false in the file")

	// --consumer-property wins over the file. (--delete-consumer-offsets:
	// zkconsumer creates /consumers/<group>/offsets when it joins, so
	// --from-beginning would be refused as for a group with offsets.)
	r = runOurs(ctx, append(base, "--max-messages", "7", "--delete-consumer-offsets",
		"--consumer-property", "auto.commit.enable=true")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Len(t, r.lines(), 7)
	off, ok := committed(t, ctx, zk, group, topic, 0)
	require.True(t, ok)
	require.EqualValues(t, 7, off)

	// A group given in the file counts as given: it is kept on exit.
	exists, _, err := zk.Exists(ctx, zkutil.GroupPath(group))
	require.NoError(t, err)
	require.True(t, exists)
}

func TestBadRegexIsAnError(t *testing.T) {
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, time.Minute)
	r := runOurs(ctx, "--zookeeper", c.ZKConnect(), "--whitelist", "(unclosed", "--group", testcluster.UniqueName("cc-badre"))
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "(unclosed")
	require.Empty(t, r.stdout)
}

func TestNoBrokersInZooKeeper(t *testing.T) {
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, time.Minute)
	// A chroot nobody uses has no /brokers/ids.
	r := runOurs(ctx, "--zookeeper", c.ZKServer()+"/"+testcluster.UniqueName("cc-empty"), "--topic", "t")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "No brokers found in ZK.")
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// gatedWriter blocks every write until open is closed.
type gatedWriter struct {
	open    chan struct{}
	written testcluster.LockedBuffer
}

func (w *gatedWriter) Write(p []byte) (int, error) {
	<-w.open
	return w.written.Write(p)
}

func TestNothingIsCommittedBeforeItIsWrittenOut(t *testing.T) {
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 2*time.Minute)
	zk := zkSession(t, ctx, c)
	topic := testcluster.UniqueName("cc-gated")
	require.NoError(t, c.CreateTopic(ctx, topic, 1, 1))
	_, err := c.Produce(ctx, topic, 50, testcluster.ProduceOptions{Partition: 0})
	require.NoError(t, err)
	group := testcluster.UniqueName("cc-gated")

	// Standard output takes nothing: the messages wait in the buffer while
	// commits come every 100 ms, and none covers them.
	w := &gatedWriter{open: make(chan struct{})}
	done := make(chan int, 1)
	var stderr testcluster.LockedBuffer
	go func() {
		done <- run(ctx, []string{"--zookeeper", c.ZKConnect(), "--topic", topic, "--group", group, "--from-beginning",
			"--max-messages", "50", "--consumer-property", "auto.commit.interval.ms=100"}, w, &stderr)
	}()
	testwait.WaitFor(t, time.Minute, func() bool {
		owners, err := zk.Children(ctx, zkutil.OwnersTopicPath(group, topic))
		return err == nil && len(owners) == 1
	}, "the member owns the partition")
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		_, ok := committed(t, ctx, zk, group, topic, 0)
		require.False(t, ok, "committed before anything was written out")
		time.Sleep(50 * time.Millisecond)
	}

	// Once written out, all of it is committed.
	close(w.open)
	select {
	case code := <-done:
		require.Equal(t, 0, code, stderr.String())
	case <-time.After(time.Minute):
		t.Fatal("run did not end")
	}
	require.Len(t, splitLines(w.written.String()), 50)
	off, ok := committed(t, ctx, zk, group, topic, 0)
	require.True(t, ok)
	require.EqualValues(t, 50, off)
}

func TestWrittenOutputIsCommittedBeforeARebalanceReleasesIt(t *testing.T) {
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 2*time.Minute)
	zk := zkSession(t, ctx, c)
	topic := testcluster.UniqueName("cc-rebalance")
	require.NoError(t, c.CreateTopic(ctx, topic, 2, 1))
	produced, err := c.Produce(ctx, topic, 40, testcluster.ProduceOptions{Partition: -1})
	require.NoError(t, err)
	group := testcluster.UniqueName("cc-rebalance")
	args := []string{"--zookeeper", c.ZKConnect(), "--topic", topic, "--group", group, "--from-beginning"}

	// The first member prints everything; the periodic commit (60 s by
	// default) does not come in this test.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var first, second result
	var wg sync.WaitGroup
	var firstOut testcluster.LockedBuffer
	wg.Go(func() {
		var stderr testcluster.LockedBuffer
		code := run(runCtx, args, &firstOut, &stderr)
		first = result{stdout: firstOut.String(), stderr: stderr.String(), code: code}
	})
	testwait.WaitFor(t, time.Minute, func() bool { return len(splitLines(firstOut.String())) == 40 }, "40 messages printed")
	_, ok := committed(t, ctx, zk, group, topic, 0)
	require.False(t, ok, "no commit yet")

	// A second member joins: before the first releases a partition, it
	// commits what it wrote out of it, so the second starts after it. With
	// the cooperative hand-over (the default) the first keeps the other
	// partition and releases only the one that moves.
	owner := func(p int32) string {
		data, _, err := zk.Get(ctx, zkutil.OwnerPath(group, topic, p))
		if errors.Is(err, zksession.ErrNoNode) {
			return ""
		}
		require.NoError(t, err)
		return string(data)
	}
	firstOwner := map[int32]string{}
	for p := range produced.Seqs {
		firstOwner[p] = owner(p)
		require.NotEmpty(t, firstOwner[p], "the first member owns partition %d", p)
	}
	wg.Go(func() { second = runOurs(runCtx, args...) })
	var moved []int32
	testwait.WaitFor(t, time.Minute, func() bool {
		moved = moved[:0]
		for p := range produced.Seqs {
			if o := owner(p); o != "" && o != firstOwner[p] {
				moved = append(moved, p)
			}
		}
		return len(moved) > 0
	}, "a partition handed over to the second member")
	for _, p := range moved {
		off, ok := committed(t, ctx, zk, group, topic, p)
		require.True(t, ok, "partition %d was handed over without a commit", p)
		require.EqualValues(t, len(produced.Seqs[p]), off, "partition %d: the first member's output committed before the hand-over", p)
	}
	cancel()
	wg.Wait()
	require.Equal(t, 0, first.code, first.stderr)
	require.Equal(t, 0, second.code, second.stderr)
	require.Empty(t, second.stdout, "nothing consumed twice")
}

// Issue 19: --topic nosuch waited forever with nothing on stderr. It still
// waits for the topic, as Kafka's does, but says so.
func TestNoMatchingTopicIsReported(t *testing.T) {
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 2*time.Minute)
	topic := testcluster.UniqueName("cc-nosuch")

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stdout, stderr testcluster.LockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(runCtx, []string{"--zookeeper", c.ZKConnect(), "--topic", topic}, &stdout, &stderr)
	}()
	want := "no topic matches --topic " + topic + " yet; waiting for one to be created"
	testwait.WaitFor(t, 30*time.Second, func() bool { return strings.Contains(stderr.String(), want) }, "%q on stderr; got %q", want, stderr.String())

	cancel()
	select {
	case code := <-done:
		require.Equal(t, 0, code, stderr.String())
	case <-time.After(45 * time.Second):
		t.Fatal("run did not return after its context was cancelled")
	}

	// A topic that exists gets no such note.
	require.NoError(t, c.CreateTopic(ctx, topic, 1, 1))
	r := runOurs(ctx, "--zookeeper", c.ZKConnect(), "--topic", topic, "--timeout-ms", "500")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stderr, "no topic matches")
}

// Issue 19: after `| head -5` closed the pipe, nothing was committed
// although the first write had reached the reader. Standard output here
// takes the first 100 bytes of what is written and then fails, as a pipe
// whose reader exits: the group's committed offset is the count of lines
// the reader got whole.
func TestClosedPipeCommitsTheMessagesWrittenWhole(t *testing.T) {
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 2*time.Minute)
	zk := zkSession(t, ctx, c)
	topic := testcluster.UniqueName("cc-head")
	require.NoError(t, c.CreateTopic(ctx, topic, 1, 1))
	_, err := c.Produce(ctx, topic, 200, testcluster.ProduceOptions{Partition: 0})
	require.NoError(t, err)
	group := testcluster.UniqueName("cc-head")

	w := &shortWriter{n: 100}
	r := runOursTo(ctx, w, "--zookeeper", c.ZKConnect(), "--topic", topic, "--group", group, "--from-beginning", "--timeout-ms", "30000")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "Unable to write to standard out, closing consumer.")
	whole := strings.Count(string(w.got), "\n")
	require.Positive(t, whole, "the reader got %q", w.got)
	require.Less(t, whole, 200, "the write was cut short")
	off, ok := committed(t, ctx, zk, group, topic, 0)
	require.True(t, ok, "nothing committed; the reader got %q", w.got)
	require.EqualValues(t, whole, off, "the reader got %q", w.got)
}
