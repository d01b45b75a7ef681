package zkgroup

import (
	"context"
	"errors"

	"github.com/zkconsumer/zkconsumer/internal/zkassign"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// Errors that end a generation, available as its context's cause.
var (
	// ErrGenerationEnded: a new rebalance started; ownership is being
	// handed over in an orderly way.
	ErrGenerationEnded = errors.New("generation ended by a rebalance")
	// ErrOwnershipLost: the ZooKeeper session that held the partitions
	// expired, or could not be confirmed alive when the generation ended;
	// other members may already own the partitions.
	ErrOwnershipLost = errors.New("partition ownership lost")
	// ErrMemberClosed: the member is shutting down.
	ErrMemberClosed = errors.New("member closed")
)

// Generation is one successful rebalance of a member: the partitions it
// claimed and the context everything started for them runs under.
type Generation struct {
	// ID counts this member's generations from 1.
	ID int
	// SessionID is the ZooKeeper session that holds the owner nodes.
	SessionID int64
	// Owned maps each partition this member owns to the thread (stream)
	// that consumes it.
	Owned map[zkutil.TopicPartition]zkutil.ConsumerThreadID
	// Assignment is the whole group's assignment as this member computed it.
	Assignment zkassign.Assignment

	ctx    context.Context
	cancel context.CancelCauseFunc
}

// Context is cancelled when the generation ends; context.Cause tells why
// (ErrGenerationEnded, ErrOwnershipLost or ErrMemberClosed). A generation
// continued by the next one (MemberConfig.Incremental) shares its context
// with it: the context ends with the last generation of the chain.
func (g *Generation) Context() context.Context { return g.ctx }

// Handler is what a Member calls around each generation, so that the
// connector can stop fetchers, commit and start fetchers. Calls come from
// the member's own goroutine, one at a time, and the member waits for
// each, so a handler must not wait for the member: to close it from a
// handler, pass Close the ctx of the call (see Member.Close), which then
// returns without waiting.
type Handler interface {
	// Revoke ends gen. The handler stops fetching and delivering its
	// partitions and waits until that is done. When lost is false the
	// member still owns them: this is the moment to commit. When lost is
	// true other members may own them already: commit nothing and drop
	// what is buffered.
	Revoke(ctx context.Context, gen *Generation, lost bool) error
	// Assign starts gen, whose partitions are all claimed: read the start
	// offsets now (after the claim, so no previous owner can commit in
	// between) and start fetching. An error fails the rebalance attempt.
	Assign(ctx context.Context, gen *Generation) error
}

// IncrementalHandler is a Handler that can hand partitions over one by one,
// which MemberConfig.Incremental requires. Instead of ending its generation
// on every rebalance, the member then continues it: a rebalance that
// changes what it owns calls Continue at most twice, first to give up the
// partitions that move away, then, once its new partitions are claimed,
// to take those on. Partitions owned before and after by the same thread
// keep flowing throughout. Revoke still ends the whole chain (a lost
// session, Close, a generation that cannot be continued), and Assign
// starts a chain when the member owns nothing.
type IncrementalHandler interface {
	Handler
	// Continue replaces the current generation from with to, which
	// continues it in the same session and shares its context. Either to
	// owns part of what from owns: stop delivering the others and,
	// the member still owning them, commit (the member releases their
	// owner nodes once Continue returns; an error is reported and the
	// release happens all the same). Or to owns all that from owns and
	// more, all claimed: read the start offsets of the new ones and start
	// fetching them. An error then fails the rebalance attempt: the
	// handler must still be running from, and the member releases the new
	// partitions and tries again.
	Continue(ctx context.Context, from, to *Generation) error
}
