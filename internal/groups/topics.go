package groups

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkconsumer/zkconsumer/internal/zkbrokers"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
)

// TopicPartitions returns the partitions of topic, sorted, from its replica
// assignment /brokers/topics/<topic>. It fails with an error wrapping
// ErrUnknownTopic when the topic does not exist.
func TopicPartitions(ctx context.Context, zk *zksession.Session, topic string) ([]int32, error) {
	path := zkbrokers.TopicPath(topic)
	data, _, err := zk.Get(ctx, path)
	if errors.Is(err, zksession.ErrNoNode) || errors.Is(err, zksession.ErrInvalidPath) {
		return nil, fmt.Errorf("%w %q", ErrUnknownTopic, topic)
	}
	if err != nil {
		return nil, fmt.Errorf("read topic %q: %w", topic, err)
	}
	m, err := zkbrokers.DecodeTopicPartitions(topic, path, data)
	if err != nil {
		return nil, err
	}
	return zkbrokers.SortedPartitions(m), nil
}
