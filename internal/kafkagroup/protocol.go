package kafkagroup

import (
	"context"
	"time"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// protocol is what one group protocol adds to the member's lifecycle: it
// encodes and decodes that protocol's requests and keeps its state, but
// starts no goroutine and owns no connection of the member's: the Member
// finds the coordinator, runs the heartbeats and the metadata check,
// reports failures, retries commits and fetches, and closes, in the same
// order for both. There are two: classic (JoinGroup and SyncGroup, with
// KIP-345 and KIP-814; the member computes the assignment when it leads)
// and consumer (KIP-848's ConsumerGroupHeartbeat; the broker assigns).
type protocol interface {
	// connect opens the protocol's own connections to c, whose id,
	// address and control connection are set, and negotiates the
	// versions of its requests.
	connect(ctx context.Context, c *coordinator) error

	// beginJoin readies the attempts of a Join; prev is the member's
	// latest generation (nil before the first), which Join ends with
	// ErrRebalanceStarted right after, unless it has ended already.
	// endJoin follows the last attempt.
	beginJoin(prev *Generation)
	endJoin()
	// joinOnce makes one attempt at a generation. A *retryError asks
	// for another (now, or after RetryBackoff); an error wrapping
	// ErrFatal ends the Join; any other error is retried after
	// RetryBackoff.
	joinOnce(ctx context.Context, c *coordinator) (*Generation, error)

	// heartbeat sends one heartbeat of gen to c, bounded by ctx, and
	// sorts its answer (see beat). Its own state it updates itself.
	heartbeat(ctx context.Context, c *coordinator, gen *Generation) beat
	// interval is the wait before the next heartbeat.
	interval() time.Duration
	// session is the session timeout the coordinator enforces, as the
	// member knows it: without an answered heartbeat for this long, the
	// membership is lost.
	session() time.Duration
	// sessionLost forgets the membership after the session passed
	// without an answered heartbeat.
	sessionLost()

	// check is the metadata check of gen (every MetadataMaxAge): it
	// returns true when the member must rejoin. checkEvery is 0 for a
	// protocol without one.
	check(ctx context.Context, gen *Generation) bool
	checkEvery() time.Duration

	// commitOnce sends one OffsetCommit of offsets as a member of gen;
	// retry tells whether repeating it may succeed.
	commitOnce(ctx context.Context, c *coordinator, gen *Generation, offsets map[zkutil.TopicPartition]int64) (retry bool, err error)

	// leaving takes the member out of the group as the protocol keeps
	// it, and tells whether a leave request is to be sent (the member
	// holds a membership the coordinator knows, and the protocol lets a
	// member of its kind leave).
	leaving() bool
	// leave sends that request to c; moved tells that c is no longer
	// the coordinator (the request failed, or NOT_COORDINATOR), which
	// the member then looks up again within the leave's time.
	leave(ctx context.Context, c *coordinator) (moved bool, err error)
	// leaveAttrs are the log attributes of a leave (the member id, and
	// the epoch it left with).
	leaveAttrs() []any
}

// verdict is what the member does after one heartbeat: the one table by
// which both protocols' answers are handled.
type verdict int

const (
	// beatOK: answered as a member. The lease is renewed from the send
	// time if beat.renew.
	beatOK verdict = iota
	// beatRebalance: answered, and the group is rebalancing (classic
	// REBALANCE_IN_PROGRESS): the generation ends with
	// ErrRebalanceStarted; heartbeats go on while the caller commits.
	beatRebalance
	// beatRetry: failed (a connection, a coordinator that moved or is
	// loading, ...); repeated after RetryBackoff until the session
	// passes, reported once failures last.
	beatRetry
	// beatLost: the coordinator no longer counts the member
	// (ErrMembershipLost); the heartbeats stop.
	beatLost
	// beatFatal: the member cannot go on; err wraps ErrFatal.
	beatFatal
)

// beat is the outcome of one heartbeat.
type beat struct {
	verdict verdict
	// sent is when the request was sent.
	sent time.Time
	// renew: the answer renews the lease (beatOK only).
	renew bool
	// err is why (beatRetry, beatLost, beatFatal).
	err error
}
