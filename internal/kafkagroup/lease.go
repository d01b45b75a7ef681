package kafkagroup

import "github.com/zkconsumer/zkconsumer/internal/grouplease"

// leaseFraction is the part of a generation's lease term (the smaller of
// session.timeout.ms and the rebalance timeout) that a lease lasts, counted
// from the moment the member sent a request that the coordinator then
// answered as a member of the generation (see internal/grouplease for why
// the coordinator cannot have given the partitions away before). A static
// member replaced by a new instance with the same id is outside the
// coordinator's timers: see Generation.HoldUntil for how the new instance
// waits for its predecessor's lease.
const leaseFraction = grouplease.Fraction

// LeaseHeld reports whether the generation is known to be current on the
// coordinator at this moment, and no other instance of this static member
// can still hold a lease on its partitions: the coordinator answered, as a
// member of this generation, a request (the SyncGroup that started it, or
// a heartbeat) sent less than leaseFraction of min(session timeout,
// rebalance timeout) ago, and HoldUntil has passed. Under the consumer
// protocol the session timeout is the one the broker enforces on the
// group (Config.SessionTimeout), and a heartbeat renews the lease only if
// it reported no partition the coordinator had revoked: while a
// revocation is pending, the coordinator's rebalance timer runs from its
// request. While it holds, the
// coordinator cannot have handed this member's partitions to another
// member. It is cheap enough to call before every message. It lapses on
// its own when heartbeats stop succeeding, and never holds again once the
// membership is lost or the member is closed; classic heartbeats answered
// REBALANCE_IN_PROGRESS do not renew it.
func (g *Generation) LeaseHeld() bool { return g.lease.Held() }

// LeaseChanged returns a channel closed at the next change of the lease: a
// renewal, its start at HoldUntil, or its end. To wait for the lease, take
// the channel, then check LeaseHeld, then wait on the channel.
func (g *Generation) LeaseChanged() <-chan struct{} { return g.lease.Changed() }
