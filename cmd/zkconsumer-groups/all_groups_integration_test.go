package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/internal/zkbrokers"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
)

// mirrorChroot creates a chroot of its own on the cluster's ZooKeeper
// server holding copies of the cluster's broker registrations and of the
// given topics' znodes, so that groups written there describe real
// partitions while nothing else in the cluster shows up. It returns the
// connect string and a session on the chroot.
func mirrorChroot(t *testing.T, c *testcluster.Cluster, topics ...string) (string, *zksession.Session) {
	t.Helper()
	ctx := testwait.Context(t, time.Minute)
	src := session(t, c)
	raw, err := openRaw(c.ZKServer())
	require.NoError(t, err)
	t.Cleanup(func() { _ = raw.Close() })
	chroot := "/" + testcluster.UniqueName("groups-mirror")
	copyNode := func(path string) {
		data, _, err := src.Get(ctx, path)
		require.NoError(t, err)
		writeNode(t, raw, chroot+path, string(data))
	}
	ids, err := src.Children(ctx, zkbrokers.BrokerIDsPath)
	require.NoError(t, err)
	for _, id := range ids {
		copyNode(zkbrokers.BrokerIDsPath + "/" + id)
	}
	for _, topic := range topics {
		copyNode(zkbrokers.TopicPath(topic))
		parts, err := src.Children(ctx, zkbrokers.TopicPath(topic)+"/partitions")
		require.NoError(t, err)
		for _, p := range parts {
			copyNode(zkbrokers.TopicPath(topic) + "/partitions/" + p + "/state")
		}
	}
	connect := c.ZKServer() + chroot
	s, err := zksession.Dial(context.Background(), zksession.SessionConfig{Connect: connect, SessionTimeout: 10 * time.Second, ConnectionTimeout: 20 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return connect, s
}

// TestDescribeAllGroups: --describe --all-groups describes every group in
// turn, each under a "Group:" line, in --list order.
func TestDescribeAllGroups(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic := newTopic(t, c, 2, 10)
	connect, zk := mirrorChroot(t, c, topic)
	fakeGroup(t, zk, "alpha", topic, 1, 2)
	fakeGroup(t, zk, "beta", topic, 3, 4)
	require.Equal(t, []string{"alpha", "beta"}, strings.Fields(runOK(t, "--zookeeper", connect, "--list")))

	out := runOK(t, "--zookeeper", connect, "--describe", "--all-groups")
	parts := strings.Split(out, "\nGroup: ")
	require.Len(t, parts, 3, "two groups:\n%s", out)
	require.True(t, strings.HasPrefix(parts[1], "alpha\n"))
	require.True(t, strings.HasPrefix(parts[2], "beta\n"))
	require.Equal(t, [][6]string{
		{topic, "0", "1", "5", "4", "-"},
		{topic, "1", "2", "5", "3", "-"},
	}, describeRows(parts[1]))
	require.Equal(t, [][6]string{
		{topic, "0", "3", "5", "2", "-"},
		{topic, "1", "4", "5", "1", "-"},
	}, describeRows(parts[2]))

	out = runOK(t, "--zookeeper", connect, "--describe", "--all-groups", "--state")
	require.Regexp(t, `alpha\s+Empty\s+0\s+2\s+0`, out)
	require.Regexp(t, `beta\s+Empty\s+0\s+2\s+0`, out)
}
