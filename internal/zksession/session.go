package zksession

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// Defaults of SessionConfig, those of Kafka's old consumer (ZKConfig).
const (
	// DefaultSessionTimeout is zookeeper.session.timeout.ms's default, 6000.
	DefaultSessionTimeout = 6 * time.Second
	// DefaultPort is the ZooKeeper port a host of zookeeper.connect gets
	// when it names none.
	DefaultPort = 2181
)

// closeDeliveryTimeout bounds how long Close waits for subscribers to take
// their last events (StateClosed) before it drops them.
const closeDeliveryTimeout = time.Second

// zkConn is the subset of go-zookeeper's *zk.Conn a Session uses.
type zkConn interface {
	// AddAuth authenticates the connection; go-zookeeper stores the
	// credentials and sends them again after every reconnection.
	AddAuth(scheme string, auth []byte) error
	Children(path string) ([]string, *zk.Stat, error)
	ChildrenW(path string) ([]string, *zk.Stat, <-chan zk.Event, error)
	Close()
	Create(path string, data []byte, flags int32, acl []zk.ACL) (string, error)
	Delete(path string, version int32) error
	Exists(path string) (bool, *zk.Stat, error)
	ExistsW(path string) (bool, *zk.Stat, <-chan zk.Event, error)
	Get(path string) ([]byte, *zk.Stat, error)
	GetW(path string) ([]byte, *zk.Stat, <-chan zk.Event, error)
	// Multi runs *zk.CreateRequest, *zk.DeleteRequest, ... as one
	// transaction.
	Multi(ops ...any) ([]zk.MultiResponse, error)
	Set(path string, data []byte, version int32) (*zk.Stat, error)
	SessionID() int64
	// Sync asks the server to catch up with the leader; its answer comes
	// through the leader (the lease's heartbeat).
	Sync(path string) (string, error)
}

var _ zkConn = (*zk.Conn)(nil)

// Auth is one set of credentials added to the connection (ZooKeeper's
// addAuthInfo), such as Auth{Scheme: "digest", Secret: []byte("user:pass")}.
type Auth struct {
	// Scheme is the authentication scheme, usually "digest".
	Scheme string
	// Secret is the scheme's credentials; for "digest", "user:password".
	Secret []byte
}

// SessionConfig configures Dial. Only Connect is required.
type SessionConfig struct {
	// Connect is Kafka's zookeeper.connect: comma-separated host:port
	// pairs followed by an optional chroot, as in
	// "zk1:2181,zk2:2181/kafka". A host without a port gets DefaultPort;
	// IPv6 addresses go in brackets. Every path of the Session is relative
	// to the chroot. No default.
	Connect string
	// SessionTimeout is zookeeper.session.timeout.ms: how long ZooKeeper
	// keeps the session, its ephemeral nodes and its watches alive while
	// the client is disconnected. The server clamps it to between 2 and
	// 20 of its ticks. Default 6s (DefaultSessionTimeout).
	SessionTimeout time.Duration
	// ConnectionTimeout is zookeeper.connection.timeout.ms: how long Dial
	// waits for the first session before it fails with
	// ErrConnectionTimeout. Default: SessionTimeout, as in Kafka.
	ConnectionTimeout time.Duration
	// Dialer opens TCP connections to ZooKeeper servers; net.DialTimeout
	// if nil. Tests inject proxies and session taps here.
	Dialer zk.Dialer
	// Logger receives the Session's own log lines and, at Debug level,
	// go-zookeeper's. Nil discards everything.
	Logger *slog.Logger
	// Auth are credentials added to the connection before Dial returns
	// (Kafka's zookeeper.set.acl deployments use SASL; digest covers
	// tests and simple set-ups). go-zookeeper re-sends them after every
	// reconnection, including the new session after an expiry.
	Auth []Auth
	// ACL is the access control list of every node the Session creates,
	// parents included. Default zk.WorldACL(zk.PermAll), ZooKeeper's
	// OPEN_ACL_UNSAFE, which Kafka uses without zookeeper.set.acl.
	ACL []zk.ACL
	// OpenACLPaths are paths, relative to the chroot, that are created
	// with the open ACL whatever ACL says. Kafka's secured old consumers
	// keep ConsumersPath open so that groups of different identities can
	// live under it (ZkUtils.defaultAcls).
	OpenACLPaths []string
}

// Validate reports the first problem of the configuration, or nil.
func (c SessionConfig) Validate() error {
	if _, _, err := ParseConnectString(c.Connect); err != nil {
		return err
	}
	if c.SessionTimeout < 0 {
		return fmt.Errorf("zookeeper.session.timeout.ms must not be negative, got %v", c.SessionTimeout)
	}
	if c.ConnectionTimeout < 0 {
		return fmt.Errorf("zookeeper.connection.timeout.ms must not be negative, got %v", c.ConnectionTimeout)
	}
	for i, a := range c.Auth {
		if a.Scheme == "" {
			return fmt.Errorf("Auth[%d] has no scheme", i)
		}
	}
	return nil
}

// withDefaults fills in the defaults; it is the only place they live.
func (c SessionConfig) withDefaults() SessionConfig {
	if c.SessionTimeout == 0 {
		c.SessionTimeout = DefaultSessionTimeout
	}
	if c.ConnectionTimeout == 0 {
		c.ConnectionTimeout = c.SessionTimeout
	}
	if c.Dialer == nil {
		c.Dialer = net.DialTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if len(c.ACL) == 0 {
		c.ACL = zk.WorldACL(zk.PermAll)
	}
	return c
}

// ErrBadConnectString is wrapped by the errors ParseConnectString returns.
var ErrBadConnectString = errors.New("bad zookeeper.connect")

// ParseConnectString splits a zookeeper.connect value into "host:port"
// server addresses and a chroot, the way ZooKeeper's ConnectStringParser
// does: the chroot starts at the first '/'; a chroot of "/" means none; a
// host without a port gets DefaultPort. Spaces around hosts are ignored.
// The chroot must be a valid ZooKeeper path without a trailing '/'; IPv6
// hosts must be in brackets ("[::1]:2181"). The chroot is "" when there
// is none.
func ParseConnectString(connect string) (hosts []string, chroot string, err error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w %q: %s", ErrBadConnectString, connect, fmt.Sprintf(format, args...))
	}
	s := strings.TrimSpace(connect)
	if s == "" {
		return nil, "", fmt.Errorf("%w: empty; want host:port[,host:port...][/chroot]", ErrBadConnectString)
	}
	hostList := s
	if i := strings.IndexByte(s, '/'); i >= 0 {
		hostList, chroot = s[:i], s[i:]
	}
	if chroot == "/" {
		chroot = ""
	}
	if chroot != "" {
		if reason := pathProblem(chroot); reason != "" {
			return nil, "", bad("chroot %q: %s", chroot, reason)
		}
	}
	if strings.TrimSpace(hostList) == "" {
		return nil, "", bad("no hosts before the chroot")
	}
	for _, h := range strings.Split(hostList, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			return nil, "", bad("empty host in the list")
		}
		addr, reason := parseHostPort(h)
		if reason != "" {
			return nil, "", bad("host %q: %s", h, reason)
		}
		hosts = append(hosts, addr)
	}
	return hosts, chroot, nil
}

// parseHostPort normalizes one host of a connect string to "host:port".
func parseHostPort(h string) (addr, reason string) {
	var host, port string
	switch {
	case strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]"):
		host, port = h[1:len(h)-1], strconv.Itoa(DefaultPort)
	case strings.HasPrefix(h, "["):
		var err error
		if host, port, err = net.SplitHostPort(h); err != nil {
			return "", "want [ipv6]:port"
		}
	case strings.Count(h, ":") == 0:
		host, port = h, strconv.Itoa(DefaultPort)
	case strings.Count(h, ":") == 1:
		i := strings.IndexByte(h, ':')
		host, port = h[:i], h[i+1:]
	default:
		return "", "an IPv6 address must be in brackets, as in [::1]:2181"
	}
	if host == "" {
		return "", "empty host name"
	}
	if strings.ContainsAny(host, " \t[]/") {
		return "", "bad character in host name"
	}
	if port == "" {
		return "", "empty port"
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return "", fmt.Sprintf("port %q is not a number from 1 to 65535", port)
	}
	return net.JoinHostPort(host, strconv.Itoa(n)), ""
}

// Session is a ZooKeeper session with the chroot of a zookeeper.connect
// string. It spans the successive ZooKeeper sessions of a client: when the
// server expires one, the Session opens the next.
//
// Each ZooKeeper session has a go-zookeeper connection of its own (a link),
// as each session has a handle of its own in ZooKeeper's Java client: a
// link never opens a second session (its dialer and its wire guard refuse),
// and once its session has expired it is closed, failing every request
// still queued in it. So no request issued in one ZooKeeper session is ever
// sent, let alone applied, in another. (go-zookeeper alone would open the
// next session on the same connection and send the old session's queued
// requests there.)
//
// go-zookeeper reconnects a link on its own. While the session lives on the
// server, a reconnection keeps its ephemeral nodes and watches
// (StateDisconnected, then StateConnected with the same SessionID). When
// the server has expired the session, the link learns it once it
// reconnects; subscribers then see StateExpired, then StateConnected with a
// new SessionID and the old one in ExpiredSessionID, once the next link has
// its session. Ephemeral nodes and watches of the old session are gone;
// re-creating them is the caller's job (Kafka's handleNewSession).
//
// Operations take a context and paths relative to the chroot. They wait
// through connection losses (like ZkClient.retryUntilConnected) until the
// context ends; creates, deletes and conditional sets that may have been
// applied before the connection dropped are resolved, see CreateEphemeral.
//
// A Session is safe for concurrent use. Close ends it.
type Session struct {
	cfg    SessionConfig
	chroot string
	hosts  []string
	logger *slog.Logger
	acl    []zk.ACL

	lease   *sessionLease
	connect connectFunc // opens the go-zookeeper connection of a link

	mu                sync.Mutex
	cur               *link              // the link of the current session, or of the next one
	links             map[*link]struct{} // links not yet shut down
	linkSeq           uint64
	authErr           error        // the first link's credentials were refused
	state             SessionState // 0 until the first session
	sessionID         int64        // the current session; 0 after an expiry until the next
	lastSessionID     int64        // the last session established, for StateClosed
	pendingExpired    int64        // the expired session the next StateConnected replaces
	gen               uint64       // counts StateConnected transitions
	disconnectedSince time.Time
	changed           chan struct{} // closed and replaced on every state change
	closing           bool
	subs              map[*subscriber]struct{}
	disconnects       int64 // StateDisconnected events
	expirations       int64 // StateExpired events

	wg      sync.WaitGroup // operation, watch, link and heartbeat goroutines
	subWG   sync.WaitGroup // subscriber pumps
	abandon chan struct{}  // closed when Close stops waiting for slow subscribers

	closeOnce sync.Once
	stop      chan struct{} // closed when Close starts
	done      chan struct{} // closed when Close has finished
}

func newSession(cfg SessionConfig, hosts []string, chroot string) *Session {
	s := &Session{
		cfg:     cfg,
		chroot:  chroot,
		hosts:   hosts,
		logger:  cfg.Logger,
		acl:     cfg.ACL,
		changed: make(chan struct{}),
		subs:    map[*subscriber]struct{}{},
		links:   map[*link]struct{}{},
		lease:   newSessionLease(),
		abandon: make(chan struct{}),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	s.connect = s.zkConnect
	return s
}

// Dial connects to ZooKeeper, waits for a session and adds cfg.Auth. It
// fails with an error wrapping ErrConnectionTimeout, naming the hosts and
// the last dial error, when no session is established within
// cfg.ConnectionTimeout, and with ctx's error when ctx ends first. On
// failure nothing is left running.
func Dial(ctx context.Context, cfg SessionConfig) (*Session, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	hosts, chroot, _ := ParseConnectString(cfg.Connect)
	s := newSession(cfg, hosts, chroot)
	s.mu.Lock()
	_, err := s.startLinkLocked()
	s.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("connect to ZooKeeper at %s: %w", strings.Join(hosts, ","), err)
	}
	if err := s.awaitFirstSession(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	s.goTracked(s.heartbeat)
	s.logger.Info("ZooKeeper session established",
		"session", sessionString(s.ID()), "hosts", strings.Join(hosts, ","), "chroot", chroot)
	return s, nil
}

// zkConnect opens go-zookeeper's connection for l, through l's dialer.
func (s *Session) zkConnect(l *link) (zkConn, <-chan zk.Event, error) {
	conn, events, err := zk.Connect(s.hosts, s.cfg.SessionTimeout,
		zk.WithDialer(l.dialer.Dial),
		zk.WithLogger(zkLogger{s.logger}),
		zk.WithEventCallback(func(ev zk.Event) { s.handleEvent(l, ev) }))
	if err != nil {
		return nil, nil, err
	}
	return conn, events, nil
}

func (s *Session) awaitFirstSession(ctx context.Context) error {
	tctx, cancel := context.WithTimeout(ctx, s.cfg.ConnectionTimeout)
	defer cancel()
	err := s.waitSession(tctx, 0)
	if err == nil {
		return nil
	}
	hosts := strings.Join(s.hosts, ",")
	s.mu.Lock()
	authErr := s.authErr
	var last error
	if s.cur != nil {
		last = s.cur.dialer.lastError()
	}
	s.mu.Unlock()
	if authErr != nil {
		return authErr
	}
	if ctx.Err() != nil {
		return fmt.Errorf("dial ZooKeeper at %s: %w", hosts, ctx.Err())
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("dial ZooKeeper at %s: %w", hosts, err)
	}
	msg := fmt.Sprintf("no ZooKeeper session with %s within %v", hosts, s.cfg.ConnectionTimeout)
	if last != nil {
		msg += "; last dial error: " + last.Error()
	}
	return fmt.Errorf("%w: %s", ErrConnectionTimeout, msg)
}

// Close ends the session: it closes the ZooKeeper connection (the server
// then deletes the session's ephemeral nodes at once), ends every goroutine
// the Session started, fails pending operations with ErrClosed, fires
// WatchLost on pending watches, sends StateClosed to subscribers and closes
// their channels (see Subscribe), then closes Done. Close is idempotent; it
// always returns nil.
func (s *Session) Close() error {
	s.closeOnce.Do(s.close)
	return nil
}

func (s *Session) close() {
	s.lease.revoke(0)
	close(s.stop) // the heartbeat ends now, not at its next tick
	s.mu.Lock()
	s.closing = true
	if s.disconnectedSince.IsZero() {
		s.disconnectedSince = time.Now()
	}
	s.notifyLocked()
	s.mu.Unlock()

	s.mu.Lock()
	links := make([]*link, 0, len(s.links))
	for l := range s.links {
		links = append(links, l)
	}
	s.mu.Unlock()
	for _, l := range links {
		// Sends closeSession (for the live session) and waits up to a
		// second for the answer; then ends go-zookeeper's loop.
		s.shutdownLink(l)
	}
	s.wg.Wait()

	s.mu.Lock()
	s.state = StateClosed
	ev := SessionEvent{State: StateClosed, SessionID: s.lastSessionID, At: time.Now()}
	subs := s.subs
	s.subs = nil
	s.sessionID = 0
	s.notifyLocked()
	s.mu.Unlock()
	for sub := range subs {
		sub.push(ev, true)
	}
	delivered := make(chan struct{})
	go func() {
		s.subWG.Wait()
		close(delivered)
	}()
	select {
	case <-delivered:
	case <-time.After(closeDeliveryTimeout):
		s.logger.Warn("a session subscriber did not take its last events; dropping them")
		close(s.abandon)
		<-delivered
	}
	s.logger.Info("ZooKeeper session closed", "session", sessionString(ev.SessionID))
	close(s.done)
}

// Done is closed when Close has finished. An expiry does not close it: the
// Session carries on with a new ZooKeeper session.
func (s *Session) Done() <-chan struct{} { return s.done }

// ID returns the id of the current ZooKeeper session: the one last
// established, also while disconnected from it. It is 0 between an expiry
// and the next session, and after Close.
func (s *Session) ID() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessionID
}

// State returns the session's current state.
func (s *Session) State() SessionState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// DisconnectedSince returns when the Session lost its connection, or the
// zero time while it is connected. It stays set through an expiry until a
// new session is established, so that a caller can stop acting as a group
// member once it exceeds the session timeout, the moment ZooKeeper will
// have dropped its ephemeral nodes.
func (s *Session) DisconnectedSince() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.disconnectedSince
}

// Chroot returns the chroot of the connect string, "" if none.
func (s *Session) Chroot() string { return s.chroot }

// SessionTimeout returns the configured session timeout.
func (s *Session) SessionTimeout() time.Duration { return s.cfg.SessionTimeout }

// notifyLocked wakes everyone waiting for a state change. s.mu is held.
func (s *Session) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// waitSession waits until the session is connected with a generation after
// gen, that is, until a session is established after the moment gen was
// read.
func (s *Session) waitSession(ctx context.Context, gen uint64) error {
	for {
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			return ErrClosed
		}
		if s.state == StateConnected && s.gen > gen {
			s.mu.Unlock()
			return nil
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// goTracked runs f in a goroutine Close waits for; it reports false, and
// does not run f, once Close has begun.
func (s *Session) goTracked(f func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
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

// zkLogger routes go-zookeeper's log lines to the Session's logger at Debug
// level instead of the standard library's global logger.
type zkLogger struct{ l *slog.Logger }

func (z zkLogger) Printf(format string, args ...any) {
	if z.l.Enabled(context.Background(), slog.LevelDebug) {
		z.l.Debug("go-zookeeper: " + fmt.Sprintf(format, args...))
	}
}

func sessionString(id int64) string {
	return "0x" + strconv.FormatUint(uint64(id), 16)
}
