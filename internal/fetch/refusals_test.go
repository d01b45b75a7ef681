package fetch

import (
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestRefusalsArePaced: a partition whose fetch keeps failing the same way
// is reported once per repeat interval, at once when the error changes,
// and independently of the other partitions.
func TestRefusalsArePaced(t *testing.T) {
	var r refusals
	a, b := zkutil.TopicPartition{Topic: "t", Partition: 0}, zkutil.TopicPartition{Topic: "t", Partition: 1}
	t0 := time.Unix(1_000_000, 0)
	const repeat = time.Minute
	require.True(t, r.due(a, sarama.ErrTopicAuthorizationFailed, t0, repeat), "the first failure")
	for i := range 100 {
		now := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		require.False(t, r.due(a, sarama.ErrTopicAuthorizationFailed, now, repeat), "the same failure at %v", now.Sub(t0))
	}
	require.True(t, r.due(b, sarama.ErrTopicAuthorizationFailed, t0.Add(time.Second), repeat), "another partition")
	require.True(t, r.due(a, sarama.ErrUnsupportedForMessageFormat, t0.Add(20*time.Second), repeat), "another error code")
	require.False(t, r.due(a, sarama.ErrUnsupportedForMessageFormat, t0.Add(30*time.Second), repeat))
	require.True(t, r.due(a, sarama.ErrUnsupportedForMessageFormat, t0.Add(80*time.Second), repeat), "a minute later")
}
