package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/connector"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/stream"
)

// readingMember is a zkconsumer group member with one stream that records
// the offsets it reads, marks them consumed, and commits when told.
type readingMember struct {
	t      *testing.T
	conn   *connector.ConsumerConnector
	stream *stream.KafkaStream
	read   map[int32][]int64
}

// startReadingMember joins group on topic with cfg (memberConfig's, with
// changes).
func startReadingMember(ctx context.Context, t *testing.T, topic string, cfg connector.Config) *readingMember {
	t.Helper()
	conn, err := connector.New(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = conn.Shutdown(sctx)
	})
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	return &readingMember{t: t, conn: conn, stream: streams[topic][0], read: map[int32][]int64{}}
}

// consume reads n messages and marks them consumed.
func (m *readingMember) consume(ctx context.Context, n int) {
	m.t.Helper()
	for range n {
		msg, err := m.stream.Next(ctx)
		require.NoError(m.t, err)
		m.read[msg.Partition] = append(m.read[msg.Partition], msg.Offset)
		m.stream.MarkConsumed(msg)
	}
}

// stop commits what was consumed, shuts the member down and returns the
// offsets it read, by partition.
func (m *readingMember) stop(ctx context.Context) map[int32][]int64 {
	m.t.Helper()
	require.NoError(m.t, m.conn.CommitOffsets(ctx))
	require.NoError(m.t, m.conn.Shutdown(ctx))
	return m.read
}

// javaConsume reads the topic with Kafka 3.9's console consumer in group;
// auto.offset.reset=earliest makes a lost migration show as duplicates.
// It stops 5 s after the last record: alone in the group, the consumer
// fetches all three partitions from the start, and what is left of them
// (at most 200 messages of 32 bytes) comes in its first fetches, so that
// 5 s with nothing new, ten times its fetch.max.wait.ms, show that nothing
// more is coming.
func javaConsume(ctx context.Context, t *testing.T, c *testcluster.Cluster, topic, group string) map[int32][]int64 {
	t.Helper()
	recs, err := testcluster.JavaConsoleConsume(ctx, c.BrokerAddrs()[0], topic, group, 5*time.Second,
		"--consumer-property", "auto.offset.reset=earliest")
	require.NoError(t, err)
	out := map[int32][]int64{}
	for _, r := range recs {
		out[r.Partition] = append(out[r.Partition], r.Offset)
	}
	return out
}
