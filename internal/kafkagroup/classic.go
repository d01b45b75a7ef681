package kafkagroup

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/abortdial"
	gc "github.com/zkconsumer/zkconsumer/internal/coordinator"
	"github.com/zkconsumer/zkconsumer/internal/grouperr"
	"github.com/zkconsumer/zkconsumer/internal/grouplease"
	"github.com/zkconsumer/zkconsumer/internal/kip848"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// classic is the classic group protocol (JoinGroup, SyncGroup, Heartbeat,
// LeaveGroup), with static membership (KIP-345), the cooperative
// protocol (KIP-429) and JoinGroup v9 (KIP-814).
type classic struct {
	m         *Member
	assignors map[string]groupAssignor
	// cooperative: every assignor listed supports the cooperative
	// protocol (Generation.Cooperative).
	cooperative bool

	mu          sync.Mutex
	assignedGen int32       // the generation of the last assignment; -1 before it
	joinedGen   int32       // the generation of the last JoinGroup answered; -1 before it
	rejoining   *Generation // the generation Join is rejoining from, while it runs
	memberID    string
	holdUntil   time.Time // see Generation.HoldUntil
	st          joinState // the running Join's
	// joined and watch are the current generation's metadata check: the
	// subscribed topics when it joined, and what it watches.
	joined []string
	watch  watch
	// leftID is the member id of the leave being sent.
	leftID string
}

func newClassic(m *Member) (*classic, error) {
	p := &classic{m: m, assignors: map[string]groupAssignor{}, cooperative: true, assignedGen: -1, joinedGen: -1}
	for _, name := range m.cfg.Assignors {
		p.cooperative = p.cooperative && supportsCooperative(name)
		a, err := newGroupAssignor(name)
		if err != nil {
			return nil, err
		}
		p.assignors[name] = a
	}
	return p, nil
}

// classicConns are the classic protocol's connections to the coordinator:
// join for JoinGroup and SyncGroup, which wait for the whole group (join9
// for JoinGroup v9, our own encoding, dialled on first use through
// joinT), and hb for heartbeats alone.
type classicConns struct {
	join, hb   *sarama.Broker
	joinT, hbT *abortdial.Dialer
	// versions are those negotiated with the broker (classicNeeds).
	versions gc.Versions
	// join9Dialer dials join9 (with the TLS and SASL of the join
	// connection); nil when JoinGroup v9 is not used (the broker lacks
	// it, or Config.noJoinV9).
	join9Dialer kip848.Dialer
	join9       *kip848.Conn
	// joinAborted is set when a Join's context ended a JoinGroup or
	// SyncGroup in flight, which aborted the join connection: the next
	// Join connects again, while ctrl stays up for a LeaveGroup.
	joinAborted atomic.Bool
}

// classicNeeds is what a classic member sends to its coordinator besides
// OffsetFetch. JoinGroup goes up to 9 (KIP-814, kip848's encoding); below
// 9 sarama's encoding is used, at most version 5 (static membership).
var classicNeeds = []gc.Need{
	{API: gc.APIJoinGroup, Range: gc.Range{Min: 0, Max: kip848.JoinGroupVersion}},
	{API: gc.APISyncGroup, Range: gc.Range{Min: 3, Max: 3}},
	{API: gc.APIHeartbeat, Range: gc.Range{Min: 3, Max: 3}},
	{API: gc.APILeaveGroup, Range: gc.Range{Min: 0, Max: 3}},
	{API: gc.APIOffsetCommit, Range: gc.Range{Min: 7, Max: 7}},
}

func (p *classic) connect(_ context.Context, c *coordinator) error {
	m := p.m
	cc := &classicConns{joinT: newTracker(m.cfg, c.dialTimeout), hbT: newTracker(m.cfg, c.dialTimeout)}
	c.classic = cc
	var err error
	if cc.versions, err = c.negotiate(classicNeeds...); err != nil {
		return err
	}
	cc.join = sarama.NewBroker(c.addr)
	cc.hb = sarama.NewBroker(c.addr)
	joinCfg := m.saramaConfig(cc.joinT, m.cfg.RebalanceTimeout+m.cfg.RequestTimeout)
	if err := cc.join.Open(joinCfg); err != nil {
		return err
	}
	if err := cc.hb.Open(m.saramaConfig(cc.hbT, m.cfg.RequestTimeout)); err != nil {
		return err
	}
	if v, _ := cc.versions.Of(gc.APIJoinGroup); v >= kip848.JoinGroupVersion && !m.cfg.noJoinV9 {
		cc.join9Dialer = gc.Dialer(joinCfg)
	}
	return nil
}

// version is the version of api negotiated (classicNeeds lists every API
// the member sends).
func (cc *classicConns) version(api gc.API) int16 {
	v, _ := cc.versions.Of(api)
	return v
}

// joinVersion is the JoinGroup version sent: 9 over join9, else at most
// 5 over join.
func (cc *classicConns) joinVersion() int16 {
	if cc.join9Dialer != nil {
		return kip848.JoinGroupVersion
	}
	return min(cc.version(gc.APIJoinGroup), 5)
}

// close aborts every connection and closes the brokers.
func (cc *classicConns) close() {
	cc.joinT.Abort()
	cc.hbT.Abort()
	if cc.join9 != nil {
		cc.join9.Close()
	}
	if cc.join != nil {
		_ = cc.join.Close()
	}
	if cc.hb != nil {
		_ = cc.hb.Close()
	}
}

// leaseTerm is the term of a generation's lease: min(session timeout,
// rebalance timeout), of which the lease lasts leaseFraction.
func (p *classic) leaseTerm() time.Duration {
	return min(p.m.cfg.SessionTimeout, p.m.cfg.RebalanceTimeout)
}

func (p *classic) interval() time.Duration {
	return grouplease.HeartbeatInterval(p.m.cfg.HeartbeatInterval, p.leaseTerm())
}

func (p *classic) session() time.Duration { return p.m.cfg.SessionTimeout }

// sessionLost keeps the member id: the coordinator may still know it,
// and the next JoinGroup tells.
func (p *classic) sessionLost() {}

func (p *classic) heartbeat(ctx context.Context, c *coordinator, gen *Generation) beat {
	m, cc := p.m, c.classic
	req := &sarama.HeartbeatRequest{Version: cc.version(gc.APIHeartbeat), GroupId: m.cfg.Group,
		GenerationId: gen.ID, MemberId: gen.MemberID, GroupInstanceId: m.instanceID()}
	sent := time.Now()
	resp, err := withAbort(ctx, cc.hbT, func() (*sarama.HeartbeatResponse, error) { return cc.hb.Heartbeat(req) })
	if err != nil {
		m.connectionFailed(c, err)
		err = m.explain(err)
		if authFailed(err) {
			return beat{verdict: beatFatal, err: fmt.Errorf("%w: group %s: Heartbeat: %w", ErrFatal, m.cfg.Group, err)}
		}
		return beat{verdict: beatRetry, err: fmt.Errorf("to the coordinator, broker %d at %s: %w", c.id, c.addr, err)}
	}
	kerr := resp.Err
	switch {
	case kerr == sarama.ErrNoError:
		return beat{verdict: beatOK, sent: sent, renew: true}
	case kerr == sarama.ErrRebalanceInProgress:
		return beat{verdict: beatRebalance, sent: sent}
	case kerr == sarama.ErrUnknownMemberId:
		p.forgetMemberID(gen.MemberID)
		return beat{verdict: beatLost, err: kerr}
	case kerr == sarama.ErrIllegalGeneration:
		return beat{verdict: beatLost, err: kerr}
	case kerr == sarama.ErrFencedInstancedId, kerr == sarama.ErrGroupAuthorizationFailed:
		return beat{verdict: beatFatal, err: m.setFatal(fmt.Errorf("Heartbeat: %w", kerr))}
	case grouperr.CoordinatorMoved(kerr):
		m.dropCoordinator(c, kerr)
	case grouperr.CoordinatorSuspect(kerr):
		m.recheckCoordinator()
	}
	return beat{verdict: beatRetry, err: kerr}
}

func (p *classic) commitOnce(ctx context.Context, c *coordinator, gen *Generation, offsets map[zkutil.TopicPartition]int64) (bool, error) {
	m, cc := p.m, c.classic
	req := &sarama.OffsetCommitRequest{
		Version:                 cc.version(gc.APIOffsetCommit),
		ConsumerGroup:           m.cfg.Group,
		ConsumerGroupGeneration: gen.ID,
		ConsumerID:              gen.MemberID,
		GroupInstanceId:         m.instanceID(),
		RetentionTime:           -1,
	}
	for tp, off := range offsets {
		// Leader epoch -1: unknown, so Java members never take it for a
		// truncation.
		req.AddBlockWithLeaderEpoch(tp.Topic, tp.Partition, off, -1, 0, "")
	}
	resp, err := withAbort(ctx, c.ctrlT, func() (*sarama.OffsetCommitResponse, error) { return c.ctrl.CommitOffset(req) })
	if err != nil {
		m.connectionFailed(c, err)
		return true, err
	}
	var errs []error
	for topic, parts := range resp.Errors {
		for part, kerr := range parts {
			switch {
			case kerr == sarama.ErrNoError:
			case grouperr.Fenced(kerr):
				p.commitRefused(gen, kerr)
				return false, fmt.Errorf("%w (generation %d, member %s): %w", ErrCommitFenced, gen.ID, gen.MemberID, kerr)
			case grouperr.Retriable(kerr):
				if grouperr.CoordinatorMoved(kerr) {
					m.dropCoordinator(c, kerr)
				} else if grouperr.CoordinatorSuspect(kerr) {
					m.recheckCoordinator()
				}
				return true, kerr
			default:
				errs = append(errs, fmt.Errorf("%s: %w", zkutil.TopicPartition{Topic: topic, Partition: part}, kerr))
			}
		}
	}
	return false, errors.Join(errs...)
}

// commitRefused ends gen as the coordinator's refusal of its commit says:
// another instance took the group.instance.id over (fatal), the member or
// its generation is unknown (membership lost; not while the member
// rejoins from gen or once it has joined a later generation, which makes
// gen's commit stale), or the group is rebalancing. The first two end its
// lease at once: the member learns it was fenced from the commit, and
// hands out no message more.
func (p *classic) commitRefused(gen *Generation, kerr sarama.KError) {
	m := p.m
	why := fmt.Errorf("OffsetCommit: %w", kerr)
	switch kerr {
	case sarama.ErrFencedInstancedId:
		gen.end(m.setFatal(why))
	case sarama.ErrUnknownMemberId:
		p.forgetMemberID(gen.MemberID)
		m.lost(gen, why)
	case sarama.ErrIllegalGeneration:
		p.mu.Lock()
		stale := p.joinedGen > gen.ID || p.rejoining == gen
		p.mu.Unlock()
		if stale {
			// The member is rejoining from gen, or has joined a later
			// generation since: the commit was merely late, as Java's
			// consumer takes it (a RebalanceInProgressException, no
			// reset); Join finds out whether the coordinator still
			// counts the member. Under the cooperative protocol gen's
			// partitions are still this member's meanwhile.
			return
		}
		m.lost(gen, why)
	case sarama.ErrRebalanceInProgress:
		if gen.Err() == nil {
			m.log.Info("group is rebalancing", "generation", gen.ID)
		}
		gen.end(ErrRebalanceStarted)
	}
}

// leaving forgets the member id; only a dynamic member that had one
// leaves (a static member stays in the group until session.timeout.ms
// passes, as in Java).
func (p *classic) leaving() bool {
	p.mu.Lock()
	id := p.memberID
	p.memberID = ""
	p.leftID = id
	p.mu.Unlock()
	return id != "" && p.m.cfg.InstanceID == ""
}

func (p *classic) leaveAttrs() []any { return []any{"member", p.leftID} }

func (p *classic) leave(ctx context.Context, c *coordinator) (bool, error) {
	m, id := p.m, p.leftID
	req := &sarama.LeaveGroupRequest{Version: 0, GroupId: m.cfg.Group, MemberId: id}
	if c.classic.version(gc.APILeaveGroup) >= 3 {
		req = &sarama.LeaveGroupRequest{Version: 3, GroupId: m.cfg.Group,
			Members: []sarama.MemberIdentity{{MemberId: id}}}
	}
	resp, err := withAbort(ctx, c.ctrlT, func() (*sarama.LeaveGroupResponse, error) { return c.ctrl.LeaveGroup(req) })
	if err != nil {
		return true, err
	}
	if resp.Err != sarama.ErrNoError {
		return grouperr.CoordinatorMoved(resp.Err), resp.Err
	}
	for _, mr := range resp.Members {
		if mr.Err != sarama.ErrNoError && mr.Err != sarama.ErrUnknownMemberId {
			return false, mr.Err
		}
	}
	return false, nil
}

func (p *classic) setMemberID(id string) {
	p.mu.Lock()
	p.memberID = id
	p.mu.Unlock()
}

// forgetMemberID clears the member id if it is still id.
func (p *classic) forgetMemberID(id string) {
	p.mu.Lock()
	if p.memberID == id {
		p.memberID = ""
	}
	p.mu.Unlock()
}

// holdAfter moves the member's hold (Generation.HoldUntil) to at least
// leaseFraction of the lease term after at, the moment a JoinGroup that
// may have replaced another instance of this static member ended. It
// assumes the replaced instance runs with the same session and rebalance
// timeouts as this one.
func (p *classic) holdAfter(at time.Time) {
	until := at.Add(time.Duration(float64(p.leaseTerm()) * leaseFraction))
	p.mu.Lock()
	if until.After(p.holdUntil) {
		p.holdUntil = until
	}
	p.mu.Unlock()
}

func (p *classic) memberIDNow() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.memberID
}
