package zksession

import (
	"fmt"
	"sync"
	"time"
)

// SessionState is the state of a Session as its subscribers see it.
type SessionState int

const (
	// StateConnected: the client is connected and has a session, either
	// for the first time, again after a disconnection (same SessionID:
	// ephemeral nodes and watches survived), or a new one after an expiry
	// (new SessionID, the old one in ExpiredSessionID).
	StateConnected SessionState = iota + 1
	// StateDisconnected: the connection is lost; the session may still be
	// alive on the server, which keeps it for the session timeout.
	StateDisconnected
	// StateExpired: the server has dropped the session, with its ephemeral
	// nodes and watches. go-zookeeper learns it only when it reconnects,
	// and then opens a new session, announced by the next StateConnected.
	StateExpired
	// StateClosed: Close was called; it is the last event.
	StateClosed
)

// String returns "connected", "disconnected", "expired" or "closed".
func (s SessionState) String() string {
	switch s {
	case StateConnected:
		return "connected"
	case StateDisconnected:
		return "disconnected"
	case StateExpired:
		return "expired"
	case StateClosed:
		return "closed"
	}
	return fmt.Sprintf("SessionState(%d)", int(s))
}

// SessionEvent is a change of a Session's state.
type SessionEvent struct {
	// State is the new state.
	State SessionState
	// SessionID is, for StateConnected, the session now established; for
	// StateDisconnected, the session that lost its connection; for
	// StateExpired, the session that is gone; for StateClosed, the last
	// session.
	SessionID int64
	// ExpiredSessionID is set on the StateConnected event that follows an
	// expiry: the session this one replaces. It is 0 for the first session
	// and for reconnections to the same session.
	ExpiredSessionID int64
	// At is when the Session learnt of the change.
	At time.Time
}

// NewSession reports whether e announces a session that replaces an expired
// one: the moment to re-create ephemeral nodes and re-arm watches (Kafka's
// IZkStateListener.handleNewSession).
func (e SessionEvent) NewSession() bool {
	return e.State == StateConnected && e.ExpiredSessionID != 0
}

// String describes the event, such as "connected 0x1234 (replaces expired
// 0x1230)".
func (e SessionEvent) String() string {
	s := e.State.String() + " " + sessionString(e.SessionID)
	if e.ExpiredSessionID != 0 {
		s += " (replaces expired " + sessionString(e.ExpiredSessionID) + ")"
	}
	return s
}

// subscriberBuffer is the capacity of a subscriber's channel: the pump
// moves events there eagerly, so that at Close a subscriber that is a few
// events behind still finds StateClosed in its channel without Close
// waiting for it.
const subscriberBuffer = 16

// Subscribe returns a channel of the Session's state changes from now on,
// and a function that ends the subscription and closes the channel.
//
// No event is ever dropped: each subscriber has its own unbounded queue, so
// a slow subscriber delays nobody, and go-zookeeper's event callback never
// blocks. The last event is StateClosed, after which the channel is closed.
// Subscribing after Close yields StateClosed alone.
//
// Subscribers should read until the channel is closed, or call cancel.
// The channel buffers a few events, so a subscriber may also read them
// after Close returns; only when more than that are pending does Close
// wait, up to a second, and then drop the rest.
func (s *Session) Subscribe() (events <-chan SessionEvent, cancel func()) {
	s.mu.Lock()
	if s.state == StateClosed {
		id := s.lastSessionID
		s.mu.Unlock()
		ch := make(chan SessionEvent, 1)
		ch <- SessionEvent{State: StateClosed, SessionID: id, At: time.Now()}
		close(ch)
		return ch, func() {}
	}
	sub := &subscriber{
		out:  make(chan SessionEvent, subscriberBuffer),
		wake: make(chan struct{}, 1),
		stop: make(chan struct{}),
	}
	s.subs[sub] = struct{}{}
	s.subWG.Add(1)
	s.mu.Unlock()
	go s.pump(sub)
	return sub.out, func() {
		sub.stopOnce.Do(func() { close(sub.stop) })
		s.mu.Lock()
		delete(s.subs, sub)
		s.mu.Unlock()
	}
}

// subscriber is one Subscribe call: an unbounded queue drained into out by
// a pump goroutine.
type subscriber struct {
	out      chan SessionEvent
	wake     chan struct{} // capacity 1: "the queue has grown"
	stop     chan struct{} // closed by cancel
	stopOnce sync.Once

	mu    sync.Mutex
	queue []SessionEvent
	final bool // nothing follows what is queued
}

// push queues ev without blocking.
func (sub *subscriber) push(ev SessionEvent, final bool) {
	sub.mu.Lock()
	sub.queue = append(sub.queue, ev)
	sub.final = sub.final || final
	sub.mu.Unlock()
	select {
	case sub.wake <- struct{}{}:
	default:
	}
}

// pump delivers sub's queue in order until the final event, cancel, or
// Close giving up on a subscriber that does not read.
func (s *Session) pump(sub *subscriber) {
	defer s.subWG.Done()
	defer close(sub.out)
	for {
		sub.mu.Lock()
		if len(sub.queue) == 0 {
			final := sub.final
			sub.mu.Unlock()
			if final {
				return
			}
			select {
			case <-sub.wake:
				continue
			case <-sub.stop:
				return
			case <-s.abandon:
				return
			}
		}
		ev := sub.queue[0]
		sub.queue[0] = SessionEvent{}
		sub.queue = sub.queue[1:]
		sub.mu.Unlock()
		select {
		case sub.out <- ev:
		case <-sub.stop:
			return
		case <-s.abandon:
			return
		}
	}
}

// publishLocked queues ev for every subscriber. s.mu is held.
func (s *Session) publishLocked(ev SessionEvent) {
	for sub := range s.subs {
		sub.push(ev, false)
	}
}

// SessionStats counts the events of a Session since Dial, for metrics.
type SessionStats struct {
	// State is the current state; 0 before the first session.
	State SessionState
	// Disconnects counts StateDisconnected events: connections lost while
	// the session was established.
	Disconnects int64
	// Expirations counts StateExpired events: sessions the server dropped.
	Expirations int64
}

// Stats returns the session's state and event counts.
func (s *Session) Stats() SessionStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return SessionStats{State: s.state, Disconnects: s.disconnects, Expirations: s.expirations}
}
