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
	"github.com/zkconsumer/zkconsumer/rebalance"
)

// protocolType is the protocol type of consumer groups.
const protocolType = "consumer"

// retryError marks a failed join attempt that Join repeats: at once when
// now is set (a new member id, a rebalance that moved on), after
// RetryBackoff otherwise.
type retryError struct {
	err error
	now bool
}

func (e *retryError) Error() string { return e.err.Error() }
func (e *retryError) Unwrap() error { return e.err }

func retryLater(err error) error { return &retryError{err: err} }
func retryNow(err error) error   { return &retryError{err: err, now: true} }

// Join joins the group (or rejoins it) and returns the new generation once
// the coordinator has handed out the assignment. If the previous
// generation has not ended yet it ends now with ErrRebalanceStarted: call
// Join only after the work of the previous generation is stopped and
// committed; under the cooperative protocol (Generation.Cooperative) only
// after it is committed: a previous generation that ended with
// ErrRebalanceStarted keeps its partitions, which Join reports to the
// coordinator as owned, and the new generation continues it
// (Generation.Continues) unless the coordinator forgot this member
// meanwhile (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION), which ends the
// previous generation with ErrMembershipLost. Join retries coordinator errors and unreachable brokers until
// ctx ends, reporting those that last (Config.OnError); the error it then
// returns wraps both context.Cause(ctx) and the last failure. It fails at
// once with an ErrFatal error (among them a connection the brokers refused
// to authenticate, or whose TLS handshake failed, naming the setting to
// fix), ErrMemberClosed after Close, and ErrJoinInProgress while another
// Join runs.
func (m *Member) Join(ctx context.Context) (*Generation, error) {
	if m.ctx.Err() != nil {
		return nil, ErrMemberClosed
	}
	if !m.joinMu.TryLock() {
		if m.ctx.Err() != nil {
			return nil, ErrMemberClosed
		}
		return nil, ErrJoinInProgress
	}
	defer m.joinMu.Unlock()
	if m.ctx.Err() != nil {
		return nil, ErrMemberClosed
	}
	m.stopBackground()
	m.mu.Lock()
	fatal, prev := m.fatal, m.gen
	m.mu.Unlock()
	if fatal != nil {
		return nil, fatal
	}
	st := &joinState{generation: -1}
	if prev != nil {
		m.mu.Lock()
		m.rejoining = prev
		m.mu.Unlock()
		defer func() {
			m.mu.Lock()
			m.rejoining = nil
			m.mu.Unlock()
		}()
		prev.end(ErrRebalanceStarted)
		if errors.Is(prev.Err(), ErrRebalanceStarted) {
			// Still a member of prev's generation, as Java's consumer
			// is until the coordinator says otherwise.
			st.generation = prev.ID
			if m.cooperative {
				st.prev = prev
			}
		}
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(m.ctx, func() { cancel(ErrMemberClosed) })
	defer stop()
	// A Metadata or FindCoordinator request in flight ends with ctx too
	// (the bootstrap connections are dialled again when next used); no
	// other request uses them while Join runs.
	stopReset := context.AfterFunc(ctx, m.clientT.Reset)
	defer stopReset()
	var (
		last    error     // the last failure, for the error when ctx ends
		failing time.Time // since when attempts fail; zero while none has
	)
	for attempt := 1; ; attempt++ {
		if ctx.Err() != nil {
			return nil, m.joinEnded(ctx, last)
		}
		gen, err := m.joinOnce(ctx, st)
		if err == nil {
			m.recovered("join")
			return gen, nil
		}
		if ctx.Err() != nil {
			return nil, m.joinEnded(ctx, last)
		}
		var re *retryError
		switch {
		case !errors.As(err, &re):
			return nil, fmt.Errorf("kafkagroup: join group %s: %w", m.cfg.Group, err)
		case authFailed(re.err):
			// As Java's consumer throws its authentication exceptions
			// from poll: a setting is wrong, retrying cannot mend it.
			m.log.Error("authentication failed", "err", re.err)
			return nil, fmt.Errorf("%w: group %s: %w", ErrFatal, m.cfg.Group, re.err)
		}
		last = re.err
		if re.now {
			m.log.Debug("join attempt failed", "attempt", attempt, "err", err)
			continue
		}
		if failing.IsZero() {
			failing = time.Now()
		}
		if d := time.Since(failing); d >= reportAfter {
			m.report("join", fmt.Errorf("kafkagroup: join group %s: failing for %v, retrying: %w", m.cfg.Group, d.Round(time.Second), re.err))
		} else {
			m.log.Debug("join attempt failed", "attempt", attempt, "err", err)
		}
		t := time.NewTimer(m.cfg.RetryBackoff)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
}

// joinEnded is Join's error once its ctx has ended: ErrMemberClosed after
// Close, else one that wraps the context's cause and the last failure, if
// any, so that errors.Is matches both.
func (m *Member) joinEnded(ctx context.Context, last error) error {
	if m.ctx.Err() != nil {
		return ErrMemberClosed
	}
	cause := context.Cause(ctx)
	if last == nil || errors.Is(last, cause) {
		return fmt.Errorf("kafkagroup: join group %s: %w", m.cfg.Group, cause)
	}
	return fmt.Errorf("kafkagroup: join group %s: %w (last error: %w)", m.cfg.Group, cause, last)
}

// joinState is what Join's attempts share: the generation whose
// membership the member still holds, and, under the cooperative protocol,
// that generation itself, whose partitions the member keeps and reports.
type joinState struct {
	generation int32       // -1: none
	prev       *Generation // nil: nothing owned
}

// forget records that the coordinator no longer counts this member in its
// previous generation (why): the partitions it kept are lost.
func (m *Member) forget(st *joinState, why error) {
	if st.prev != nil {
		m.lost(st.prev, why)
	}
	st.prev, st.generation = nil, -1
}

// joinOnce runs JoinGroup and SyncGroup once.
func (m *Member) joinOnce(ctx context.Context, st *joinState) (*Generation, error) {
	c, err := m.coordinator()
	if err == nil && c.joinAborted.Load() {
		m.dropCoordinator(c, errors.New("join connection aborted"))
		c, err = m.coordinator()
	}
	if errors.Is(err, ErrFatal) {
		return nil, err
	}
	if err != nil {
		return nil, retryLater(err)
	}
	if v := c.joinVersion(); m.cfg.InstanceID != "" && v < 5 {
		return nil, fmt.Errorf("%w: %w (JoinGroup v%d)", ErrFatal, ErrStaticMembershipUnsupported, v)
	}
	// Every member reads its own subscription's partition counts, which
	// its metadata check compares with the cluster's (see watch).
	topics, counts, err := m.subscription()
	if err != nil {
		return nil, retryLater(err)
	}
	own := watch{topics: topics, counts: counts}
	m.mu.Lock()
	memberID := m.memberID
	m.mu.Unlock()

	req := &sarama.JoinGroupRequest{
		Version:          c.joinVersion(),
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
	m.mu.Lock()
	assignedGen := m.assignedGen
	m.mu.Unlock()
	for _, name := range m.cfg.Assignors {
		if err := req.AddGroupProtocolMetadata(name, subscriptionMetadata(name, topics, owned, st.generation, assignedGen)); err != nil {
			return nil, err
		}
	}
	resp, skip, err := m.joinGroup(ctx, c, req)
	if m.cfg.InstanceID != "" && memberID == "" {
		// Sent without a member id, this JoinGroup takes the instance id
		// over from whichever instance holds it now, at once (see
		// Generation.HoldUntil). Whether the coordinator answered or the
		// connection failed, it may have handled the request already.
		m.holdAfter(time.Now())
	}
	if err != nil {
		m.joinFailed(ctx, c, err)
		return nil, retryLater(fmt.Errorf("JoinGroup to the coordinator, broker %d at %s: %w", c.id, c.addr, m.explain(err)))
	}
	switch resp.Err {
	case sarama.ErrNoError:
	case sarama.ErrMemberIdRequired: // KIP-394: join again with this id
		m.setMemberID(resp.MemberId)
		return nil, retryNow(resp.Err)
	case sarama.ErrUnknownMemberId:
		m.setMemberID("")
		m.forget(st, fmt.Errorf("JoinGroup: %w", resp.Err))
		return nil, retryNow(resp.Err)
	case sarama.ErrRebalanceInProgress, sarama.ErrOffsetsLoadInProgress:
		return nil, retryLater(resp.Err)
	default:
		if err := m.coordinatorError(c, "JoinGroup", resp.Err); err != nil {
			return nil, err
		}
	}
	m.setMemberID(resp.MemberId)
	m.mu.Lock()
	m.joinedGen = max(m.joinedGen, resp.GenerationId)
	m.mu.Unlock()
	leader := resp.LeaderId == resp.MemberId
	m.log.Info("joined group", "generation", resp.GenerationId, "member", resp.MemberId,
		"protocol", resp.GroupProtocol, "leader", leader, "skip_assignment", skip, "members", len(resp.Members),
		"join_version", req.Version)

	sync := &sarama.SyncGroupRequest{
		Version:         c.version(gc.APISyncGroup),
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
		lw, err := m.leaderWatch(resp)
		if err != nil {
			return nil, err
		}
		w = lw.merge(own)
	case leader:
		assignment, lw, err := m.assignGroup(resp)
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
	sresp, err := withAbort(ctx, c.joinT, func() (*sarama.SyncGroupResponse, error) { return c.join.SyncGroup(sync) })
	if err != nil {
		m.joinFailed(ctx, c, err)
		return nil, retryLater(fmt.Errorf("SyncGroup to the coordinator, broker %d at %s: %w", c.id, c.addr, m.explain(err)))
	}
	switch sresp.Err {
	case sarama.ErrNoError:
	case sarama.ErrRebalanceInProgress:
		return nil, retryNow(sresp.Err)
	case sarama.ErrIllegalGeneration:
		// As Java's consumer, which resets its generation: what it kept
		// may be another member's by now.
		m.forget(st, fmt.Errorf("SyncGroup: %w", sresp.Err))
		return nil, retryNow(sresp.Err)
	case sarama.ErrUnknownMemberId:
		m.setMemberID("")
		m.forget(st, fmt.Errorf("SyncGroup: %w", sresp.Err))
		return nil, retryNow(sresp.Err)
	default:
		if err := m.coordinatorError(c, "SyncGroup", sresp.Err); err != nil {
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
	m.mu.Lock()
	hold := m.holdUntil
	m.mu.Unlock()
	gen := newGeneration(resp.GenerationId, resp.MemberId, resp.GroupProtocol, leader, mine,
		m.leaseTerm(), syncSent, hold, st.prev)
	gen.GroupAssignment = groupAssignment(group)
	gen.SkippedAssignment = leader && skip
	gen.Cooperative = m.cooperative
	m.mu.Lock()
	m.gen = gen
	m.assignedGen = gen.ID
	m.mu.Unlock()
	m.log.Info("generation started", "generation", gen.ID, "member", gen.MemberID, "assignment", mine, "continues", gen.Continues)
	if !gen.HoldUntil.IsZero() {
		m.log.Info("this static member may have replaced a live instance with the same group.instance.id: "+
			"no message is handed out until that instance's lease has ended",
			"generation", gen.ID, "wait", time.Until(gen.HoldUntil).Round(time.Millisecond))
	}
	m.startBackground(gen, topics, w)
	return gen, nil
}

// coordinatorError handles the errors JoinGroup and SyncGroup share: a
// moved coordinator is looked up again; fatal errors are returned wrapping
// ErrFatal (FENCED_INSTANCE_ID and GROUP_AUTHORIZATION_FAILED stick: every
// later Join fails with them).
func (m *Member) coordinatorError(c *coordinator, api string, kerr sarama.KError) error {
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
func (m *Member) joinFailed(ctx context.Context, c *coordinator, err error) {
	if ctx.Err() != nil {
		c.joinAborted.Store(true)
		return
	}
	m.connectionFailed(c, err)
}

// connectionFailed drops c after a failed request, unless Close caused the
// failure (Close still needs c to leave the group).
func (m *Member) connectionFailed(c *coordinator, err error) {
	if m.ctx.Err() == nil {
		m.dropCoordinator(c, err)
	}
}

// setFatal records err, wrapped in ErrFatal, as the end of this member and
// returns it.
func (m *Member) setFatal(err error) error {
	fatal := fmt.Errorf("%w: group %s: %w", ErrFatal, m.cfg.Group, err)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fatal == nil {
		m.fatal = fatal
		m.log.Error("fatal group error", "err", err)
	}
	return m.fatal
}

// leaseTerm is the term of a generation's lease: min(session timeout,
// rebalance timeout), of which the lease lasts leaseFraction.
func (m *Member) leaseTerm() time.Duration { return min(m.cfg.SessionTimeout, m.cfg.RebalanceTimeout) }

// holdAfter moves the member's hold (Generation.HoldUntil) to at least
// leaseFraction of the lease term after at, the moment a JoinGroup that
// may have replaced another instance of this static member ended. It
// assumes the replaced instance runs with the same session and rebalance
// timeouts as this one.
func (m *Member) holdAfter(at time.Time) {
	until := at.Add(time.Duration(float64(m.leaseTerm()) * leaseFraction))
	m.mu.Lock()
	if until.After(m.holdUntil) {
		m.holdUntil = until
	}
	m.mu.Unlock()
}

func (m *Member) setMemberID(id string) {
	m.mu.Lock()
	m.memberID = id
	m.mu.Unlock()
}

// forgetMemberID clears the member id if it is still id.
func (m *Member) forgetMemberID(id string) {
	m.mu.Lock()
	if m.memberID == id {
		m.memberID = ""
	}
	m.mu.Unlock()
}

func (m *Member) instanceID() *string {
	if m.cfg.InstanceID == "" {
		return nil
	}
	id := m.cfg.InstanceID
	return &id
}

// joinGroup sends req to c: at version 9 with kip848's encoding when c
// has join9Dialer (skip is then the answer's SkipAssignment), else with
// sarama's on the join connection. The answer is sarama's either way.
func (m *Member) joinGroup(ctx context.Context, c *coordinator, req *sarama.JoinGroupRequest) (resp *sarama.JoinGroupResponse, skip bool, err error) {
	if c.join9Dialer == nil {
		resp, err = withAbort(ctx, c.joinT, func() (*sarama.JoinGroupResponse, error) { return c.join.JoinGroup(req) })
		return resp, false, err
	}
	if c.join9 == nil {
		// Dialled through joinT, so that withAbort and close end it.
		if c.join9, err = kip848.Dial(ctx, c.join9Dialer, c.addr, m.cfg.ClientID, m.cfg.RebalanceTimeout+m.cfg.RequestTimeout); err != nil {
			return nil, false, err
		}
	}
	r9 := &kip848.JoinGroupRequest{GroupID: req.GroupId, SessionTimeoutMs: req.SessionTimeout, RebalanceTimeoutMs: req.RebalanceTimeout,
		MemberID: req.MemberId, GroupInstanceID: req.GroupInstanceId, ProtocolType: req.ProtocolType}
	for _, p := range req.OrderedGroupProtocols {
		r9.Protocols = append(r9.Protocols, kip848.JoinGroupProtocol{Name: p.Name, Metadata: p.Metadata})
	}
	a9, err := withAbort(ctx, c.joinT, func() (*kip848.JoinGroupResponse, error) { return c.join9.JoinGroup(ctx, r9) })
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
func (m *Member) groupTopics(resp *sarama.JoinGroupResponse) (map[string]rebalance.MemberSubscription, watch, error) {
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
	counts, err := m.partitionCounts(topics)
	if err != nil {
		return nil, watch{}, retryLater(err)
	}
	return members, watch{topics: topics, counts: counts}, nil
}

// leaderWatch is what a leader that skips the assignment (KIP-814)
// watches: every topic of the group.
func (m *Member) leaderWatch(resp *sarama.JoinGroupResponse) (watch, error) {
	_, w, err := m.groupTopics(resp)
	return w, err
}

// assignGroup computes every member's assignment with the assignor the
// coordinator chose.
func (m *Member) assignGroup(resp *sarama.JoinGroupResponse) (map[string]map[string][]int32, watch, error) {
	assignor, ok := m.assignors[resp.GroupProtocol]
	if !ok {
		return nil, watch{}, fmt.Errorf("%w: the coordinator chose assignor %q, which this member did not offer", ErrFatal, resp.GroupProtocol)
	}
	members, w, err := m.groupTopics(resp)
	if err != nil {
		return nil, watch{}, err
	}
	topics, counts := w.topics, w.counts
	a, err := assignor.Assign(counts, members)
	if err != nil {
		return nil, watch{}, fmt.Errorf("%w: %w", ErrFatal, err)
	}
	m.log.Debug("computed assignment", "assignor", assignor.Name(), "members", len(members), "counts", counts)
	return a, watch{topics: topics, counts: counts}, nil
}

// groupAssignment copies the leader's assignment of the group (member id
// to topic to partitions) for Generation.GroupAssignment, partitions
// sorted and topics without partitions left out; nil for nil.
func groupAssignment(a map[string]map[string][]int32) map[string]map[string][]int32 {
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
