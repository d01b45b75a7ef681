package kafkagroup

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/grouplease"
	"github.com/zkconsumer/zkconsumer/internal/lease"
)

// Generation is one successful join of a member: the coordinator's
// generation id (classic) or the member epoch (consumer), the member id
// it holds, the partitions assigned to it, and the context everything
// started for them runs under.
//
// Under the consumer protocol a generation is a membership: from a Join
// until the coordinator fences the member, it leaves or is closed. Its
// assignment changes incrementally meanwhile (Updates, Member.Target,
// Member.Acknowledge), and the coordinator bumps the member epoch as the
// group changes; commits carry the latest epoch.
type Generation struct {
	// ID is the coordinator's generation id (classic), or the member
	// epoch when the generation started (consumer).
	ID int32
	// MemberID is this member's id in the generation.
	MemberID string
	// Protocol is the assignor the group uses ("range", "roundrobin" or
	// "cooperative-sticky"); "" under the consumer protocol, where the
	// broker assigns.
	Protocol string
	// Cooperative is true when this member runs Kafka's cooperative
	// rebalance protocol (KIP-429): every assignor it lists supports it
	// (only "cooperative-sticky" does), as Java's consumer decides. It is
	// the same for every generation of a member. A cooperative member
	// keeps its partitions through a rebalance: after ErrRebalanceStarted
	// the caller keeps consuming them, commits with Commit, and calls
	// Join, which tells the coordinator what the member owns; the next
	// generation's Assignment is then what the member may keep and gain.
	// Partitions it owned that are not in it must be given up (committed
	// with CommitFinal, as a member of the new generation), then Join
	// called again at once: the partitions are handed to their new owner
	// only in that follow-up rebalance. Without it (the eager protocol,
	// "range" and "roundrobin"), a member gives up every partition before
	// it rejoins.
	Cooperative bool
	// Continues is true when this generation continues the previous one of
	// this member without a gap (Cooperative members only): the member
	// rejoined as a member of the previous generation, reporting what it
	// owned, so the partitions of the previous generation that are also in
	// this one's Assignment never belonged to anyone else meanwhile, and
	// both generations share one lease (LeaseHeld of either tells the
	// same). When false, partitions of the previous generation are lost
	// (the member lost its membership while it rejoined) or were given up.
	Continues bool
	// Leader is true when the coordinator elected this member leader: it
	// computed the group's assignment, unless SkippedAssignment, and it
	// watches the partition counts of every topic of the group.
	Leader bool
	// SkippedAssignment is true for a leader the coordinator told to skip
	// the assignment (JoinGroup v9, KIP-814): a static leader that
	// rejoined a stable group, such as a restarted process, whose
	// assignment the coordinator kept. Its GroupAssignment is nil.
	SkippedAssignment bool
	// Assignment maps each topic to this member's partitions of it, in
	// ascending order (consumer protocol: when the generation started).
	Assignment map[string][]int32
	// GroupAssignment is, when this member computed the group's
	// assignment (Leader, not SkippedAssignment), every member's share: member id to topic to
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
	// HoldUntil is that reading plus leaseFraction of min(session timeout,
	// rebalance timeout), so the predecessor's lease has ended by then.
	// This assumes that the predecessor runs with the same
	// session.timeout.ms and rebalance timeout (max.poll.interval.ms) as
	// this member: a predecessor with longer ones may still hold its lease
	// after HoldUntil. The hold applies to every generation that starts
	// before it passes.
	HoldUntil time.Time

	ctx    context.Context
	cancel context.CancelCauseFunc
	lease  *lease.Lease
	// handedOn is set once a generation that Continues this one shares its
	// lease: this one's end no longer touches it.
	handedOn atomic.Bool
	// updates holds one pending signal (consumer protocol): the
	// coordinator's assignment differs from what the member owns.
	updates chan struct{}
}

// Updates returns a channel that receives, under the consumer protocol,
// when the coordinator's assignment (Member.Target) differs from what the
// member owns: revoke what the target leaves out (stop, commit), start
// what it adds, then Member.Acknowledge the target. The generation goes
// on meanwhile; the coordinator gives the revoked partitions to others
// only once acknowledged (or after the rebalance timeout, when it fences
// the member). One signal stands for any number of changes. Under the
// classic protocol it never receives: every change of assignment is a new
// generation.
func (g *Generation) Updates() <-chan struct{} { return g.updates }

// signalUpdate signals Updates.
func (g *Generation) signalUpdate() {
	select {
	case g.updates <- struct{}{}:
	default:
	}
}

// Context is cancelled when the generation ends; context.Cause tells why:
// ErrRebalanceStarted, ErrMembershipLost, an ErrFatal error or
// ErrMemberClosed (see the package documentation).
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
// or was closed does not. The lease of a generation that a later one
// continues (Continues) belongs to that one.
func (g *Generation) end(cause error) {
	if !errors.Is(cause, ErrRebalanceStarted) && !g.handedOn.Load() {
		g.lease.Revoke()
	}
	g.cancel(cause)
}

// newGeneration starts a generation whose lease lasts leaseFraction of
// term from syncSent, when the request that started it was sent (the
// SyncGroup, or the consumer protocol's last heartbeat of the join), and
// does not hold before holdUntil (if that is later than now). If prev is
// set, the new generation continues it (Continues) and takes its lease
// over, renewed from syncSent.
func newGeneration(id int32, memberID, protocol string, leader bool, assignment map[string][]int32, term time.Duration, syncSent, holdUntil time.Time, prev *Generation) *Generation {
	ctx, cancel := context.WithCancelCause(context.Background())
	if !holdUntil.After(time.Now()) {
		holdUntil = time.Time{}
	}
	g := &Generation{ID: id, MemberID: memberID, Protocol: protocol, Leader: leader,
		Assignment: assignment, HoldUntil: holdUntil, ctx: ctx, cancel: cancel, updates: make(chan struct{}, 1)}
	if prev != nil {
		prev.handedOn.Store(true)
		g.lease, g.Continues = prev.lease, true
	} else {
		g.lease = grouplease.New(term, holdUntil)
	}
	g.lease.Renew(syncSent)
	return g
}
