package connector

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/kafkagroup"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestNextGenerationKeepsStreams: in an incremental update a kept
// partition stays on its stream (so it is neither revoked nor restarted),
// and new partitions go to the streams with the fewest, lowest first.
func TestNextGenerationKeepsStreams(t *testing.T) {
	c := &ConsumerConnector{id: "me", log: slog.New(slog.DiscardHandler)}
	r := &kafkaRun{k: &kafkaGroup{c: c}, threads: map[string]int{"t": 2}}
	th := func(i int) zkutil.ConsumerThreadID { return zkutil.ConsumerThreadID{ConsumerID: "me", Thread: i} }
	tp := func(p int32) zkutil.TopicPartition { return zkutil.TopicPartition{Topic: "t", Partition: p} }
	cur := &generation{owned: map[zkutil.TopicPartition]zkutil.ConsumerThreadID{tp(0): th(0), tp(1): th(0), tp(2): th(1), tp(3): th(1)}}
	next := r.nextGeneration(cur, &kafkagroup.Generation{}, 9, map[string][]int32{"t": {1, 3, 4, 5, 6}, "other": {0}})
	require.Equal(t, map[zkutil.TopicPartition]zkutil.ConsumerThreadID{
		tp(1): th(0), tp(3): th(1), // kept, same streams
		tp(4): th(0), tp(5): th(1), tp(6): th(0), // new: fewest first
	}, next.owned, "no stream for topic other: ignored")
	require.Equal(t, int64(9), next.id)
}
