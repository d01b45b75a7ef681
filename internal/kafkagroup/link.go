package kafkagroup

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/abortdial"
	gc "github.com/zkconsumer/zkconsumer/internal/coordinator"
	"github.com/zkconsumer/zkconsumer/internal/secure"
)

// errAborted is the error of dials after a tracker was aborted.
var errAborted = errors.New("connection aborted")

// newTracker returns the dialer of a set of connections that can be torn
// down at once (see abortdial): JoinGroup may wait minutes, and Close and
// a cancelled Join must end it early. It dials through the proxy dialer of
// cfg.Sarama when one is set (the connector's WithDialer).
func newTracker(cfg Config, dialTimeout time.Duration) *abortdial.Dialer {
	if cfg.Sarama != nil && cfg.Sarama.Net.Proxy.Enable && cfg.Sarama.Net.Proxy.Dialer != nil {
		return abortdial.Through(cfg.Sarama.Net.Proxy.Dialer, errAborted)
	}
	return abortdial.New(dialTimeout, 30*time.Second, errAborted)
}

// saramaConfig returns a copy of the base configuration that dials through
// t and waits readTimeout for responses.
func (m *Member) saramaConfig(t *abortdial.Dialer, readTimeout time.Duration) *sarama.Config {
	var c sarama.Config
	if m.cfg.Sarama != nil {
		c = *m.cfg.Sarama
	} else {
		c = *sarama.NewConfig()
		c.Version = sarama.V2_4_0_0
	}
	if m.cfg.Protocol == ProtocolConsumer {
		c.Version = sarama.V2_8_0_0 // Metadata v10: topic ids
	}
	c.ClientID = m.cfg.ClientID
	c.Net.ReadTimeout = readTimeout
	c.Net.WriteTimeout = m.cfg.RequestTimeout
	c.Net.Proxy.Enable = true
	c.Net.Proxy.Dialer = t
	c.Metadata.RefreshFrequency = 0
	c.Metadata.Full = false
	c.Metadata.AllowAutoTopicCreation = false
	c.Metadata.Retry.Max = 0
	if m.cfg.Secure != nil {
		m.cfg.Secure(&c)
	}
	return &c
}

// coordinator holds the connections to the group's coordinator: ctrl for
// OffsetFetch (and the classic protocol's OffsetCommit and LeaveGroup),
// and those of the protocol (classic or consumer, one of them set), among
// them a connection for heartbeats alone. A broker answers the requests
// of one connection in order, and a commit may wait seconds for the
// offsets topic's replicas (a follower that stopped, up to
// offsets.commit.timeout.ms): on a connection of their own, heartbeats
// never wait behind one, so the lease and the membership do not lapse
// while a commit is slow.
type coordinator struct {
	id    int32
	addr  string
	ctrl  *sarama.Broker
	ctrlT *abortdial.Dialer
	// dialTimeout bounds the dials of the protocol's connections.
	dialTimeout time.Duration
	// have is the versions of each API the broker speaks (ApiVersions on
	// ctrl), which each protocol negotiates its requests' from.
	have map[int16]gc.Range
	// fetchVersion is the OffsetFetch version negotiated.
	fetchVersion int16

	classic  *classicConns
	consumer *consumerConns
}

// close aborts every connection and closes the brokers.
func (c *coordinator) close() {
	c.ctrlT.Abort()
	if c.classic != nil {
		c.classic.close()
	}
	if c.consumer != nil {
		c.consumer.close()
	}
	_ = c.ctrl.Close()
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

// connectLocked finds the coordinator and connects to it; the caller
// holds coordMu and has checked that m.coord is nil. It works while Close
// leaves the group, until Close closes the locator.
func (m *Member) connectLocked(ctx context.Context) (*coordinator, error) {
	found, err := m.findCoordinator()
	if err != nil {
		return nil, err
	}
	c, err := m.openCoordinator(ctx, found.ID(), found.Addr())
	if err != nil {
		if errors.Is(err, ErrFatal) {
			return nil, err
		}
		err = m.explain(err)
		switch {
		case authFailed(err):
			return nil, fmt.Errorf("%w: connect to the coordinator, broker %d at %s: %w", ErrFatal, found.ID(), found.Addr(), err)
		case dialFailed(err):
			return nil, fmt.Errorf("connect to the coordinator, broker %d at %s (the address it advertises: check its advertised.listeners if this lasts): %w",
				found.ID(), found.Addr(), err)
		}
		return nil, fmt.Errorf("connect to the coordinator, broker %d at %s: %w", found.ID(), found.Addr(), err)
	}
	m.log.Debug("found coordinator", "broker", c.id, "addr", c.addr)
	m.coord = c
	return c, nil
}

// openCoordinator connects to the coordinator at addr: the control
// connection, then the protocol's, negotiating the versions of the
// requests the member sends; a broker that speaks none of the versions of
// one of them is an ErrFatal error naming it.
func (m *Member) openCoordinator(ctx context.Context, id int32, addr string) (*coordinator, error) {
	dial := m.cfg.RequestTimeout
	if m.cfg.Sarama != nil {
		dial = m.cfg.Sarama.Net.DialTimeout
	}
	c := &coordinator{id: id, addr: addr, ctrl: sarama.NewBroker(addr), ctrlT: newTracker(m.cfg, dial), dialTimeout: dial}
	if err := c.ctrl.Open(m.saramaConfig(c.ctrlT, m.cfg.RequestTimeout)); err != nil {
		return nil, err
	}
	var err error
	c.have, err = gc.ApiVersions(c.ctrl)
	if err == nil {
		var v gc.Versions
		v, err = c.negotiate(fetchNeed)
		c.fetchVersion, _ = v.Of(gc.APIOffsetFetch)
	}
	if err == nil {
		err = m.proto.connect(ctx, c)
	}
	if err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// negotiate picks the versions of needs that c speaks; none of a need
// is an ErrFatal error naming the broker and the request.
func (c *coordinator) negotiate(needs ...gc.Need) (gc.Versions, error) {
	v, err := gc.Negotiate(gc.BrokerName(c.id, c.addr), c.have, needs...)
	if err != nil {
		return v, fmt.Errorf("%w: %w", ErrFatal, err)
	}
	return v, nil
}

// fetchNeed is the OffsetFetch versions both protocols send (sarama's
// encoding, on the control connection).
var fetchNeed = gc.Need{API: gc.APIOffsetFetch, Range: gc.Range{Min: 5, Max: 5}}

// findCoordinator asks a broker of the cluster which one coordinates the
// group (gc.Locator.Find) and returns it, not connected. A broker that
// refuses for good is an ErrFatal error. The request is bounded by
// RequestTimeout, and by Close, which tears the bootstrap connections
// down.
func (m *Member) findCoordinator() (*sarama.Broker, error) {
	b, err := m.loc.Find()
	switch {
	case errors.Is(err, gc.ErrClosed):
		return nil, ErrMemberClosed
	case errors.Is(err, gc.ErrFindRefused), authFailed(err):
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
// comes: dropping them would cut off a heartbeat or a join in flight for
// nothing, and a coordinator that resigned answers the next request with
// NOT_COORDINATOR, which drops it then.
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

// connectionFailed drops c after a failed request, unless Close caused the
// failure (Close still needs c to leave the group).
func (m *Member) connectionFailed(c *coordinator, err error) {
	if m.ctx.Err() == nil {
		m.dropCoordinator(c, err)
	}
}

// withAbort runs op; if ctx ends first, the connections of t are torn down
// so that op returns promptly.
func withAbort[T any](ctx context.Context, t *abortdial.Dialer, op func() (T, error)) (T, error) {
	stop := context.AfterFunc(ctx, t.Abort)
	res, err := op()
	if !stop() && ctx.Err() != nil {
		var zero T
		return zero, context.Cause(ctx)
	}
	return res, err
}

// explain adds to err, an error of a connection of this member, the
// security setting to check when it can tell (secure.Client.Explain,
// reached through the dialer Config.Secure installs).
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

// dialFailed reports whether err is a failure to open a TCP connection
// (refused, unreachable, timed out), as opposed to one that was opened.
func dialFailed(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
