package connector

import (
	"context"
)

// RebalanceListener is told when partition ownership moves, so that an
// application that commits its own progress (auto.commit.enable=false) can
// do so before another member takes over. It is Kafka's
// ConsumerRebalanceListener. Calls come from the connector's rebalance
// goroutine; a slow listener delays the whole group's rebalance (in Kafka
// mode, a member whose listener has not returned within
// max.poll.interval.ms is dropped from the group's next generation).
//
// Each call gets the connector, so that a listener installed with
// WithRebalanceListener, before New has returned the connector, can commit
// (CommitOffsets, CommitOffsetsMap), read Assignment, Pause or Shutdown.
// RebalanceListenerFuncs makes a listener of plain functions.
//
// The rebalance waits for each call, so a listener must not wait for
// anything that waits for the rebalance. Shutdown does, unless it is given
// the ctx of the call (or a context derived from it): then it returns at
// once and the shutdown completes after the listener has returned (see
// Shutdown). Shutdown with any other context would wait for the listener
// that calls it.
type RebalanceListener interface {
	// BeforeReleasingPartitions is called after fetching has stopped and
	// before ownership of owned is released. Messages handed out before
	// the call may still be in the application's hands. Commits made
	// during the call still count as this member's (unless lost). When lost
	// is true the session was lost and others may own the partitions
	// already: commits fail with an error wrapping ErrOwnershipLost.
	BeforeReleasingPartitions(ctx context.Context, c *ConsumerConnector, owned map[string][]int32, lost bool)
	// BeforeStartingFetchers is called once the partitions of a new
	// generation are claimed, with the whole group's assignment
	// (topic -> partition -> owning thread), before fetching starts; this
	// member's own partitions are those whose thread has c.ConsumerID().
	// In Kafka mode the group's protocol tells the whole assignment only
	// to the member that computed it, the leader: the leader's listener
	// gets every member's partitions, the others' named by their member
	// ids at the coordinator, with thread 0 (the protocol does not say how
	// a member spreads its partitions over its streams); every other
	// member's listener gets its own partitions only.
	//
	// Under a cooperative protocol (RebalanceCooperative in ZooKeeper
	// mode, partition.assignment.strategy=cooperative-sticky in Kafka
	// mode) both calls are told only what moves: BeforeReleasingPartitions
	// the partitions this member gives up, BeforeStartingFetchers those it
	// gains, its own only; neither is called for a rebalance that moves
	// nothing of this member's.
	BeforeStartingFetchers(ctx context.Context, c *ConsumerConnector, assignment map[string]map[int32]ConsumerThreadID)
}

// RebalanceListenerFuncs adapts functions to a RebalanceListener, as
// http.HandlerFunc adapts a function to an http.Handler. A nil field does
// nothing. For example, to commit what was consumed before partitions move:
//
//	connector.WithRebalanceListener(connector.RebalanceListenerFuncs{
//		Releasing: func(ctx context.Context, c *connector.ConsumerConnector, _ map[string][]int32, lost bool) {
//			if !lost {
//				_ = c.CommitOffsets(ctx)
//			}
//		},
//	})
type RebalanceListenerFuncs struct {
	// Releasing is called as BeforeReleasingPartitions.
	Releasing func(ctx context.Context, c *ConsumerConnector, owned map[string][]int32, lost bool)
	// Starting is called as BeforeStartingFetchers.
	Starting func(ctx context.Context, c *ConsumerConnector, assignment map[string]map[int32]ConsumerThreadID)
}

var _ RebalanceListener = RebalanceListenerFuncs{}

// listenerKey is the key of the value that marks the contexts the
// connector gives its RebalanceListener: the *ConsumerConnector calling.
type listenerKey struct{}

// listenerContext returns ctx marked as the context of a listener call of
// c, so that Shutdown given it (or a context derived from it) knows not to
// wait for the rebalance that makes the call.
func (c *ConsumerConnector) listenerContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, listenerKey{}, c)
}

// calledFromListener reports whether ctx is, or derives from, the context
// of a listener call of c.
func (c *ConsumerConnector) calledFromListener(ctx context.Context) bool {
	caller, _ := ctx.Value(listenerKey{}).(*ConsumerConnector)
	return caller == c
}

// BeforeReleasingPartitions calls f.Releasing, if set.
func (f RebalanceListenerFuncs) BeforeReleasingPartitions(ctx context.Context, c *ConsumerConnector, owned map[string][]int32, lost bool) {
	if f.Releasing != nil {
		f.Releasing(ctx, c, owned, lost)
	}
}

// BeforeStartingFetchers calls f.Starting, if set.
func (f RebalanceListenerFuncs) BeforeStartingFetchers(ctx context.Context, c *ConsumerConnector, assignment map[string]map[int32]ConsumerThreadID) {
	if f.Starting != nil {
		f.Starting(ctx, c, assignment)
	}
}
