//go:build matrix

package connector

import (
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// matrixMixedFormats writes one partition whose log holds format v0, then
// v1, then v2 messages, each compressed differently, as a topic has after
// its message.format.version was raised in steps during an upgrade; fetch
// responses then hold message sets and record batches together. One
// connector reads it all: every message once, in order, each with the
// timestamp its format carries. Needs AlterConfigs (Kafka 0.11+) and
// format v2, so Kafka 1.1.1 and newer.
func matrixMixedFormats(t *testing.T, c *testcluster.Cluster) {
	ctx := testwait.Context(t, 4*time.Minute)
	const perStage = 50
	stages := []struct {
		version string
		magic   int8
		codec   sarama.CompressionCodec
	}{
		{"0.9.0", 0, sarama.CompressionGZIP},
		{"0.10.0", 1, sarama.CompressionSnappy},
		{"1.0", 2, sarama.CompressionLZ4},
	}
	topic := testcluster.UniqueName("mixed")
	require.NoError(t, c.CreateTopicWithConfig(ctx, topic, 1, 2, map[string]string{"message.format.version": stages[0].version}))
	seq := 0
	// starts[i] is the first offset written in stage i's format.
	starts := make([]int64, len(stages))
	for i, st := range stages {
		if i > 0 {
			require.NoError(t, c.AlterTopicConfig(topic, map[string]string{"message.format.version": st.version}))
		}
		// The leader applies the new format when ZooKeeper tells it:
		// write one message at a time until one lands in it.
		matrixWaitFor(t, time.Minute, func() bool {
			p, err := c.Produce(ctx, topic, 1, testcluster.ProduceOptions{Partition: 0, FirstSeq: seq, ValueSize: 64, NotIdempotent: true})
			require.NoError(t, err)
			seq++
			off := p.Offsets[0][0]
			if magicAt(t, c, topic, off) != st.magic {
				return false
			}
			starts[i] = off
			return true
		}, func() string { return fmt.Sprintf("%s writes format v%d", topic, st.magic) })
		_, err := c.Produce(ctx, topic, perStage, testcluster.ProduceOptions{Partition: 0, FirstSeq: seq, Compression: st.codec, ValueSize: 64, NotIdempotent: true})
		require.NoError(t, err)
		seq += perStage
	}

	conn := newConnector(t, testConfig(c, testcluster.UniqueName("g-mixed")))
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	col := newMessageCollector()
	col.read(ctx, streams[topic][0])
	msgs := col.waitTopic(t, topic, seq, 2*time.Minute)
	shutdown(t, conn)
	col.wg.Wait()

	require.Len(t, msgs, seq, "every message once")
	for i, m := range msgs {
		require.Equal(t, int64(i), m.Offset, "offsets in order, none missing")
		s, err := testcluster.ParseSeq(m.Value)
		require.NoError(t, err)
		require.Equal(t, i, s, "message at offset %d", m.Offset)
		magic := 0
		for j := range stages {
			if m.Offset >= starts[j] {
				magic = j
			}
		}
		want := streamcore.CreateTime
		if magic == 0 {
			want = streamcore.NoTimestampType
		}
		require.Equal(t, want, m.TimestampType, "offset %d, format v%d", m.Offset, magic)
	}
}

// magicAt fetches partition 0 of topic at offset from its leader and
// returns the message format of what is stored there.
func magicAt(t *testing.T, c *testcluster.Cluster, topic string, offset int64) int8 {
	t.Helper()
	client, err := sarama.NewClient(c.BrokerAddrs(), c.ClientConfig())
	require.NoError(t, err)
	defer client.Close()
	leader, err := client.Leader(topic, 0)
	require.NoError(t, err)
	// Sarama lowers the version to what the broker serves; from v4 on
	// the broker returns what it stores, in any format.
	req := &sarama.FetchRequest{Version: 11, MaxBytes: 1 << 20, SessionEpoch: -1}
	req.AddBlock(topic, 0, offset, 1<<20, -1)
	resp, err := leader.Fetch(req)
	require.NoError(t, err)
	blk := resp.GetBlock(topic, 0)
	require.NotNil(t, blk)
	require.ErrorIs(t, blk.Err, sarama.ErrNoError)
	require.NotEmpty(t, blk.RecordsSet, "%s-0 at %d", topic, offset)
	rs := blk.RecordsSet[0]
	if rs.RecordBatch != nil {
		return 2
	}
	require.NotNil(t, rs.MsgSet)
	require.NotEmpty(t, rs.MsgSet.Messages)
	return rs.MsgSet.Messages[0].Msg.Version
}
