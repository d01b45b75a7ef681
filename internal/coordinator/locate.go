package coordinator

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/grouperr"
)

// ErrClosed is returned by a closed Locator.
var ErrClosed = errors.New("coordinator client closed")

// ErrFindRefused is wrapped by the error of Locator.Find when the broker
// refuses to name the group's coordinator for good
// (GROUP_AUTHORIZATION_FAILED, INVALID_REQUEST, ...): retrying cannot
// mend it. Retriable answers (the coordinator is not available yet, is
// loading) and lost connections are not wrapped in it.
var ErrFindRefused = errors.New("FindCoordinator refused")

// Locator finds the coordinator of one group: it asks the brokers of the
// cluster (FindCoordinator), one at a time, the same one while it
// answers, the next known one (by id) after a request to it failed
// (BrokerFailed). The members also send their Metadata requests through
// AnyBroker. It is the one discovery rule of every client of the group
// coordinator. Its methods are safe for concurrent use.
//
// sarama's LeastLoadedBroker is not used: the bootstrap client loads no
// metadata of its own (Metadata.Full is off), so it always returned the
// same bootstrap address, and once that broker died a member never found
// a coordinator again.
type Locator struct {
	group     string
	what      string // names the brokers newClient connects to, for errors
	newClient func() (sarama.Client, error)
	explain   func(error) error

	mu     sync.Mutex
	client sarama.Client
	rotate int // which known broker AnyBroker returns
	closed bool
}

// NewLocator returns a Locator of group that reaches the cluster through
// the clients newClient connects (a client that loads no metadata of its
// own: Metadata.Full off), again after Close of one. what names the
// brokers it connects to in errors ("bootstrap.servers a:9092,b:9092").
// explain, if not nil, adds to the errors of connections the security
// setting to check (secure.Client.Explain).
func NewLocator(group, what string, newClient func() (sarama.Client, error), explain func(error) error) *Locator {
	if explain == nil {
		explain = func(err error) error { return err }
	}
	return &Locator{group: group, what: what, newClient: newClient, explain: explain}
}

// NewBootstrapLocator is NewLocator for a client of brokers
// (bootstrap.servers) with config, which it does not modify.
func NewBootstrapLocator(group string, brokers []string, config *sarama.Config, explain func(error) error) *Locator {
	brokers = slices.Clone(brokers)
	return NewLocator(group, "bootstrap.servers "+strings.Join(brokers, ","),
		func() (sarama.Client, error) { return sarama.NewClient(brokers, config) }, explain)
}

// bootstrap returns the bootstrap client, connecting it on first use.
func (l *Locator) bootstrap() (sarama.Client, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrClosed
	}
	if l.client != nil && !l.client.Closed() {
		return l.client, nil
	}
	c, err := l.newClient()
	if err != nil {
		return nil, l.bootstrapError(err)
	}
	l.client = c
	return c, nil
}

// bootstrapError is the error of a metadata request that no broker of the
// cluster answered, naming bootstrap.servers.
func (l *Locator) bootstrapError(err error) error {
	return fmt.Errorf("no broker of %s answered: %w", l.what, l.explain(err))
}

// AnyBroker returns a broker of the cluster for Metadata and
// FindCoordinator, connecting it if needed: the same one as long as
// requests to it succeed, the next known one (by id) after BrokerFailed.
func (l *Locator) AnyBroker() (*sarama.Broker, error) {
	c, err := l.bootstrap()
	if err != nil {
		return nil, err
	}
	brokers := c.Brokers()
	if len(brokers) == 0 {
		// The client knows only its bootstrap addresses, one of which it
		// would use for good: learn the cluster's brokers (sarama tries
		// each bootstrap address in turn).
		if err := c.RefreshMetadata(); err != nil {
			return nil, l.bootstrapError(err)
		}
		if brokers = c.Brokers(); len(brokers) == 0 {
			return nil, errors.New("no broker available")
		}
	}
	slices.SortFunc(brokers, func(a, b *sarama.Broker) int { return cmp.Compare(a.ID(), b.ID()) })
	l.mu.Lock()
	b := brokers[l.rotate%len(brokers)]
	l.mu.Unlock()
	_ = b.Open(c.Config()) // ErrAlreadyConnected when it is; a failed dial fails the request
	return b, nil
}

// BrokerFailed closes b after a request to it failed, so that it is
// dialled again when next used, and makes AnyBroker move on to the next
// broker.
func (l *Locator) BrokerFailed(b *sarama.Broker) {
	_ = b.Close()
	l.mu.Lock()
	l.rotate++
	l.mu.Unlock()
}

// Find asks a broker of the cluster which one coordinates the group
// (FindCoordinator v2, v1 or v0 as the client's settings allow: the
// version a client of Kafka 0.10.2 speaks, as the connector's Kafka
// offset store does, is 0) and returns it, not connected. A request that
// fails moves AnyBroker on to the next broker; a broker that refuses for
// good gives an error wrapping ErrFindRefused.
func (l *Locator) Find() (*sarama.Broker, error) {
	b, err := l.AnyBroker()
	if err != nil {
		return nil, err
	}
	resp, err := b.FindCoordinator(&sarama.FindCoordinatorRequest{Version: findCoordinatorVersion(l.Config()),
		CoordinatorKey: l.group, CoordinatorType: sarama.CoordinatorGroup})
	if err != nil {
		if !l.isClosed() {
			l.BrokerFailed(b)
		}
		return nil, fmt.Errorf("find the coordinator of group %s through %s: %w", l.group, BrokerName(b.ID(), b.Addr()), l.explain(err))
	}
	switch {
	case resp.Err == sarama.ErrNoError:
	case grouperr.Retriable(resp.Err):
		if resp.Err == sarama.ErrConsumerCoordinatorNotAvailable {
			return nil, fmt.Errorf("find the coordinator of group %s: %w (%s)", l.group, resp.Err,
				"the group's partition of __consumer_offsets has no leader: the topic is being created or moved, "+
					"or it cannot be created, as when the brokers' offsets.topic.replication.factor exceeds the number of live brokers")
		}
		return nil, fmt.Errorf("find the coordinator of group %s: %w", l.group, resp.Err)
	default: // GROUP_AUTHORIZATION_FAILED, INVALID_REQUEST, ...
		return nil, fmt.Errorf("%w: group %s: %w", ErrFindRefused, l.group, resp.Err)
	}
	return resp.Coordinator, nil
}

// Config is the connection settings of the current client, nil before
// the first connects: those to open connections to the coordinator with.
func (l *Locator) Config() *sarama.Config {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.client == nil {
		return nil
	}
	return l.client.Config()
}

// Disconnect closes the current client's connections; the next request
// connects a new client. Unlike Close, the Locator stays usable.
func (l *Locator) Disconnect() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.client != nil {
		_ = l.client.Close()
		l.client = nil
	}
}

// findCoordinatorVersion is the FindCoordinator version a broker
// connection with cfg may send: sarama refuses versions its Version does
// not reach, and every broker of that Version speaks them.
func findCoordinatorVersion(cfg *sarama.Config) int16 {
	switch {
	case cfg == nil:
		return 0
	case cfg.Version.IsAtLeast(sarama.V2_0_0_0):
		return 2
	case cfg.Version.IsAtLeast(sarama.V0_11_0_0):
		return 1
	}
	return 0
}

func (l *Locator) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// Close closes the bootstrap client's connections; later calls fail with
// ErrClosed. Idempotent.
func (l *Locator) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.client != nil {
		_ = l.client.Close()
		l.client = nil
	}
}
