package consumergroup

import (
	"sync"
	"sync/atomic"
	"time"
)

// LeaseFraction is the part of the lease term, min(session timeout,
// rebalance timeout), that a lease lasts from the moment a heartbeat was
// sent that the coordinator then answered without error: the coordinator
// cannot give this member's partitions to another before that moment plus
// the whole term (it waits for the member to acknowledge a revocation, or
// for the rebalance timeout, and removes a silent member only after the
// session timeout). A quarter of the term is left for clock drift.
const LeaseFraction = 0.75

// lease is kafkagroup's lease in short: renewed from send times, measured
// on the monotonic clock and checked against the wall clock (a suspended
// machine), ended for good by revoke.
type lease struct {
	base      time.Time
	term      time.Duration
	until     atomic.Int64 // ns since base; -1: gone for good
	untilWall atomic.Int64 // Unix ns

	mu      sync.Mutex
	changed chan struct{}
}

func newLease(term time.Duration) *lease {
	return &lease{base: time.Now(), term: time.Duration(float64(term) * LeaseFraction), changed: make(chan struct{})}
}

func (l *lease) held() bool {
	now := time.Now()
	until := l.until.Load()
	return until > 0 && int64(now.Sub(l.base)) < until && now.UnixNano() < l.untilWall.Load()
}

func (l *lease) renew(sentAt time.Time) {
	until := int64(sentAt.Sub(l.base) + l.term)
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur := l.until.Load(); cur < 0 || until <= cur {
		return
	}
	l.untilWall.Store(sentAt.UnixNano() + int64(l.term))
	l.until.Store(until)
	l.signalLocked()
}

func (l *lease) revoke() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.until.Load() < 0 {
		return
	}
	l.until.Store(-1)
	l.signalLocked()
}

func (l *lease) signalLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *lease) changedCh() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}
