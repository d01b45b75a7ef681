package testcluster

import (
	"context"
	"testing"
	"time"
)

// TopicSpec describes a topic NewTopic creates for a test.
type TopicSpec struct {
	// Prefix starts the topic's unique name (UniqueName); "topic" if empty.
	Prefix string
	// Partitions is the topic's partition count; 1 if 0.
	Partitions int32
	// ReplicationFactor is 1 if 0.
	ReplicationFactor int16
	// Messages are produced spread over the partitions (none if 0), each
	// with a value of ValueSize bytes (64 if 0).
	Messages  int
	ValueSize int
}

// NewTopic creates a uniquely named topic on c as spec says, produces its
// messages, and returns its name; it fails the test if it cannot, or if
// that takes more than two minutes.
func NewTopic(t testing.TB, c *Cluster, spec TopicSpec) string {
	t.Helper()
	if spec.Prefix == "" {
		spec.Prefix = "topic"
	}
	spec.Partitions = max(spec.Partitions, 1)
	spec.ReplicationFactor = max(spec.ReplicationFactor, 1)
	if spec.ValueSize == 0 {
		spec.ValueSize = 64
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic := UniqueName(spec.Prefix)
	if err := c.CreateTopic(ctx, topic, spec.Partitions, spec.ReplicationFactor); err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	if spec.Messages > 0 {
		if _, err := c.Produce(ctx, topic, spec.Messages, ProduceOptions{Partition: -1, ValueSize: spec.ValueSize}); err != nil {
			t.Fatalf("produce %d messages to %s: %v", spec.Messages, topic, err)
		}
	}
	return topic
}
