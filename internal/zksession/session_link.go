package zksession

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// connectFunc opens the go-zookeeper connection of a link; its event
// callback must call Session.handleEvent with the link. Tests replace it.
type connectFunc func(l *link) (zkConn, <-chan zk.Event, error)

// link is one go-zookeeper connection, and the one ZooKeeper session it
// carries. It may reconnect to any server as long as that session lives,
// but never opens another: once its session has expired it is retired
// (its dialer refuses to dial, its connections refuse to send a connect
// request for any other session) and shut down, which fails the requests
// still queued in it instead of letting go-zookeeper send them on a new
// session.
type link struct {
	seq    uint64
	conn   zkConn
	events <-chan zk.Event
	dialer *trackingDialer

	// established is the session the link carries, 0 until the server
	// granted one; set once. retired is set once the link must never
	// carry a session again. Both are read by the dialer and the wire
	// guard, outside Session.mu.
	established atomic.Int64
	retired     atomic.Bool
	syncing     atomic.Bool // a heartbeat sync is outstanding
	watchEvents pathEvents  // watch events received, by path (WatchMark)

	// Guarded by Session.mu.
	ready bool // its session was announced to subscribers (credentials added)

	shutdownOnce sync.Once
	shutdownDone chan struct{}
}

// allowConnect reports whether the link may send a connect request asking
// for session asked (0: a new session): only until its first session is
// established, and then only to resume that session.
func (l *link) allowConnect(asked int64) bool {
	if l.retired.Load() {
		return false
	}
	est := l.established.Load()
	return est == 0 || asked == est
}

// errLinkRetired fails dials and connect requests of a retired link.
var errLinkRetired = errors.New("this connection's ZooKeeper session is gone; it may not open another")

// startLinkLocked opens a new link and makes it the current one. s.mu is
// held.
func (s *Session) startLinkLocked() (*link, error) {
	if s.closing {
		return nil, ErrClosed
	}
	s.linkSeq++
	l := &link{seq: s.linkSeq, shutdownDone: make(chan struct{})}
	l.dialer = &trackingDialer{dial: s.cfg.Dialer, lease: s.lease, link: l, conns: map[*trackedConn]struct{}{},
		handshake: max(s.cfg.SessionTimeout/time.Duration(len(s.hosts)), minHandshake)}
	// go-zookeeper calls the event callback from its own goroutine only,
	// which locks s.mu: it waits until this returns.
	conn, events, err := s.connect(l)
	if err != nil {
		return nil, err
	}
	l.conn, l.events = conn, events
	s.cur = l
	s.links[l] = struct{}{}
	return l, nil
}

// handleEvent is the event callback of link l. It runs on go-zookeeper's
// connection goroutine and must not block: it updates the state and queues
// events for subscribers.
//
// go-zookeeper's session states map as follows: StateHasSession is
// StateConnected (the first one of a link announces a new session; later
// ones, reconnections to it); StateDisconnected, while connected, is
// StateDisconnected; StateExpired is StateExpired, and retires the link.
// StateConnecting and StateConnected (a TCP connection without a session
// yet) are internal steps and are not reported. Events of retired links
// are ignored. Watch events travel on the channels GetW, ChildrenW and
// ExistsW return.
func (s *Session) handleEvent(l *link, ev zk.Event) {
	if ev.Type != zk.EventSession {
		// Called by go-zookeeper's receive loop before it hands the event
		// to the watch, and before any later answer: WatchMark relies on
		// that order.
		l.watchEvents.note(ev.Path)
		return
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing || l != s.cur || l.retired.Load() {
		return
	}
	switch ev.State {
	case zk.StateHasSession:
		id := l.conn.SessionID()
		if est := l.established.Load(); est == 0 {
			l.established.Store(id)
			if len(s.cfg.Auth) > 0 {
				// Announce the session once its credentials are added, so
				// that nothing is sent in it without them.
				s.goTrackedLocked(func() { s.authenticate(l, id, ev.Server) })
				return
			}
			l.ready = true
		} else if id != est {
			// The wire guard makes this impossible; should go-zookeeper
			// change, treat it as the loss of the link's session.
			s.logger.Error("a ZooKeeper connection changed sessions; dropping it",
				"had", sessionString(est), "got", sessionString(id))
			s.retireLocked(l, now)
			return
		}
		if !l.ready {
			return // still adding credentials
		}
		s.connectedLocked(id, ev.Server, now)
	case zk.StateDisconnected:
		if s.state != StateConnected {
			return
		}
		s.state = StateDisconnected
		s.disconnectedSince = now
		s.disconnects++
		ev := SessionEvent{State: StateDisconnected, SessionID: s.sessionID, At: now}
		s.logger.Info("ZooKeeper connection lost", "event", ev.String())
		s.publishLocked(ev)
		s.notifyLocked()
	case zk.StateExpired:
		s.retireLocked(l, now)
	case zk.StateAuthFailed:
		s.logger.Warn("ZooKeeper authentication failed", "server", ev.Server)
	}
}

// connectedLocked announces session id as connected: the first time, after
// a reconnection, or as the successor of an expired one. s.mu is held.
func (s *Session) connectedLocked(id int64, server string, now time.Time) {
	if s.state == StateConnected && id == s.sessionID {
		return
	}
	s.state = StateConnected
	s.sessionID, s.lastSessionID = id, id
	s.gen++
	s.disconnectedSince = time.Time{}
	ev := SessionEvent{State: StateConnected, SessionID: id, ExpiredSessionID: s.pendingExpired, At: now}
	s.pendingExpired = 0
	s.logger.Info("ZooKeeper session connected", "event", ev.String(), "server", server)
	s.publishLocked(ev)
	s.notifyLocked()
}

// authenticate adds the configured credentials to l's new session id, then
// announces the session. A refused credential on the first link fails
// Dial; on later links it is logged and the session announced anyway, so
// that operations fail with ErrNoAuth where the ACLs require them.
func (s *Session) authenticate(l *link, id int64, server string) {
	for _, a := range s.cfg.Auth {
		if err := l.conn.AddAuth(a.Scheme, a.Secret); err != nil {
			s.mu.Lock()
			first := l.seq == 1
			if first && s.authErr == nil {
				s.authErr = fmt.Errorf("add %s credentials to the ZooKeeper connection: %w", a.Scheme, s.mapCause(err))
				s.notifyLocked()
			}
			s.mu.Unlock()
			if first {
				return
			}
			s.logger.Error("could not add credentials to the new ZooKeeper session", "scheme", a.Scheme, "error", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing || l != s.cur || l.retired.Load() {
		return
	}
	l.ready = true
	s.connectedLocked(id, server, time.Now())
}

// retireLocked records that l's session is gone for good: the lease ends,
// subscribers see StateExpired, l is shut down in the background (failing
// whatever is still queued in it) and a new link opens the next session.
// s.mu is held.
func (s *Session) retireLocked(l *link, now time.Time) {
	if !l.retired.CompareAndSwap(false, true) {
		return
	}
	if l.ready && s.lastSessionID != 0 {
		s.expireLocked(now)
		s.notifyLocked()
	}
	s.goTrackedLocked(func() { s.shutdownLink(l) })
	if _, err := s.startLinkLocked(); err != nil && !errors.Is(err, ErrClosed) {
		// Only reachable if go-zookeeper refuses a host list it took once.
		s.logger.Error("cannot open a new ZooKeeper connection", "error", err)
	}
}

// expireLocked records the expiry of the last session. s.mu is held.
func (s *Session) expireLocked(now time.Time) {
	old := s.lastSessionID
	s.lease.revoke(old)
	s.state = StateExpired
	s.sessionID = 0
	s.expirations++
	s.pendingExpired = old
	if s.disconnectedSince.IsZero() {
		s.disconnectedSince = now
	}
	ev := SessionEvent{State: StateExpired, SessionID: old, At: now}
	s.logger.Warn("ZooKeeper session expired; ephemeral nodes and watches are lost", "event", ev.String())
	s.publishLocked(ev)
}

// shutdownLink closes l's go-zookeeper connection and waits until its loop
// has ended, which fails every request and watch still pending in it.
func (s *Session) shutdownLink(l *link) {
	l.shutdownOnce.Do(func() {
		l.retired.Store(true)
		if l.conn != nil {
			// Sends closeSession if the session lives and waits up to a
			// second for the answer.
			l.conn.Close()
		}
		// Unblocks go-zookeeper's loop if it waits on a stalled network.
		l.dialer.closeAll()
		if l.events != nil {
			// go-zookeeper closes the channel when its loop has ended,
			// after failing every request and watch.
			for range l.events {
			}
		}
		s.mu.Lock()
		delete(s.links, l)
		s.mu.Unlock()
		close(l.shutdownDone)
	})
	<-l.shutdownDone
}

// linkOf returns the live link carrying session id, or nil once that
// session is gone.
func (s *Session) linkOf(id int64) *link {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.cur; l != nil && l.ready && !l.retired.Load() && l.established.Load() == id {
		return l
	}
	return nil
}

// readyLink returns the current link once its session has been announced:
// operations not bound to a session go there. It waits while a new link is
// opening its session, until ctx ends or the Session closes.
func (s *Session) readyLink(ctx context.Context) (*link, error) {
	for {
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			return nil, ErrClosed
		}
		if l := s.cur; l != nil && l.ready && !l.retired.Load() {
			s.mu.Unlock()
			return l, nil
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// heartbeat sends a sync to the server every eighth of the negotiated
// session timeout (skipping a beat while the last one is unanswered). A
// sync goes through the ensemble's leader, so its answer proves the session
// alive where it can expire, which a ping answered by a follower does not
// (see sessionLease); the lease is renewed from these answers.
func (s *Session) heartbeat() {
	timer := time.NewTimer(s.heartbeatInterval())
	defer timer.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-timer.C:
		}
		if s.isClosing() {
			return
		}
		s.mu.Lock()
		l := s.cur
		ok := l != nil && l.ready && !l.retired.Load() && s.state == StateConnected
		s.mu.Unlock()
		if ok && l.syncing.CompareAndSwap(false, true) {
			if !s.goTracked(func() {
				defer l.syncing.Store(false)
				_, _ = l.conn.Sync("/")
			}) {
				return
			}
		}
		timer.Reset(s.heartbeatInterval())
	}
}

// heartbeatInterval is an eighth of the current session's timeout (the
// shortest the servers granted it; the configured one before the server
// has answered).
func (s *Session) heartbeatInterval() time.Duration {
	t := s.cfg.SessionTimeout
	if id := s.ID(); id != 0 {
		if n := s.lease.shortestOf(id); n > 0 {
			t = n
		}
	}
	return max(t/heartbeatsPerTimeout, 10*time.Millisecond)
}

// minHandshake is the least time a connection gets to complete the session
// handshake, however many servers share the session timeout.
const minHandshake = time.Second

// heartbeatsPerTimeout is how many heartbeat syncs go out per session
// timeout.
const heartbeatsPerTimeout = 8

// goTrackedLocked is goTracked for a caller holding s.mu.
func (s *Session) goTrackedLocked(f func()) bool {
	if s.closing {
		return false
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
	return true
}

// trackingDialer dials the connections of one link. It remembers them so
// that the link's shutdown can cut them (go-zookeeper may otherwise wait on
// a stalled socket for up to ten read timeouts before its loop notices),
// refuses to dial for a retired link, and hands each connection a wire
// tracker for the lease and the session guard.
type trackingDialer struct {
	dial      zk.Dialer
	lease     *sessionLease
	link      *link
	handshake time.Duration // see trackedConn.SetReadDeadline
	zxid      zxidKeeper    // the zxid the gate keeps for go-zookeeper (zxid_gate.go)

	mu      sync.Mutex
	conns   map[*trackedConn]struct{}
	closed  bool
	lastErr error
}

// Dial has the signature of zk.Dialer.
func (d *trackingDialer) Dial(network, address string, timeout time.Duration) (net.Conn, error) {
	d.mu.Lock()
	closed := d.closed
	d.mu.Unlock()
	if closed {
		return nil, errDialerClosed
	}
	if d.link.retired.Load() {
		return nil, errLinkRetired
	}
	// go-zookeeper gives each dial one second, whatever the session
	// timeout; a TLS handshake on a busy machine needs more. A dial gets
	// the handshake budget (the session timeout divided by the number of
	// servers), as with ZooKeeper's Java client.
	c, err := d.dial(network, address, max(timeout, d.handshake))
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		d.lastErr = err
		return nil, err
	}
	if d.closed {
		c.Close()
		return nil, errDialerClosed
	}
	tc := &trackedConn{Conn: newGatedConn(c, &d.zxid), d: d, wire: newWireTracker(d.lease), handshakeBy: time.Now().Add(d.handshake)}
	d.conns[tc] = struct{}{}
	return tc, nil
}

var errDialerClosed = errors.New("session closed")

func (d *trackingDialer) lastError() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lastErr
}

func (d *trackingDialer) closeAll() {
	d.mu.Lock()
	d.closed = true
	conns := d.conns
	d.conns = map[*trackedConn]struct{}{}
	d.mu.Unlock()
	for c := range conns {
		c.Conn.Close()
	}
}

type trackedConn struct {
	net.Conn
	d           *trackingDialer
	wire        *wireTracker
	handshakeBy time.Time // the connect response must have come by then
	wrote       bool      // the first write (the connect request) has gone out
	guard       sync.Mutex
	broken      bool
}

// SetReadDeadline bounds the session handshake. go-zookeeper waits ten
// read timeouts (6.7 session timeouts) for a connect response, and none
// at all between its length and its body, so a server that accepts a
// connection and never answers (one starting up: ZooKeeper 3.8 can fail to
// close such connections) would hold a client long enough for its session
// to expire. Until the connect response has been read, every deadline is
// cut to the handshake deadline: the session timeout divided by the number
// of servers, as ZooKeeper's Java client allows per attempt.
func (c *trackedConn) SetReadDeadline(t time.Time) error {
	return c.Conn.SetReadDeadline(c.handshakeDeadline(t))
}

// SetWriteDeadline bounds the session handshake as SetReadDeadline does.
func (c *trackedConn) SetWriteDeadline(t time.Time) error {
	return c.Conn.SetWriteDeadline(c.handshakeDeadline(t))
}

func (c *trackedConn) handshakeDeadline(t time.Time) time.Time {
	if c.wire.handshakeDone() || c.d.handshake <= 0 {
		return t
	}
	if t.IsZero() || t.After(c.handshakeBy) {
		return c.handshakeBy
	}
	return t
}

// Read feeds what the server sent to the lease.
func (c *trackedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.wire.read(p[:n])
	}
	return n, err
}

// Write records when each request went out, before it does. The first
// write of a connection is the connect request: it goes out only if it
// asks for the link's own session (or for a new one while the link has
// none yet), so that a link never carries two sessions.
func (c *trackedConn) Write(p []byte) (int, error) {
	c.guard.Lock()
	if c.broken {
		c.guard.Unlock()
		return 0, errLinkRetired
	}
	if !c.wrote {
		c.wrote = true
		asked, ok := connectRequestSession(p)
		if !ok || !c.d.link.allowConnect(asked) {
			c.broken = true
			c.guard.Unlock()
			c.Conn.Close()
			if !ok {
				return 0, errors.New("the connect request was not written whole; refusing to send it")
			}
			return 0, errLinkRetired
		}
	}
	c.guard.Unlock()
	c.wire.wrote(p, time.Now())
	return c.Conn.Write(p)
}

func (c *trackedConn) Close() error {
	c.d.mu.Lock()
	delete(c.d.conns, c)
	c.d.mu.Unlock()
	return c.Conn.Close()
}

// connectRequestSession returns the session id a connect request written in
// one piece asks for (0: a new session). go-zookeeper writes it with one
// Write call: a 4-byte length, then protocol version (4), last zxid seen
// (8), timeout (4) and session id (8).
func connectRequestSession(p []byte) (int64, bool) {
	const sessionAt = 4 + 4 + 8 + 4
	if len(p) < sessionAt+8 {
		return 0, false
	}
	if n := int(binary.BigEndian.Uint32(p[:4])); n+4 != len(p) {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(p[sessionAt : sessionAt+8])), true
}
