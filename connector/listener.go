package connector

import (
	"context"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// RebalanceListener is told when partition ownership moves, so that an
// application that commits its own progress (auto.commit.enable=false) can
// do so before another member takes over. It is Kafka's
// ConsumerRebalanceListener. Calls come from the connector's rebalance
// goroutine; a slow listener delays the whole group's rebalance (in Kafka
// mode, a member whose listener has not returned within
// max.poll.interval.ms is dropped from the group's next generation).
type RebalanceListener interface {
	// BeforeReleasingPartitions is called after fetching has stopped and
	// before ownership of owned is released. Messages handed out before
	// the call may still be in the application's hands. When lost is true
	// the session was lost and others may own the partitions already.
	BeforeReleasingPartitions(ctx context.Context, owned map[string][]int32, lost bool)
	// BeforeStartingFetchers is called once the partitions of a new
	// generation are claimed, with the whole group's assignment
	// (topic -> partition -> owning thread), before fetching starts. In
	// Kafka mode only the group's leader computes the whole assignment,
	// so assignment holds this member's own partitions.
	BeforeStartingFetchers(ctx context.Context, consumerID string, assignment map[string]map[int32]zkutil.ConsumerThreadID)
}
