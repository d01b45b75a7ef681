package connector_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/zkconsumer/zkconsumer/connector"
	"github.com/zkconsumer/zkconsumer/internal/fetch"
	"github.com/zkconsumer/zkconsumer/internal/kafkagroup"
	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/zkgroup"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// The errors an application matches are reachable from connector and are
// the very values the other packages return, so errors.Is works with
// either name.
func TestErrorsAreReexported(t *testing.T) {
	pairs := map[string][2]error{
		"ErrShutdown":          {connector.ErrShutdown, streamcore.ErrShutdown},
		"ErrRebalanceFailed":   {connector.ErrRebalanceFailed, zkgroup.ErrRebalanceFailed},
		"ErrOwnershipLost":     {connector.ErrOwnershipLost, zkgroup.ErrOwnershipLost},
		"ErrTopicMissing":      {connector.ErrTopicMissing, zkgroup.ErrTopicMissing},
		"ErrConnectionTimeout": {connector.ErrConnectionTimeout, zksession.ErrConnectionTimeout},
		"ErrSessionExpired":    {connector.ErrSessionExpired, zksession.ErrSessionExpired},
		"ErrMembershipLost":    {connector.ErrMembershipLost, kafkagroup.ErrMembershipLost},
		"ErrGroupFatal":        {connector.ErrGroupFatal, kafkagroup.ErrFatal},
		"ErrCommitFenced":      {connector.ErrCommitFenced, kafkagroup.ErrCommitFenced},
		"ErrNoLeader":          {connector.ErrNoLeader, fetch.ErrNoLeader},
		"ErrMessageTooLarge":   {connector.ErrMessageTooLarge, streamcore.ErrMessageTooLarge},
		"ErrCorruptMessage":    {connector.ErrCorruptMessage, streamcore.ErrCorruptMessage},
		"ErrConsumerTimeout":   {connector.ErrConsumerTimeout, streamcore.ErrConsumerTimeout},
	}
	for name, p := range pairs {
		wrapped := fmt.Errorf("wrapped: %w", p[1])
		assert.ErrorIs(t, wrapped, p[0], name)
	}
	var pe *connector.PartitionError
	assert.True(t, errors.As(fmt.Errorf("x: %w", &streamcore.PartitionError{Topic: "t", Err: connector.ErrNoLeader}), &pe))
	var tp connector.TopicPartition = zkutil.TopicPartition{Topic: "t", Partition: 1}
	assert.Equal(t, "t", tp.Topic)
}

func TestRebalanceListenerFuncs(t *testing.T) {
	var nothing connector.RebalanceListenerFuncs
	nothing.BeforeReleasingPartitions(context.Background(), nil, nil, false) // nil fields do nothing
	nothing.BeforeStartingFetchers(context.Background(), nil, nil)

	var released, started bool
	l := connector.RebalanceListenerFuncs{
		Releasing: func(_ context.Context, _ *connector.ConsumerConnector, gone map[string][]int32, lost bool) {
			released = lost && gone["t"][0] == 3
		},
		Starting: func(_ context.Context, _ *connector.ConsumerConnector, gained map[string][]int32) {
			started = gained["t"][0] == 4
		},
	}
	var rl connector.RebalanceListener = l
	rl.BeforeReleasingPartitions(context.Background(), nil, map[string][]int32{"t": {3}}, true)
	rl.BeforeStartingFetchers(context.Background(), nil, map[string][]int32{"t": {4}})
	assert.True(t, released)
	assert.True(t, started)
}

// A CommitError names its partitions and offsets (sorted, the first four)
// and the cause, which errors.Is finds through it.
func TestCommitErrorMessage(t *testing.T) {
	cause := errors.New("store down")
	one := &connector.CommitError{Offsets: map[connector.TopicPartition]int64{{Topic: "t", Partition: 3}: 17}, Err: cause}
	assert.Equal(t, "connector: commit of 1 partition (t-3@17) failed: store down", one.Error())
	assert.ErrorIs(t, fmt.Errorf("%w: %w", connector.ErrAutoCommit, one), cause)
	many := &connector.CommitError{Err: cause, Offsets: map[connector.TopicPartition]int64{}}
	for p := range int32(6) {
		many.Offsets[connector.TopicPartition{Topic: "t", Partition: 5 - p}] = int64(p)
	}
	assert.Equal(t, "connector: commit of 6 partitions (t-0@5, t-1@4, t-2@3, t-3@2, ... 2 more) failed: store down", many.Error())
}
