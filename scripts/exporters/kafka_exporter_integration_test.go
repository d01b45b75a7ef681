package exporters

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/krallistic/kazoo-go"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/connector"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

// kazooTimeout is the ZooKeeper session timeout of the test's kazoo-go
// clients. kafka_exporter passes kazoo a nil Config (1 s, which the servers
// raise to their minimum); a longer one keeps a loaded machine from
// expiring the reader's session mid-test. It changes nothing of what is
// read.
const kazooTimeout = 10 * time.Second

// openKazoo connects kazoo-go to the ZooKeeper servers and chroot of a
// zookeeper.connect string ("h1:p1,h2:p2/chroot"), split the way kazoo's
// own NewKazooFromConnectionString splits it: the servers to NewKazoo, the
// chroot to Config.Chroot, which kazoo prefixes to every path it reads
// (kazoo hands the servers to go-zookeeper, which knows no chroot, so a
// connect string with a chroot must not go to NewKazoo as it is).
func openKazoo(t *testing.T, zkConnect string) *kazoo.Kazoo {
	t.Helper()
	servers, chroot := kazoo.ParseConnectionString(zkConnect)
	kz, err := kazoo.NewKazoo(servers, &kazoo.Config{Chroot: chroot, Timeout: kazooTimeout})
	require.NoError(t, err)
	t.Cleanup(func() { _ = kz.Close() })
	return kz
}

// exporterLag computes kafka_exporter's kafka_consumergroup_lag_zookeeper
// for one partition the way its collector does: the group's offset from
// kazoo's FetchOffset, the partition's newest offset from the broker
// (sarama's GetOffset), the difference, and no sample at all unless the
// offset is positive. It returns the sample and whether there is one.
func exporterLag(t *testing.T, client sarama.Client, group *kazoo.Consumergroup, topic string, partition int32) (int64, bool) {
	t.Helper()
	offset, err := group.FetchOffset(topic, partition)
	require.NoError(t, err)
	newest, err := client.GetOffset(topic, partition, sarama.OffsetNewest)
	require.NoError(t, err)
	if offset <= 0 {
		return 0, false
	}
	return newest - offset, true
}

// instanceIDs returns the ids of a kazoo instance list, sorted.
func instanceIDs(list kazoo.ConsumergroupInstanceList) []string {
	ids := make([]string, 0, len(list))
	for _, i := range list {
		ids = append(ids, i.ID)
	}
	slices.Sort(ids)
	return ids
}

// TestKafkaExporterReadsZooKeeperOffsets consumes a different number of
// messages from each partition of a topic with a zkconsumer connector
// (auto.commit.enable=false), commits them with CommitOffsets, and reads
// the group with github.com/krallistic/kazoo-go, the library
// kafka_exporter's --use.consumelag.zookeeper reads it with, at the one
// version the module proxy serves. While the member runs and after its
// Shutdown, kazoo lists the group among the cluster's consumer groups
// (Consumergroups, kafka_exporter's first call), and FetchOffset (what
// kafka_exporter calls per partition) and FetchAllOffsets return exactly
// the offsets zkconsumer committed, per partition; kafka_exporter's lag
// sample, the partition's newest offset minus that offset, is the number of
// messages produced to the partition and not consumed. While the member
// runs, kazoo's Instances lists it by the id zkconsumer registered and
// PartitionOwner names the thread that owns each partition, as Kafka's
// "<consumerId>-<thread>"; after Shutdown both are gone and the offsets
// stay.
//
// kazoo reads under the chroot of the cluster's zookeeper.connect
// (Config.Chroot). kafka_exporter itself gives kazoo no Config, hence no
// chroot: it reads /consumers at ZooKeeper's root, where a group whose
// zookeeper.connect has a chroot (zkconsumer's, as the Scala consumer's)
// is not; the test checks that too.
func TestKafkaExporterReadsZooKeeperOffsets(t *testing.T) {
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// consumed: how many messages of each partition the group consumes,
	// different for each so that offsets read from the wrong partition
	// cannot match.
	consumed := map[int32]int{0: 7, 1: 13, 2: 21}
	const partitions, perPartition = 3, 30
	topic := testcluster.UniqueName("exporter")
	require.NoError(t, c.CreateTopic(ctx, topic, partitions, 1))
	produced, err := c.Produce(ctx, topic, partitions*perPartition, testcluster.ProduceOptions{Partition: -1})
	require.NoError(t, err)
	for p, n := range consumed {
		require.Len(t, produced.Offsets[p], perPartition, "partition %d", p)
		require.Equal(t, int64(perPartition-1), produced.Offsets[p][perPartition-1], "partition %d starts at 0, without gaps", p)
		require.Less(t, n, perPartition)
	}

	cfg := connector.DefaultConfig()
	cfg.ZooKeeperConnect = c.ZKConnect()
	cfg.GroupID = testcluster.UniqueName("g-exporter")
	cfg.AutoOffsetReset = connector.AutoOffsetResetSmallest
	cfg.AutoCommitEnable = false
	conn, err := connector.New(ctx, cfg)
	require.NoError(t, err)
	running := true
	defer func() {
		if running {
			_ = conn.Shutdown(context.Background())
		}
	}()
	// One stream per partition, so that each stream reads one partition.
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: partitions})
	require.NoError(t, err)
	assigned := conn.Assignment()
	require.NoError(t, assigned.Err)
	require.Equal(t, []int32{0, 1, 2}, assigned.Partitions[topic])

	// committed: the next offset to consume of each partition, as the
	// messages themselves say.
	committed := map[int32]int64{}
	for p, n := range consumed {
		s := streams[topic][assigned.Streams[connector.TopicPartition{Topic: topic, Partition: p}]]
		for range n {
			m, err := s.Next(ctx)
			require.NoError(t, err)
			require.Equal(t, p, m.Partition)
			s.MarkConsumed(m)
			committed[p] = m.Offset + 1
		}
		require.Equal(t, int64(n), committed[p], "partition %d", p)
	}
	require.NoError(t, conn.CommitOffsets(ctx))

	client, err := sarama.NewClient(c.BrokerAddrs(), c.ClientConfig())
	require.NoError(t, err)
	defer client.Close()
	kz := openKazoo(t, c.ZKConnect())

	// checkOffsets reads the group's offsets as kafka_exporter does.
	checkOffsets := func(when string) *kazoo.Consumergroup {
		t.Helper()
		groups, err := kz.Consumergroups()
		require.NoError(t, err)
		group := groups.Find(cfg.GroupID)
		require.NotNil(t, group, "%s: kazoo lists group %s", when, cfg.GroupID)
		for p := range int32(partitions) {
			got, err := group.FetchOffset(topic, p)
			require.NoError(t, err)
			require.Equal(t, committed[p], got, "%s: FetchOffset of partition %d", when, p)
			lag, ok := exporterLag(t, client, group, topic, p)
			require.True(t, ok, "%s: kafka_exporter exports a lag for partition %d", when, p)
			require.Equal(t, int64(perPartition-consumed[p]), lag, "%s: kafka_exporter's lag of partition %d", when, p)
		}
		all, err := group.FetchAllOffsets()
		require.NoError(t, err)
		require.Equal(t, map[string]map[int32]int64{topic: committed}, all, "%s: FetchAllOffsets", when)
		return group
	}

	group := checkOffsets("while the member runs")
	instances, err := group.Instances()
	require.NoError(t, err)
	require.Equal(t, []string{conn.ConsumerID()}, instanceIDs(instances), "kazoo's Instances: the member's registration")
	for p := range int32(partitions) {
		owner, err := group.PartitionOwner(topic, p)
		require.NoError(t, err)
		require.NotNil(t, owner, "partition %d has an owner", p)
		thread := assigned.Streams[connector.TopicPartition{Topic: topic, Partition: p}]
		require.Equal(t, fmt.Sprintf("%s-%d", conn.ConsumerID(), thread), owner.ID, "owner of partition %d", p)
	}
	topics, err := group.Topics()
	require.NoError(t, err)
	require.Len(t, topics, 1)
	require.Equal(t, topic, topics[0].Name, "kazoo's Topics: the topics the group owns partitions of")

	running = false
	require.NoError(t, conn.Shutdown(ctx))

	group = checkOffsets("after Shutdown")
	instances, err = group.Instances()
	require.NoError(t, err)
	require.Empty(t, instances, "after Shutdown the member is no longer registered")
	for p := range int32(partitions) {
		owner, err := group.PartitionOwner(topic, p)
		require.NoError(t, err)
		require.Nil(t, owner, "after Shutdown partition %d has no owner", p)
	}

	// kafka_exporter's own kazoo (no chroot) looks at ZooKeeper's root,
	// where the group is not.
	require.NotEmpty(t, c.Chroot(), "the shared cluster's zookeeper.connect has a chroot")
	servers, _ := kazoo.ParseConnectionString(c.ZKConnect())
	root, err := kazoo.NewKazoo(servers, &kazoo.Config{Timeout: kazooTimeout})
	require.NoError(t, err)
	defer root.Close()
	got, err := root.Consumergroup(cfg.GroupID).FetchOffset(topic, 0)
	require.NoError(t, err)
	require.Equal(t, int64(-1), got, "without a chroot, kazoo finds no offset of the group")
}
