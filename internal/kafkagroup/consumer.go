package kafkagroup

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/abortdial"
	gc "github.com/zkconsumer/zkconsumer/internal/coordinator"
	"github.com/zkconsumer/zkconsumer/internal/grouperr"
	"github.com/zkconsumer/zkconsumer/internal/grouplease"
	"github.com/zkconsumer/zkconsumer/internal/kip848"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// consumer is KIP-848's consumer group protocol: the member heartbeats
// (ConsumerGroupHeartbeat) its subscription and the partitions it owns,
// and the coordinator answers with the member epoch and the partitions
// the member may own now, by topic id.
type consumer struct {
	m *Member

	mu       sync.Mutex
	memberID string
	epoch    int32 // 0: not in the group
	every    time.Duration
	owned    map[string][]int32 // what the coordinator was last told this member owns
	target   []kip848.TopicPartitions
	names    map[kip848.UUID]string
	ids      map[string]kip848.UUID
	// sessionTimeout is the session timeout the coordinator enforces on
	// the group, as last read (readSessionTimeout); Config.SessionTimeout
	// until then.
	sessionTimeout time.Duration
	sessionUnread  bool // the last read failed (logged once)
	// left is the member id and epoch of the leave being sent.
	leftID    string
	leftEpoch int32
}

func newConsumer(m *Member) *consumer {
	// Version 1 of ConsumerGroupHeartbeat wants the member to name itself
	// (KIP-1082), once for its lifetime; version 0 takes the coordinator's.
	return &consumer{m: m, every: 5 * time.Second, memberID: kip848.NewMemberID(), sessionTimeout: m.cfg.SessionTimeout,
		owned: map[string][]int32{}, names: map[kip848.UUID]string{}, ids: map[string]kip848.UUID{}}
}

// consumerConns are the consumer protocol's connections to the
// coordinator: conn for commits, hb for heartbeats alone.
type consumerConns struct {
	t        *abortdial.Dialer
	conn, hb *kip848.Conn
	// hbVersion is the ConsumerGroupHeartbeat version both speak.
	hbVersion int16
}

func (cc *consumerConns) close() {
	cc.t.Abort()
	if cc.conn != nil {
		cc.conn.Close()
	}
	if cc.hb != nil {
		cc.hb.Close()
	}
}

// consumerNeeds is what a member of the consumer group protocol sends to
// its coordinator besides OffsetFetch: ConsumerGroupHeartbeat 0 or 1,
// OffsetCommit 9 (kip848's encoding).
var consumerNeeds = []gc.Need{
	{API: gc.APIConsumerGroupHeartbeat, Range: gc.Range{Min: 0, Max: 1}},
	{API: gc.APIOffsetCommit, Range: gc.Range{Min: kip848.OffsetCommitVersion, Max: kip848.OffsetCommitVersion}},
}

// connect negotiates; a coordinator without the consumer group protocol is
// an ErrFatal error wrapping ErrUnsupported.
func (p *consumer) connect(ctx context.Context, c *coordinator) error {
	m := p.m
	cc := &consumerConns{t: newTracker(m.cfg, c.dialTimeout)}
	c.consumer = cc
	v, err := gc.Negotiate(gc.BrokerName(c.id, c.addr), c.have, consumerNeeds...)
	if err != nil {
		return fmt.Errorf("%w: %w: %w", ErrFatal, ErrUnsupported, err)
	}
	cc.hbVersion, _ = v.Of(gc.APIConsumerGroupHeartbeat)
	if cc.hbVersion < 1 && m.cfg.TopicRegex != "" {
		return fmt.Errorf("%w: %w: broker %d at %s speaks ConsumerGroupHeartbeat version 0 only, and a topic regex (SubscribedTopicRegex) needs version 1 (Kafka 4.0)",
			ErrFatal, ErrUnsupported, c.id, c.addr)
	}
	d := gc.Dialer(m.saramaConfig(cc.t, m.cfg.RequestTimeout))
	if cc.conn, err = kip848.Dial(ctx, d, c.addr, m.cfg.ClientID, m.cfg.RequestTimeout); err != nil {
		return err
	}
	cc.hb, err = kip848.Dial(ctx, d, c.addr, m.cfg.ClientID, m.cfg.RequestTimeout)
	return err
}

func (p *consumer) interval() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.every
}

func (p *consumer) session() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sessionTimeout
}

func (p *consumer) sessionLost() { p.fenced(nil) }

func (p *consumer) checkEvery() time.Duration               { return 0 }
func (p *consumer) check(context.Context, *Generation) bool { return false }

// leaseTermLocked is the term of a generation's lease: min(session
// timeout, rebalance timeout), of which the lease lasts leaseFraction. The
// session timeout is the one the coordinator enforces on the group, as
// last read.
func (p *consumer) leaseTermLocked() time.Duration {
	return min(p.sessionTimeout, p.m.cfg.RebalanceTimeout)
}

// heartbeat sends one heartbeat, takes the state its answer gives, and
// renews the lease only if the heartbeat reported no partition the
// coordinator's assignment, as this answer leaves it, revokes: while a
// revocation is pending, the coordinator's rebalance timer runs from when
// it first asked, and an Acknowledge made while the heartbeat was in
// flight changed what the member owns, not what the coordinator was told.
// It signals gen's Updates when the coordinator's assignment differs from
// what the member owns.
func (p *consumer) heartbeat(ctx context.Context, c *coordinator, gen *Generation) beat {
	m := p.m
	resp, sent, err := p.send(ctx, c)
	if err != nil {
		return beat{verdict: beatRetry, err: err}
	}
	if hbErr := kafkaError(resp.ErrorCode, resp.ErrorMessage); hbErr != nil {
		switch classify(resp.ErrorCode) {
		case classFenced:
			p.fenced(c)
			return beat{verdict: beatLost, err: hbErr}
		case classMoved:
			m.dropCoordinator(c, hbErr)
		case classRetry:
			if grouperr.CoordinatorSuspect(sarama.KError(resp.ErrorCode)) {
				m.recheckCoordinator()
			}
		default:
			return beat{verdict: beatFatal, err: p.fatal(hbErr)}
		}
		return beat{verdict: beatRetry, err: hbErr}
	}
	p.accept(resp)
	renew := gen.Err() == nil && !p.revokingOf(sent.owned) && !p.revoking()
	p.mu.Lock()
	_, missing := p.resolveLocked(p.target)
	p.mu.Unlock()
	if missing {
		if err := p.refreshTopicIDs(); err != nil {
			m.log.Debug("reading topic ids failed", "err", err)
		}
	}
	if !p.settled() && gen.Err() == nil {
		m.log.Info("the coordinator assigned other partitions", "epoch", p.epochNow())
		gen.signalUpdate()
	}
	return beat{verdict: beatOK, sent: sent.at, renew: renew}
}

// revoking reports whether the member owns partitions that the
// coordinator's latest assignment leaves out.
func (p *consumer) revoking() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.revokingLocked(p.owned)
}

// revokingOf reports whether owned has partitions that the coordinator's
// latest assignment leaves out.
func (p *consumer) revokingOf(owned map[string][]int32) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.revokingLocked(owned)
}

func (p *consumer) revokingLocked(owned map[string][]int32) bool {
	if p.target == nil {
		return false
	}
	target, _ := p.resolveLocked(p.target)
	for t, ps := range owned {
		for _, part := range ps {
			if !slices.Contains(target[t], part) {
				return true
			}
		}
	}
	return false
}

// epochNow is the member epoch the coordinator last gave, 0 when not in
// the group.
func (p *consumer) epochNow() int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.epoch
}

// targetNow is the coordinator's latest assignment of this member, of
// the topics whose ids the member can name.
func (p *consumer) targetNow() map[string][]int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.target == nil {
		return cloneAssignment(p.owned)
	}
	target, _ := p.resolveLocked(p.target)
	return target
}

// acknowledge records that the member of gen owns owned now; it reports
// false once gen has ended or is not the member's.
func (p *consumer) acknowledge(gen *Generation, owned map[string][]int32) bool {
	if p.m.Generation() != gen || gen.Err() != nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.owned = cloneAssignment(owned)
	for t, ps := range p.owned {
		if len(ps) == 0 {
			delete(p.owned, t)
		}
	}
	return true
}

// commitOnce sends one OffsetCommit v9 with the member id and the
// member's latest epoch. An epoch that moved on meanwhile
// (STALE_MEMBER_EPOCH) is repeated with the new one.
func (p *consumer) commitOnce(ctx context.Context, c *coordinator, gen *Generation, offsets map[zkutil.TopicPartition]int64) (bool, error) {
	m := p.m
	if cause := gen.Err(); cause != nil && !errors.Is(cause, ErrRebalanceStarted) {
		return false, fmt.Errorf("%w: %w", ErrCommitFenced, cause)
	}
	byTopic := map[string][]kip848.CommitPartition{}
	for tp, off := range offsets {
		byTopic[tp.Topic] = append(byTopic[tp.Topic], kip848.CommitPartition{Partition: tp.Partition, Offset: off, LeaderEpoch: -1})
	}
	var topics []kip848.CommitTopic
	for _, t := range slices.Sorted(maps.Keys(byTopic)) {
		topics = append(topics, kip848.CommitTopic{Name: t, Partitions: byTopic[t]})
	}
	p.mu.Lock()
	epoch, id := p.epoch, p.memberID
	p.mu.Unlock()
	if epoch <= 0 {
		return false, fmt.Errorf("%w: the member is not in the group", ErrCommitFenced)
	}
	resp, err := c.consumer.conn.OffsetCommit(ctx, &kip848.OffsetCommitRequest{GroupID: m.cfg.Group, MemberEpoch: epoch,
		MemberID: id, GroupInstanceID: m.instanceID(), Topics: topics})
	if err != nil {
		m.connectionFailed(c, err)
		return true, err
	}
	var errs []error
	for _, t := range resp.Topics {
		for _, part := range t.Partitions {
			if part.ErrorCode == 0 {
				continue
			}
			kerr := kafkaError(part.ErrorCode, nil)
			switch {
			case part.ErrorCode == codeStaleMemberEpoch:
				return true, kerr // a heartbeat moved the epoch on; repeat with it
			case grouperr.Fenced(sarama.KError(part.ErrorCode)):
				p.fenced(c)
				gen.end(fmt.Errorf("%w: OffsetCommit: %w", ErrMembershipLost, kerr))
				return false, fmt.Errorf("%w (epoch %d, member %s): %w", ErrCommitFenced, epoch, id, kerr)
			case classify(part.ErrorCode) == classMoved:
				m.dropCoordinator(c, kerr)
				return true, kerr
			case grouperr.CoordinatorSuspect(sarama.KError(part.ErrorCode)):
				m.recheckCoordinator()
				return true, kerr
			case classify(part.ErrorCode) == classRetry:
				return true, kerr
			default:
				errs = append(errs, fmt.Errorf("%s: %w", zkutil.TopicPartition{Topic: t.Name, Partition: part.Partition}, kerr))
			}
		}
	}
	return false, errors.Join(errs...)
}

// leaving forgets the membership; a member in the group leaves with
// epoch -1, or -2 for a static member, whose partitions the coordinator
// keeps for it until the session timeout.
func (p *consumer) leaving() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	epoch := p.epoch
	p.leftID = p.memberID
	p.epoch = 0
	p.owned = map[string][]int32{}
	p.target = nil
	p.leftEpoch = kip848.EpochLeave
	if p.m.cfg.InstanceID != "" {
		p.leftEpoch = kip848.EpochLeaveStatic
	}
	return epoch != 0
}

func (p *consumer) leaveAttrs() []any { return []any{"member", p.leftID, "epoch", p.leftEpoch} }

func (p *consumer) leave(ctx context.Context, c *coordinator) (bool, error) {
	m := p.m
	req := &kip848.HeartbeatRequest{GroupID: m.cfg.Group, MemberID: p.leftID, MemberEpoch: p.leftEpoch, InstanceID: m.instanceID(), RebalanceTimeoutMs: -1}
	resp, err := c.consumer.hb.Heartbeat(ctx, req, c.consumer.hbVersion)
	if err != nil {
		return true, err
	}
	if err := kafkaError(resp.ErrorCode, resp.ErrorMessage); err != nil {
		return classify(resp.ErrorCode) == classMoved, err
	}
	return false, nil
}

// fenced forgets the membership: the next heartbeat joins with epoch 0
// and owns nothing.
func (p *consumer) fenced(c *coordinator) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.epoch = 0
	p.owned = map[string][]int32{}
	p.target = nil
	if c != nil && c.consumer != nil && c.consumer.hbVersion == 0 {
		p.memberID = ""
	}
}

func (p *consumer) memberIDNow() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.memberID
}

// errorClass is what the member does after an error code of the consumer
// protocol.
type errorClass int

const (
	classRetry  errorClass = iota // repeat, after RetryBackoff
	classMoved                    // find the coordinator again, repeat
	classFenced                   // drop the partitions, rejoin with epoch 0
	classFatal                    // give up
)

// classify sorts an error code of ConsumerGroupHeartbeat as Java's
// consumer does, with grouperr's classes: a moved coordinator, a code
// that passes (loading, UNRELEASED_INSTANCE_ID, STALE_MEMBER_EPOCH), a
// fenced epoch; anything else (GROUP_AUTHORIZATION_FAILED,
// INVALID_REQUEST, UNSUPPORTED_ASSIGNOR, GROUP_MAX_SIZE_REACHED,
// UNSUPPORTED_VERSION, ...) is fatal.
func classify(code int16) errorClass {
	kerr := sarama.KError(code)
	switch {
	case grouperr.CoordinatorMoved(kerr):
		return classMoved
	case grouperr.Retriable(kerr):
		return classRetry
	case grouperr.EpochFenced(kerr):
		return classFenced
	}
	return classFatal
}

// interval keeps the coordinator's heartbeat interval, but often enough
// that a member whose heartbeats succeed always holds its lease.
func (p *consumer) setIntervalLocked(ms int32) {
	if ms > 0 {
		p.every = grouplease.HeartbeatInterval(time.Duration(ms)*time.Millisecond, p.leaseTermLocked())
	}
}
