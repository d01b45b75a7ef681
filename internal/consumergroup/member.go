package consumergroup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/backoff"
	gc "github.com/zkconsumer/zkconsumer/internal/coordinator"
	"github.com/zkconsumer/zkconsumer/internal/kip848"
	"github.com/zkconsumer/zkconsumer/internal/secure"
)

// Member is one member of a group that uses the consumer group protocol.
// Join gives the next generation; Commit and Fetch handle the group's
// offsets; Leave and Close leave the group. Its methods are safe for
// concurrent use, but only one Join runs at a time.
type Member struct {
	cfg Config
	log *slog.Logger

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc

	joinMu    sync.Mutex // held by Join, Leave and Close
	closeOnce sync.Once

	reportMu   sync.Mutex
	lastReport map[string]time.Time

	loc       *gc.Locator                       // the coordinator's discovery, and the broker for Metadata
	explainer interface{ Explain(error) error } // Config.Secure's dialer; nil without one

	coordMu sync.Mutex
	coord   *coordinator

	mu       sync.Mutex
	memberID string
	epoch    int32 // 0: not in the group
	interval time.Duration
	owned    map[string][]int32 // what the coordinator was last told this member owns
	target   []kip848.TopicPartitions
	names    map[kip848.UUID]string
	ids      map[string]kip848.UUID
	gen      *Generation
	bgCancel context.CancelFunc
	bg       sync.WaitGroup
	wake     chan struct{} // Acknowledge: heartbeat now
	// session is the session timeout the coordinator enforces on the
	// group, as last read (readSessionTimeout); Config.SessionTimeout
	// until then.
	session       time.Duration
	sessionUnread bool // the last read failed (logged once)

}

// coordinator is the group's coordinator: conn for commits, hb for
// heartbeats alone, fetch (sarama) for OffsetFetch. A broker answers one
// connection's requests in order, and a commit may wait seconds for the
// offsets topic's replicas: on a connection of their own, heartbeats never
// wait behind one.
type coordinator struct {
	id    int32
	addr  string
	conn  *kip848.Conn
	hb    *kip848.Conn
	fetch *sarama.Broker
	// hbVersion is the ConsumerGroupHeartbeat version both speak.
	hbVersion int16
	// fetchVersion is the OffsetFetch version negotiated (needs).
	fetchVersion int16
}

func (c *coordinator) close() {
	c.conn.Close()
	c.hb.Close()
	_ = c.fetch.Close()
}

// New checks cfg and returns a member that does nothing until Join.
func New(cfg Config) (*Member, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	sc := saramaConfig(cfg, cfg.RequestTimeout)
	// Config.Secure's dialer explains the errors of connections
	// (secure.Client.Explain).
	explainer, _ := sc.Net.Proxy.Dialer.(interface{ Explain(error) error })
	ctx, cancel := context.WithCancel(context.Background())
	log := cfg.Logger.With("group", cfg.Group, "protocol", "consumer")
	// Version 1 of ConsumerGroupHeartbeat wants the member to name itself
	// (KIP-1082), once for its lifetime; version 0 takes the coordinator's.
	m := &Member{cfg: cfg, log: log, ctx: ctx, cancel: cancel, interval: 5 * time.Second, memberID: kip848.NewMemberID(), wake: make(chan struct{}, 1), session: cfg.SessionTimeout,
		owned: map[string][]int32{}, names: map[kip848.UUID]string{}, ids: map[string]kip848.UUID{}, explainer: explainer}
	m.loc = gc.NewBootstrapLocator(cfg.Group, cfg.Brokers, sc, m.explain)
	return m, nil
}

// MemberID returns this member's id, "" before the first heartbeat.
func (m *Member) MemberID() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.memberID
}

// Epoch returns the member epoch the coordinator last gave, 0 when not
// in the group.
func (m *Member) Epoch() int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.epoch
}

// saramaConfig is the connection settings of cfg with Secure applied.
func saramaConfig(cfg Config, readTimeout time.Duration) *sarama.Config {
	var c sarama.Config
	if cfg.Sarama != nil {
		c = *cfg.Sarama
	} else {
		c = *sarama.NewConfig()
	}
	c.Version = sarama.V2_8_0_0 // Metadata v10: topic ids
	c.ClientID = cfg.ClientID
	c.Net.ReadTimeout = readTimeout
	c.Net.WriteTimeout = cfg.RequestTimeout
	c.Metadata.RefreshFrequency = 0
	c.Metadata.Full = false
	c.Metadata.AllowAutoTopicCreation = false
	c.Metadata.Retry.Max = 0
	if cfg.Secure != nil {
		cfg.Secure(&c)
	}
	return &c
}

// anyBroker returns a connected broker of the cluster
// (gc.Locator.AnyBroker).
func (m *Member) anyBroker() (*sarama.Broker, error) {
	if m.ctx.Err() != nil {
		return nil, ErrMemberClosed
	}
	b, err := m.loc.AnyBroker()
	if errors.Is(err, gc.ErrClosed) {
		return nil, ErrMemberClosed
	}
	return b, err
}

// explain adds to err, an error of a connection of this member, the
// security setting to check when it can tell.
func (m *Member) explain(err error) error {
	if m.explainer == nil || err == nil {
		return err
	}
	return m.explainer.Explain(err)
}

// authFailed reports whether err is a refusal of the member's credentials
// or certificates, or a failed TLS handshake, which retrying cannot mend
// (secure.ErrAuthentication).
func authFailed(err error) bool { return errors.Is(err, secure.ErrAuthentication) }

// brokerFailed moves on to the next broker after a request to b failed
// (gc.Locator.BrokerFailed), unless Close caused the failure.
func (m *Member) brokerFailed(b *sarama.Broker) {
	if m.ctx.Err() == nil {
		m.loc.BrokerFailed(b)
	}
}

// findCoordinator asks a broker which one coordinates the group
// (gc.Locator.Find); a refusal for good is an ErrFatal error. It works
// while Close leaves the group, until Close closes the locator.
func (m *Member) findCoordinator() (*sarama.Broker, error) {
	b, err := m.loc.Find()
	switch {
	case errors.Is(err, gc.ErrClosed):
		return nil, ErrMemberClosed
	case errors.Is(err, gc.ErrFindRefused), authFailed(err):
		return nil, fmt.Errorf("%w: %w", ErrFatal, err)
	}
	return b, err
}

// coordinator returns the group's coordinator, finding and connecting it
// first if needed. A coordinator without the consumer group protocol is
// an ErrFatal error wrapping ErrUnsupported.
func (m *Member) coordinator(ctx context.Context) (*coordinator, error) {
	m.coordMu.Lock()
	defer m.coordMu.Unlock()
	if m.coord != nil {
		return m.coord, nil
	}
	if m.ctx.Err() != nil {
		return nil, ErrMemberClosed
	}
	return m.connectLocked(ctx)
}

// connectLocked finds the coordinator and connects to it; the caller holds
// coordMu and has checked that m.coord is nil.
func (m *Member) connectLocked(ctx context.Context) (*coordinator, error) {
	found, err := m.findCoordinator()
	if err != nil {
		return nil, err
	}
	addr, id := found.Addr(), found.ID()
	sc := saramaConfig(m.cfg, m.cfg.RequestTimeout)
	dial := func() (*kip848.Conn, error) {
		conn, err := kip848.Dial(ctx, gc.Dialer(sc), addr, m.cfg.ClientID, m.cfg.RequestTimeout)
		if err != nil {
			err = fmt.Errorf("consumergroup: connect to the coordinator, broker %d at %s: %w", id, addr, m.explain(err))
			if authFailed(err) {
				err = fmt.Errorf("%w: %w", ErrFatal, err)
			}
		}
		return conn, err
	}
	conn, err := dial()
	if err != nil {
		return nil, err
	}
	v, err := gc.Negotiate(gc.BrokerName(id, addr), gc.KIP848Versions(conn, gc.APIConsumerGroupHeartbeat, gc.APIOffsetCommit, gc.APIOffsetFetch), needs...)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("%w: %w: %w", ErrFatal, ErrUnsupported, err)
	}
	hbVersion, _ := v.Of(gc.APIConsumerGroupHeartbeat)
	if hbVersion < 1 && m.cfg.TopicRegex != "" {
		conn.Close()
		return nil, fmt.Errorf("%w: %w: broker %d at %s speaks ConsumerGroupHeartbeat version 0 only, and a topic regex (SubscribedTopicRegex) needs version 1 (Kafka 4.0)",
			ErrFatal, ErrUnsupported, id, addr)
	}
	hb, err := dial()
	if err != nil {
		conn.Close()
		return nil, err
	}
	fetch := sarama.NewBroker(addr)
	if err := fetch.Open(sc); err != nil {
		conn.Close()
		hb.Close()
		return nil, m.explain(err)
	}
	fetchVersion, _ := v.Of(gc.APIOffsetFetch)
	c := &coordinator{id: id, addr: addr, conn: conn, hb: hb, fetch: fetch, hbVersion: hbVersion, fetchVersion: fetchVersion}
	m.log.Debug("found coordinator", "broker", id, "addr", addr, "heartbeat_version", c.hbVersion)
	m.coord = c
	return c, nil
}

// needs is what a member of the consumer group protocol sends to its
// coordinator: ConsumerGroupHeartbeat 0 or 1, OffsetCommit 9 (kip848),
// OffsetFetch 5 (sarama).
var needs = []gc.Need{
	{API: gc.APIConsumerGroupHeartbeat, Range: gc.Range{Min: 0, Max: 1}},
	{API: gc.APIOffsetCommit, Range: gc.Range{Min: kip848.OffsetCommitVersion, Max: kip848.OffsetCommitVersion}},
	{API: gc.APIOffsetFetch, Range: gc.Range{Min: 5, Max: 5}},
}

// dropCoordinator forgets c (NOT_COORDINATOR, a failed connection); the
// next request finds the coordinator again.
func (m *Member) dropCoordinator(c *coordinator, why error) {
	m.coordMu.Lock()
	if m.coord == c {
		m.coord = nil
	}
	m.coordMu.Unlock()
	if c != nil {
		m.log.Debug("coordinator dropped", "broker", c.id, "err", why)
		c.close()
	}
}

// report passes a failure the member retries to OnError (or the log),
// at most every 30 s per kind.
func (m *Member) report(kind string, err error) {
	if m.ctx.Err() != nil {
		return
	}
	m.reportMu.Lock()
	if m.lastReport == nil {
		m.lastReport = map[string]time.Time{}
	}
	last, seen := m.lastReport[kind]
	if seen && time.Since(last) < 30*time.Second {
		m.reportMu.Unlock()
		m.log.Debug("failure (reported already)", "err", err)
		return
	}
	m.lastReport[kind] = time.Now()
	m.reportMu.Unlock()
	if m.cfg.OnError != nil {
		m.cfg.OnError(err)
		return
	}
	m.log.Warn("retrying", "err", err)
}

// Close leaves the group (epoch -1; -2 for a static member, whose
// partitions the coordinator keeps for it until the session timeout), ends
// the current generation with ErrMemberClosed and closes the connections.
// It waits for a running Join to return, which it makes prompt, and for
// the heartbeat goroutine; the leave waits at most 5 s. Idempotent.
func (m *Member) Close() error {
	var err error
	m.closeOnce.Do(func() {
		m.cancel()
		m.joinMu.Lock()
		defer m.joinMu.Unlock()
		m.stopBackground()
		err = m.leave(true)
		m.mu.Lock()
		if m.gen != nil {
			m.gen.end(ErrMemberClosed)
		}
		m.mu.Unlock()
		m.coordMu.Lock()
		if m.coord != nil {
			m.coord.close()
			m.coord = nil
		}
		m.coordMu.Unlock()
		m.loc.Close()
	})
	return err
}

// Leave leaves the group without closing the member (as Java's consumer
// does after max.poll.interval.ms): the heartbeats stop, a heartbeat with
// epoch -1 (-2 for a static member) is sent, and the current generation
// ends with ErrMembershipLost. The next Join joins again with epoch 0.
func (m *Member) Leave() error {
	if m.ctx.Err() != nil {
		return ErrMemberClosed
	}
	if !m.joinMu.TryLock() {
		return ErrJoinInProgress
	}
	defer m.joinMu.Unlock()
	m.stopBackground()
	err := m.leave(false)
	m.mu.Lock()
	gen := m.gen
	m.mu.Unlock()
	if gen != nil {
		gen.end(fmt.Errorf("%w: left the group", ErrMembershipLost))
	}
	return err
}

// leave sends the leaving heartbeat, if the member is in the group, for
// at most 5 s (and RequestTimeout). While closing, a FindCoordinator still
// in flight then is cut off with the locator, which Close closes anyway.
func (m *Member) leave(closing bool) error {
	m.mu.Lock()
	epoch, id := m.epoch, m.memberID
	m.epoch = 0
	m.owned = map[string][]int32{}
	m.target = nil
	m.mu.Unlock()
	if epoch == 0 {
		return nil
	}
	leaveEpoch := kip848.EpochLeave
	if m.cfg.InstanceID != "" {
		leaveEpoch = kip848.EpochLeaveStatic
	}
	ctx, cancel := context.WithTimeout(context.Background(), min(m.cfg.RequestTimeout, 5*time.Second))
	defer cancel()
	if closing {
		stop := context.AfterFunc(ctx, m.loc.Close)
		defer stop()
	}
	req := &kip848.HeartbeatRequest{GroupID: m.cfg.Group, MemberID: id, MemberEpoch: leaveEpoch, InstanceID: m.instanceID(), RebalanceTimeoutMs: -1}
	// The coordinator is looked up again when the member has none (a
	// failed heartbeat dropped it) or it moved (its broker stopped and
	// __consumer_offsets moved), and asked again, within the leave's time:
	// a member that does not leave keeps its partitions from the others
	// until its session times out.
	var err error
	for {
		m.coordMu.Lock()
		c := m.coord
		if c == nil {
			c, err = m.connectLocked(ctx)
		}
		m.coordMu.Unlock()
		if err != nil {
			break
		}
		var resp *kip848.HeartbeatResponse
		resp, err = c.hb.Heartbeat(ctx, req, c.hbVersion)
		moved := err != nil
		if err != nil {
			m.dropCoordinator(c, err)
		} else if err = kafkaError(resp.ErrorCode, resp.ErrorMessage); err != nil && classify(resp.ErrorCode) == classMoved {
			m.dropCoordinator(c, err)
			moved = true
		}
		if !moved || !backoff.Sleep(ctx, m.cfg.RetryBackoff) {
			break
		}
	}
	if err != nil && !errors.Is(err, sarama.ErrUnknownMemberId) {
		m.log.Warn("leave group failed", "member", id, "err", err)
		return fmt.Errorf("consumergroup: leave group %s: %w", m.cfg.Group, err)
	}
	m.log.Info("left group", "member", id, "epoch", leaveEpoch)
	return nil
}

// topicRegex is the SubscribedTopicRegex of a heartbeat: the regex of a
// subscription by regex, nil (null) for one by topic names.
func (m *Member) topicRegex() *string {
	if m.cfg.TopicRegex == "" {
		return nil
	}
	re := m.cfg.TopicRegex
	return &re
}

func (m *Member) instanceID() *string {
	if m.cfg.InstanceID == "" {
		return nil
	}
	id := m.cfg.InstanceID
	return &id
}
