package connector

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// addTopicACL gives the anonymous principal of the cluster's PLAINTEXT
// listener perm (allow or deny) for op on topic.
func addTopicACL(t *testing.T, c *testcluster.Cluster, topic string, op sarama.AclOperation, perm sarama.AclPermissionType) {
	t.Helper()
	admin, err := sarama.NewClusterAdmin(c.BrokerAddrs(), c.ClientConfig())
	require.NoError(t, err)
	defer admin.Close()
	require.NoError(t, admin.CreateACL(sarama.Resource{ResourceType: sarama.AclResourceTopic, ResourceName: topic,
		ResourcePatternType: sarama.AclPatternLiteral},
		sarama.Acl{Principal: "User:ANONYMOUS", Host: "*", Operation: op, PermissionType: perm}))
}

// removeTopicACLs deletes every ACL of topic.
func removeTopicACLs(t *testing.T, c *testcluster.Cluster, topic string) {
	t.Helper()
	admin, err := sarama.NewClusterAdmin(c.BrokerAddrs(), c.ClientConfig())
	require.NoError(t, err)
	defer admin.Close()
	_, err = admin.DeleteACL(sarama.AclFilter{ResourceType: sarama.AclResourceTopic, ResourceName: &topic,
		ResourcePatternTypeFilter: sarama.AclPatternLiteral, Operation: sarama.AclOperationAny,
		PermissionType: sarama.AclPermissionAny}, false)
	require.NoError(t, err)
}

// newConnectorLax is newConnector for a connector whose Shutdown may fail
// (its last commit is refused).
func newConnectorLax(t *testing.T, cfg Config) *ConsumerConnector {
	t.Helper()
	c, err := New(t.Context(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.Shutdown(ctx); err != nil {
			t.Logf("shutdown: %v", err)
		}
	})
	return c
}

// TestKafkaModeRefusalsAndOutagesAreReported runs against a broker with
// an authorizer: a subscribed topic the consumer may not describe is
// reported on Errors (ErrTopicAuthorizationFailed, naming it) while the
// other topic is consumed; an automatic commit the broker refuses is
// reported wrapping ErrAutoCommit and the broker's error, and fetches it
// refuses once (not at every retry); and once the
// broker is gone, the failing heartbeats and metadata checks are reported
// before the membership is lost. (Before, the topic was dropped from the
// assignment in silence, and heartbeats and metadata checks failed
// silently.)
func TestKafkaModeRefusalsAndOutagesAreReported(t *testing.T) {
	oneAtATime(t)
	c := testcluster.Private(t, testcluster.Options{KRaft: true, BrokerProperties: map[string]string{
		"authorizer.class.name":          "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"allow.everyone.if.no.acl.found": "true",
	}})
	ctx := testwait.Context(t, 3*time.Minute)
	const n = 40
	open := newTopic(t, c, 1, n)
	closed := newTopic(t, c, 1, 10)
	addTopicACL(t, c, closed, sarama.AclOperationAll, sarama.AclPermissionDeny)

	group := testcluster.UniqueName("g-authz")
	conn := newConnectorLax(t, kafkaConfig(c, group))
	errs := drainErrors(t, conn)
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{open: 1, closed: 1})
	require.NoError(t, err)
	reported := errs.await(t, 30*time.Second, "the unauthorised topic", func(err error) bool {
		return errors.Is(err, ErrTopicAuthorizationFailed)
	})
	require.ErrorIs(t, reported, sarama.ErrTopicAuthorizationFailed)
	require.ErrorContains(t, reported, closed)
	require.NotContains(t, reported.Error(), open)
	require.Equal(t, map[string][]int32{open: {0}}, conn.Assignment().Partitions)

	// Read half, let it be committed (all but the last message read, which
	// counts as consumed once the next is asked for), and wait until the
	// rest is fetched.
	s := streams[open][0]
	for range n / 2 {
		_, err := s.Next(ctx)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		return kafkaCommitted(t, c, group, open, 1)[0] == n/2-1
	}, 30*time.Second, 50*time.Millisecond, "the first half committed")
	require.Eventually(t, func() bool {
		st := conn.Stats()
		return len(st.Partitions) == 1 && st.Partitions[0].FetchedOffset == n
	}, 30*time.Second, 50*time.Millisecond, "the rest fetched")
	// Reading the topic is no longer allowed (describing it still is), so
	// neither is committing it; the messages already fetched are still
	// handed out.
	addTopicACL(t, c, open, sarama.AclOperationDescribe, sarama.AclPermissionAllow)
	addTopicACL(t, c, open, sarama.AclOperationRead, sarama.AclPermissionDeny)
	for range n / 2 {
		_, err := s.Next(ctx)
		require.NoError(t, err)
	}
	failed := errs.await(t, 30*time.Second, "the refused automatic commit", func(err error) bool {
		return errors.Is(err, ErrAutoCommit)
	})
	require.ErrorIs(t, failed, sarama.ErrTopicAuthorizationFailed)
	// The fetches of the topic are refused too, every RefreshLeaderBackoff
	// (100 ms here): that is reported once, not each time.
	fetchRefused := func(err error) bool {
		return errors.Is(err, sarama.ErrTopicAuthorizationFailed) && strings.Contains(err.Error(), "fetch from broker")
	}
	errs.await(t, 30*time.Second, "the refused fetch", fetchRefused)
	time.Sleep(3 * time.Second) // thirty refusals at least
	require.Equal(t, 1, errs.count(fetchRefused), "the refused fetch is reported once a minute, not every retry")
	removeTopicACLs(t, c, open)

	require.NoError(t, c.KillBroker(0))
	hb := errs.await(t, 20*time.Second, "the failing heartbeats", func(err error) bool {
		return strings.Contains(err.Error(), "heartbeats of generation")
	})
	require.ErrorIs(t, hb, syscall.ECONNREFUSED)
	require.NotErrorIs(t, hb, ErrOwnershipLost, "reported before the membership is lost")
	md := errs.await(t, 20*time.Second, "the failing metadata check", func(err error) bool {
		return strings.Contains(err.Error(), "check the partitions")
	})
	require.ErrorContains(t, md, c.BrokerAddrs()[0])
}

// TestZooKeeperModeAutoCommitErrorIsRecognisable: in ZooKeeper mode too, a
// failed automatic commit (here ZooKeeper refuses the write: the group's
// offsets node of the topic is read-only) is reported wrapping
// ErrAutoCommit and the cause, in a *CommitError that names the offset it
// tried to write.
func TestZooKeeperModeAutoCommitErrorIsRecognisable(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic := newTopic(t, c, 1, 10)
	group := testcluster.UniqueName("g-autocommit-err")
	conn, events, err := zk.Connect(c.ZKServers(), 10*time.Second, zk.WithLogger(zkQuiet{}))
	require.NoError(t, err)
	defer conn.Close()
	go func() {
		for range events {
		}
	}()
	parent := c.Chroot() + zkutil.OffsetsPath(group)
	for _, p := range []string{c.Chroot() + zkutil.GroupPath(group), parent} {
		_, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
	}
	node := c.Chroot() + zkutil.OffsetsTopicPath(group, topic)
	_, err = conn.Create(node, nil, 0, zk.WorldACL(zk.PermRead|zk.PermAdmin))
	require.NoError(t, err)

	cfg := testConfig(c, group)
	cfg.AutoOffsetReset = AutoOffsetResetSmallest
	cfg.AutoCommitInterval = 200 * time.Millisecond
	cc := newConnectorLax(t, cfg)
	errs := drainErrors(t, cc)
	ctx := testwait.Context(t, 2*time.Minute)
	streams, err := cc.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	// Three messages handed out: the first two count as consumed, so the
	// commits end up trying offset 2.
	for range 3 {
		_, err = streams[topic][0].Next(ctx)
		require.NoError(t, err)
	}
	tp := TopicPartition{Topic: topic, Partition: 0}
	failed := errs.await(t, 30*time.Second, "the refused automatic commit of offset 2", func(err error) bool {
		var ce *CommitError
		return errors.Is(err, ErrAutoCommit) && errors.As(err, &ce) && ce.Offsets[tp] == 2
	})
	require.ErrorIs(t, failed, zk.ErrNoAuth)
	var ce *CommitError
	require.ErrorAs(t, failed, &ce)
	require.Equal(t, map[TopicPartition]int64{tp: 2}, ce.Offsets)
	require.ErrorContains(t, failed, tp.String()+"@2")
	_, err = conn.SetACL(node, zk.WorldACL(zk.PermAll), -1)
	require.NoError(t, err)
}

type zkQuiet struct{}

func (zkQuiet) Printf(string, ...any) {}
