package consumergroup

import (
	"context"
	"errors"
	"fmt"
	"time"
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
// partitions gen owns, until ctx ends (the next Join, Leave, Close) or
// the member is fenced. It renews gen's lease while gen lasts, and ends
// gen with ErrRebalanceStarted when the coordinator's assignment differs
// from gen's (then it goes on heartbeating, so that the member keeps its
// partitions while the caller commits), with ErrMembershipLost when the
// coordinator fenced the member or no heartbeat succeeded for the session
// timeout, and with an ErrFatal error.
func (m *Member) heartbeatLoop(ctx context.Context, gen *Generation) {
	lastOK := time.Now()
	m.mu.Lock()
	wait := m.interval
	m.mu.Unlock()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		wait = m.beat(ctx, gen, &lastOK)
		if wait < 0 {
			return
		}
		if time.Since(lastOK) > m.cfg.SessionTimeout {
			m.fenced(nil)
			gen.end(fmt.Errorf("%w: no successful heartbeat for session.timeout.ms (%v)", ErrMembershipLost, m.cfg.SessionTimeout))
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
	resp, sent, err := m.heartbeat(ctx, c)
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
			return m.cfg.RetryBackoff
		default:
			gen.end(m.fatal(hbErr))
			return -1
		}
	}
	*lastOK = time.Now()
	if gen.Err() == nil {
		gen.lease.renew(sent)
	}
	m.accept(resp)
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
		gen.end(ErrRebalanceStarted)
	}
	return interval
}
