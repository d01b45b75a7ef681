package connector

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestKafkaModeLastCommitsSurviveCoordinatorMove: the group's coordinator
// broker is killed just before a member's commit on revoke (a rebalance,
// here because partitions were added) and just before its commit on
// Shutdown. Both commits keep trying, finding the coordinator again, until
// __consumer_offsets has a new leader (the dead broker's ZooKeeper session
// expires first), as Java's consumer does, so the committed offsets are
// the consumed positions and nothing consumed is read again. (With 4 tries
// 200 ms apart, both commits gave up long before the move, and the group
// re-read everything since the last automatic commit.) A private cluster of
// 3 brokers, Kafka 3.9 in ZooKeeper mode, with __consumer_offsets
// replicated three times and the topics on brokers that stay up.
func TestKafkaModeLastCommitsSurviveCoordinatorMove(t *testing.T) {
	t.Parallel()
	c := testcluster.Private(t, testcluster.Options{Brokers: 3})
	ctx := testwait.Context(t, 8*time.Minute)
	const partitions = 4
	controller := controllerOf(t, c)
	avoid := map[int32]bool{controller: true} // not to kill: the controller and the brokers killed already
	revokeGroup, revokeCoord := groupCoordinatedByAnotherBroker(t, c, "g-move-revoke", avoid)
	avoid[revokeCoord] = true
	var survivors []int32 // of the revoke's kill
	for id := range int32(len(c.BrokerAddrs())) {
		if id != revokeCoord {
			survivors = append(survivors, id)
		}
	}
	admin, err := sarama.NewClusterAdmin(c.BrokerAddrs(), c.ClientConfig())
	require.NoError(t, err)
	defer admin.Close()
	revokeTopic, revokeEnds := replicatedTopic(t, c, admin, partitions, survivors, 200)
	closeTopic, closeEnds := replicatedTopic(t, c, admin, partitions, nil, 200)

	t.Run("revoke", func(t *testing.T) {
		group, coord := revokeGroup, revokeCoord
		conn := newConnector(t, moveConfig(c, group))
		col := readAllConsumed(t, ctx, conn, revokeTopic, revokeEnds)
		require.Empty(t, committedOffsets(t, c, group, revokeTopic, partitions), "nothing committed before the move")

		require.NoError(t, c.KillBroker(int(coord)))
		killedAt := time.Now()
		// The leader sees partition 4 appear and rejoins: the revoke
		// commits while the coordinator is dead.
		require.NoError(t, admin.CreatePartitions(revokeTopic, partitions+1, [][]int32{survivors}, false))
		require.Eventually(t, func() bool { return len(conn.Stats().Partitions) == partitions+1 }, 2*time.Minute, 50*time.Millisecond,
			"the member never rejoined with the added partition")
		t.Logf("rejoined %v after the coordinator was killed", time.Since(killedAt).Round(time.Millisecond))
		got := committedOffsets(t, c, group, revokeTopic, partitions)
		require.Equal(t, revokeEnds, got, "the commit on revoke did not reach the moved coordinator")
		// The new generation starts at the committed offsets: nothing is
		// read again.
		waitConsumed(t, conn, revokeTopic, revokeEnds)
		time.Sleep(time.Second)
		for seq, n := range distinct(col.snapshot()) {
			require.Equal(t, 1, n, "message %d read again after the rebalance", seq)
		}
	})

	t.Run("close", func(t *testing.T) {
		group, coord := groupCoordinatedByAnotherBroker(t, c, "g-move-close", avoid)
		cfg := moveConfig(c, group)
		// Only the broker about to die as bootstrap.servers: the member
		// must learn the others to find the moved coordinator.
		cfg.BootstrapServers = c.BrokerAddrs()[coord]
		conn, err := New(ctx, cfg)
		require.NoError(t, err)
		t.Cleanup(func() { _ = conn.Shutdown(context.Background()) })
		readAllConsumed(t, ctx, conn, closeTopic, closeEnds)
		require.Empty(t, committedOffsets(t, c, group, closeTopic, partitions), "nothing committed before the move")

		require.NoError(t, c.KillBroker(int(coord)))
		start := time.Now()
		sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		err = conn.Shutdown(sctx)
		t.Logf("Shutdown took %v (err %v)", time.Since(start).Round(time.Millisecond), err)
		got := committedOffsets(t, c, group, closeTopic, partitions)
		require.Equal(t, closeEnds, got, "the commit on close did not reach the moved coordinator")
	})
}

// moveConfig is a member that outlives a coordinator move: its session
// (30 s) is longer than the move takes, and it commits automatically only
// when its generation ends (the interval is longer than the test).
func moveConfig(c *testcluster.Cluster, group string) Config {
	cfg := kafkaConfig(c, group)
	cfg.SessionTimeout = 30 * time.Second
	cfg.HeartbeatInterval = time.Second
	cfg.MaxPollInterval = time.Minute
	cfg.AutoCommitInterval = 10 * time.Minute
	if os.Getenv("ZKCONSUMER_TEST_LOG") != "" { // debug logs of the member on stderr
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return cfg
}

// replicatedTopic creates a topic with its replicas on brokers (on every
// broker if nil), writes n messages over its partitions, and returns it
// with each partition's end offset.
func replicatedTopic(t *testing.T, c *testcluster.Cluster, admin sarama.ClusterAdmin, partitions int32, brokers []int32, n int) (string, map[int32]int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic := testcluster.UniqueName("move")
	if brokers == nil {
		require.NoError(t, c.CreateTopic(ctx, topic, partitions, int16(len(c.BrokerAddrs()))))
	} else {
		assignment := map[int32][]int32{}
		for p := range partitions {
			assignment[p] = brokers
		}
		require.NoError(t, admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: -1, ReplicationFactor: -1, ReplicaAssignment: assignment}, false))
		client, err := sarama.NewClient(c.BrokerAddrs(), c.ClientConfig())
		require.NoError(t, err)
		defer client.Close()
		require.Eventually(t, func() bool {
			if client.RefreshMetadata(topic) != nil {
				return false
			}
			for p := range partitions {
				if _, err := client.Leader(topic, p); err != nil {
					return false
				}
			}
			return true
		}, time.Minute, 100*time.Millisecond, "topic %s has no leaders", topic)
	}
	produced, err := c.Produce(ctx, topic, n, testcluster.ProduceOptions{Partition: -1})
	require.NoError(t, err)
	ends := map[int32]int64{}
	for p, offs := range produced.Offsets {
		ends[p] = offs[len(offs)-1] + 1
	}
	require.Len(t, ends, int(partitions))
	return topic, ends
}

// readAllConsumed reads topic with one stream of conn until every message
// up to ends is consumed (the reader asked for the next one), and keeps
// reading into the collector it returns.
func readAllConsumed(t *testing.T, ctx context.Context, conn *ConsumerConnector, topic string, ends map[int32]int64) *collector {
	t.Helper()
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	col := newCollector()
	col.read(ctx, "m", streams[topic][0])
	waitConsumed(t, conn, topic, ends)
	for seq, n := range distinct(col.snapshot()) {
		require.Equal(t, 1, n, "message %d read twice", seq)
	}
	return col
}

// waitConsumed waits until conn's consumed offset of each partition of
// topic in ends is the one given.
func waitConsumed(t *testing.T, conn *ConsumerConnector, topic string, ends map[int32]int64) {
	t.Helper()
	require.Eventually(t, func() bool {
		consumed := map[int32]int64{}
		for _, p := range conn.Stats().Partitions {
			if _, ok := ends[p.Partition]; ok && p.Topic == topic {
				consumed[p.Partition] = p.ConsumedOffset
			}
		}
		return maps.Equal(consumed, ends)
	}, 2*time.Minute, 20*time.Millisecond, "the member never consumed %v of %s", ends, topic)
}

// controllerOf returns the id of the cluster's controller.
func controllerOf(t *testing.T, c *testcluster.Cluster) int32 {
	t.Helper()
	client, err := sarama.NewClient(c.BrokerAddrs(), c.ClientConfig())
	require.NoError(t, err)
	defer client.Close()
	b, err := client.Controller()
	require.NoError(t, err)
	return b.ID()
}

// groupCoordinatedByAnotherBroker returns a fresh group name whose
// coordinator is a broker not in avoid, and that broker's id.
func groupCoordinatedByAnotherBroker(t *testing.T, c *testcluster.Cluster, prefix string, avoid map[int32]bool) (string, int32) {
	t.Helper()
	client, err := sarama.NewClient(c.BrokerAddrs(), c.ClientConfig())
	require.NoError(t, err)
	defer client.Close()
	for range 200 {
		group := testcluster.UniqueName(prefix)
		b, err := client.Coordinator(group)
		require.NoError(t, err)
		if !avoid[b.ID()] {
			return group, b.ID()
		}
	}
	t.Fatalf("no group coordinated by a broker other than %v", avoid)
	return "", 0
}

// committedOffsets reads the group's committed offsets of partitions
// 0..partitions-1 of topic, finding the coordinator again until it
// answers (it may be moving).
func committedOffsets(t *testing.T, c *testcluster.Cluster, group, topic string, partitions int32) map[int32]int64 {
	t.Helper()
	var out map[int32]int64
	var last error
	require.Eventually(t, func() bool {
		out, last = fetchCommitted(c, group, topic, partitions)
		return last == nil
	}, 2*time.Minute, 200*time.Millisecond, "no coordinator answered OffsetFetch")
	return out
}

func fetchCommitted(c *testcluster.Cluster, group, topic string, partitions int32) (map[int32]int64, error) {
	client, err := sarama.NewClient(c.BrokerAddrs(), c.ClientConfig())
	if err != nil {
		return nil, err
	}
	defer client.Close()
	coord, err := client.Coordinator(group)
	if err != nil {
		return nil, err
	}
	req := &sarama.OffsetFetchRequest{Version: 5, ConsumerGroup: group}
	for p := range partitions {
		req.AddPartition(topic, p)
	}
	resp, err := coord.FetchOffset(req)
	if err != nil {
		return nil, err
	}
	if resp.Err != sarama.ErrNoError {
		return nil, resp.Err
	}
	out := map[int32]int64{}
	for p := range partitions {
		b := resp.GetBlock(topic, p)
		if b == nil {
			continue
		}
		if b.Err != sarama.ErrNoError {
			return nil, fmt.Errorf("partition %d: %w", p, b.Err)
		}
		if b.Offset >= 0 {
			out[p] = b.Offset
		}
	}
	return out, nil
}
