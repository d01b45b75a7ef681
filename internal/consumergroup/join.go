package consumergroup

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/backoff"
	"github.com/zkconsumer/zkconsumer/internal/grouplease"
	"github.com/zkconsumer/zkconsumer/internal/kip848"
)

// reportAfter is how long a join keeps failing before it is reported.
const reportAfter = 3 * time.Second

// Join makes the member a member of the group, with epoch 0 the first time
// and after it was fenced, and returns the next generation: it first
// tells the coordinator which partitions it owns now (the previous
// generation's, without those the coordinator revoked, which the caller
// has stopped and committed by now: this acknowledges the revocation),
// takes the partitions the coordinator assigned, and repeats until the
// coordinator's assignment and what the member owns agree. It retries what
// may pass (an unreachable coordinator, a coordinator that moved or is
// loading, a static id not yet released), reporting failures to OnError
// once they last, until ctx ends; an ErrFatal error ends it at once.
//
// Call Join again once the previous generation has ended and its work is
// stopped and, unless it ended with ErrMembershipLost, committed.
func (m *Member) Join(ctx context.Context) (*Generation, error) {
	if !m.joinMu.TryLock() {
		return nil, ErrJoinInProgress
	}
	defer m.joinMu.Unlock()
	m.stopBackground()
	m.mu.Lock()
	if m.gen != nil && m.gen.Err() == nil {
		m.gen.end(ErrRebalanceStarted) // the caller gave it up
	}
	m.mu.Unlock()
	m.readSessionTimeout()
	started := time.Now()
	var last error
	for {
		if m.ctx.Err() != nil {
			return nil, ErrMemberClosed
		}
		if ctx.Err() != nil {
			if last != nil {
				return nil, fmt.Errorf("consumergroup: join group %s: %w (last failure: %w)", m.cfg.Group, context.Cause(ctx), last)
			}
			return nil, fmt.Errorf("consumergroup: join group %s: %w", m.cfg.Group, context.Cause(ctx))
		}
		gen, err := m.joinOnce(ctx)
		if err == nil {
			return gen, nil
		}
		switch {
		case m.ctx.Err() != nil:
			return nil, ErrMemberClosed
		case errors.Is(err, ErrFatal):
			return nil, err
		case ctx.Err() != nil:
			// The attempt ctx cut short says less than the one before.
			if last == nil {
				last = err
			}
			return nil, fmt.Errorf("consumergroup: join group %s: %w (last failure: %w)", m.cfg.Group, context.Cause(ctx), last)
		}
		last = err
		m.log.Debug("join failed; retrying", "err", err)
		if time.Since(started) > reportAfter {
			m.report("join", fmt.Errorf("consumergroup: join group %s: %w", m.cfg.Group, err))
		}
		backoff.Sleep(ctx, m.cfg.RetryBackoff)
	}
}

// joinOnce sends heartbeats until what the member owns and the
// coordinator's assignment agree; then the generation starts.
func (m *Member) joinOnce(ctx context.Context) (*Generation, error) {
	for round := 0; ; round++ {
		if round > 100 {
			return nil, errors.New("consumergroup: the assignment does not settle")
		}
		c, err := m.coordinator(ctx)
		if err != nil {
			return nil, err
		}
		if err := m.settleTarget(); err != nil {
			return nil, err
		}
		resp, sent, err := m.heartbeat(ctx, c)
		if err != nil {
			return nil, err
		}
		if hbErr := kafkaError(resp.ErrorCode, resp.ErrorMessage); hbErr != nil {
			switch classify(resp.ErrorCode) {
			case classFenced:
				m.fenced(c)
				m.log.Info("fenced while joining; joining again with epoch 0", "err", hbErr)
				continue
			case classMoved:
				m.dropCoordinator(c, hbErr)
				return nil, hbErr
			case classRetry:
				return nil, hbErr
			default:
				return nil, m.fatal(hbErr)
			}
		}
		m.accept(resp)
		if m.settled() {
			m.mu.Lock()
			assignment := cloneAssignment(m.owned)
			gen := newGeneration(m.epoch, m.memberID, assignment, m.leaseTermLocked(), sent.at)
			m.gen = gen
			m.mu.Unlock()
			m.log.Info("generation started", "epoch", gen.ID, "member", gen.MemberID, "partitions", gen.Partitions())
			m.startBackground(gen)
			return gen, nil
		}
	}
}

// fatal wraps err as ErrFatal, naming the setting to check when it can.
func (m *Member) fatal(err error) error {
	var ke *KafkaError
	if errors.As(err, &ke) {
		switch ke.Code {
		case 35: // UNSUPPORTED_VERSION
			return fmt.Errorf("%w: group %s: %w: %w", ErrFatal, m.cfg.Group, ErrUnsupported, err)
		case codeUnsupportedAssignor:
			return fmt.Errorf("%w: group %s: group.remote.assignor %q: %w", ErrFatal, m.cfg.Group, m.cfg.RemoteAssignor, err)
		}
	}
	return fmt.Errorf("%w: group %s: ConsumerGroupHeartbeat: %w", ErrFatal, m.cfg.Group, err)
}

// sentBeat is what one heartbeat told the coordinator, and when.
type sentBeat struct {
	at time.Time
	// owned is what the request said the member owns (nil: nothing, as a
	// joining member).
	owned map[string][]int32
}

// heartbeat sends one heartbeat with the member's state and returns the
// answer and what was sent. A failed connection drops the coordinator.
func (m *Member) heartbeat(ctx context.Context, c *coordinator) (*kip848.HeartbeatResponse, sentBeat, error) {
	m.mu.Lock()
	sent := sentBeat{owned: cloneAssignment(m.owned)}
	req := &kip848.HeartbeatRequest{
		GroupID:              m.cfg.Group,
		MemberID:             m.memberID,
		MemberEpoch:          m.epoch,
		InstanceID:           m.instanceID(),
		RebalanceTimeoutMs:   int32(m.cfg.RebalanceTimeout.Milliseconds()),
		SubscribedTopicNames: m.cfg.Topics,
		SubscribedTopicRegex: m.topicRegex(), // nil (null) with topic names
		TopicPartitions:      m.ownedLocked(),
	}
	m.mu.Unlock()
	if m.cfg.RackID != "" {
		req.RackID = &m.cfg.RackID
	}
	if m.cfg.RemoteAssignor != "" {
		req.ServerAssignor = &m.cfg.RemoteAssignor
	}
	if c.hbVersion == 0 && req.MemberEpoch == 0 {
		req.MemberID = "" // version 0: the coordinator names the member
	}
	if req.MemberEpoch == 0 {
		req.TopicPartitions = []kip848.TopicPartitions{} // a joining member owns nothing
		sent.owned = nil
	}
	sent.at = time.Now()
	resp, err := c.hb.Heartbeat(ctx, req, c.hbVersion)
	if err != nil {
		m.dropCoordinator(c, err)
		return nil, sent, fmt.Errorf("consumergroup: heartbeat to the coordinator, broker %d at %s: %w", c.id, c.addr, err)
	}
	return resp, sent, nil
}

// leaseTerm is the term of a generation's lease: min(session timeout,
// rebalance timeout), of which the lease lasts LeaseFraction. The session
// timeout is the one the coordinator enforces on the group, as last read.
func (m *Member) leaseTerm() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.leaseTermLocked()
}

func (m *Member) leaseTermLocked() time.Duration { return min(m.session, m.cfg.RebalanceTimeout) }

// accept takes the state an answer without error gives.
func (m *Member) accept(resp *kip848.HeartbeatResponse) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if resp.MemberID != nil && *resp.MemberID != "" {
		m.memberID = *resp.MemberID
	}
	if resp.MemberEpoch != m.epoch {
		m.log.Debug("member epoch", "from", m.epoch, "to", resp.MemberEpoch)
	}
	m.epoch = resp.MemberEpoch
	if resp.HeartbeatIntervalMs > 0 {
		// The coordinator's interval, but often enough that a member
		// whose heartbeats succeed always holds its lease.
		m.interval = grouplease.HeartbeatInterval(time.Duration(resp.HeartbeatIntervalMs)*time.Millisecond, m.leaseTermLocked())
	}
	if resp.Assignment != nil {
		m.target = resp.Assignment
	}
}

// settleTarget makes what the member owns the coordinator's latest
// assignment (the caller has stopped the previous generation), reading
// topic ids first if some are unknown.
func (m *Member) settleTarget() error {
	m.mu.Lock()
	target := m.target
	_, missing := m.resolveLocked(target)
	m.mu.Unlock()
	if target == nil {
		return nil
	}
	if missing {
		if err := m.refreshTopicIDs(); err != nil {
			return err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	resolved, missing := m.resolveLocked(m.target)
	if missing {
		m.log.Warn("assigned partitions of topics whose id the metadata does not name yet; taking them later")
	}
	m.owned = resolved
	return nil
}

// settled reports whether the member owns what the coordinator assigned
// (of the topics it can name): then no heartbeat needs to tell it more.
func (m *Member) settled() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.target == nil {
		return true
	}
	resolved, _ := m.resolveLocked(m.target)
	return sameAssignment(resolved, m.owned)
}

// fenced forgets the membership: the next heartbeat joins with epoch 0
// and owns nothing.
func (m *Member) fenced(c *coordinator) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.epoch = 0
	m.owned = map[string][]int32{}
	m.target = nil
	if c != nil && c.hbVersion == 0 {
		m.memberID = ""
	}
}

func cloneAssignment(a map[string][]int32) map[string][]int32 {
	out := make(map[string][]int32, len(a))
	for t, ps := range a {
		out[t] = append([]int32(nil), ps...)
	}
	return out
}
