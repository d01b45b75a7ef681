package kafkagroup

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"
)

// Generation is one successful join of a member: the coordinator's
// generation id, the member id it holds, the partitions assigned to it,
// and the context everything started for them runs under.
type Generation struct {
	// ID is the coordinator's generation id.
	ID int32
	// MemberID is this member's id in the generation.
	MemberID string
	// Protocol is the assignor the group uses ("range" or "roundrobin").
	Protocol string
	// Leader is true when this member computed the group's assignment.
	Leader bool
	// Assignment maps each topic to this member's partitions of it, in
	// ascending order.
	Assignment map[string][]int32
	// GroupAssignment is, when this member computed the group's
	// assignment (Leader), every member's share: member id to topic to
	// partitions, in ascending order, this member's own included. It is
	// nil for the other members: Kafka's group protocol tells each member
	// only its own share.
	GroupAssignment map[string]map[string][]int32
	// HoldUntil is zero, or the moment before which the lease does not
	// hold (LeaseHeld is false) although the generation has started: this
	// static member joined without a member id, so its JoinGroup may have
	// replaced a live instance with the same group.instance.id. The
	// coordinator hands the replaced instance's partitions over at once,
	// without waiting for its session to time out, and that instance
	// learns it was fenced (FENCED_INSTANCE_ID) only at its next heartbeat
	// or commit; until then its own lease may still hold. Its lease was
	// last renewed from a request sent before the coordinator handled the
	// replacing JoinGroup, hence before this member read the answer to it;
	// HoldUntil is that reading plus LeaseFraction of min(session timeout,
	// rebalance timeout), so the predecessor's lease has ended by then.
	// This assumes that the predecessor runs with the same
	// session.timeout.ms and rebalance timeout (max.poll.interval.ms) as
	// this member: a predecessor with longer ones may still hold its lease
	// after HoldUntil. The hold applies to every generation that starts
	// before it passes.
	HoldUntil time.Time

	ctx    context.Context
	cancel context.CancelCauseFunc
	lease  *lease
}

// Context is cancelled when the generation ends; context.Cause tells why:
// ErrRebalanceStarted, ErrMembershipLost, an ErrFatal error or
// ErrMemberClosed.
func (g *Generation) Context() context.Context { return g.ctx }

// Done is Context().Done().
func (g *Generation) Done() <-chan struct{} { return g.ctx.Done() }

// Err returns nil while the generation lasts, then the cause that ended it.
func (g *Generation) Err() error {
	if g.ctx.Err() == nil {
		return nil
	}
	return context.Cause(g.ctx)
}

// Partitions returns the number of partitions assigned.
func (g *Generation) Partitions() int {
	n := 0
	for _, ps := range g.Assignment {
		n += len(ps)
	}
	return n
}

// Topics returns the assigned topics in order.
func (g *Generation) Topics() []string { return slices.Sorted(maps.Keys(g.Assignment)) }

// end ends the generation with cause, unless it has ended already (the
// first cause stays). Every cause but ErrRebalanceStarted also ends the
// lease, even when the generation had ended already: a member that is told
// to rejoin still belongs to the generation, one that lost its membership
// or was closed does not.
func (g *Generation) end(cause error) {
	if !errors.Is(cause, ErrRebalanceStarted) {
		g.lease.revoke()
	}
	g.cancel(cause)
}

// newGeneration starts a generation whose lease lasts LeaseFraction of
// term from syncSent, when the SyncGroup that started it was sent, and
// does not hold before holdUntil (if that is later than now).
func newGeneration(id int32, memberID, protocol string, leader bool, assignment map[string][]int32, term time.Duration, syncSent, holdUntil time.Time) *Generation {
	ctx, cancel := context.WithCancelCause(context.Background())
	if !holdUntil.After(time.Now()) {
		holdUntil = time.Time{}
	}
	g := &Generation{ID: id, MemberID: memberID, Protocol: protocol, Leader: leader,
		Assignment: assignment, HoldUntil: holdUntil, ctx: ctx, cancel: cancel, lease: newLease(term, holdUntil)}
	g.lease.renew(syncSent)
	return g
}
