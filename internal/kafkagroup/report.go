package kafkagroup

import (
	"sync"
	"time"
)

// A failure the member retries by itself (a join that does not get
// through, heartbeats that fail, a metadata check that fails, topics the
// member may not describe) is reported, to Config.OnError and the log, once
// it has lasted reportAfter, then at most every reportEvery while it
// lasts: the member then tells why it is not consuming within seconds,
// without a report for each retry, nor for the short failures of a
// coordinator that moves.
const (
	reportAfter = 3 * time.Second
	reportEvery = 30 * time.Second
)

// reporter rate-limits the reports of retried failures, per kind.
type reporter struct {
	mu   sync.Mutex
	last map[string]time.Time // when each kind was last reported
}

// report passes err, a retried failure of the given kind, to
// Config.OnError, or to the log at WARN without one, unless that kind was
// reported less than reportEvery ago.
func (m *Member) report(kind string, err error) {
	now := time.Now()
	m.reports.mu.Lock()
	if m.reports.last == nil {
		m.reports.last = map[string]time.Time{}
	}
	last, seen := m.reports.last[kind]
	if seen && now.Sub(last) < reportEvery {
		m.reports.mu.Unlock()
		m.log.Debug("failure (reported already)", "err", err)
		return
	}
	m.reports.last[kind] = now
	m.reports.mu.Unlock()
	if m.ctx.Err() != nil {
		return // Close caused it
	}
	if m.cfg.OnError != nil {
		m.cfg.OnError(err)
		return
	}
	m.log.Warn("retrying", "err", err)
}

// recovered ends the series of failures of kind: its next failure is
// reported without waiting for reportEvery.
func (m *Member) recovered(kind string) {
	m.reports.mu.Lock()
	delete(m.reports.last, kind)
	m.reports.mu.Unlock()
}
