package zkgroup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/strategyname"
	"github.com/zkconsumer/zkconsumer/internal/zkassign"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// ErrRebalanceFailed is reported (MemberConfig.OnError) when a rebalance
// still fails after rebalance.max.retries attempts. Unlike Kafka's Scala
// consumer, the member does not stay idle afterwards: it tries again after
// the backoff and on every trigger until it succeeds.
var ErrRebalanceFailed = errors.New("can't rebalance")

// MemberConfig configures a Member.
type MemberConfig struct {
	// Group is group.id; ConsumerID the member id ("<group>_<host>-<ms>-<hex>").
	Group, ConsumerID string
	// Subscription is what this member consumes.
	Subscription Subscription
	// ExcludeInternalTopics is exclude.internal.topics (wildcards only).
	ExcludeInternalTopics bool
	// Assignor is partition.assignment.strategy.
	Assignor zkassign.Assignor
	// MaxRetries is rebalance.max.retries: attempts per rebalance before
	// ErrRebalanceFailed is reported.
	MaxRetries int
	// Backoff is rebalance.backoff.ms: the longest wait between attempts;
	// zero retries at once, as in Kafka. After a conflict the member waits
	// only until the conflicting owner node is deleted.
	Backoff time.Duration
	// SessionTimeout bounds how long registration waits for a leftover
	// registration node of the same consumer id to expire.
	SessionTimeout time.Duration
	// Handler is called around each generation.
	Handler Handler
	// Incremental hands partitions over one by one instead of ending the
	// generation on every rebalance (zkconsumer.rebalance.protocol=
	// cooperative): the member computes the new assignment while it keeps
	// delivering, gives up (commits and releases) only the partitions that
	// move away, waits only for the previous owners of those it gains, and
	// continues its generation with what it keeps. Handler must be an
	// IncrementalHandler. The owner nodes, the session they are bound to
	// and the assignment are those of the eager hand-over; only the order
	// of the steps differs, so members of either kind, and Kafka's Scala
	// members (eager), share a group.
	Incremental bool
	// Logger receives the member's logs; nil discards them.
	Logger *slog.Logger
	// OnError receives errors the application should know about:
	// ErrRebalanceFailed, unreadable registrations of other members, and
	// handler failures. It must not block. Nil ignores them.
	OnError func(error)
	// OnRebalance, if set, is told about every rebalance when it ends, for
	// metrics. It is called from the member's goroutine and must return
	// quickly. Nil ignores rebalances.
	OnRebalance func(RebalanceResult)
	// Now is the clock for registration timestamps; time.Now if nil.
	Now func() time.Time
}

// Member is one consumer of a group coordinated through ZooKeeper, as
// Kafka's ZookeeperConsumerConnector runs it: it registers under
// /consumers/<group>/ids, watches membership and the partition counts of
// its topics, and on every change ends its generation, computes the
// assignment, releases the partitions that move away and claims its new
// share under /consumers/<group>/owners (keeping the owner nodes of the
// partitions it keeps).
type Member struct {
	zk  ZooKeeper
	cfg MemberConfig
	log *slog.Logger

	trigger chan struct{}   // Rebalance requests, coalesced
	fired   chan firedWatch // watches that fired
	loopCtx context.Context
	cancel  context.CancelFunc // ends Start and the loop; set once by NewMember
	active  sync.WaitGroup     // Start and the loop
	done    chan struct{}      // closed when the loop has ended
	once    sync.Once

	mu      sync.Mutex
	gen     *Generation // guarded by mu for Generation(); written by the loop
	started bool
	closed  bool

	// Owned by the loop goroutine (or by Start/Close while it is not
	// running).
	genCount     int
	stale        map[zkutil.TopicPartition]zkutil.ConsumerThreadID // owner nodes to release
	registered   int64                                             // session the registration belongs to
	armed        map[string]bool
	armedIn      int64 // the session of the watches in armed
	watchedTopic map[string]bool
	reported     map[string]bool
	conflicts    map[string]conflictWatch // pending watches on owner nodes of others
	known        ownedNodes               // owner nodes held, released without a read
	regs         *registrationCache       // the group's registrations as last read
	unsure       bool                     // an owner node write of ours had an unknown outcome: sweep
	outIn        int64                    // the session in which the member stays out of its group (StrategyError)
	refusedMsg   string                   // the StrategyError last reported for this member
	joined       bool                     // join succeeded just before this rebalance: its first attempt skips it
	leftOut      map[string]string        // other members left out of the group, as reported
	sticky       stickyFollow             // what the member follows of the group's sticky assignment
	watchers     sync.WaitGroup
}

// NewMember checks cfg and returns a member that does nothing until Start.
func NewMember(zk ZooKeeper, cfg MemberConfig) (*Member, error) {
	var errs []error
	if cfg.Group == "" || cfg.ConsumerID == "" {
		errs = append(errs, errors.New("member needs a group and a consumer id"))
	}
	if err := cfg.Subscription.Validate(); err != nil {
		errs = append(errs, err)
	}
	if cfg.Assignor == nil || cfg.Handler == nil {
		errs = append(errs, errors.New("member needs an assignor and a handler"))
	}
	if _, ok := cfg.Handler.(IncrementalHandler); cfg.Incremental && cfg.Handler != nil && !ok {
		errs = append(errs, errors.New("an incremental member needs an IncrementalHandler"))
	}
	if cfg.MaxRetries < 1 {
		errs = append(errs, fmt.Errorf("rebalance.max.retries %d: need at least 1", cfg.MaxRetries))
	}
	if cfg.Backoff < 0 {
		errs = append(errs, fmt.Errorf("rebalance.backoff.ms %v: must not be negative", cfg.Backoff))
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
	loopCtx, cancel := context.WithCancel(context.Background())
	return &Member{
		zk: zk, cfg: cfg,
		log:     logger.With("group", cfg.Group, "consumer", cfg.ConsumerID),
		trigger: make(chan struct{}, 1),
		fired:   make(chan firedWatch, 16),
		loopCtx: loopCtx, cancel: cancel,
		done:  make(chan struct{}),
		stale: map[zkutil.TopicPartition]zkutil.ConsumerThreadID{},
		armed: map[string]bool{}, watchedTopic: map[string]bool{}, reported: map[string]bool{},
		conflicts: map[string]conflictWatch{},
		known:     ownedNodes{},
		regs:      newRegistrationCache(cfg.Group),
		sticky:    stickyFollow{version: -1},
	}, nil
}

// Start registers the member, runs the first rebalance on the caller's
// goroutine and then keeps the member in step with the group in the
// background until Close. It returns an error only if the member could not
// register, or was closed meanwhile (ErrMemberClosed); a first rebalance
// that fails is reported through OnError and retried in the background.
// Start may be called once.
func (m *Member) Start(ctx context.Context) error {
	m.mu.Lock()
	switch {
	case m.closed:
		m.mu.Unlock()
		return ErrMemberClosed
	case m.started:
		m.mu.Unlock()
		return errors.New("member already started")
	}
	m.started = true
	m.active.Add(1)
	m.mu.Unlock()
	defer m.active.Done()

	// Close ends Start too.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(m.loopCtx, cancel)
	defer stop()

	var refused *StrategyError
	err := m.join(ctx)
	if err != nil && !errors.As(err, &refused) {
		if m.loopCtx.Err() != nil {
			return ErrMemberClosed
		}
		return err
	}
	m.joined = err == nil
	events, unsubscribe := m.zk.Subscribe()
	m.armWatches(ctx)
	ok := m.syncedRebalance(ctx)
	if m.loopCtx.Err() != nil {
		unsubscribe()
		return ErrMemberClosed
	}
	m.active.Add(1)
	go func() {
		defer m.active.Done()
		m.run(m.loopCtx, events, unsubscribe, !ok)
	}()
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
// after the session timeout. Its ZooKeeper work is bounded by ctx and by
// the hand-over timeout (session timeout plus backoff), so it returns even
// when ZooKeeper is unreachable; the session's ephemeral nodes then go
// when the caller closes the session. It is idempotent.
//
// Close waits for the member's loop, which waits for every Handler call,
// so a Handler (or a rebalance listener it runs) must not call it the
// ordinary way. Given the context of a Handler call instead (the ctx that
// Revoke, Assign or Continue received, or one derived from it), Close
// stops the member and returns nil at once, from whichever goroutine it
// is called; the rest of the work happens in the background once the
// Handler has returned, and a Close called afterwards with another
// context waits until it is done.
func (m *Member) Close(ctx context.Context) error {
	if m.calledFromHandler(ctx) {
		m.cancel()
		go func() { _ = m.Close(context.Background()) }()
		return nil
	}
	var err error
	m.once.Do(func() {
		m.mu.Lock()
		m.closed = true
		m.mu.Unlock()
		m.cancel()
		m.active.Wait()
		m.watchers.Wait()
		ctx, cancel := context.WithTimeout(ctx, m.handOverTimeout())
		defer cancel()
		err = m.endGeneration(ctx, ErrMemberClosed, true)
		err = errors.Join(err, m.releaseStale(ctx))
		err = errors.Join(err, m.deregister(ctx))
	})
	return err
}

// deregister deletes the registration node if the current session holds
// it, also one whose create was still in flight when Start gave up.
func (m *Member) deregister(ctx context.Context) error {
	session := m.zk.ID()
	if session == 0 {
		return nil // no session: its ephemeral nodes are gone with it
	}
	in := m.zk.Bind(session)
	path := zkutil.ConsumerIDPath(m.cfg.Group, m.cfg.ConsumerID)
	ok, stat, err := in.Exists(ctx, path)
	if err == nil && ok && stat.EphemeralOwner == session {
		err = in.Delete(ctx, path, stat.Version)
	}
	if err != nil && !errors.Is(err, zksession.ErrNoNode) && !errors.Is(err, zksession.ErrSessionExpired) {
		return fmt.Errorf("delete registration %s: %w", path, err)
	}
	return nil
}

func (m *Member) run(ctx context.Context, events <-chan zksession.SessionEvent, unsubscribe func(), retry bool) {
	defer close(m.done)
	defer unsubscribe()
	var (
		retryC  <-chan time.Time
		pending = retry
	)
	for {
		if pending {
			pending = false
			// Drain first, then arm, then read: a change after the
			// watch is armed fires it again, so none is missed.
			// Registering (again, after an expiry) comes before arming,
			// so that our own node does not fire the membership watch.
			m.drainTriggers()
			err := m.join(ctx)
			m.joined = err == nil
			switch {
			case errors.Is(err, errNoSession):
				// Expired, and no new session yet: its StateConnected
				// brings the member back here.
			default:
				if err != nil {
					m.log.Info("registration failed; the rebalance tries again", "err", err)
				}
				m.armWatches(ctx)
				if m.syncedRebalance(ctx) {
					retryC = nil
				} else {
					retryC = time.After(m.cfg.Backoff)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-m.trigger:
			pending = true
		case w := <-m.fired:
			if w.session == m.armedIn {
				delete(m.armed, w.path)
				// A write of the group's sticky assignment matters only
				// if it is not the one the member follows.
				pending = pending || w.path != stickyPath(m.cfg.Group) || !m.armSticky(ctx)
			}
		case <-retryC:
			pending = true
		case ev, ok := <-events:
			if !ok {
				return
			}
			switch ev.State {
			case zksession.StateConnected:
				if m.Generation() == nil {
					pending = true // nothing owned: try again now
				}
			case zksession.StateExpired:
				if m.sessionExpired(ctx, ev.SessionID) {
					pending = true
				}
			case zksession.StateClosed:
				return
			}
		}
	}
}

// sessionExpired handles the expiry of session: the generation it held, if
// it is still current, is lost; the registration and watches went with it.
// Expiry is signalled both by the session event and by every watch it
// lost; only the event acts, and only on the generation of that session.
// It reports whether the member still belonged to that session: a member
// that has already registered in the next one (a lost watch made it
// rebalance before the event came) has nothing left to do.
func (m *Member) sessionExpired(ctx context.Context, session int64) bool {
	gen := m.Generation()
	ours := m.registered == session || m.registered == 0 || (gen != nil && gen.SessionID == session)
	if gen != nil && gen.SessionID == session {
		m.log.Warn("ZooKeeper session expired: partitions lost; re-registering and rebalancing", "session", fmt.Sprintf("0x%x", session))
		m.report(fmt.Errorf("%w: ZooKeeper session 0x%x expired; rejoining the group", ErrOwnershipLost, session))
		m.report(m.endGeneration(ctx, ErrOwnershipLost, true))
	}
	if !ours {
		return false
	}
	if m.registered == session {
		m.registered = 0
	}
	if m.outIn == session {
		m.outIn = 0
	}
	// Its owner nodes went with it: nothing of it is left to sweep.
	m.unsure = false
	// The watches of the expired session all report WatchLost; armed
	// watches belong to a session (watchSession), so they are ignored.
	clear(m.conflicts)
	for tp, n := range m.known {
		if n.session == session {
			delete(m.known, tp)
		}
	}
	return true
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
		case w := <-m.fired:
			if w.session == m.armedIn {
				delete(m.armed, w.path)
			}
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
	attempt := 1
	done := func(outcome RebalanceOutcome) {
		if on := m.cfg.OnRebalance; on != nil {
			on(RebalanceResult{Outcome: outcome, Attempts: min(attempt, m.cfg.MaxRetries), Duration: time.Since(start)})
		}
	}
	for ; attempt <= m.cfg.MaxRetries; attempt++ {
		if ctx.Err() != nil {
			done(RebalanceAborted)
			return false
		}
		err := m.rebalanceOnce(ctx)
		if err == nil {
			m.refusedMsg = ""
			gen := m.Generation()
			m.log.Info("rebalance done", "generation", gen.ID, "partitions", len(gen.Owned), "attempts", attempt, "took", time.Since(start))
			done(RebalanceSucceeded)
			return true
		}
		if errors.Is(err, errNoSession) {
			// The session expired and the next is not there yet; its
			// arrival (StateConnected) triggers the next attempt.
			m.log.Info("rebalance waits for a new ZooKeeper session")
			done(RebalanceAborted)
			return false
		}
		if refused := (*StrategyError)(nil); errors.As(err, &refused) {
			// Out of the group: retried when the membership changes (the
			// member watches it) and after the backoff, not at once.
			done(RebalanceFailed)
			if msg := refused.Error(); msg != m.refusedMsg {
				m.refusedMsg = msg
				m.log.Error("staying out of the group: it runs another partition.assignment.strategy", "err", refused)
				m.report(fmt.Errorf("%w: %s: %w", ErrRebalanceFailed, m.cfg.ConsumerID, refused))
			}
			return false
		}
		last = err
		m.log.Info("rebalance attempt failed", "attempt", attempt, "err", err)
		if attempt < m.cfg.MaxRetries {
			m.backoff(ctx, err)
		}
	}
	if ctx.Err() != nil {
		done(RebalanceAborted)
		return false
	}
	done(RebalanceFailed)
	err := fmt.Errorf("%w: %s after %d attempts: %w", ErrRebalanceFailed, m.cfg.ConsumerID, m.cfg.MaxRetries, last)
	m.log.Error("rebalance failed; retrying in the background", "err", err)
	m.report(err)
	return false
}

// backoff waits before the next attempt: until a conflicting owner node is
// deleted, or the backoff passes, whichever comes first. A conflict that
// awaitReleased has already waited a backoff for is retried at once.
func (m *Member) backoff(ctx context.Context, err error) {
	timer := time.NewTimer(m.cfg.Backoff)
	defer timer.Stop()
	var conflict *ConflictError
	if errors.As(err, &conflict) {
		if !conflict.waited {
			m.awaitDeleted(ctx, conflict.Path, timer.C)
		}
		return
	}
	select {
	case <-ctx.Done():
	case <-timer.C:
	}
}

// rebalanceOnce is one attempt: end the current generation (eager) or keep
// it (incremental), read the group, assign, hand over, claim, start or
// continue the generation.
func (m *Member) rebalanceOnce(ctx context.Context) error {
	// The loop (or Start) has just registered, or checked the
	// registration, in the current session: the first attempt does not
	// check it again. Later attempts do.
	if joined := m.joined && m.registered != 0 && m.registered == m.zk.ID(); !joined {
		if err := m.join(ctx); err != nil {
			m.joined = false
			return err
		}
	}
	m.joined = false
	// An attempt may have registered in a new session (the last one
	// expired during an earlier attempt): the watches of the old one are
	// gone, and those of the new one are set before the group is read, so
	// that no change after the read goes unnoticed. Already armed in this
	// session, nothing is done.
	m.armWatches(ctx)
	// The owner nodes stay until the new assignment is known: those of
	// partitions this member keeps are not deleted and created again.
	cur := m.continuable(ctx)

	view, assignment, err := m.readAndAssign(ctx)
	if err != nil {
		var refused *StrategyError
		if errors.As(err, &refused) {
			return errors.Join(err, m.stepOut(ctx))
		}
		// Hold nothing of ended generations while waiting for the next
		// attempt; a continued generation keeps delivering meanwhile.
		return errors.Join(err, m.releaseStale(ctx))
	}
	mine := assignment[m.cfg.ConsumerID]
	if mine == nil {
		mine = map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	}
	in := m.zk.Bind(m.registered)
	if cur != nil {
		return m.handOver(ctx, cur, in, view, assignment, mine)
	}
	// Release what moves away; keep (claim checks them) the owner nodes
	// of partitions assigned to the same thread again. They stay stale
	// until the claim succeeds, so a failed attempt releases them later.
	held := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	for tp, th := range m.stale {
		if mine[tp] == th {
			held[tp] = th
			delete(m.stale, tp)
		}
	}
	if err := m.releaseStale(ctx); err != nil {
		maps.Copy(m.stale, held)
		return err
	}
	if err := m.awaitReleased(ctx, in.ID(), mine, held); err != nil {
		// Hold nothing while waiting for the next attempt.
		maps.Copy(m.stale, held)
		return errors.Join(err, m.releaseStale(ctx))
	}
	if left, err := claim(ctx, in, m.cfg.Group, mine, held, m.known, m.handOverTimeout()); err != nil {
		maps.Copy(m.stale, held)
		if len(left) > 0 {
			maps.Copy(m.stale, left)
			m.unsure = true
		}
		return err
	}
	if m.unsure {
		m.sweepOwners(ctx, in, view, mine)
	}
	m.genCount++
	gctx, cancel := context.WithCancelCause(context.Background())
	gen := &Generation{ID: m.genCount, SessionID: in.ID(), Owned: mine, Assignment: assignment, ctx: gctx, cancel: cancel}
	err = m.cfg.Handler.Assign(m.handlerContext(ctx), gen)
	if err != nil {
		cancel(ErrGenerationEnded)
		_ = m.cfg.Handler.Revoke(m.handlerContext(ctx), gen, false)
		left, rerr := release(ctx, in, m.cfg.Group, mine, m.known)
		if len(left) > 0 {
			maps.Copy(m.stale, left)
			m.unsure = true
		}
		return errors.Join(fmt.Errorf("start generation %d: %w", gen.ID, err), rerr)
	}
	m.setGeneration(gen)
	return nil
}

// continuable returns the current generation if the rebalance about to
// run may continue it: the member is incremental, and the generation
// belongs to the session the member is registered in. Otherwise it ends
// the generation (eager: in an orderly way, keeping its owner nodes for
// the claim; a generation of an earlier session: as lost) and returns nil.
func (m *Member) continuable(ctx context.Context) *Generation {
	gen := m.Generation()
	if m.cfg.Incremental && gen != nil && gen.SessionID == m.registered {
		return gen
	}
	if err := m.endGeneration(ctx, ErrGenerationEnded, false); err != nil {
		m.report(err)
	}
	return nil
}

// handOver is the incremental end of a rebalance attempt, once the new
// assignment is known: cur, the current generation, gives up the
// partitions that move away (the handler commits them, then their owner
// nodes are released), the member waits for the previous owners of the
// partitions it gains and claims them, and the generation continues with
// both, the kept ones flowing all along. A failure after the partitions
// that moved away were given up leaves the member delivering the kept
// ones; the gained ones are claimed again by the next attempt.
func (m *Member) handOver(ctx context.Context, cur *Generation, in Bound, view zkassign.AssignmentContext, assignment zkassign.Assignment, mine map[zkutil.TopicPartition]zkutil.ConsumerThreadID) error {
	h := m.cfg.Handler.(IncrementalHandler)
	kept := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	moved := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	for tp, th := range cur.Owned {
		if mine[tp] == th {
			kept[tp] = th
		} else {
			moved[tp] = th // to another member, or to another thread of ours
		}
	}
	gained := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	for tp, th := range mine {
		if _, ok := kept[tp]; !ok {
			gained[tp] = th
		}
	}
	if len(moved) > 0 {
		// The hand-over of what moves away is orderly only while the
		// session that owns it is confirmed alive; otherwise it is lost,
		// and with it everything the generation holds.
		if err := m.awaitLease(ctx, cur); err != nil {
			m.report(m.endGeneration(ctx, ErrGenerationEnded, false))
			return err
		}
		shrunk := m.nextGeneration(cur, kept, cur.Assignment)
		m.setGeneration(shrunk)
		// As in endGeneration, the orderly part (the commit) finishes even
		// if the member is being closed meanwhile; it stays bounded.
		hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.handOverTimeout())
		err := h.Continue(m.handlerContext(hctx), cur, shrunk)
		cancel()
		if err != nil {
			m.report(fmt.Errorf("give up %d partitions of generation %d: %w", len(moved), cur.ID, err))
		}
		cur = shrunk
		maps.Copy(m.stale, moved)
	}
	// The owner nodes of what moved away, now or in an attempt whose
	// release failed, go before anything is claimed.
	if err := m.releaseStale(ctx); err != nil {
		return err
	}
	if len(gained) > 0 {
		if err := m.awaitReleased(ctx, in.ID(), gained, nil); err != nil {
			return err
		}
		if left, err := claim(ctx, in, m.cfg.Group, gained, nil, m.known, m.handOverTimeout()); err != nil {
			if len(left) > 0 {
				maps.Copy(m.stale, left)
				m.unsure = true
			}
			return err
		}
	}
	if m.unsure {
		m.sweepOwners(ctx, in, view, mine)
	}
	if len(gained) == 0 {
		return nil
	}
	next := m.nextGeneration(cur, mine, assignment)
	m.setGeneration(next)
	if err := h.Continue(m.handlerContext(ctx), cur, next); err != nil {
		m.setGeneration(cur)
		left, rerr := release(ctx, in, m.cfg.Group, gained, m.known)
		if len(left) > 0 {
			maps.Copy(m.stale, left)
			m.unsure = true
		}
		return errors.Join(fmt.Errorf("start %d partitions in generation %d: %w", len(gained), next.ID, err), rerr)
	}
	return nil
}

// awaitLease waits, within the hand-over timeout, until the lease of gen's
// session is confirmed: the partitions gen gives up may be committed and
// released in an orderly way only then.
func (m *Member) awaitLease(ctx context.Context, gen *Generation) error {
	ctx, cancel := context.WithTimeout(ctx, m.handOverTimeout())
	defer cancel()
	if err := m.zk.Bind(gen.SessionID).AwaitLease(ctx); err != nil {
		return fmt.Errorf("generation %d's ZooKeeper session 0x%x: %w", gen.ID, gen.SessionID, err)
	}
	return nil
}

// nextGeneration returns the generation that continues cur with owned and
// assignment: the same session and context, the next number.
func (m *Member) nextGeneration(cur *Generation, owned map[zkutil.TopicPartition]zkutil.ConsumerThreadID, assignment zkassign.Assignment) *Generation {
	m.genCount++
	return &Generation{ID: m.genCount, SessionID: cur.SessionID, Owned: owned, Assignment: assignment, ctx: cur.ctx, cancel: cur.cancel}
}

// setGeneration makes gen the current generation.
func (m *Member) setGeneration(gen *Generation) {
	m.mu.Lock()
	m.gen = gen
	m.mu.Unlock()
}

// ErrTopicMissing is reported (MemberConfig.OnError) when a topic of a
// static subscription does not exist, or no longer does: the member
// consumes nothing of it until it is created again.
var ErrTopicMissing = errors.New("subscribed topic does not exist")

// reportMissingTopics reports each static topic that is missing, once per
// disappearance.
func (m *Member) reportMissingTopics(ctx zkassign.AssignmentContext) {
	for t := range m.cfg.Subscription.Topics {
		key := "missing topic " + t
		if _, ok := ctx.PartitionsForTopic[t]; ok {
			delete(m.reported, key)
			continue
		}
		if !m.reported[key] {
			m.reported[key] = true
			m.log.Warn("subscribed topic does not exist; waiting for it", "topic", t)
			m.report(fmt.Errorf("%w: %s (group %s)", ErrTopicMissing, t, m.cfg.Group))
		}
	}
}

// topicsToWatch returns the topics whose partition count this member
// watches: its own, and under roundrobin and sticky every topic of the
// group, since there a change to any topic moves partitions of all of them.
func (m *Member) topicsToWatch(ctx zkassign.AssignmentContext) map[string][]zkutil.ConsumerThreadID {
	if name := m.cfg.Assignor.Name(); name == strategyname.RoundRobin || name == strategyname.Sticky {
		return ctx.ConsumersForTopic
	}
	return ctx.MyTopicThreadIDs
}

// handlerKey is the key of the value that marks the contexts of a
// member's Handler calls: the *Member making the call.
type handlerKey struct{}

// handlerContext returns ctx marked as the context of a Handler call of m,
// so that Close given it (or a context derived from it) knows not to wait
// for that call.
func (m *Member) handlerContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, handlerKey{}, m)
}

// calledFromHandler reports whether ctx is, or derives from, the context of
// a Handler call of m.
func (m *Member) calledFromHandler(ctx context.Context) bool {
	caller, _ := ctx.Value(handlerKey{}).(*Member)
	return caller == m
}

// endGeneration ends the current generation, if any. When the session that
// claimed it is still alive (its lease holds, or comes back within the
// hand-over timeout) the end is orderly: the handler commits and the owner
// nodes are released. Otherwise ownership is lost: other members may own
// the partitions already, so the handler drops everything and commits
// nothing; the owner nodes, if they still exist, are released later.
// Without release, an orderly end leaves the owner nodes to the next
// attempt too, which keeps those of the partitions it is assigned again.
func (m *Member) endGeneration(ctx context.Context, cause error, release bool) error {
	m.mu.Lock()
	gen := m.gen
	m.gen = nil
	m.mu.Unlock()
	if gen == nil {
		return nil
	}
	// An orderly hand-over (commit, release) must finish even when the
	// member is being closed meanwhile: Close cancels the loop's context,
	// and a commit cut short there would make the next owner re-read
	// what was already consumed. It stays bounded.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.handOverTimeout())
	defer cancel()
	lost := errors.Is(cause, ErrOwnershipLost)
	if !lost {
		if lerr := m.zk.Bind(gen.SessionID).AwaitLease(ctx); lerr != nil {
			// Found out here rather than from the expiry event (a lost
			// watch made the member rebalance first): report it the same.
			lost, cause = true, ErrOwnershipLost
			m.log.Warn("ZooKeeper session of the generation is gone or unconfirmed: partitions lost", "session", fmt.Sprintf("0x%x", gen.SessionID), "err", lerr)
			m.report(fmt.Errorf("%w: generation %d's ZooKeeper session 0x%x: %w", ErrOwnershipLost, gen.ID, gen.SessionID, lerr))
		}
	}
	gen.cancel(cause)
	err := m.cfg.Handler.Revoke(m.handlerContext(ctx), gen, lost)
	if err != nil {
		err = fmt.Errorf("revoke generation %d: %w", gen.ID, err)
	}
	for tp, th := range gen.Owned {
		m.stale[tp] = th
	}
	if !lost && release {
		if rerr := m.releaseStale(ctx); rerr != nil {
			return errors.Join(err, rerr)
		}
	}
	return err
}

// releaseStale deletes the owner nodes of earlier generations that the
// current session still holds. Those it could not delete stay in m.stale
// for the next try.
func (m *Member) releaseStale(ctx context.Context) error {
	if len(m.stale) == 0 {
		return nil
	}
	left, err := release(ctx, m.zk.Bind(m.zk.ID()), m.cfg.Group, m.stale, m.known)
	clear(m.stale)
	if len(left) > 0 {
		maps.Copy(m.stale, left)
		m.unsure = true
	}
	return err
}
