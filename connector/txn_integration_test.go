package connector

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestCommitReachesLogEndPastTransactionMarker: a partition whose last
// record is a transaction's commit marker is committed at its log end once
// every message has been consumed, not one short of it for ever (which
// monitoring would show as a lag of 1).
func TestCommitReachesLogEndPastTransactionMarker(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 2*time.Minute)
	topic := newTopic(t, c, 1, 0)
	_, err := c.ProduceTxn(ctx, topic, 0, 0, 10, true)
	require.NoError(t, err)
	end, err := c.LogEnd(topic, 0)
	require.NoError(t, err)
	require.Equal(t, int64(11), end, "ten messages and the commit marker")

	for _, isolation := range []IsolationLevel{IsolationReadCommitted, IsolationReadUncommitted} {
		t.Run(isolation.String(), func(t *testing.T) {
			group := testcluster.UniqueName("g-txn")
			cfg := testConfig(c, group)
			cfg.IsolationLevel = isolation
			conn := newConnector(t, cfg)
			streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
			require.NoError(t, err)
			col := newCollector()
			col.read(ctx, "s", streams[topic][0])
			col.waitAll(t, 0, 10, time.Minute)
			// Auto-commit runs every 200 ms.
			deadline := time.Now().Add(10 * time.Second)
			for readOffsets(t, c, group, topic, 1)[0] != end && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
			}
			require.Equal(t, end, readOffsets(t, c, group, topic, 1)[0], "committed offset")
			require.NoError(t, conn.Shutdown(ctx))
			col.wg.Wait()
			require.Equal(t, end, readOffsets(t, c, group, topic, 1)[0], "committed offset after shutdown")
		})
	}
}
