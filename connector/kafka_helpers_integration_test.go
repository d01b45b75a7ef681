package connector

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

// bothClusters runs f against Kafka 3.9 in ZooKeeper mode and against
// Kafka 4.x in KRaft mode, where no ZooKeeper exists.
func bothClusters(t *testing.T, f func(t *testing.T, c *testcluster.Cluster)) {
	t.Run("kafka3.9", func(t *testing.T) { f(t, testcluster.Shared(t)) })
	t.Run("kraft4", func(t *testing.T) { f(t, testcluster.SharedKRaft(t)) })
}

// kafkaConfig is a fast-moving Kafka-coordinated member of group.
func kafkaConfig(c *testcluster.Cluster, group string) Config {
	cfg := DefaultConfig()
	cfg.GroupID = group
	cfg.GroupCoordination = CoordinationKafka
	cfg.BootstrapServers = strings.Join(c.BrokerAddrs(), ",")
	cfg.AutoOffsetReset = AutoOffsetResetSmallest
	cfg.SessionTimeout = 6 * time.Second // the brokers' group.min.session.timeout.ms
	cfg.HeartbeatInterval = 300 * time.Millisecond
	cfg.MaxPollInterval = 20 * time.Second
	cfg.MetadataMaxAge = 500 * time.Millisecond
	cfg.AutoCommitInterval = 200 * time.Millisecond
	cfg.RefreshLeaderBackoff = 100 * time.Millisecond
	return cfg
}

// groupMember is one member of a group as the coordinator describes it.
type groupMember struct {
	id         string
	partitions map[string][]int32
}

// describeGroup returns the group's state and members (DescribeGroups).
func describeGroup(t *testing.T, c *testcluster.Cluster, group string) (string, []groupMember) {
	t.Helper()
	state, members, err := c.DescribeGroup(group)
	require.NoError(t, err)
	var out []groupMember
	for id, ps := range members {
		out = append(out, groupMember{id: id, partitions: ps})
	}
	slices.SortFunc(out, func(a, b groupMember) int { return strings.Compare(a.id, b.id) })
	return state, out
}

// waitGroup waits until the group is stable with members members that own
// each of topic's partitions exactly once, and returns them.
func waitGroup(t *testing.T, c *testcluster.Cluster, group, topic string, partitions int32, members int) []groupMember {
	t.Helper()
	var last []groupMember
	require.Eventually(t, func() bool {
		state, ms := describeGroup(t, c, group)
		last = ms
		if state != "Stable" || len(ms) != members {
			return false
		}
		seen := map[int32]int{}
		for _, m := range ms {
			for _, p := range m.partitions[topic] {
				seen[p]++
			}
		}
		for p := range partitions {
			if seen[p] != 1 {
				return false
			}
		}
		return len(seen) == int(partitions)
	}, 90*time.Second, 100*time.Millisecond, "group %s never settled with %d members over %d partitions (last: %+v)", group, members, partitions, last)
	return last
}

// kafkaCommitted reads the group's committed offsets of topic from the
// coordinator.
func kafkaCommitted(t *testing.T, c *testcluster.Cluster, group, topic string, partitions int32) map[int32]int64 {
	t.Helper()
	out, err := c.KafkaCommitted(group, topic, partitions)
	require.NoError(t, err)
	return out
}

// shutdown shuts conn down within a minute.
func shutdown(t *testing.T, conn *ConsumerConnector) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, conn.Shutdown(ctx))
}
