package connector

import (
	"context"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestRecycledMessages: with zkconsumer.recycle.messages a loop that is
// done with each message before asking for the next reads every message
// of plain and compressed topics, exactly once and in order per partition,
// with its right value; a Clone taken along the way stays intact; and the
// first message, looked at again once the loop is done with its chunk, no
// longer holds its record: its memory was released for reuse, which never
// happens without the setting. (Every Next runs on the test's goroutine,
// where the release happens too, so that look is not a data race.)
func TestRecycledMessages(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	for _, codec := range []sarama.CompressionCodec{sarama.CompressionNone, sarama.CompressionZSTD} {
		t.Run(codec.String(), func(t *testing.T) {
			const n = 3000
			ctx := testwait.Context(t, 2*time.Minute)
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

			var rs []record
			var first, kept *Message
			var firstOffset int64
			keptSeq := -1
			for range n {
				m, err := s.Next(ctx)
				require.NoError(t, err)
				seq, err := testcluster.ParseSeq(m.Value)
				require.NoError(t, err, "partition %d offset %d", m.Partition, m.Offset)
				rs = append(rs, record{Consumer: "c", Partition: m.Partition, Offset: m.Offset, Seq: seq})
				if first == nil {
					first, firstOffset, kept, keptSeq = m, m.Offset, m.Clone(), seq
				}
			}
			checkOrder(t, rs)
			require.Len(t, distinct(rs), n, "every message once")

			seq, err := testcluster.ParseSeq(kept.Value)
			require.NoError(t, err)
			require.Equal(t, keptSeq, seq, "the clone kept its value")
			firstSeq, err := testcluster.ParseSeq(first.Value)
			require.False(t, err == nil && firstSeq == keptSeq && first.Offset == firstOffset,
				"the first message still holds its record: the connector did not recycle it")
			require.NoError(t, conn.Shutdown(context.Background()))
		})
	}
}
