package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/connector"
	"github.com/zkconsumer/zkconsumer/internal/testcluster"
	"github.com/zkconsumer/zkconsumer/stream"
)

// goMember is a zkconsumer group member with one stream that marks every
// message it receives consumed and commits only when told.
type goMember struct {
	t      *testing.T
	c      *connector.ConsumerConnector
	stream *stream.KafkaStream
	read   map[int32][]int64
}

func startMember(ctx context.Context, t *testing.T, c *testcluster.Cluster, topic, group string, cfg connector.Config) *goMember {
	t.Helper()
	cfg.ZookeeperConnect = c.ZKConnect()
	cfg.GroupID = group
	cfg.AutoCommitEnable = false
	cfg.AutoOffsetReset = connector.AutoOffsetResetSmallest
	conn, err := connector.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = conn.Shutdown(sctx)
	})
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	return &goMember{t: t, c: conn, stream: streams[topic][0], read: map[int32][]int64{}}
}

// consume reads n messages and marks them consumed.
func (m *goMember) consume(ctx context.Context, n int) {
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
func (m *goMember) stop(ctx context.Context) map[int32][]int64 {
	m.t.Helper()
	require.NoError(m.t, m.c.CommitOffsets(ctx))
	require.NoError(m.t, m.c.Shutdown(ctx))
	return m.read
}

// consumeAndStop runs a member that reads n messages, commits and stops.
func consumeAndStop(ctx context.Context, t *testing.T, c *testcluster.Cluster, topic, group string, cfg connector.Config, n int) map[int32][]int64 {
	t.Helper()
	m := startMember(ctx, t, c, topic, group, cfg)
	m.consume(ctx, n)
	return m.stop(ctx)
}
