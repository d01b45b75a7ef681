package rebalance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// ErrRebalanceFailed is reported (MemberConfig.OnError) when a rebalance
// still fails after rebalance.max.retries attempts. Unlike Kafka's Scala
// consumer, the member does not stay idle afterwards: it tries again after
// the backoff and on every trigger until it succeeds.
var ErrRebalanceFailed = errors.New("rebalance: can't rebalance")

// MemberConfig configures a Member.
type MemberConfig struct {
	// Group is group.id; ConsumerID the member id ("<group>_<host>-<ms>-<hex>").
	Group, ConsumerID string
	// Subscription is what this member consumes.
	Subscription Subscription
	// ExcludeInternalTopics is exclude.internal.topics (wildcards only).
	ExcludeInternalTopics bool
	// Assignor is partition.assignment.strategy.
	Assignor Assignor
	// MaxRetries is rebalance.max.retries: attempts per rebalance before
	// ErrRebalanceFailed is reported.
	MaxRetries int
	// Backoff is rebalance.backoff.ms: the longest wait between attempts.
	// After a conflict the member waits only until the conflicting owner
	// node is deleted.
	Backoff time.Duration
	// SessionTimeout bounds how long registration waits for a leftover
	// registration node of the same consumer id to expire.
	SessionTimeout time.Duration
	// DisconnectGrace is how long the ZooKeeper connection may be down
	// before the member stops delivering its partitions (they may be given
	// to others once the session expires). Negative disables fencing.
	DisconnectGrace time.Duration
	// Handler is called around each generation.
	Handler Handler
	// Logger receives the member's logs; nil discards them.
	Logger *slog.Logger
	// OnError receives errors the application should know about:
	// ErrRebalanceFailed, unreadable registrations of other members, and
	// handler failures. It must not block. Nil ignores them.
	OnError func(error)
	// Now is the clock for registration timestamps; time.Now if nil.
	Now func() time.Time
}

// Member is one consumer of a group coordinated through ZooKeeper, as
// Kafka's ZookeeperConsumerConnector runs it: it registers under
// /consumers/<group>/ids, watches membership and the partition counts of
// its topics, and on every change releases its partitions, computes the
// assignment and claims its share under /consumers/<group>/owners.
type Member struct {
	zk  ZooKeeper
	cfg MemberConfig
	log *slog.Logger

	trigger chan struct{} // Rebalance requests, coalesced
	fired   chan string   // paths whose watch fired
	cancel  context.CancelFunc
	done    chan struct{}
	once    sync.Once

	mu  sync.Mutex
	gen *Generation // guarded by mu for Generation(); written by the loop

	// Owned by the loop goroutine (or by Start/Close while it is not
	// running).
	genCount     int
	stale        map[zkutil.TopicPartition]zkutil.ConsumerThreadID // owner nodes to release
	registered   int64                                             // session the registration belongs to
	armed        map[string]bool
	watchedTopic map[string]bool
	reported     map[string]bool
	watchers     sync.WaitGroup
}

// NewMember checks cfg and returns a member that does nothing until Start.
func NewMember(zk ZooKeeper, cfg MemberConfig) (*Member, error) {
	var errs []error
	if cfg.Group == "" || cfg.ConsumerID == "" {
		errs = append(errs, errors.New("rebalance: member needs a group and a consumer id"))
	}
	if err := cfg.Subscription.Validate(); err != nil {
		errs = append(errs, err)
	}
	if cfg.Assignor == nil || cfg.Handler == nil {
		errs = append(errs, errors.New("rebalance: member needs an assignor and a handler"))
	}
	if cfg.MaxRetries < 1 {
		errs = append(errs, fmt.Errorf("rebalance: rebalance.max.retries %d: need at least 1", cfg.MaxRetries))
	}
	if cfg.Backoff <= 0 {
		errs = append(errs, fmt.Errorf("rebalance: rebalance.backoff.ms %v: must be positive", cfg.Backoff))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.OnError == nil {
		cfg.OnError = func(error) {}
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Member{
		zk: zk, cfg: cfg,
		log:     logger.With("group", cfg.Group, "consumer", cfg.ConsumerID),
		trigger: make(chan struct{}, 1),
		fired:   make(chan string, 16),
		done:    make(chan struct{}),
		stale:   map[zkutil.TopicPartition]zkutil.ConsumerThreadID{},
		armed:   map[string]bool{}, watchedTopic: map[string]bool{}, reported: map[string]bool{},
	}, nil
}

// Start registers the member, runs the first rebalance on the caller's
// goroutine and then keeps the member in step with the group in the
// background until Close. It returns an error only if the member could not
// register; a first rebalance that fails is reported through OnError and
// retried in the background.
func (m *Member) Start(ctx context.Context) error {
	if err := m.register(ctx); err != nil {
		return err
	}
	loopCtx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	events, unsubscribe := m.zk.Subscribe()
	m.armWatches(loopCtx)
	ok := m.syncedRebalance(ctx)
	go m.run(loopCtx, events, unsubscribe, !ok)
	return nil
}

// Rebalance asks for a rebalance, as a membership change would.
func (m *Member) Rebalance() {
	select {
	case m.trigger <- struct{}{}:
	default:
	}
}

// Generation returns the current generation, nil while the member owns
// nothing (between generations, fenced, or before the first success).
func (m *Member) Generation() *Generation {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.gen
}

// Close stops the member: it ends the current generation in an orderly way
// (the handler commits), releases the owner nodes and deletes the
// registration, so the rest of the group rebalances at once instead of
// after the session timeout. It is idempotent.
func (m *Member) Close(ctx context.Context) error {
	var err error
	m.once.Do(func() {
		if m.cancel != nil {
			m.cancel()
			<-m.done
		}
		m.watchers.Wait()
		err = m.endGeneration(ctx, false, ErrMemberClosed)
		err = errors.Join(err, release(ctx, m.zk, m.cfg.Group, m.stale))
		if m.registered != 0 && m.registered == m.zk.ID() {
			path := zkutil.ConsumerIDPath(m.cfg.Group, m.cfg.ConsumerID)
			if derr := m.zk.Delete(ctx, path, -1); derr != nil && !errors.Is(derr, zkutil.ErrNoNode) {
				err = errors.Join(err, fmt.Errorf("rebalance: delete registration %s: %w", path, derr))
			}
		}
	})
	return err
}

func (m *Member) run(ctx context.Context, events <-chan zkutil.SessionEvent, unsubscribe func(), retry bool) {
	defer close(m.done)
	defer unsubscribe()
	var (
		grace   *time.Timer
		graceC  <-chan time.Time
		retryC  <-chan time.Time
		pending = retry
	)
	stopGrace := func() {
		if grace != nil {
			grace.Stop()
			grace, graceC = nil, nil
		}
	}
	defer stopGrace()
	for {
		if pending {
			pending = false
			// Drain first, then arm, then read: a change after the
			// watch is armed fires it again, so none is missed.
			m.drainTriggers()
			m.armWatches(ctx)
			if m.syncedRebalance(ctx) {
				retryC = nil
			} else {
				retryC = time.After(m.cfg.Backoff)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-m.trigger:
			pending = true
		case path := <-m.fired:
			delete(m.armed, path)
			pending = true
		case <-retryC:
			pending = true
		case <-graceC:
			grace, graceC = nil, nil
			m.log.Warn("ZooKeeper disconnected longer than the grace period: no longer delivering owned partitions", "grace", m.cfg.DisconnectGrace)
			if m.Generation() != nil {
				m.report(fmt.Errorf("%w: disconnected from ZooKeeper for more than %v; partitions fenced until the session is back", ErrOwnershipLost, m.cfg.DisconnectGrace))
			}
			m.report(m.endGeneration(ctx, true, ErrOwnershipLost))
		case ev, ok := <-events:
			if !ok {
				return
			}
			switch ev.State {
			case zkutil.StateDisconnected:
				if m.cfg.DisconnectGrace >= 0 && grace == nil {
					grace = time.NewTimer(m.cfg.DisconnectGrace)
					graceC = grace.C
				}
			case zkutil.StateConnected:
				stopGrace()
				if m.Generation() == nil {
					pending = true // fenced meanwhile: claim again
				}
			case zkutil.StateExpired:
				stopGrace()
				m.log.Warn("ZooKeeper session expired: re-registering and rebalancing", "session", fmt.Sprintf("0x%x", ev.SessionID))
				m.report(fmt.Errorf("%w: ZooKeeper session 0x%x expired; rejoining the group", ErrOwnershipLost, ev.SessionID))
				m.report(m.endGeneration(ctx, true, ErrOwnershipLost))
				m.registered = 0
				clear(m.armed)
				pending = true
			case zkutil.StateClosed:
				return
			}
		}
	}
}

// handOverTimeout bounds the end of a generation.
func (m *Member) handOverTimeout() time.Duration {
	if m.cfg.SessionTimeout > 0 {
		return m.cfg.SessionTimeout + m.cfg.Backoff
	}
	return 10*time.Second + m.cfg.Backoff
}

func (m *Member) drainTriggers() {
	for {
		select {
		case <-m.trigger:
		case p := <-m.fired:
			delete(m.armed, p)
		default:
			return
		}
	}
}

func (m *Member) report(err error) {
	if err != nil {
		m.cfg.OnError(err)
	}
}

// syncedRebalance runs up to MaxRetries rebalance attempts.
func (m *Member) syncedRebalance(ctx context.Context) bool {
	start := time.Now()
	var last error
	for attempt := 1; attempt <= m.cfg.MaxRetries; attempt++ {
		if ctx.Err() != nil {
			return false
		}
		err := m.rebalanceOnce(ctx)
		if err == nil {
			gen := m.Generation()
			m.log.Info("rebalance done", "generation", gen.ID, "partitions", len(gen.Owned), "attempts", attempt, "took", time.Since(start))
			return true
		}
		last = err
		m.log.Info("rebalance attempt failed", "attempt", attempt, "err", err)
		if attempt < m.cfg.MaxRetries {
			m.backoff(ctx, err)
		}
	}
	if ctx.Err() != nil {
		return false
	}
	err := fmt.Errorf("%w: %s after %d attempts: %w", ErrRebalanceFailed, m.cfg.ConsumerID, m.cfg.MaxRetries, last)
	m.log.Error("rebalance failed; retrying in the background", "err", err)
	m.report(err)
	return false
}

// backoff waits before the next attempt: until a conflicting owner node is
// deleted, or the backoff passes, whichever comes first.
func (m *Member) backoff(ctx context.Context, err error) {
	timer := time.NewTimer(m.cfg.Backoff)
	defer timer.Stop()
	var deleted <-chan zkutil.WatchEvent
	var conflict *ConflictError
	if errors.As(err, &conflict) {
		exists, _, ch, werr := m.zk.ExistsW(ctx, conflict.Path)
		if werr == nil && !exists {
			return
		}
		deleted = ch
	}
	select {
	case <-ctx.Done():
	case <-timer.C:
	case <-deleted:
	}
}

// rebalanceOnce is one attempt: end the current generation, read the group,
// assign, claim, start the next generation.
func (m *Member) rebalanceOnce(ctx context.Context) error {
	if err := m.register(ctx); err != nil {
		return err
	}
	if err := m.endGeneration(ctx, false, ErrGenerationEnded); err != nil {
		m.report(err)
	}
	if err := release(ctx, m.zk, m.cfg.Group, m.stale); err != nil {
		return err
	}
	clear(m.stale)

	view, err := readGroup(ctx, m.zk, m.cfg.Group, m.cfg.ConsumerID, m.cfg.Subscription, m.cfg.ExcludeInternalTopics)
	if err != nil {
		return err
	}
	for _, b := range view.broken {
		if !m.reported[b.Error()] {
			m.reported[b.Error()] = true
			m.log.Warn("ignoring unreadable group data", "err", b)
			m.report(b)
		}
	}
	m.watchTopics(ctx, view.ctx.MyTopicThreadIDs)
	assignment, err := m.cfg.Assignor.Assign(view.ctx)
	if err != nil {
		return err
	}
	mine := assignment[m.cfg.ConsumerID]
	if mine == nil {
		mine = map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	}
	session := m.zk.ID()
	if err := claim(ctx, m.zk, m.cfg.Group, mine); err != nil {
		return err
	}
	m.genCount++
	gctx, cancel := context.WithCancelCause(context.Background())
	gen := &Generation{ID: m.genCount, SessionID: session, Owned: mine, Assignment: assignment, ctx: gctx, cancel: cancel}
	if err := m.cfg.Handler.Assign(ctx, gen); err != nil {
		cancel(ErrGenerationEnded)
		_ = m.cfg.Handler.Revoke(ctx, gen, false)
		return errors.Join(fmt.Errorf("rebalance: start generation %d: %w", gen.ID, err), release(ctx, m.zk, m.cfg.Group, mine))
	}
	m.mu.Lock()
	m.gen = gen
	m.mu.Unlock()
	return nil
}

// endGeneration ends the current generation, if any. Orderly (lost=false):
// the handler commits, then the owner nodes are released by the caller.
// Lost: the handler drops everything; the owner nodes are remembered and
// released at the next attempt if the session still holds them.
func (m *Member) endGeneration(ctx context.Context, lost bool, cause error) error {
	m.mu.Lock()
	gen := m.gen
	m.gen = nil
	m.mu.Unlock()
	if gen == nil {
		return nil
	}
	gen.cancel(cause)
	// An orderly hand-over (commit, release) must finish even when the
	// member is being closed meanwhile: Close cancels the loop's context,
	// and a commit cut short there would make the next owner re-read
	// what was already consumed. It stays bounded.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.handOverTimeout())
	defer cancel()
	err := m.cfg.Handler.Revoke(ctx, gen, lost)
	if err != nil {
		err = fmt.Errorf("rebalance: revoke generation %d: %w", gen.ID, err)
	}
	for tp, th := range gen.Owned {
		m.stale[tp] = th
	}
	if !lost {
		if rerr := release(ctx, m.zk, m.cfg.Group, m.stale); rerr != nil {
			return errors.Join(err, rerr)
		}
		clear(m.stale)
	}
	return err
}
