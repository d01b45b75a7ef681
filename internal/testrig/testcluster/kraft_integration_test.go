package testcluster

import (
	"encoding/base64"
	"sort"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

func TestRandomClusterID(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		id, err := randomClusterID()
		require.NoError(t, err)
		require.Len(t, id, 22, "16 bytes in unpadded base64")
		require.NotEqual(t, byte('-'), id[0])
		raw, err := base64.RawURLEncoding.DecodeString(id)
		require.NoError(t, err)
		require.Len(t, raw, 16)
		require.False(t, seen[id])
		seen[id] = true
	}
}

func TestParseJavaRecordsSkipsDeprecationNotices(t *testing.T) {
	out := "Option --consumer-property is deprecated and will be removed in a future version. Use --command-property instead.\n" +
		"Partition:1\tOffset:42\tseq=7;\n"
	recs, err := parseJavaRecords(out)
	require.NoError(t, err)
	require.Equal(t, []JavaRecord{{Partition: 1, Offset: 42, Value: "seq=7;"}}, recs)
	_, err = parseJavaRecords("something else\n")
	require.Error(t, err, "any other line is still an error")
}

func TestKRaftStateEnvLines(t *testing.T) {
	s := State{Dir: "/tmp/" + kraftDirPrefix + "1", KRaft: true, Brokers: []string{"127.0.0.1:1", "127.0.0.1:2"}}
	require.Equal(t, "export KRAFT_BROKERS=127.0.0.1:1,127.0.0.1:2\n", s.EnvLines(), "no ZOOKEEPER_CONNECT or KAFKA_BROKERS to clobber")
	t.Setenv(EnvKRaftBrokers, "127.0.0.1:1,127.0.0.1:2")
	c, ok := FromEnvKRaft()
	require.True(t, ok)
	require.True(t, c.KRaft())
	require.Empty(t, c.ZKConnect())
	require.Equal(t, []string{"127.0.0.1:1", "127.0.0.1:2"}, c.BrokerAddrs())
	require.ErrorIs(t, c.KillBroker(0), ErrNotControlled)
	require.ErrorIs(t, c.KillZooKeeper(), ErrNoZooKeeper)
}

// TestKRaftClusterServesTopicsAndGroups shows what the KRaft cluster is: a
// Kafka 4 broker without ZooKeeper whose topics the harness creates,
// produces to and deletes, read back with sarama and with Kafka 4's Java
// console consumer in a group, over the classic and the KIP-848 protocol.
func TestKRaftClusterServesTopicsAndGroups(t *testing.T) {
	t.Parallel()
	c := SharedKRaft(t)
	ctx := testwait.Context(t, 3*time.Minute)
	require.True(t, c.KRaft())
	require.Empty(t, c.ZKConnect(), "a KRaft cluster has no ZooKeeper")
	_, err := c.dialZK(ctx)
	require.ErrorIs(t, err, ErrNoZooKeeper)

	fetch, err := c.BrokerVersion(ctx)
	require.NoError(t, err)
	require.GreaterOrEqual(t, fetch, int16(17), "Kafka 4 serves Fetch v17 and up")
	ids, err := c.RegisteredBrokers(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, ids)
	t.Logf("KRaft broker %s serves Fetch up to v%d; brokers %v", c.BrokerAddrs()[0], fetch, ids)

	topic := UniqueName("kraft-topic")
	require.NoError(t, c.CreateTopic(ctx, topic, 2, 1))
	const n = 40
	got, err := c.Produce(ctx, topic, n, ProduceOptions{Partition: -1, Compression: sarama.CompressionZSTD})
	require.NoError(t, err)
	require.Len(t, got.Offsets, 2)
	st, err := c.ReadPartitionState(ctx, topic, 1)
	require.NoError(t, err)
	require.Contains(t, ids, st.Leader)
	require.Equal(t, []int{st.Leader}, st.ISR)

	// sarama reads everything back.
	consumer, err := sarama.NewConsumer(c.BrokerAddrs(), c.ClientConfig())
	require.NoError(t, err)
	defer consumer.Close()
	var seqs []int
	for p := range int32(2) {
		pc, err := consumer.ConsumePartition(topic, p, sarama.OffsetOldest)
		require.NoError(t, err)
		for range got.Offsets[p] {
			select {
			case m := <-pc.Messages():
				seq, err := ParseSeq(m.Value)
				require.NoError(t, err)
				seqs = append(seqs, seq)
			case <-ctx.Done():
				t.Fatal(ctx.Err())
			}
		}
		require.NoError(t, pc.Close())
	}
	requireSeqs(t, n, seqs)

	// Kafka 4's console consumer, as a member of a group over the classic
	// protocol and over the new consumer protocol (KIP-848), reads them too
	// and commits its position; the two groups run side by side.
	t.Run("JavaGroups", func(t *testing.T) {
		for _, protocol := range []string{"classic", "consumer"} {
			t.Run(protocol, func(t *testing.T) {
				t.Parallel()
				group := UniqueName("kraft-java-" + protocol)
				recs, err := JavaConsoleConsume4(ctx, c.BrokerAddrs()[0], topic, group, 5*time.Second,
					"--consumer-property", "auto.offset.reset=earliest",
					"--consumer-property", "group.protocol="+protocol)
				require.NoError(t, err)
				requireRecordSeqs(t, n, recs)
				require.Equal(t, map[int32]int64{0: n / 2, 1: n / 2}, committedOffsets(t, c, group, topic), "group %s", group)
				t.Logf("Kafka 4 ConsoleConsumer (group.protocol=%s) read %d records in group %s and committed", protocol, len(recs), group)
			})
		}
	})

	require.NoError(t, c.DeleteTopic(ctx, topic))
	listed, err := c.topicListed(topic)
	require.NoError(t, err)
	require.False(t, listed)
}

// TestJava4ConsoleConsumerOn39 shows that Kafka 4's console consumer, the
// other Java member of the mixed groups, also reads from the 3.9 broker.
func TestJava4ConsoleConsumerOn39(t *testing.T) {
	t.Parallel()
	c := Shared(t)
	ctx := testwait.Context(t, 2*time.Minute)
	topic := UniqueName("harness-java4-on-39")
	require.NoError(t, c.CreateTopic(ctx, topic, 2, 1))
	const n = 20
	_, err := c.Produce(ctx, topic, n, ProduceOptions{Partition: -1})
	require.NoError(t, err)
	group := UniqueName("java4-on-39")
	recs, err := JavaConsoleConsume4(ctx, c.BrokerAddrs()[0], topic, group, 5*time.Second,
		"--consumer-property", "auto.offset.reset=earliest")
	require.NoError(t, err)
	requireRecordSeqs(t, n, recs)
	require.Equal(t, map[int32]int64{0: n / 2, 1: n / 2}, committedOffsets(t, c, group, topic))
}

// TestKRaftKillAndRestartBroker kills the broker-only node of a two-node
// KRaft cluster (node 0 is broker and controller), after moving leaders
// between the two, and checks that the controller fences it and moves leadership, that the survivor keeps
// serving, that RestartBroker brings it back into the metadata and the
// ISR, and that StopBroker shuts it down in a controlled way.
func TestKRaftKillAndRestartBroker(t *testing.T) {
	c := parallelPrivate(t, Options{KRaft: true, Brokers: 2, Controllers: 1, BrokerSessionTimeout: 3 * time.Second})
	ctx := testwait.Context(t, 3*time.Minute)
	topic := UniqueName("kraft-kill")
	require.NoError(t, c.CreateTopic(ctx, topic, 2, 2))
	ids, err := c.RegisteredBrokers(ctx)
	require.NoError(t, err)
	require.Equal(t, []int{0, 1}, ids)
	for p := range int32(2) {
		for _, to := range []int{1, 0} {
			require.NoError(t, c.MoveLeader(ctx, topic, p, to), "partition %d to broker %d", p, to)
		}
	}

	require.NoError(t, c.KillBroker(1))
	require.False(t, c.BrokerRunning(1))
	testwait.WaitFor(t, 60*time.Second, func() bool {
		ids, err := c.RegisteredBrokers(ctx)
		return err == nil && len(ids) == 1 && ids[0] == 0
	}, "the controller fences the killed broker")
	for p := range int32(2) {
		testwait.WaitFor(t, 30*time.Second, func() bool {
			st, err := c.ReadPartitionState(ctx, topic, p)
			return err == nil && st.Leader == 0 && len(st.ISR) == 1
		}, "leadership and ISR move to broker 0")
	}
	_, err = c.Produce(ctx, topic, 10, ProduceOptions{Partition: -1})
	require.NoError(t, err, "the survivor serves acks=all with the shrunken ISR")

	require.NoError(t, c.RestartBroker(ctx, 1))
	ids, err = c.RegisteredBrokers(ctx)
	require.NoError(t, err)
	require.Equal(t, []int{0, 1}, ids)
	for p := range int32(2) {
		testwait.WaitFor(t, 60*time.Second, func() bool {
			st, err := c.ReadPartitionState(ctx, topic, p)
			return err == nil && len(st.ISR) == 2
		}, "the restarted broker rejoins the ISR")
	}
	_, err = c.Produce(ctx, topic, 10, ProduceOptions{Partition: -1, FirstSeq: 10})
	require.NoError(t, err)

	// A graceful stop (controlled shutdown) ends the JVM and the broker
	// leaves the metadata.
	require.NoError(t, c.StopBroker(1))
	require.False(t, c.BrokerRunning(1))
	testwait.WaitFor(t, 30*time.Second, func() bool {
		ids, err := c.RegisteredBrokers(ctx)
		return err == nil && len(ids) == 1 && ids[0] == 0
	}, "the stopped broker leaves the metadata")
}

// requireSeqs checks that seqs holds 0..n-1, each once.
func requireSeqs(t *testing.T, n int, seqs []int) {
	t.Helper()
	sorted := append([]int(nil), seqs...)
	sort.Ints(sorted)
	require.Len(t, sorted, n)
	for i, s := range sorted {
		require.Equal(t, i, s, "every message exactly once")
	}
}

// requireRecordSeqs checks that the records a Java console consumer
// printed carry the sequence numbers 0..n-1, each once.
func requireRecordSeqs(t *testing.T, n int, recs []JavaRecord) {
	t.Helper()
	seqs := make([]int, 0, len(recs))
	for _, r := range recs {
		seq, err := ParseSeq([]byte(r.Value))
		require.NoError(t, err)
		seqs = append(seqs, seq)
	}
	requireSeqs(t, n, seqs)
}

// committedOffsets reads a group's committed offsets for topic.
func committedOffsets(t *testing.T, c *Cluster, group, topic string) map[int32]int64 {
	t.Helper()
	admin, err := sarama.NewClusterAdmin(c.BrokerAddrs(), c.ClientConfig())
	require.NoError(t, err)
	defer admin.Close()
	resp, err := admin.ListConsumerGroupOffsets(group, map[string][]int32{topic: {0, 1}})
	require.NoError(t, err)
	out := map[int32]int64{}
	for p, b := range resp.Blocks[topic] {
		require.Equal(t, sarama.ErrNoError, b.Err)
		out[p] = b.Offset
	}
	return out
}
