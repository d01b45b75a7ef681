package consumergroup

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/grouplease"
)

// LeaseFraction is the part of the lease term, min(session timeout,
// rebalance timeout), that a lease lasts from the moment a heartbeat was
// sent that the coordinator then answered without error: the coordinator
// cannot give this member's partitions to another before that moment plus
// the whole term (it waits for the member to acknowledge a revocation, or
// for the rebalance timeout, and removes a silent member only after the
// session timeout). A quarter of the term is left for clock drift.
const LeaseFraction = grouplease.Fraction

// Generation is one membership of a member: from a Join (with epoch 0)
// until the coordinator fences the member, it leaves or is closed. Its
// assignment changes incrementally meanwhile (Updates, Member.Target,
// Member.Acknowledge), and the coordinator bumps the member epoch as the
// group changes; commits carry the latest epoch.
type Generation struct {
	// ID is the member epoch when the generation started.
	ID int32
	// MemberID is this member's id.
	MemberID string
	// Assignment maps each topic to this member's partitions of it when
	// the generation started, in ascending order.
	Assignment map[string][]int32

	ctx    context.Context
	cancel context.CancelCauseFunc
	lease  *grouplease.Lease

	updates chan struct{} // one pending signal: the target differs from what is owned
}

// Updates returns a channel that receives when the coordinator's
// assignment (Member.Target) differs from what the member owns: revoke
// what the target leaves out (stop, commit), start what it adds, then
// Member.Acknowledge the target. The generation goes on meanwhile; the
// coordinator gives the revoked partitions to others only once
// acknowledged (or after the rebalance timeout, when it fences the
// member). One signal stands for any number of changes.
func (g *Generation) Updates() <-chan struct{} { return g.updates }

func (g *Generation) signalUpdate() {
	select {
	case g.updates <- struct{}{}:
	default:
	}
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

// LeaseHeld reports whether the coordinator answered, without error, a
// heartbeat of this member sent less than LeaseFraction of min(session
// timeout, rebalance timeout) ago, since this generation started and
// before it ended: while it holds, no other member can own its partitions.
// It is cheap enough to call before every message. Heartbeats after the
// generation ended do not renew it.
func (g *Generation) LeaseHeld() bool { return g.lease.Held() }

// LeaseChanged returns a channel closed at the next change of the lease.
func (g *Generation) LeaseChanged() <-chan struct{} { return g.lease.Changed() }

// end ends the generation with cause (the first cause stays); every cause
// but ErrRebalanceStarted ends the lease too: the member no longer owns
// the partitions. (A member ends its generations with ErrRebalanceStarted
// only when Join is called while one runs: the caller gave it up.)
func (g *Generation) end(cause error) {
	if !errors.Is(cause, ErrRebalanceStarted) {
		g.lease.Revoke()
	}
	g.cancel(cause)
}

func newGeneration(epoch int32, memberID string, assignment map[string][]int32, term time.Duration, sentAt time.Time) *Generation {
	ctx, cancel := context.WithCancelCause(context.Background())
	g := &Generation{ID: epoch, MemberID: memberID, Assignment: assignment, ctx: ctx, cancel: cancel, lease: grouplease.New(term, time.Time{}),
		updates: make(chan struct{}, 1)}
	g.lease.Renew(sentAt)
	return g
}
