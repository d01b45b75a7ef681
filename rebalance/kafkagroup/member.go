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
	gc "github.com/zkconsumer/zkconsumer/internal/coordinator"
	"github.com/zkconsumer/zkconsumer/rebalance"
)

// Member is one member of a group coordinated by Kafka's broker. Join
// gives the next generation; Commit and Fetch handle the group's offsets;
// Close leaves. Its methods are safe for concurrent use, but only one Join
// runs at a time.
type Member struct {
	cfg       Config
	log       *slog.Logger
	assignors map[string]rebalance.GroupAssignor
	explainer interface{ Explain(error) error } // Config.Secure's dialer; nil without one
	reports   reporter

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc

	joinMu    sync.Mutex // held by Join and by Close while leaving
	closeOnce sync.Once
	closed    chan struct{}

	loc     *gc.Locator // the coordinator's discovery, and the broker for Metadata
	clientT *abortdial.Dialer

	coordMu sync.Mutex // held while looking up the coordinator
	coord   *coordinator

	// cooperative: every assignor listed supports the cooperative
	// protocol (Generation.Cooperative).
	cooperative bool

	mu          sync.Mutex
	assignedGen int32       // the generation of the last assignment; -1 before it
	joinedGen   int32       // the generation of the last JoinGroup answered; -1 before it
	rejoining   *Generation // the generation Join is rejoining from, while it runs
	memberID    string
	holdUntil   time.Time // see Generation.HoldUntil
	gen         *Generation
	fatal       error
	bgCancel    context.CancelFunc // ends the current generation's goroutines
	bg          sync.WaitGroup
}

// New checks cfg and returns a member that does nothing until Join.
func New(cfg Config) (*Member, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	assignors := map[string]rebalance.GroupAssignor{}
	cooperative := true
	for _, name := range cfg.Assignors {
		cooperative = cooperative && rebalance.SupportsCooperative(name)
		a, err := rebalance.NewGroupAssignor(name)
		if err != nil {
			return nil, err
		}
		assignors[name] = a
	}
	ctx, cancel := context.WithCancel(context.Background())
	log := cfg.Logger.With("group", cfg.Group)
	if cfg.InstanceID != "" {
		log = log.With("instance", cfg.InstanceID)
	}
	m := &Member{cfg: cfg, log: log, assignors: assignors, cooperative: cooperative, assignedGen: -1, joinedGen: -1,
		ctx: ctx, cancel: cancel, closed: make(chan struct{}), clientT: newTracker(cfg, cfg.RequestTimeout)}
	sc := m.saramaConfig(m.clientT, cfg.RequestTimeout)
	if sc.Net.Proxy.Dialer != m.clientT {
		m.explainer, _ = sc.Net.Proxy.Dialer.(interface{ Explain(error) error })
	}
	m.loc = gc.NewBootstrapLocator(cfg.Group, cfg.Brokers, sc, m.explain)
	return m, nil
}

// MemberID returns the member id the coordinator assigned, "" before the
// first join and after the coordinator forgot the member.
func (m *Member) MemberID() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.memberID
}

// Generation returns the latest generation, nil before the first Join.
func (m *Member) Generation() *Generation {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.gen
}

// anyBroker returns a broker of the cluster for Metadata and
// FindCoordinator (gc.Locator.AnyBroker).
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

// brokerFailed closes b after a request to it failed and moves on to the
// next broker (gc.Locator.BrokerFailed), unless Close caused the failure.
func (m *Member) brokerFailed(b *sarama.Broker, err error) {
	if m.ctx.Err() != nil {
		return
	}
	m.log.Debug("request to a broker failed; trying the next one", "broker", b.ID(), "addr", b.Addr(), "err", err)
	m.loc.BrokerFailed(b)
}

// coordinator returns the connections to the group's coordinator, finding
// it first if it is unknown.
func (m *Member) coordinator() (*coordinator, error) {
	m.coordMu.Lock()
	defer m.coordMu.Unlock()
	if m.coord != nil {
		return m.coord, nil
	}
	found, err := m.findCoordinator()
	if err != nil {
		return nil, err
	}
	if m.ctx.Err() != nil {
		return nil, ErrMemberClosed
	}
	c, err := m.openCoordinator(found.ID(), found.Addr())
	if err != nil {
		err = m.explain(err)
		if dialFailed(err) {
			return nil, fmt.Errorf("kafkagroup: connect to the coordinator, broker %d at %s (the address it advertises: check its advertised.listeners if this lasts): %w",
				found.ID(), found.Addr(), err)
		}
		return nil, fmt.Errorf("kafkagroup: connect to the coordinator, broker %d at %s: %w", found.ID(), found.Addr(), err)
	}
	m.log.Debug("found coordinator", "broker", c.id, "addr", c.addr)
	m.coord = c
	return c, nil
}

// findCoordinator asks a broker of the cluster which one coordinates the
// group (gc.Locator.Find) and returns it, not connected. A broker that
// refuses for good is an ErrFatal error. The request is bounded by
// RequestTimeout, and by Close, which tears the bootstrap connections
// down.
func (m *Member) findCoordinator() (*sarama.Broker, error) {
	if m.ctx.Err() != nil {
		return nil, ErrMemberClosed
	}
	b, err := m.loc.Find()
	switch {
	case errors.Is(err, gc.ErrClosed):
		return nil, ErrMemberClosed
	case errors.Is(err, gc.ErrFindRefused):
		return nil, fmt.Errorf("%w: %w", ErrFatal, err)
	case err != nil:
		return nil, err
	}
	return b, nil
}

// recheckCoordinator looks the group's coordinator up again
// (FindCoordinator) and drops the connections to the current one if the
// answer names another broker, so that the next request goes to the new
// one. It keeps them when the answer names the same broker or no answer
// comes: dropping them would cut off a heartbeat or a JoinGroup in flight
// for nothing, and a coordinator that resigned answers the next request
// with NOT_COORDINATOR, which drops it then.
func (m *Member) recheckCoordinator() {
	m.coordMu.Lock()
	c := m.coord
	m.coordMu.Unlock()
	if c == nil {
		return // the next request looks it up
	}
	found, err := m.findCoordinator()
	switch {
	case err != nil:
		m.log.Debug("looking the coordinator up again failed; keeping it", "broker", c.id, "err", err)
	case found.ID() != c.id || found.Addr() != c.addr:
		m.dropCoordinator(c, fmt.Errorf("the coordinator is now broker %d at %s", found.ID(), found.Addr()))
	}
}

// dropCoordinator forgets c after a failure of its connections or a
// NOT_COORDINATOR answer; the next request looks the coordinator up again.
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

// Close leaves the group (a dynamic member sends LeaveGroup, so that the
// others get its partitions at once), ends the current generation with
// ErrMemberClosed and closes the connections. It waits for a running Join
// to return, which Close makes prompt, and for the member's goroutines: at
// most a heartbeat in flight (RequestTimeout) and the LeaveGroup (5 s).
// It is idempotent; later calls return nil.
func (m *Member) Close() error {
	var err error
	m.closeOnce.Do(func() {
		m.cancel()        // aborts a JoinGroup or SyncGroup in flight
		m.clientT.Abort() // and a Metadata or FindCoordinator request
		m.joinMu.Lock()
		defer m.joinMu.Unlock()
		m.stopBackground()
		err = m.leave()
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
		close(m.closed)
	})
	return err
}

// leave sends LeaveGroup for a dynamic member that holds a member id,
// waiting at most RequestTimeout (and 5 s).
func (m *Member) leave() error {
	m.mu.Lock()
	id := m.memberID
	m.memberID = ""
	m.mu.Unlock()
	if id == "" || m.cfg.InstanceID != "" {
		return nil
	}
	m.coordMu.Lock()
	c := m.coord
	m.coordMu.Unlock()
	if c == nil {
		return nil // whoever lost the coordinator will find the member gone
	}
	ctx, cancel := context.WithTimeout(context.Background(), min(m.cfg.RequestTimeout, 5*time.Second))
	defer cancel()
	req := &sarama.LeaveGroupRequest{Version: 0, GroupId: m.cfg.Group, MemberId: id}
	if c.version(gc.APILeaveGroup) >= 3 {
		req = &sarama.LeaveGroupRequest{Version: 3, GroupId: m.cfg.Group,
			Members: []sarama.MemberIdentity{{MemberId: id}}}
	}
	resp, err := withAbort(ctx, c.ctrlT, func() (*sarama.LeaveGroupResponse, error) { return c.ctrl.LeaveGroup(req) })
	if err == nil && resp.Err != sarama.ErrNoError {
		err = resp.Err
	}
	if err == nil {
		for _, mr := range resp.Members {
			if mr.Err != sarama.ErrNoError && mr.Err != sarama.ErrUnknownMemberId {
				err = mr.Err
			}
		}
	}
	if err != nil && !errors.Is(err, sarama.ErrUnknownMemberId) {
		m.log.Warn("leave group failed", "member", id, "err", err)
		return fmt.Errorf("kafkagroup: leave group %s: %w", m.cfg.Group, err)
	}
	m.log.Info("left group", "member", id)
	return nil
}

// Leave leaves the group without closing the member, as Java's consumer
// does when the application has not polled for max.poll.interval.ms: it
// stops the heartbeats, sends LeaveGroup (dynamic members only; a static
// member stays in the group until session.timeout.ms passes, as in Java),
// and ends the current generation with ErrMembershipLost, whose partitions
// the coordinator may now give to others. The next Join joins again as a
// new member. It fails with ErrJoinInProgress while Join runs.
func (m *Member) Leave() error {
	if m.ctx.Err() != nil {
		return ErrMemberClosed
	}
	if !m.joinMu.TryLock() {
		return ErrJoinInProgress
	}
	defer m.joinMu.Unlock()
	m.stopBackground()
	err := m.leave()
	m.mu.Lock()
	gen := m.gen
	m.mu.Unlock()
	if gen != nil {
		gen.end(fmt.Errorf("%w: left the group", ErrMembershipLost))
	}
	return err
}
