package kafkagroup

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/IBM/sarama"

	gc "github.com/zkconsumer/zkconsumer/internal/coordinator"
	"github.com/zkconsumer/zkconsumer/internal/grouperr"
	"github.com/zkconsumer/zkconsumer/internal/kip848"
)

// protocolType is the protocol type of consumer groups.
const protocolType = "consumer"

// joinState is what a Join's attempts share: the generation whose
// membership the member still holds, and, under the cooperative protocol,
// that generation itself, whose partitions the member keeps and reports.
type joinState struct {
	generation int32       // -1: none
	prev       *Generation // nil: nothing owned
}

// beginJoin makes the member rejoin from prev: still a member of prev's
// generation if prev is running (Join ends it with ErrRebalanceStarted
// next) or ended with ErrRebalanceStarted, as Java's consumer is until
// the coordinator says otherwise, and under the cooperative protocol
// keeping and reporting prev's partitions. From now on a commit of prev
// that the coordinator refuses as of an old generation is stale, not a
// loss (commitRefused).
func (p *classic) beginJoin(prev *Generation) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.st = joinState{generation: -1}
	p.rejoining = prev
	if prev != nil && (prev.Err() == nil || errors.Is(prev.Err(), ErrRebalanceStarted)) {
		p.st.generation = prev.ID
		if p.cooperative {
			p.st.prev = prev
		}
	}
}

func (p *classic) endJoin() {
	p.mu.Lock()
	p.rejoining = nil
	p.mu.Unlock()
}

// forget records that the coordinator no longer counts this member in its
// previous generation (why): the partitions it kept are lost.
func (p *classic) forget(why error) {
	if p.st.prev != nil {
		p.m.lost(p.st.prev, why)
	}
	p.st.prev, p.st.generation = nil, -1
}

// joinOnce runs JoinGroup and SyncGroup once.
func (p *classic) joinOnce(ctx context.Context, c *coordinator) (*Generation, error) {
	m, st := p.m, &p.st
	if c.classic.joinAborted.Load() {
		m.dropCoordinator(c, errors.New("join connection aborted"))
		var err error
		if c, err = m.coordinator(ctx); err != nil {
			if errors.Is(err, ErrFatal) {
				return nil, err
			}
			return nil, retryLater(err)
		}
	}
	cc := c.classic
	if v := cc.joinVersion(); m.cfg.InstanceID != "" && v < 5 {
		return nil, fmt.Errorf("%w: %w (JoinGroup v%d)", ErrFatal, ErrStaticMembershipUnsupported, v)
	}
	// Every member reads its own subscription's partition counts, which
	// its metadata check compares with the cluster's (see watch).
	topics, counts, err := p.subscription()
	if err != nil {
		return nil, retryLater(err)
	}
	own := watch{topics: topics, counts: counts}
	p.mu.Lock()
	memberID, assignedGen := p.memberID, p.assignedGen
	p.mu.Unlock()

	req := &sarama.JoinGroupRequest{
		Version:          cc.joinVersion(),
		GroupId:          m.cfg.Group,
		SessionTimeout:   int32(m.cfg.SessionTimeout.Milliseconds()),
		RebalanceTimeout: int32(m.cfg.RebalanceTimeout.Milliseconds()),
		MemberId:         memberID,
		GroupInstanceId:  m.instanceID(),
		ProtocolType:     protocolType,
	}
	var owned map[string][]int32
	if st.prev != nil {
		owned = st.prev.Assignment
	}
	for _, name := range m.cfg.Assignors {
		if err := req.AddGroupProtocolMetadata(name, subscriptionMetadata(name, topics, owned, st.generation, assignedGen)); err != nil {
			return nil, err
		}
	}
	resp, skip, err := p.joinGroup(ctx, c, req)
	if m.cfg.InstanceID != "" && memberID == "" {
		// Sent without a member id, this JoinGroup takes the instance id
		// over from whichever instance holds it now, at once (see
		// Generation.HoldUntil). Whether the coordinator answered or the
		// connection failed, it may have handled the request already.
		p.holdAfter(time.Now())
	}
	if err != nil {
		p.joinFailed(ctx, c, err)
		return nil, retryLater(fmt.Errorf("JoinGroup to the coordinator, broker %d at %s: %w", c.id, c.addr, m.explain(err)))
	}
	switch resp.Err {
	case sarama.ErrNoError:
	case sarama.ErrMemberIdRequired: // KIP-394: join again with this id
		p.setMemberID(resp.MemberId)
		return nil, retryNow(resp.Err)
	case sarama.ErrUnknownMemberId:
		p.setMemberID("")
		p.forget(fmt.Errorf("JoinGroup: %w", resp.Err))
		return nil, retryNow(resp.Err)
	case sarama.ErrRebalanceInProgress, sarama.ErrOffsetsLoadInProgress:
		return nil, retryLater(resp.Err)
	default:
		if err := p.coordinatorError(c, "JoinGroup", resp.Err); err != nil {
			return nil, err
		}
	}
	p.setMemberID(resp.MemberId)
	p.mu.Lock()
	p.joinedGen = max(p.joinedGen, resp.GenerationId)
	p.mu.Unlock()
	leader := resp.LeaderId == resp.MemberId
	m.log.Info("joined group", "generation", resp.GenerationId, "member", resp.MemberId,
		"protocol", resp.GroupProtocol, "leader", leader, "skip_assignment", skip, "members", len(resp.Members),
		"join_version", req.Version)

	sync := &sarama.SyncGroupRequest{
		Version:         cc.version(gc.APISyncGroup),
		GroupId:         m.cfg.Group,
		GenerationId:    resp.GenerationId,
		MemberId:        resp.MemberId,
		GroupInstanceId: m.instanceID(),
	}
	w := own
	var group map[string]map[string][]int32
	switch {
	case leader && skip:
		// KIP-814: a static leader that rejoined a stable group (a
		// restarted process) leads without assigning: the coordinator
		// keeps the group's assignment, and this member's own comes
		// back in SyncGroup. It still watches every topic of the group
		// as the leader, which nobody else may do (Java's followers do
		// not).
		lw, err := p.leaderWatch(resp)
		if err != nil {
			return nil, err
		}
		w = lw.merge(own)
	case leader:
		assignment, lw, err := p.assignGroup(resp)
		if err != nil {
			return nil, err
		}
		w, group = lw.merge(own), assignment
		for _, id := range slices.Sorted(maps.Keys(assignment)) {
			if err := sync.AddGroupAssignmentMember(id, &sarama.ConsumerGroupMemberAssignment{Topics: assignment[id]}); err != nil {
				return nil, err
			}
		}
	}
	syncSent := time.Now()
	sresp, err := withAbort(ctx, cc.joinT, func() (*sarama.SyncGroupResponse, error) { return cc.join.SyncGroup(sync) })
	if err != nil {
		p.joinFailed(ctx, c, err)
		return nil, retryLater(fmt.Errorf("SyncGroup to the coordinator, broker %d at %s: %w", c.id, c.addr, m.explain(err)))
	}
	switch sresp.Err {
	case sarama.ErrNoError:
	case sarama.ErrRebalanceInProgress:
		return nil, retryNow(sresp.Err)
	case sarama.ErrIllegalGeneration:
		// As Java's consumer, which resets its generation: what it kept
		// may be another member's by now.
		p.forget(fmt.Errorf("SyncGroup: %w", sresp.Err))
		return nil, retryNow(sresp.Err)
	case sarama.ErrUnknownMemberId:
		p.setMemberID("")
		p.forget(fmt.Errorf("SyncGroup: %w", sresp.Err))
		return nil, retryNow(sresp.Err)
	default:
		if err := p.coordinatorError(c, "SyncGroup", sresp.Err); err != nil {
			return nil, err
		}
	}
	mine, err := decodeAssignment(sresp.MemberAssignment)
	if err != nil {
		return nil, fmt.Errorf("%w: undecodable assignment from the leader: %w", ErrFatal, err)
	}
	if st.prev != nil && st.prev.lease.Gone() {
		// The previous generation was found lost while this member
		// rejoined (a refused commit, say): what it kept is not this
		// generation's to continue.
		st.prev = nil
	}
	p.mu.Lock()
	hold := p.holdUntil
	p.mu.Unlock()
	gen := newGeneration(resp.GenerationId, resp.MemberId, resp.GroupProtocol, leader, mine,
		p.leaseTerm(), syncSent, hold, st.prev)
	gen.GroupAssignment = cloneGroupAssignment(group)
	gen.SkippedAssignment = leader && skip
	gen.Cooperative = p.cooperative
	p.mu.Lock()
	p.assignedGen = gen.ID
	p.joined, p.watch = topics, w
	p.mu.Unlock()
	m.log.Info("generation started", "generation", gen.ID, "member", gen.MemberID, "assignment", mine, "continues", gen.Continues)
	if !gen.HoldUntil.IsZero() {
		m.log.Info("this static member may have replaced a live instance with the same group.instance.id: "+
			"no message is handed out until that instance's lease has ended",
			"generation", gen.ID, "wait", time.Until(gen.HoldUntil).Round(time.Millisecond))
	}
	return gen, nil
}

// coordinatorError handles the errors JoinGroup and SyncGroup share: a
// moved coordinator is looked up again; fatal errors are returned wrapping
// ErrFatal (FENCED_INSTANCE_ID and GROUP_AUTHORIZATION_FAILED stick: every
// later Join fails with them).
func (p *classic) coordinatorError(c *coordinator, api string, kerr sarama.KError) error {
	m := p.m
	switch {
	case grouperr.CoordinatorMoved(kerr):
		m.dropCoordinator(c, kerr)
		return retryLater(fmt.Errorf("%s: %w", api, kerr))
	case grouperr.CoordinatorSuspect(kerr):
		m.recheckCoordinator()
		return retryLater(fmt.Errorf("%s: %w", api, kerr))
	case kerr == sarama.ErrFencedInstancedId, kerr == sarama.ErrGroupAuthorizationFailed:
		return m.setFatal(fmt.Errorf("%s: %w", api, kerr))
	}
	return fmt.Errorf("%w: %s: %w", ErrFatal, api, kerr)
}

// joinFailed handles a JoinGroup or SyncGroup that failed on the join
// connection of c: when Join's ctx ended it, the coordinator is kept, so
// that Close can still send LeaveGroup over the other connection, and the
// next Join connects again; otherwise c is dropped (connectionFailed).
func (p *classic) joinFailed(ctx context.Context, c *coordinator, err error) {
	if ctx.Err() != nil {
		c.classic.joinAborted.Store(true)
		return
	}
	p.m.connectionFailed(c, err)
}

// joinGroup sends req to c: at version 9 with kip848's encoding when c
// has join9Dialer (skip is then the answer's SkipAssignment), else with
// sarama's on the join connection. The answer is sarama's either way.
func (p *classic) joinGroup(ctx context.Context, c *coordinator, req *sarama.JoinGroupRequest) (resp *sarama.JoinGroupResponse, skip bool, err error) {
	m, cc := p.m, c.classic
	if cc.join9Dialer == nil {
		resp, err = withAbort(ctx, cc.joinT, func() (*sarama.JoinGroupResponse, error) { return cc.join.JoinGroup(req) })
		return resp, false, err
	}
	if cc.join9 == nil {
		// Dialled through joinT, so that withAbort and close end it.
		if cc.join9, err = kip848.Dial(ctx, cc.join9Dialer, c.addr, m.cfg.ClientID, m.cfg.RebalanceTimeout+m.cfg.RequestTimeout); err != nil {
			return nil, false, err
		}
	}
	r9 := &kip848.JoinGroupRequest{GroupID: req.GroupId, SessionTimeoutMs: req.SessionTimeout, RebalanceTimeoutMs: req.RebalanceTimeout,
		MemberID: req.MemberId, GroupInstanceID: req.GroupInstanceId, ProtocolType: req.ProtocolType}
	for _, p := range req.OrderedGroupProtocols {
		r9.Protocols = append(r9.Protocols, kip848.JoinGroupProtocol{Name: p.Name, Metadata: p.Metadata})
	}
	a9, err := withAbort(ctx, cc.joinT, func() (*kip848.JoinGroupResponse, error) { return cc.join9.JoinGroup(ctx, r9) })
	if err != nil {
		return nil, false, err
	}
	resp = &sarama.JoinGroupResponse{Version: kip848.JoinGroupVersion, ThrottleTime: a9.ThrottleTimeMs, Err: sarama.KError(a9.ErrorCode),
		GenerationId: a9.GenerationID, LeaderId: a9.Leader, MemberId: a9.MemberID, ProtocolType: a9.ProtocolType}
	if a9.ProtocolName != nil {
		resp.GroupProtocol = *a9.ProtocolName
	}
	for _, gm := range a9.Members {
		resp.Members = append(resp.Members, sarama.GroupMember{MemberId: gm.MemberID, GroupInstanceId: gm.GroupInstanceID, Metadata: gm.Metadata})
	}
	return resp, a9.SkipAssignment, nil
}

// groupTopics decodes the members' subscriptions of the leader's JoinGroup
// answer and reads the partition counts of every topic they subscribe to:
// what the leader assigns from and watches.
func (p *classic) groupTopics(resp *sarama.JoinGroupResponse) (map[string]memberSubscription, watch, error) {
	members, err := decodeMembers(resp)
	if err != nil {
		return nil, watch{}, fmt.Errorf("%w: %w", ErrFatal, err)
	}
	var topics []string
	for _, s := range members {
		topics = append(topics, s.Topics...)
	}
	slices.Sort(topics)
	topics = slices.Compact(topics)
	counts, err := p.partitionCounts(topics)
	if err != nil {
		return nil, watch{}, retryLater(err)
	}
	return members, watch{topics: topics, counts: counts}, nil
}

// leaderWatch is what a leader that skips the assignment (KIP-814)
// watches: every topic of the group.
func (p *classic) leaderWatch(resp *sarama.JoinGroupResponse) (watch, error) {
	_, w, err := p.groupTopics(resp)
	return w, err
}

// assignGroup computes every member's assignment with the assignor the
// coordinator chose.
func (p *classic) assignGroup(resp *sarama.JoinGroupResponse) (map[string]map[string][]int32, watch, error) {
	assignor, ok := p.assignors[resp.GroupProtocol]
	if !ok {
		return nil, watch{}, fmt.Errorf("%w: the coordinator chose assignor %q, which this member did not offer", ErrFatal, resp.GroupProtocol)
	}
	members, w, err := p.groupTopics(resp)
	if err != nil {
		return nil, watch{}, err
	}
	topics, counts := w.topics, w.counts
	a, err := assignor.Assign(counts, members)
	if err != nil {
		return nil, watch{}, fmt.Errorf("%w: %w", ErrFatal, err)
	}
	p.m.log.Debug("computed assignment", "assignor", assignor.Name(), "members", len(members), "counts", counts)
	return a, watch{topics: topics, counts: counts}, nil
}

// cloneGroupAssignment copies the leader's assignment of the group (member id
// to topic to partitions) for Generation.GroupAssignment, partitions
// sorted and topics without partitions left out; nil for nil.
func cloneGroupAssignment(a map[string]map[string][]int32) map[string]map[string][]int32 {
	if a == nil {
		return nil
	}
	out := make(map[string]map[string][]int32, len(a))
	for id, topics := range a {
		mine := map[string][]int32{}
		for topic, ps := range topics {
			if len(ps) > 0 {
				ps = slices.Clone(ps)
				slices.Sort(ps)
				mine[topic] = ps
			}
		}
		out[id] = mine
	}
	return out
}
