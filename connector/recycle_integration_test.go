package connector

import (
	"context"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

// TestRecycledMessages: with zkconsumer.recycle.messages a loop that is
// done with each message before asking for the next reads every message
// of plain and compressed topics, exactly once and in order per partition,
// with its right value; a Clone taken along the way stays intact while the
// memory of the message it was taken from is reused.
func TestRecycledMessages(t *testing.T) {
	c := testcluster.Shared(t)
	for _, codec := range []sarama.CompressionCodec{sarama.CompressionNone, sarama.CompressionZSTD} {
		t.Run(codec.String(), func(t *testing.T) {
			const n = 3000
			ctx := testCtx(t, 2*time.Minute)
			topic := testcluster.UniqueName("conn-recycle")
			require.NoError(t, c.CreateTopic(ctx, topic, 4, 1))
			_, err := c.Produce(ctx, topic, n, testcluster.ProduceOptions{Partition: -1, ValueSize: 512, Compression: codec})
			require.NoError(t, err)

			cfg := testConfig(c, testcluster.UniqueName("g-recycle"))
			cfg.RecycleMessages = true
			conn := newConnector(t, cfg)
			streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
			require.NoError(t, err)
			s := streams[topic][0]

			first, err := s.Next(ctx)
			require.NoError(t, err)
			kept := first.Clone()
			keptSeq, err := testcluster.ParseSeq(kept.Value)
			require.NoError(t, err)

			col := newCollector()
			col.add(record{Consumer: "c", Partition: first.Partition, Offset: first.Offset, Seq: keptSeq, At: time.Now()})
			col.read(ctx, "c", s)
			rs := col.waitAll(t, 0, n, time.Minute)
			require.Len(t, rs, n)
			checkOrder(t, rs)
			col.mu.Lock()
			require.Empty(t, col.errs, "every value read intact")
			col.mu.Unlock()

			seq, err := testcluster.ParseSeq(kept.Value)
			require.NoError(t, err)
			require.Equal(t, keptSeq, seq, "the clone kept its value")
			// The message itself was recycled: its struct holds another
			// record by now (or was cleared), which is what the setting is for.
			require.False(t, first.Offset == kept.Offset && string(first.Value) == string(kept.Value),
				"the first message was never recycled: offset %d", first.Offset)
			require.NoError(t, conn.Shutdown(context.Background()))
		})
	}
}
