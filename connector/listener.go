package connector

import (
	"context"
)

// RebalanceListener is told when partition ownership moves, so that an
// application that commits its own progress (auto.commit.enable=false) can
// do so before another member takes over. It is Kafka's
// ConsumerRebalanceListener, with one shape in every mode and protocol:
// each call names this member's own partitions, by topic (each list
// sorted), and nothing of other members'.
//
// What a call names depends only on what happens to this member:
//   - under a cooperative protocol (zkconsumer.rebalance.protocol=cooperative,
//     the default in ZooKeeper mode; partition.assignment.strategy=
//     cooperative-sticky or group.protocol=consumer in Kafka mode), a
//     rebalance gives up only the partitions that move away and starts
//     only those that move in: BeforeReleasingPartitions is told the
//     first, BeforeStartingFetchers the second, and the partitions the
//     member keeps are in neither (they keep flowing; a partition that
//     moves to another of this member's streams is released and gained);
//   - under an eager protocol (zkconsumer.rebalance.protocol=eager; in
//     Kafka mode the classic protocol with any
//     partition.assignment.strategy but cooperative-sticky alone), every
//     rebalance stops the member: BeforeReleasingPartitions is told every
//     partition it owned, then BeforeStartingFetchers every partition of
//     its new assignment, even those it owned before, because ownership
//     really is given up in between.
//
// Neither method is called with nothing to tell: a rebalance that takes
// nothing from this member makes no BeforeReleasingPartitions call, one
// that gives it nothing makes no BeforeStartingFetchers call. So, in
// every mode and protocol, the union of what BeforeStartingFetchers was
// told less what BeforeReleasingPartitions was told since is what the
// member owns: Assignment().Partitions once the rebalance is over. Which
// stream consumes a partition is in Assignment().Streams.
//
// Shutdown makes at most one call: BeforeReleasingPartitions with every
// partition the member owns at that moment, after fetching has stopped
// (and, with auto.commit.enable, after Shutdown's own commit), before
// they are released; never BeforeStartingFetchers. lost is false, so
// commits made during the call count, unless the member is found at that
// very moment to have lost its partitions already (see
// BeforeReleasingPartitions). A member that owns nothing (before
// CreateMessageStreams, between generations, after losing its
// partitions, or assigned none) gets no call. With
// auto.commit.enable=false Shutdown commits nothing itself: commit what
// was consumed in that call (CommitOffsets with its ctx) or before calling
// Shutdown, or the next owner reads it again from the last commit.
//
// Calls come from the connector's rebalance goroutine; a slow listener
// delays the whole group's rebalance (in Kafka mode, a member whose
// listener has not returned within max.poll.interval.ms is dropped from
// the group's next generation).
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
	// BeforeReleasingPartitions is called after fetching of released
	// has stopped and before this member gives released up. Messages
	// handed out before the call may still be in the application's
	// hands. Commits made during the call still count as this member's
	// (unless lost). When lost is true the member's ownership was lost
	// (its ZooKeeper session expired, or, in Kafka mode, the coordinator
	// dropped the member) and others may own the partitions already:
	// commits made during the call fail.
	BeforeReleasingPartitions(ctx context.Context, c *ConsumerConnector, released map[string][]int32, lost bool)
	// BeforeStartingFetchers is called once this member owns gained (in
	// ZooKeeper mode, once it has claimed them) and has read the offset
	// each starts from, before their fetching starts.
	BeforeStartingFetchers(ctx context.Context, c *ConsumerConnector, gained map[string][]int32)
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
	Releasing func(ctx context.Context, c *ConsumerConnector, released map[string][]int32, lost bool)
	// Starting is called as BeforeStartingFetchers.
	Starting func(ctx context.Context, c *ConsumerConnector, gained map[string][]int32)
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
func (f RebalanceListenerFuncs) BeforeReleasingPartitions(ctx context.Context, c *ConsumerConnector, released map[string][]int32, lost bool) {
	if f.Releasing != nil {
		f.Releasing(ctx, c, released, lost)
	}
}

// BeforeStartingFetchers calls f.Starting, if set.
func (f RebalanceListenerFuncs) BeforeStartingFetchers(ctx context.Context, c *ConsumerConnector, gained map[string][]int32) {
	if f.Starting != nil {
		f.Starting(ctx, c, gained)
	}
}
