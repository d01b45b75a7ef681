package kafkagroup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/abortdial"
	"github.com/zkconsumer/zkconsumer/internal/backoff"
	gc "github.com/zkconsumer/zkconsumer/internal/coordinator"
)

// Member is one member of a group coordinated by Kafka's broker, in the
// group protocol Config.Protocol names. Join gives the next generation;
// Commit and Fetch handle the group's offsets; Leave and Close leave.
// Its methods are safe for concurrent use, but only one Join runs at a
// time.
type Member struct {
	cfg   Config
	log   *slog.Logger
	proto protocol // classic or consumer, whichever is set
	// classic and consumer are the protocol, one of them set.
	classic   *classic
	consumer  *consumer
	explainer interface{ Explain(error) error } // Config.Secure's dialer; nil without one
	reports   reporter

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc

	joinMu    sync.Mutex // held by Join, and by Leave and Close while leaving
	closeOnce sync.Once

	loc     *gc.Locator // the coordinator's discovery, and the broker for Metadata
	clientT *abortdial.Dialer

	coordMu sync.Mutex // held while looking up the coordinator
	coord   *coordinator

	// wake makes the heartbeat goroutine heartbeat at once (the consumer
	// protocol's Acknowledge).
	wake chan struct{}

	mu       sync.Mutex
	gen      *Generation
	fatal    error
	bgCancel context.CancelFunc // ends the current generation's goroutines
	bg       sync.WaitGroup
}

// New checks cfg and returns a member that does nothing until Join.
func New(cfg Config) (*Member, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	log := cfg.Logger.With("group", cfg.Group)
	if cfg.Protocol == ProtocolConsumer {
		log = log.With("protocol", ProtocolConsumer)
	}
	if cfg.InstanceID != "" {
		log = log.With("instance", cfg.InstanceID)
	}
	m := &Member{cfg: cfg, log: log, ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1),
		clientT: newTracker(cfg, cfg.RequestTimeout)}
	sc := m.saramaConfig(m.clientT, cfg.RequestTimeout)
	if sc.Net.Proxy.Dialer != m.clientT {
		m.explainer, _ = sc.Net.Proxy.Dialer.(interface{ Explain(error) error })
	}
	m.loc = gc.NewBootstrapLocator(cfg.Group, cfg.Brokers, sc, m.explain)
	if cfg.Protocol == ProtocolConsumer {
		m.consumer = newConsumer(m)
		m.proto = m.consumer
	} else {
		p, err := newClassic(m)
		if err != nil {
			cancel()
			return nil, err
		}
		m.classic, m.proto = p, p
	}
	return m, nil
}

// MemberID returns this member's id: under the classic protocol the one
// the coordinator assigned, "" before the first join and after the
// coordinator forgot the member; under the consumer protocol the one the
// member chose, or the coordinator's with ConsumerGroupHeartbeat v0.
func (m *Member) MemberID() string {
	if m.consumer != nil {
		return m.consumer.memberIDNow()
	}
	return m.classic.memberIDNow()
}

// Epoch returns the member epoch the coordinator last gave under the
// consumer protocol, 0 when not in the group; under the classic protocol
// the id of the latest generation, -1 before the first.
func (m *Member) Epoch() int32 {
	if m.consumer != nil {
		return m.consumer.epochNow()
	}
	if g := m.Generation(); g != nil {
		return g.ID
	}
	return -1
}

// Target returns, under the consumer protocol, the coordinator's latest
// assignment of this member, of the topics whose ids the member can name:
// what it may own now (see Generation.Updates). Under the classic
// protocol it is the latest generation's Assignment.
func (m *Member) Target() map[string][]int32 {
	if m.consumer != nil {
		return m.consumer.targetNow()
	}
	if g := m.Generation(); g != nil {
		return cloneAssignment(g.Assignment)
	}
	return nil
}

// Acknowledge tells the coordinator, under the consumer protocol, with a
// heartbeat sent at once, that the member of gen owns owned now: after
// the partitions the target left out were stopped and committed, this
// hands them over. It does nothing once gen has ended, and under the
// classic protocol, where Join hands partitions over.
func (m *Member) Acknowledge(gen *Generation, owned map[string][]int32) {
	if m.consumer != nil && m.consumer.acknowledge(gen, owned) {
		m.heartbeatNow()
	}
}

// Generation returns the latest generation, nil before the first Join.
func (m *Member) Generation() *Generation {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.gen
}

// Join joins the group (or rejoins it) and returns the new generation.
// If the previous generation has not ended yet it ends now with
// ErrRebalanceStarted: call Join only after the work of the previous
// generation is stopped and, unless it ended with ErrMembershipLost,
// committed; under the classic cooperative protocol
// (Generation.Cooperative) only after it is committed, as its partitions
// carry over (see Generation.Continues).
//
// Under the classic protocol Join runs JoinGroup and SyncGroup, computing
// the group's assignment when this member leads; under the consumer
// protocol it heartbeats, first with epoch 0 and then with what the
// member owns (the previous generation's partitions less those the
// coordinator revoked, which acknowledges the revocation), until the
// coordinator's assignment and what the member owns agree.
//
// Join retries what may pass (an unreachable broker or coordinator, a
// coordinator that moved or is loading, a static id not yet released)
// until ctx ends, reporting failures that last (Config.OnError); the
// error it then returns wraps both context.Cause(ctx) and the last
// failure. It fails at once with an ErrFatal error (among them a
// connection the brokers refused to authenticate, or whose TLS handshake
// failed, naming the setting to fix), ErrMemberClosed after Close, and
// ErrJoinInProgress while another Join runs.
func (m *Member) Join(ctx context.Context) (*Generation, error) {
	if m.ctx.Err() != nil {
		return nil, ErrMemberClosed
	}
	if !m.joinMu.TryLock() {
		if m.ctx.Err() != nil {
			return nil, ErrMemberClosed
		}
		return nil, ErrJoinInProgress
	}
	defer m.joinMu.Unlock()
	if m.ctx.Err() != nil {
		return nil, ErrMemberClosed
	}
	m.stopBackground()
	m.mu.Lock()
	fatal, prev := m.fatal, m.gen
	m.mu.Unlock()
	if fatal != nil {
		return nil, fatal
	}
	m.proto.beginJoin(prev)
	defer m.proto.endJoin()
	if prev != nil {
		prev.end(ErrRebalanceStarted) // the caller gave it up, if it still ran
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(m.ctx, func() { cancel(ErrMemberClosed) })
	defer stop()
	// A Metadata or FindCoordinator request in flight ends with ctx too
	// (the bootstrap connections are dialled again when next used); no
	// other request uses them while Join runs.
	stopReset := context.AfterFunc(ctx, m.clientT.Reset)
	defer stopReset()
	var (
		last    error     // the last failure, for the error when ctx ends
		failing time.Time // since when attempts fail; zero while none has
	)
	for attempt := 1; ; attempt++ {
		if ctx.Err() != nil {
			return nil, m.joinEnded(ctx, last)
		}
		gen, err := m.joinOnce(ctx)
		if err == nil {
			m.recovered("join")
			m.mu.Lock()
			m.gen = gen
			m.mu.Unlock()
			m.startBackground(gen)
			return gen, nil
		}
		if ctx.Err() != nil {
			return nil, m.joinEnded(ctx, last)
		}
		var re *retryError
		if !errors.As(err, &re) {
			re = &retryError{err: err}
		}
		switch {
		case errors.Is(err, ErrFatal):
			return nil, err
		case authFailed(re.err):
			// As Java's consumer throws its authentication exceptions
			// from poll: a setting is wrong, retrying cannot mend it.
			m.log.Error("authentication failed", "err", re.err)
			return nil, fmt.Errorf("%w: group %s: %w", ErrFatal, m.cfg.Group, re.err)
		}
		last = re.err
		if re.now {
			m.log.Debug("join attempt failed", "attempt", attempt, "err", err)
			continue
		}
		if failing.IsZero() {
			failing = time.Now()
		}
		if d := time.Since(failing); d >= reportAfter {
			m.report("join", fmt.Errorf("join group %s: failing for %v, retrying: %w", m.cfg.Group, d.Round(time.Second), re.err))
		} else {
			m.log.Debug("join attempt failed", "attempt", attempt, "err", err)
		}
		backoff.Sleep(ctx, m.cfg.RetryBackoff)
	}
}

// joinOnce finds the coordinator and makes one attempt of the protocol.
func (m *Member) joinOnce(ctx context.Context) (*Generation, error) {
	c, err := m.coordinator(ctx)
	if err != nil {
		if errors.Is(err, ErrFatal) {
			return nil, err
		}
		return nil, retryLater(err)
	}
	return m.proto.joinOnce(ctx, c)
}

// joinEnded is Join's error once its ctx has ended: ErrMemberClosed after
// Close, else one that wraps the context's cause and the last failure, if
// any, so that errors.Is matches both.
func (m *Member) joinEnded(ctx context.Context, last error) error {
	if m.ctx.Err() != nil {
		return ErrMemberClosed
	}
	cause := context.Cause(ctx)
	if last == nil || errors.Is(last, cause) {
		return fmt.Errorf("join group %s: %w", m.cfg.Group, cause)
	}
	return fmt.Errorf("join group %s: %w (last error: %w)", m.cfg.Group, cause, last)
}

// retryError marks a failed join attempt that Join repeats: at once when
// now is set (a new member id, a rebalance that moved on), after
// RetryBackoff otherwise.
type retryError struct {
	err error
	now bool
}

func (e *retryError) Error() string { return e.err.Error() }
func (e *retryError) Unwrap() error { return e.err }

func retryLater(err error) error { return &retryError{err: err} }
func retryNow(err error) error   { return &retryError{err: err, now: true} }

// setFatal records err, wrapped in ErrFatal, as the end of this member and
// returns it: every later Join fails with it.
func (m *Member) setFatal(err error) error {
	fatal := fmt.Errorf("%w: group %s: %w", ErrFatal, m.cfg.Group, err)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fatal == nil {
		m.fatal = fatal
		m.log.Error("fatal group error", "err", err)
	}
	return m.fatal
}

// lost ends gen with ErrMembershipLost and why.
func (m *Member) lost(gen *Generation, why error) {
	if gen.Err() == nil {
		m.log.Warn("membership lost", "generation", gen.ID, "member", gen.MemberID, "err", why)
	}
	gen.end(fmt.Errorf("%w: %w", ErrMembershipLost, why))
}

// Close leaves the group, ends the current generation with
// ErrMemberClosed and closes the connections. A dynamic member leaves
// (LeaveGroup; epoch -1 under the consumer protocol), so that the others
// get its partitions at once; a classic static member stays in the group
// until its session times out, as in Java, and a consumer-protocol static
// member leaves with epoch -2, which the coordinator keeps its partitions
// for until the session times out. Close waits for a running Join to
// return, which it makes prompt, and for the member's goroutines (at most
// a heartbeat in flight), and leaves within 5 s (and RequestTimeout),
// looking the coordinator up again if it moved. It is idempotent; later
// calls return nil.
func (m *Member) Close() error {
	var err error
	m.closeOnce.Do(func() {
		m.cancel() // aborts a JoinGroup or SyncGroup in flight
		if !m.joinMu.TryLock() {
			m.clientT.Reset() // and a Join's Metadata or FindCoordinator request
			m.joinMu.Lock()
		}
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

// Leave leaves the group without closing the member, as Java's consumer
// does when the application has not polled for max.poll.interval.ms: it
// stops the heartbeats, leaves as Close does, and ends the current
// generation with ErrMembershipLost, whose partitions the coordinator may
// now give to others. The next Join joins again as a new member. It fails
// with ErrJoinInProgress while Join runs.
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

// leave sends the protocol's leave request, if it has one to send, for at
// most 5 s (and RequestTimeout). The coordinator is looked up again when
// the member has none (a failed heartbeat dropped it) or it moved (its
// broker stopped and __consumer_offsets moved), and asked again, within
// that time: a member that does not leave keeps its partitions from the
// others until its session times out. While closing, a FindCoordinator
// still in flight then is cut off with the locator, which Close closes
// anyway.
func (m *Member) leave(closing bool) error {
	if !m.proto.leaving() {
		return nil
	}
	attrs := m.proto.leaveAttrs()
	ctx, cancel := context.WithTimeout(context.Background(), min(m.cfg.RequestTimeout, 5*time.Second))
	defer cancel()
	if closing {
		stop := context.AfterFunc(ctx, m.loc.Close)
		defer stop()
	}
	var err error
	for {
		m.coordMu.Lock()
		c := m.coord
		if c == nil {
			c, err = m.connectLocked(ctx)
		}
		m.coordMu.Unlock()
		again := err != nil && !errors.Is(err, ErrFatal) && !errors.Is(err, ErrMemberClosed)
		if err == nil {
			again, err = m.proto.leave(ctx, c)
			if again {
				m.dropCoordinator(c, err)
			}
		}
		if !again || !backoff.Sleep(ctx, m.cfg.RetryBackoff) {
			break
		}
	}
	if err != nil && !errors.Is(err, sarama.ErrUnknownMemberId) {
		m.log.Warn("leave group failed", append(attrs, "err", err)...)
		return fmt.Errorf("leave group %s: %w", m.cfg.Group, err)
	}
	m.log.Info("left group", attrs...)
	return nil
}

// instanceID is group.instance.id for a request: nil (null) for a
// dynamic member.
func (m *Member) instanceID() *string {
	if m.cfg.InstanceID == "" {
		return nil
	}
	id := m.cfg.InstanceID
	return &id
}
