package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// committed reads group's committed offsets of topic's partitions
// 0..partitions-1; a missing node reads as -2.
func committed(t *testing.T, zk *zksession.Session, group, topic string, partitions int32) []int64 {
	t.Helper()
	out := make([]int64, partitions)
	// The members commit through whichever server they are connected to:
	// catch up with the leader first.
	require.NoError(t, zk.Sync(context.Background(), zkutil.OffsetsTopicPath(group, topic)))
	for p := int32(0); p < partitions; p++ {
		data, _, err := zk.Get(context.Background(), zkutil.OffsetPath(group, topic, p))
		if err != nil {
			out[p] = -2
			continue
		}
		out[p], err = zkutil.DecodeOffset("", data)
		require.NoError(t, err)
	}
	return out
}

// resumesAt starts a member of group and requires that the first message
// it gets from each partition is at want[p]; it shuts down without
// committing.
func resumesAt(t *testing.T, c *testcluster.Cluster, group, topic string, want []int64) {
	t.Helper()
	m := startMember(t, c, group, topic, 1)
	defer m.stop(t)
	ctx := testwait.Context(t, 2*time.Minute)
	first := map[int32]int64{}
	for len(first) < len(want) {
		msg, err := m.streams[0].Next(ctx)
		require.NoError(t, err)
		if _, seen := first[msg.Partition]; !seen {
			first[msg.Partition] = msg.Offset
		}
	}
	for p, off := range want {
		require.Equal(t, off, first[int32(p)], "partition %d resumes at the planned offset", p)
	}
}

// reset runs --reset-offsets on group with extra options and --execute.
func reset(t *testing.T, c *testcluster.Cluster, group string, args ...string) result {
	t.Helper()
	r := runTool(t, append([]string{"--zookeeper", c.ZKConnect(), "--reset-offsets", "--group", group, "--execute"}, args...)...)
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	return r
}

// TestResetModes: every reset mode, with --execute, writes the planned
// offsets, and a member of the group then resumes exactly there. Offsets
// outside the log are clamped, with a note; --dry-run writes nothing.
func TestResetModes(t *testing.T) {
	c := testcluster.Shared(t)
	zk := session(t, c)
	topic := newTopic(t, c, 2, 80) // 40 per partition
	require.NoError(t, c.DeleteRecords(topic, 0, 5))
	group := testcluster.UniqueName("g-reset")
	m := startMember(t, c, group, topic, 1)
	m.consume(t, 20)
	m.stop(t)
	before := committed(t, zk, group, topic, 2)
	require.Equal(t, int64(20), before[0]+before[1]-5, "a real group's commit (5 deleted below p0)")

	// Dry run (the default): the plan is printed, nothing written.
	r := runTool(t, "--zookeeper", c.ZKConnect(), "--reset-offsets", "--group", group, "--all-topics", "--to-earliest")
	require.Equal(t, 0, r.code)
	require.Contains(t, r.stdout, "NEW-OFFSET")
	require.Contains(t, r.stderr, "Dry run")
	require.Equal(t, before, committed(t, zk, group, topic, 2))

	reset(t, c, group, "--all-topics", "--to-earliest")
	require.Equal(t, []int64{5, 0}, committed(t, zk, group, topic, 2))
	resumesAt(t, c, group, topic, []int64{5, 0})

	// Clamped both ways, and said so.
	r = reset(t, c, group, "--topic", topic, "--to-offset", "1000")
	require.Contains(t, r.stdout, "offset 1000 is above the log-end offset 40; using 40")
	require.Equal(t, []int64{40, 40}, committed(t, zk, group, topic, 2))
	r = reset(t, c, group, "--topic", topic, "--to-offset", "2")
	require.Contains(t, r.stdout, "offset 2 is below the log-start offset 5; using 5")
	require.Equal(t, []int64{5, 2}, committed(t, zk, group, topic, 2))

	reset(t, c, group, "--topic", topic, "--to-offset", "12")
	require.Equal(t, []int64{12, 12}, committed(t, zk, group, topic, 2))
	resumesAt(t, c, group, topic, []int64{12, 12})

	reset(t, c, group, "--all-topics", "--shift-by", "-5")
	require.Equal(t, []int64{7, 7}, committed(t, zk, group, topic, 2))
	resumesAt(t, c, group, topic, []int64{7, 7})
	reset(t, c, group, "--all-topics", "--shift-by", "3")
	require.Equal(t, []int64{10, 10}, committed(t, zk, group, topic, 2))

	reset(t, c, group, "--all-topics", "--to-current")
	require.Equal(t, []int64{10, 10}, committed(t, zk, group, topic, 2))

	// One partition only.
	reset(t, c, group, "--topic", topic+":1", "--to-offset", "30")
	require.Equal(t, []int64{10, 30}, committed(t, zk, group, topic, 2))
	resumesAt(t, c, group, topic, []int64{10, 30})

	// By time: messages produced after a point in time.
	time.Sleep(1100 * time.Millisecond) // a clear gap in message timestamps
	at := time.Now()
	time.Sleep(1100 * time.Millisecond)
	_, err := c.Produce(testwait.Context(t, time.Minute), topic, 20, testcluster.ProduceOptions{Partition: -1, FirstSeq: 80})
	require.NoError(t, err)
	reset(t, c, group, "--all-topics", "--to-datetime", at.UTC().Format("2006-01-02T15:04:05.000")+"Z")
	require.Equal(t, []int64{40, 40}, committed(t, zk, group, topic, 2), "the first offsets after the time")
	resumesAt(t, c, group, topic, []int64{40, 40})
	reset(t, c, group, "--all-topics", "--to-earliest")
	since := time.Since(at)
	reset(t, c, group, "--all-topics", "--by-duration", fmt.Sprintf("PT%.3fS", since.Seconds()))
	require.Equal(t, []int64{40, 40}, committed(t, zk, group, topic, 2), "the first offsets after now minus the duration")
	r = reset(t, c, group, "--all-topics", "--to-datetime", time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05.000")+"Z")
	require.Contains(t, r.stdout, "no message at or after")
	require.Equal(t, []int64{50, 50}, committed(t, zk, group, topic, 2), "after the last message: the log end")

	reset(t, c, group, "--all-topics", "--to-earliest")
	reset(t, c, group, "--all-topics", "--to-latest")
	require.Equal(t, []int64{50, 50}, committed(t, zk, group, topic, 2))
	_, err = c.Produce(testwait.Context(t, time.Minute), topic, 2, testcluster.ProduceOptions{Partition: -1, FirstSeq: 100})
	require.NoError(t, err)
	resumesAt(t, c, group, topic, []int64{50, 50})

	// From a file, CSV as Kafka's --export writes it.
	file := filepath.Join(t.TempDir(), "plan.csv")
	require.NoError(t, os.WriteFile(file, []byte(fmt.Sprintf("%s,0,21\n%s,1,22\n", topic, topic)), 0o644))
	reset(t, c, group, "--from-file", file)
	require.Equal(t, []int64{21, 22}, committed(t, zk, group, topic, 2))
	resumesAt(t, c, group, topic, []int64{21, 22})
}

// TestResetRefusals: a reset is refused while a member is registered, for
// an unknown group, topic or partition, and for a malformed file, naming
// the line; in each case nothing is written and the exit code is 1.
func TestResetRefusals(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	zk := session(t, c)
	topic := newTopic(t, c, 2, 20)
	group := testcluster.UniqueName("g-refuse")
	m := startMember(t, c, group, topic, 1)
	m.consume(t, 6)
	before := committed(t, zk, group, topic, 2)

	r := runTool(t, "--zookeeper", c.ZKConnect(), "--reset-offsets", "--group", group, "--all-topics", "--to-earliest", "--execute")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "registered member")
	require.Contains(t, r.stderr, m.conn.ConsumerID())
	require.Empty(t, r.stdout)
	m.stop(t)
	require.Equal(t, before, committed(t, zk, group, topic, 2))

	fail := func(wantErr string, args ...string) {
		t.Helper()
		r := runTool(t, append([]string{"--zookeeper", c.ZKConnect(), "--reset-offsets", "--execute"}, args...)...)
		require.Equal(t, 1, r.code, "%v", args)
		require.Contains(t, r.stderr, wantErr, "%v", args)
		require.Equal(t, before, committed(t, zk, group, topic, 2), "nothing written for %v", args)
	}
	fail("unknown group", "--group", "no-such-"+group, "--all-topics", "--to-earliest")
	fail("unknown topic", "--group", group, "--topic", "no-such-topic-"+group, "--to-earliest")
	fail("unknown partition", "--group", group, "--topic", topic+":0,7", "--to-earliest")

	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte(fmt.Sprintf("%s,0,1\n%s,1\n%s,x,3\n", topic, topic, topic)), 0o644))
	r = runTool(t, "--zookeeper", c.ZKConnect(), "--reset-offsets", "--execute", "--group", group, "--from-file", bad)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "line 2")
	require.Contains(t, r.stderr, "line 3")
	require.Contains(t, r.stderr, "nothing was written")
	require.Equal(t, before, committed(t, zk, group, topic, 2))

	missingPart := filepath.Join(dir, "missing.csv")
	require.NoError(t, os.WriteFile(missingPart, []byte(fmt.Sprintf("%s,0,1\n%s,9,1\n", topic, topic)), 0o644))
	fail("unknown partition", "--group", group, "--from-file", missingPart)
	fail("no such file", "--group", group, "--from-file", filepath.Join(dir, "absent.csv"))
}

// Issue 19: --reset-offsets --to-latest refused a new group that
// --from-file accepted. A group that does not exist yet can be given
// offsets for the topics named with --topic, in every mode that needs no
// committed offset; --all-topics still needs the group's own topics.
func TestResetNewGroup(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	zk := session(t, c)
	topic := newTopic(t, c, 1, 7)

	latest := testcluster.UniqueName("g-new-latest")
	reset(t, c, latest, "--topic", topic, "--to-latest")
	require.Equal(t, []int64{7}, committed(t, zk, latest, topic, 1))

	at := testcluster.UniqueName("g-new-offset")
	reset(t, c, at, "--topic", topic+":0", "--to-offset", "3")
	require.Equal(t, []int64{3}, committed(t, zk, at, topic, 1))
	resumesAt(t, c, at, topic, []int64{3})

	r := runTool(t, "--zookeeper", c.ZKConnect(), "--reset-offsets", "--execute", "--group", testcluster.UniqueName("g-new-all"), "--all-topics", "--to-latest")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "unknown group")
	require.Contains(t, r.stderr, "--topic", "says how to give a new group offsets")
}
