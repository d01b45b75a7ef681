package connector

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testcluster"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

type nopZKLogger struct{}

func (nopZKLogger) Printf(string, ...any) {}

// aclOf reads the ACL of a node (path relative to the chroot).
func aclOf(t *testing.T, c *testcluster.Cluster, path string) []zk.ACL {
	t.Helper()
	conn, events, err := zk.Connect([]string{c.ZKServer()}, 10*time.Second, zk.WithLogger(nopZKLogger{}))
	require.NoError(t, err)
	defer conn.Close()
	go func() {
		for range events {
		}
	}()
	acl, _, err := conn.GetACL(c.Chroot() + path)
	require.NoError(t, err)
	return acl
}

// TestZooKeeperACLs: with zookeeper.auth and zookeeper.set.acl the nodes a
// member creates under /consumers/<group> can be read by everyone but
// changed only by its identity; a member of another identity fails at once
// with NOAUTH naming the node.
func TestZooKeeperACLs(t *testing.T) {
	c := testcluster.SharedSecure(t)
	topic := newTopic(t, c, 2, 50)
	group := testcluster.UniqueName("g-acl")
	cfg := testConfig(c, group)
	cfg.Security.ZooKeeperAuth = "alice:alice-zk-secret"
	cfg.Security.ZooKeeperSetACL = true
	ctx := testCtx(t, 2*time.Minute)
	alice := newConnector(t, cfg)
	streams, err := alice.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	col := newCollector()
	col.read(ctx, "alice", streams[topic][0])
	col.waitAll(t, 0, 50, time.Minute)
	require.NoError(t, alice.CommitOffsets(ctx))

	secured := map[string]bool{}
	for _, path := range []string{
		zkutil.GroupPath(group),
		zkutil.ConsumerIDsPath(group),
		zkutil.ConsumerIDPath(group, alice.ConsumerID()),
		zkutil.OffsetPath(group, topic, 0),
	} {
		acl := aclOf(t, c, path)
		var worldRead, aliceAll bool
		for _, a := range acl {
			switch {
			case a.Scheme == "world" && a.ID == "anyone" && a.Perms == zk.PermRead:
				worldRead = true
			case a.Scheme == "digest" && strings.HasPrefix(a.ID, "alice:") && a.Perms == zk.PermAll:
				aliceAll = true
			}
		}
		require.True(t, worldRead && aliceAll && len(acl) == 2, "%s has ACL %+v", path, acl)
		secured[path] = true
	}
	for _, a := range aclOf(t, c, zkutil.ConsumersPath) {
		require.NotEqual(t, "digest", a.Scheme, "/consumers stays open")
	}

	for _, other := range []string{"bob:bob-zk-secret", ""} {
		bcfg := testConfig(c, group)
		bcfg.Security.ZooKeeperAuth = other
		bcfg.RebalanceMaxRetries = 2
		bob := newConnector(t, bcfg)
		start := time.Now()
		_, err := bob.CreateMessageStreams(ctx, map[string]int{topic: 1})
		t.Logf("identity %q after %v: %v", other, time.Since(start), err)
		require.Error(t, err)
		require.True(t, errors.Is(err, zkutil.ErrNoAuth), "%v", err)
		require.Contains(t, err.Error(), "/consumers/"+group+"/ids/")
		require.NotContains(t, err.Error(), "secret")
		require.Less(t, time.Since(start), 5*time.Second, "no retry loop")
	}
}
