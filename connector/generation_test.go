package connector

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestMovesToAnotherStreamIsReleasedAndGained: in a hand-over, a
// partition the member keeps on the same stream moves neither way (the
// listener hears nothing of it); one that goes to another of the member's
// streams is both released and gained; the others are released or gained
// alone. The listener is told these sets (handOver).
func TestMovesToAnotherStreamIsReleasedAndGained(t *testing.T) {
	tp := func(p int32) zkutil.TopicPartition { return zkutil.TopicPartition{Topic: "t", Partition: p} }
	th := func(i int) zkutil.ConsumerThreadID { return zkutil.ConsumerThreadID{ConsumerID: "me", Thread: i} }
	prev := &generation{owned: map[zkutil.TopicPartition]zkutil.ConsumerThreadID{tp(0): th(0), tp(1): th(0), tp(2): th(1)}}
	next := &generation{owned: map[zkutil.TopicPartition]zkutil.ConsumerThreadID{tp(0): th(0), tp(1): th(1), tp(3): th(1)}}
	removed, added := moves(prev, next)
	require.Equal(t, map[string][]int32{"t": {1, 2}}, topicsOf(removed))
	require.Equal(t, map[string][]int32{"t": {1, 3}}, topicsOf(added))
}
