package kafkagroup

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/grouperr"
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
// committed. Join retries coordinator errors until ctx ends; it fails at
// once with an ErrFatal error, ErrMemberClosed after Close, and
// ErrJoinInProgress while another Join runs.
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
	if prev != nil {
		prev.end(ErrRebalanceStarted)
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(m.ctx, func() { cancel(ErrMemberClosed) })
	defer stop()
	for attempt := 1; ; attempt++ {
		gen, err := m.joinOnce(ctx)
		if err == nil {
			return gen, nil
		}
		if ctx.Err() != nil {
			if m.ctx.Err() != nil {
				return nil, ErrMemberClosed
			}
			return nil, fmt.Errorf("kafkagroup: join group %s: %w (last error: %w)", m.cfg.Group, context.Cause(ctx), err)
		}
		var re *retryError
		if !errors.As(err, &re) {
			return nil, fmt.Errorf("kafkagroup: join group %s: %w", m.cfg.Group, err)
		}
		m.log.Debug("join attempt failed", "attempt", attempt, "err", err)
		if re.now {
			continue
		}
		t := time.NewTimer(m.cfg.RetryBackoff)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
}

// joinOnce runs JoinGroup and SyncGroup once.
func (m *Member) joinOnce(ctx context.Context) (*Generation, error) {
	c, err := m.coordinator()
	if err != nil {
		return nil, retryLater(err)
	}
	if m.cfg.InstanceID != "" && c.joinGroupMaxV < 5 {
		return nil, fmt.Errorf("%w: %w (JoinGroup v%d)", ErrFatal, ErrStaticMembershipUnsupported, c.joinGroupMaxV)
	}
	topics, err := m.subscription()
	if err != nil {
		return nil, retryLater(err)
	}
	m.mu.Lock()
	memberID := m.memberID
	m.mu.Unlock()

	req := &sarama.JoinGroupRequest{
		Version:          5, // lowered by sarama to what the broker speaks
		GroupId:          m.cfg.Group,
		SessionTimeout:   int32(m.cfg.SessionTimeout.Milliseconds()),
		RebalanceTimeout: int32(m.cfg.RebalanceTimeout.Milliseconds()),
		MemberId:         memberID,
		GroupInstanceId:  m.instanceID(),
		ProtocolType:     protocolType,
	}
	meta := subscriptionMetadata(topics)
	for _, name := range m.cfg.Assignors {
		if err := req.AddGroupProtocolMetadata(name, meta); err != nil {
			return nil, err
		}
	}
	resp, err := withAbort(ctx, c.joinT, func() (*sarama.JoinGroupResponse, error) { return c.join.JoinGroup(req) })
	if m.cfg.InstanceID != "" && memberID == "" {
		// Sent without a member id, this JoinGroup takes the instance id
		// over from whichever instance holds it now, at once (see
		// Generation.HoldUntil). Whether the coordinator answered or the
		// connection failed, it may have handled the request already.
		m.holdAfter(time.Now())
	}
	if err != nil {
		m.connectionFailed(c, err)
		return nil, retryLater(fmt.Errorf("JoinGroup: %w", err))
	}
	switch resp.Err {
	case sarama.ErrNoError:
	case sarama.ErrMemberIdRequired: // KIP-394: join again with this id
		m.setMemberID(resp.MemberId)
		return nil, retryNow(resp.Err)
	case sarama.ErrUnknownMemberId:
		m.setMemberID("")
		return nil, retryNow(resp.Err)
	case sarama.ErrRebalanceInProgress, sarama.ErrOffsetsLoadInProgress:
		return nil, retryLater(resp.Err)
	default:
		if err := m.coordinatorError(c, "JoinGroup", resp.Err); err != nil {
			return nil, err
		}
	}
	m.setMemberID(resp.MemberId)
	leader := resp.LeaderId == resp.MemberId
	m.log.Info("joined group", "generation", resp.GenerationId, "member", resp.MemberId,
		"protocol", resp.GroupProtocol, "leader", leader, "members", len(resp.Members))

	sync := &sarama.SyncGroupRequest{
		Version:         3,
		GroupId:         m.cfg.Group,
		GenerationId:    resp.GenerationId,
		MemberId:        resp.MemberId,
		GroupInstanceId: m.instanceID(),
	}
	var watch leaderWatch
	if leader {
		assignment, w, err := m.assignGroup(resp)
		if err != nil {
			return nil, err
		}
		watch = w
		for _, id := range slices.Sorted(maps.Keys(assignment)) {
			if err := sync.AddGroupAssignmentMember(id, &sarama.ConsumerGroupMemberAssignment{Topics: assignment[id]}); err != nil {
				return nil, err
			}
		}
	}
	syncSent := time.Now()
	sresp, err := withAbort(ctx, c.joinT, func() (*sarama.SyncGroupResponse, error) { return c.join.SyncGroup(sync) })
	if err != nil {
		m.connectionFailed(c, err)
		return nil, retryLater(fmt.Errorf("SyncGroup: %w", err))
	}
	switch sresp.Err {
	case sarama.ErrNoError:
	case sarama.ErrRebalanceInProgress, sarama.ErrIllegalGeneration:
		return nil, retryNow(sresp.Err)
	case sarama.ErrUnknownMemberId:
		m.setMemberID("")
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
	m.mu.Lock()
	hold := m.holdUntil
	m.mu.Unlock()
	gen := newGeneration(resp.GenerationId, resp.MemberId, resp.GroupProtocol, leader, mine,
		m.leaseTerm(), syncSent, hold)
	m.mu.Lock()
	m.gen = gen
	m.mu.Unlock()
	m.log.Info("generation started", "generation", gen.ID, "member", gen.MemberID, "assignment", mine)
	if !gen.HoldUntil.IsZero() {
		m.log.Info("this static member may have replaced a live instance with the same group.instance.id: "+
			"no message is handed out until that instance's lease has ended",
			"generation", gen.ID, "wait", time.Until(gen.HoldUntil).Round(time.Millisecond))
	}
	m.startBackground(gen, topics, watch)
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
	case kerr == sarama.ErrFencedInstancedId, kerr == sarama.ErrGroupAuthorizationFailed:
		return m.setFatal(fmt.Errorf("%s: %w", api, kerr))
	}
	return fmt.Errorf("%w: %s: %w", ErrFatal, api, kerr)
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
// rebalance timeout), of which the lease lasts LeaseFraction.
func (m *Member) leaseTerm() time.Duration { return min(m.cfg.SessionTimeout, m.cfg.RebalanceTimeout) }

// holdAfter moves the member's hold (Generation.HoldUntil) to at least
// LeaseFraction of the lease term after at, the moment a JoinGroup that
// may have replaced another instance of this static member ended. It
// assumes the replaced instance runs with the same session and rebalance
// timeouts as this one.
func (m *Member) holdAfter(at time.Time) {
	until := at.Add(time.Duration(float64(m.leaseTerm()) * LeaseFraction))
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

// leaderWatch is what the leader assigned from: every topic some member
// subscribes to and the partition counts it read; a change of the counts
// makes it rejoin, as Java's leader does.
type leaderWatch struct {
	topics []string
	counts map[string]int32
}

// assignGroup computes every member's assignment with the assignor the
// coordinator chose.
func (m *Member) assignGroup(resp *sarama.JoinGroupResponse) (map[string]map[string][]int32, leaderWatch, error) {
	assignor, ok := m.assignors[resp.GroupProtocol]
	if !ok {
		return nil, leaderWatch{}, fmt.Errorf("%w: the coordinator chose assignor %q, which this member did not offer", ErrFatal, resp.GroupProtocol)
	}
	members, err := decodeMembers(resp)
	if err != nil {
		return nil, leaderWatch{}, fmt.Errorf("%w: %w", ErrFatal, err)
	}
	var topics []string
	for _, s := range members {
		topics = append(topics, s.Topics...)
	}
	slices.Sort(topics)
	topics = slices.Compact(topics)
	counts, err := m.partitionCounts(topics)
	if err != nil {
		return nil, leaderWatch{}, retryLater(err)
	}
	a, err := assignor.Assign(counts, members)
	if err != nil {
		return nil, leaderWatch{}, fmt.Errorf("%w: %w", ErrFatal, err)
	}
	m.log.Debug("computed assignment", "assignor", assignor.Name(), "members", len(members), "counts", counts)
	return a, leaderWatch{topics: topics, counts: counts}, nil
}
