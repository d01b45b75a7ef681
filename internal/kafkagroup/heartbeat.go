package kafkagroup

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/backoff"
	"github.com/zkconsumer/zkconsumer/internal/grouplease"
)

// startBackground starts the goroutines of gen: the heartbeats, and the
// protocol's metadata check if it has one. They run until Join, Leave or
// Close stops them, which may be after gen ended: a classic member told
// ErrRebalanceStarted keeps heartbeating while it commits.
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
	if every := m.proto.checkEvery(); every > 0 {
		m.bg.Add(1)
		go func() {
			defer m.bg.Done()
			m.checkLoop(ctx, gen, every)
		}()
	}
}

// stopBackground ends the goroutines of the current generation and waits
// for them (a heartbeat in flight takes at most RequestTimeout).
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

// heartbeatNow makes the heartbeat goroutine send its next heartbeat at
// once.
func (m *Member) heartbeatNow() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// heartbeatLoop heartbeats at the protocol's interval (at most a third of
// the lease a heartbeat gives: see grouplease.HeartbeatInterval), or at
// once when woken, and acts on each answer as its verdict says: it renews
// gen's lease from the send time of those that renew it, ends gen when
// the group rebalances (classic), the membership is lost or the member
// cannot go on, and retries failures, reporting them once they last,
// until no heartbeat was answered for the session timeout: then the
// membership is lost. Each heartbeat is bounded by what remains of the
// session: an answer that comes later (one a network partition held back
// and delivered at the heal) describes a membership the coordinator has
// ended meanwhile, and is never acted on.
func (m *Member) heartbeatLoop(ctx context.Context, gen *Generation) {
	st := m.newBeatState(time.Now())
	defer func() {
		m.log.Info("heartbeats stopped", "generation", gen.ID, "longest_heartbeat_gap", st.gaps.Longest(),
			"lost", errors.Is(gen.Err(), ErrMembershipLost))
	}()
	timer := time.NewTimer(m.proto.interval())
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
		wait, more := m.heartbeatOnce(ctx, gen, st)
		if !more {
			return
		}
		timer.Reset(wait)
	}
}

// beatState is what the heartbeats of a generation carry from one to the
// next.
type beatState struct {
	lastOK  time.Time // when the last heartbeat was answered (or the loop started)
	session time.Duration
	gaps    grouplease.Gaps
}

// newBeatState is the state of the heartbeats of a generation that
// starts with an answer at lastOK. The session is fixed for the
// generation by its Join.
func (m *Member) newBeatState(lastOK time.Time) *beatState {
	session := m.proto.session()
	return &beatState{lastOK: lastOK, session: session, gaps: grouplease.Gaps{Log: m.log, Session: session}}
}

// heartbeatOnce sends one heartbeat of gen and acts on its verdict. It
// returns the wait before the next, or more false when the heartbeats of
// gen must stop.
func (m *Member) heartbeatOnce(ctx context.Context, gen *Generation, st *beatState) (wait time.Duration, more bool) {
	b := m.beat(ctx, gen, st.lastOK.Add(st.session))
	switch b.verdict {
	case beatOK, beatRebalance:
		now := time.Now() // the coordinator counted the heartbeat
		st.gaps.Record(st.lastOK, now)
		st.lastOK = now
		if b.renew {
			gen.lease.Renew(b.sent)
		}
		m.recovered("heartbeat")
		if b.verdict == beatRebalance {
			if gen.Err() == nil {
				m.log.Info("group is rebalancing", "generation", gen.ID)
			}
			gen.end(ErrRebalanceStarted)
		}
		return m.proto.interval(), true
	case beatLost:
		m.lost(gen, b.err)
		return 0, false
	case beatFatal:
		gen.end(b.err)
		return 0, false
	}
	// beatRetry
	if ctx.Err() != nil {
		return 0, false
	}
	since := time.Since(st.lastOK)
	if since > st.session {
		m.proto.sessionLost()
		m.lost(gen, fmt.Errorf("no successful heartbeat for %v (the group's session timeout %v): %w",
			since.Round(time.Millisecond), st.session, b.err))
		return 0, false
	}
	if since >= reportAfter {
		m.report("heartbeat", fmt.Errorf("heartbeats of generation %d failing for %v (no message is handed out once the lease lapses; the membership is lost after the session timeout %v): %w",
			gen.ID, since.Round(time.Second), st.session, b.err))
	} else {
		m.log.Debug("heartbeat failed", "generation", gen.ID, "err", b.err)
	}
	return m.cfg.RetryBackoff, true
}

// beat finds the coordinator and sends it one heartbeat of gen, which
// must be answered before deadline.
func (m *Member) beat(ctx context.Context, gen *Generation, deadline time.Time) beat {
	c, err := m.coordinator(ctx)
	if err != nil {
		if errors.Is(err, ErrFatal) {
			return beat{verdict: beatFatal, err: err}
		}
		return beat{verdict: beatRetry, err: err}
	}
	hctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	return m.proto.heartbeat(hctx, c, gen)
}

// checkLoop runs the protocol's metadata check of gen every period until
// ctx ends, and ends gen with ErrRebalanceStarted when the check says the
// member must rejoin; the caller's Join starts the group's rebalance.
func (m *Member) checkLoop(ctx context.Context, gen *Generation, every time.Duration) {
	for backoff.Sleep(ctx, every) {
		if gen.Err() != nil {
			return
		}
		if m.proto.check(ctx, gen) {
			gen.end(ErrRebalanceStarted)
			return
		}
	}
}
