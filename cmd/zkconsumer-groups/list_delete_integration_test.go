package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// writeNode creates or overwrites a persistent znode, parents included.
func writeNode(t *testing.T, zk *zksession.Session, path, data string) {
	t.Helper()
	require.NoError(t, zk.SetOrCreate(context.Background(), path, []byte(data)))
}

// fakeGroup writes a group with committed offsets for topic's partitions
// 0..len(offsets)-1 and an owners directory, as a stopped group leaves it.
func fakeGroup(t *testing.T, zk *zksession.Session, group, topic string, offsets ...int64) {
	t.Helper()
	for p, off := range offsets {
		writeNode(t, zk, zkutil.OffsetPath(group, topic, int32(p)), string(zkutil.EncodeOffset(off)))
	}
	require.NoError(t, zk.EnsurePath(context.Background(), zkutil.OwnersTopicPath(group, topic)))
	require.NoError(t, zk.EnsurePath(context.Background(), zkutil.ConsumerIDsPath(group)))
}

// fakeMember registers a member (a persistent node, so that it outlives
// the session; the test deletes it).
func fakeMember(t *testing.T, zk *zksession.Session, group, id, topic string) {
	t.Helper()
	reg, err := zkutil.EncodeRegistration(zkutil.Registration{Subscription: map[string]int{topic: 1}, Pattern: zkutil.PatternStatic, Timestamp: time.Now().UnixMilli()})
	require.NoError(t, err)
	writeNode(t, zk, zkutil.ConsumerIDPath(group, id), string(reg))
}

func groupExists(t *testing.T, zk *zksession.Session, group string) bool {
	t.Helper()
	ok, _, err := zk.Exists(context.Background(), zkutil.GroupPath(group))
	require.NoError(t, err)
	return ok
}

// TestListMatchesKafka111: --list prints the groups Kafka 1.1.1's --list
// prints, sorted.
func TestListMatchesKafka111(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic := newTopic(t, c, 1, 0)
	// A chroot of its own: other tests create groups on the shared cluster
	// at any time, which would change the list between the two runs.
	connect, zk := mirrorChroot(t, c, topic)
	for i := 0; i < 3; i++ {
		fakeGroup(t, zk, testcluster.UniqueName("g-list"), topic, 0)
	}
	ours := strings.Fields(runOK(t, "--zookeeper", connect, "--list"))
	out, err := testcluster.RunOldTool(testwait.Context(t, 3*time.Minute), "kafka.admin.ConsumerGroupCommand", "--zookeeper", connect, "--list")
	require.NoError(t, err)
	theirs := strings.Fields(out)
	require.True(t, slices.IsSorted(ours), "sorted: %v", ours)
	slices.Sort(theirs)
	require.Equal(t, theirs, ours)
	require.Len(t, ours, 3)
}

// TestDeleteRefusedWhileActiveLikeKafka111: both tools refuse to delete a
// group with a registered member, and both delete it once the member left.
// Ours exits 1 where Kafka 1.1.1 printed an error and exited 0. --delete
// --group --topic deletes one topic's offsets and owners, and the whole
// group when it is its only topic, as Kafka's did.
func TestDeleteRefusedWhileActiveLikeKafka111(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	zk := session(t, c)
	topic := newTopic(t, c, 2, 20)
	ours, theirs := testcluster.UniqueName("g-del-ours"), testcluster.UniqueName("g-del-kafka")
	mOurs := startMember(t, c, ours, topic, 1)
	mOurs.consume(t, 5)
	mTheirs := startMember(t, c, theirs, topic, 1)
	mTheirs.consume(t, 5)

	r := runTool(t, "--zookeeper", c.ZKConnect(), "--delete", "--group", ours)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "Delete for group '"+ours+"' failed because its consumers are still active")
	require.Contains(t, r.stderr, mOurs.conn.ConsumerID(), "the refusal names the member")
	require.True(t, groupExists(t, zk, ours))
	out, err := testcluster.RunOldTool(testwait.Context(t, 3*time.Minute), "kafka.admin.ConsumerGroupCommand", "--zookeeper", c.ZKConnect(), "--delete", "--group", theirs)
	require.NoError(t, err)
	require.Contains(t, out, "Delete for group '"+theirs+"' failed because its consumers are still active")
	require.True(t, groupExists(t, zk, theirs))

	// Two groups named, one active: nothing is deleted.
	mOurs.stop(t)
	r = runTool(t, "--zookeeper", c.ZKConnect(), "--delete", "--group", ours, "--group", theirs)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "nothing was deleted")
	require.True(t, groupExists(t, zk, ours))

	mTheirs.stop(t)
	require.Contains(t, runOK(t, "--zookeeper", c.ZKConnect(), "--delete", "--group", ours),
		"Deleted all consumer group information for group '"+ours+"' in zookeeper.")
	require.False(t, groupExists(t, zk, ours))
	out, err = testcluster.RunOldTool(testwait.Context(t, 3*time.Minute), "kafka.admin.ConsumerGroupCommand", "--zookeeper", c.ZKConnect(), "--delete", "--group", theirs)
	require.NoError(t, err)
	require.Contains(t, out, "Deleted all consumer group information for group '"+theirs+"' in zookeeper.")
	require.False(t, groupExists(t, zk, theirs))

	// Unknown group.
	r = runTool(t, "--zookeeper", c.ZKConnect(), "--delete", "--group", ours)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "Delete for group '"+ours+"' failed because group does not exist.")
}

// TestDeleteTopic: --delete --group --topic removes one topic of an
// inactive group (both tools), the whole group when it is the only topic;
// --delete --topic alone cleans every inactive group and keeps active ones.
func TestDeleteTopic(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	zk := session(t, c)
	t1, t2 := newTopic(t, c, 1, 0), newTopic(t, c, 1, 0)
	g := testcluster.UniqueName("g-deltopic")
	fakeGroup(t, zk, g, t1, 3)
	fakeGroup(t, zk, g, t2, 4)
	k := testcluster.UniqueName("g-deltopic-kafka")
	fakeGroup(t, zk, k, t1, 3)
	fakeGroup(t, zk, k, t2, 4)

	require.Contains(t, runOK(t, "--zookeeper", c.ZKConnect(), "--delete", "--group", g, "--topic", t1),
		"Deleted consumer group information for group '"+g+"' topic '"+t1+"' in zookeeper.")
	out, err := testcluster.RunOldTool(testwait.Context(t, 3*time.Minute), "kafka.admin.ConsumerGroupCommand", "--zookeeper", c.ZKConnect(), "--delete", "--group", k, "--topic", t1)
	require.NoError(t, err)
	require.Contains(t, out, "Deleted consumer group information for group '"+k+"' topic '"+t1+"' in zookeeper.")
	for _, group := range []string{g, k} {
		topics, err := zk.Children(context.Background(), zkutil.OffsetsPath(group))
		require.NoError(t, err)
		require.Equal(t, []string{t2}, topics, "group %s", group)
		topics, err = zk.Children(context.Background(), zkutil.OwnersPath(group))
		require.NoError(t, err)
		require.Equal(t, []string{t2}, topics, "group %s", group)
	}
	// The last topic takes the group with it.
	require.Contains(t, runOK(t, "--zookeeper", c.ZKConnect(), "--delete", "--group", g, "--topic", t2), "Deleted all consumer group information")
	require.False(t, groupExists(t, zk, g))

	// --topic alone: every inactive group; an active one is kept.
	a, b := testcluster.UniqueName("g-deltopic-a"), testcluster.UniqueName("g-deltopic-b")
	t3 := newTopic(t, c, 1, 0)
	fakeGroup(t, zk, a, t3, 1)
	fakeGroup(t, zk, a, t2, 1)
	fakeGroup(t, zk, b, t3, 1)
	fakeGroup(t, zk, b, t2, 1)
	fakeMember(t, zk, b, b+"_fake", t3)
	r := runTool(t, "--zookeeper", c.ZKConnect(), "--delete", "--topic", t3)
	require.Equal(t, 0, r.code)
	require.Contains(t, r.stdout, "Deleted consumer group information for group '"+a+"' topic '"+t3+"'")
	require.Contains(t, r.stderr, "group '"+b+"' still has registered members")
	ok, _, err := zk.Exists(context.Background(), zkutil.OffsetsTopicPath(a, t3))
	require.NoError(t, err)
	require.False(t, ok)
	ok, _, err = zk.Exists(context.Background(), zkutil.OffsetsTopicPath(b, t3))
	require.NoError(t, err)
	require.True(t, ok)
}
