package consumergroup

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/grouperr"
	"github.com/zkconsumer/zkconsumer/internal/grouplease"
)

// startBackground starts the heartbeats of gen.
func (m *Member) startBackground(gen *Generation) {
	ctx, cancel := context.WithCancel(m.ctx)
	m.mu.Lock()
	m.bgCancel = cancel
	m.mu.Unlock()
	m.bg.Add(1)
	go func() {
		defer m.bg.Done()
		m.heartbeatLoop(ctx, gen)
	}()
}

// stopBackground ends the heartbeat goroutine and waits for it.
func (m *Member) stopBackground() {
	m.mu.Lock()
	cancel := m.bgCancel
	m.bgCancel = nil
	m.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	m.bg.Wait()
}

// heartbeatLoop heartbeats at the coordinator's interval, telling it the
// partitions the member owns, until ctx ends (the next Join, Leave,
// Close) or the member is fenced; Acknowledge makes it heartbeat at once.
// It renews gen's lease, signals gen's Updates when the coordinator's
// assignment differs from what the member owns, and ends gen with
// ErrMembershipLost when the coordinator fenced the member or no
// heartbeat succeeded for the session timeout, and with an ErrFatal
// error.
func (m *Member) heartbeatLoop(ctx context.Context, gen *Generation) {
	lastOK := time.Now()
	m.mu.Lock()
	wait, session := m.interval, m.session // Join reads the session timeout before the loop starts
	m.mu.Unlock()
	gaps := grouplease.Gaps{Log: m.log, Session: session}
	defer func() {
		m.log.Info("heartbeats stopped", "epoch", gen.ID, "longest_heartbeat_gap", gaps.Longest(),
			"lost", errors.Is(gen.Err(), ErrMembershipLost))
	}()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-m.wake:
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
		}
		before := lastOK
		wait = m.beat(ctx, gen, &lastOK)
		if lastOK != before {
			gaps.Record(before, lastOK)
		}
		if wait < 0 {
			return
		}
		if time.Since(lastOK) > session {
			m.fenced(nil)
			gen.end(fmt.Errorf("%w: no successful heartbeat for the group's session timeout (%v)", ErrMembershipLost, session))
			return
		}
		timer.Reset(wait)
	}
}

// beat sends one heartbeat of the loop and returns the wait before the
// next, or -1 when the loop must end.
func (m *Member) beat(ctx context.Context, gen *Generation, lastOK *time.Time) time.Duration {
	c, err := m.coordinator(ctx)
	if err != nil {
		if errors.Is(err, ErrFatal) {
			gen.end(err)
			return -1
		}
		m.report("heartbeat", fmt.Errorf("consumergroup: heartbeat of group %s: %w", m.cfg.Group, err))
		return m.cfg.RetryBackoff
	}
	// A heartbeat is answered within what is left of the session, or it
	// fails: an answer that comes later (one that a network partition held
	// back and delivered at the heal) describes a membership that the
	// coordinator has ended meanwhile, and the member must not act on it
	// (hand partitions over as if it still held them). The loop then finds
	// the session over and ends the generation as lost.
	m.mu.Lock()
	session := m.session
	m.mu.Unlock()
	hctx, cancel := context.WithDeadline(ctx, lastOK.Add(session))
	defer cancel()
	resp, sent, err := m.heartbeat(hctx, c)
	if err != nil {
		if ctx.Err() == nil {
			m.report("heartbeat", err)
		}
		return m.cfg.RetryBackoff
	}
	if hbErr := kafkaError(resp.ErrorCode, resp.ErrorMessage); hbErr != nil {
		switch classify(resp.ErrorCode) {
		case classFenced:
			m.log.Info("fenced; the partitions are lost", "err", hbErr)
			m.fenced(c)
			gen.end(fmt.Errorf("%w: %w", ErrMembershipLost, hbErr))
			return -1
		case classMoved:
			m.dropCoordinator(c, hbErr)
			return m.cfg.RetryBackoff
		case classRetry:
			if grouperr.CoordinatorSuspect(sarama.KError(resp.ErrorCode)) {
				m.recheckCoordinator()
			}
			return m.cfg.RetryBackoff
		default:
			gen.end(m.fatal(hbErr))
			return -1
		}
	}
	*lastOK = time.Now()
	m.accept(resp)
	// While a revocation is pending, the coordinator's rebalance timer
	// runs from when it first asked: heartbeats then do not extend the
	// lease past what the heartbeat before that request gave. Whether one
	// was pending when the coordinator handled this heartbeat is read from
	// what the heartbeat reported, against the coordinator's assignment
	// as this answer leaves it: an Acknowledge made while the heartbeat
	// was in flight has changed what the member owns, not what the
	// coordinator was told.
	if gen.Err() == nil && !m.revokingOf(sent.owned) && !m.revoking() {
		gen.lease.Renew(sent.at)
	}
	m.mu.Lock()
	_, missing := m.resolveLocked(m.target)
	interval := m.interval
	m.mu.Unlock()
	if missing {
		if err := m.refreshTopicIDs(); err != nil {
			m.log.Debug("reading topic ids failed", "err", err)
		}
	}
	if !m.settled() && gen.Err() == nil {
		m.log.Info("the coordinator assigned other partitions", "epoch", m.Epoch())
		gen.signalUpdate()
	}
	return interval
}

// revoking reports whether the member owns partitions that the
// coordinator's latest assignment leaves out.
func (m *Member) revoking() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.revokingLocked(m.owned)
}

// revokingOf reports whether owned has partitions that the coordinator's
// latest assignment leaves out.
func (m *Member) revokingOf(owned map[string][]int32) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.revokingLocked(owned)
}

func (m *Member) revokingLocked(owned map[string][]int32) bool {
	if m.target == nil {
		return false
	}
	target, _ := m.resolveLocked(m.target)
	for t, ps := range owned {
		for _, p := range ps {
			if !slices.Contains(target[t], p) {
				return true
			}
		}
	}
	return false
}

// Target returns the coordinator's latest assignment of this member, of
// the topics whose ids the member can name: what it may own now.
func (m *Member) Target() map[string][]int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.target == nil {
		return cloneAssignment(m.owned)
	}
	target, _ := m.resolveLocked(m.target)
	return target
}

// Acknowledge tells the coordinator, with a heartbeat sent at once, that
// the member of gen owns owned now: after the partitions the target left
// out were stopped and committed, this hands them over. It does nothing
// once gen has ended.
func (m *Member) Acknowledge(gen *Generation, owned map[string][]int32) {
	m.mu.Lock()
	if m.gen != gen || gen.Err() != nil {
		m.mu.Unlock()
		return
	}
	m.owned = cloneAssignment(owned)
	for t, ps := range m.owned {
		if len(ps) == 0 {
			delete(m.owned, t)
		}
	}
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
}
