// Package grouplease is the lease of a member of a group that Kafka's
// coordinator manages, in either group protocol (internal/kafkagroup,
// classic or KIP-848's): until when the
// member knows that the coordinator cannot have given its partitions to
// another member, so that the connector hands out messages only while it
// holds. The lease itself is internal/lease's; what is the group's is how
// long it lasts (Fraction of a generation's term), how often a member
// heartbeats to keep it (HeartbeatInterval), and the gaps between answered
// heartbeats (Gaps).
package grouplease

import (
	"time"

	"github.com/zkconsumer/zkconsumer/internal/lease"
)

// Fraction is the part of a generation's lease term (the smaller of
// session.timeout.ms and the rebalance timeout) that a lease lasts, counted
// from the moment the member sent a request that the coordinator then
// answered as a member of the generation. The coordinator cannot have
// removed the member before that moment plus the whole term: it heard
// from the member no earlier than when the request was sent, its session
// timer restarts when it handles the request, and a rebalance that began
// after it answered waits the rebalance timeout for the member to rejoin.
// A lease of three quarters of the term therefore ends before any other
// member can be given the generation's partitions, with a quarter to
// spare for clock drift and for a message handed out just before the end.
//
// The classic protocol's renewals are the SyncGroup that started the
// generation and every heartbeat answered as a member of it; KIP-848's
// are heartbeats answered without error (the coordinator's revocation
// timer runs from its request, so they do not renew while a revocation
// is pending). One exception is outside the coordinator's timers: a
// static member replaced by a new instance with the same id, for which
// New takes a start (notBefore).
const Fraction = 0.75

// New returns the lease of a generation: Fraction of term, renewed
// (Renew) from the send times of the SyncGroup that started the
// generation and of every heartbeat answered without error, revoked when
// the generation ends. It does not hold before notBefore (the zero time:
// no such bound), and holds nothing until the first renew.
func New(term time.Duration, notBefore time.Time) *lease.Lease {
	return lease.New(time.Duration(float64(term)*Fraction), notBefore, nil)
}
