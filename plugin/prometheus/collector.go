package zkprom

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkconsumer/zkconsumer/connector"
)

// Errors of a Collector's life cycle.
var (
	// ErrAttached: the Collector already serves a connector; each
	// connector needs a Collector of its own.
	ErrAttached = errors.New("zkprom: collector already attached to a connector")
)

// Collector is a connector.Metrics that exports one connector's metrics
// to a Prometheus registry. Make it with New and put it in
// connector.Config.Metrics; it serves a single connector.
type Collector struct {
	reg    prometheus.Registerer
	labels prometheus.Labels

	mu       sync.Mutex
	attached bool
	ins      atomic.Pointer[instruments] // set by attach
}

var (
	_ connector.Metrics    = (*Collector)(nil)
	_ prometheus.Collector = (*Collector)(nil)
)

// Option configures a Collector.
type Option func(*Collector)

// WithConstLabels adds labels to every metric of the Collector, for
// example to tell apart two connectors of the same group and client.id in
// one process. They must not be group, client_id or a label of a metric,
// and every Collector of one registry must use the same label names
// (Prometheus requires consistent label names per metric name).
func WithConstLabels(labels prometheus.Labels) Option {
	return func(c *Collector) {
		for k, v := range labels {
			c.labels[k] = v
		}
	}
}

// New returns a Collector that registers with reg when the connector it
// is given to attaches it (in connector.New) and unregisters at Shutdown.
func New(reg prometheus.Registerer, opts ...Option) *Collector {
	c := &Collector{reg: reg, labels: prometheus.Labels{}}
	for _, opt := range opts {
		opt(c)
	}
	return c
}

// Attach registers the Collector for c. It implements connector.Metrics
// and is called by connector.New.
func (c *Collector) Attach(conn *connector.ConsumerConnector) error {
	return c.attach(conn.Stats)
}

func (c *Collector) attach(stats func() connector.Stats) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.attached {
		return ErrAttached
	}
	st := stats()
	labels := prometheus.Labels{}
	for k, v := range c.labels {
		labels[k] = v
	}
	labels["group"], labels["client_id"] = st.Group, st.ClientID
	ins := newInstruments(labels, stats)
	ins.initialize(st.OffsetStores)
	c.ins.Store(ins)
	if err := c.reg.Register(c); err != nil {
		c.ins.Store(nil)
		return err
	}
	c.attached = true
	return nil
}

// Detach unregisters the Collector, dropping every series of its
// connector. It implements connector.Metrics and is called by Shutdown.
func (c *Collector) Detach() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.attached {
		c.reg.Unregister(c)
	}
}

// Fetch records a fetch request. It implements connector.Metrics.
func (c *Collector) Fetch(e connector.FetchEvent) {
	ins := c.ins.Load()
	if ins == nil {
		return
	}
	broker := strconv.FormatInt(int64(e.Broker), 10)
	// A broker's error count exists from its first fetch on, at zero
	// until a fetch fails.
	errs := ins.fetchErrors.WithLabelValues(broker)
	if e.Err != nil {
		errs.Inc()
		return
	}
	ins.fetchDuration.WithLabelValues(broker).Observe(e.Duration.Seconds())
	ins.fetchSize.WithLabelValues(broker).Observe(float64(e.Bytes))
}

// Rebalance records a rebalance. It implements connector.Metrics.
func (c *Collector) Rebalance(e connector.RebalanceEvent) {
	ins := c.ins.Load()
	if ins == nil {
		return
	}
	ins.rebalances.WithLabelValues(string(e.Outcome)).Inc()
	ins.rebalanceDuration.Observe(e.Duration.Seconds())
}

// Commit records a commit to one offset store. It implements
// connector.Metrics.
func (c *Collector) Commit(e connector.CommitEvent) {
	ins := c.ins.Load()
	if ins == nil {
		return
	}
	outcome := outcomeSuccess
	if e.Err != nil {
		outcome = outcomeFailure
	} else {
		ins.committedOffsets.WithLabelValues(e.Store.String()).Add(float64(e.Partitions))
	}
	ins.commits.WithLabelValues(e.Store.String(), outcome).Inc()
	ins.commitDuration.WithLabelValues(e.Store.String()).Observe(e.Duration.Seconds())
}

// Describe sends the descriptors of every metric. It implements
// prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	if ins := c.ins.Load(); ins != nil {
		ins.describe(ch)
	}
}

// Collect reads the connector's Stats and sends every metric. It
// implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	if ins := c.ins.Load(); ins != nil {
		ins.collect(ch)
	}
}

// sessionStates are the values of the state label of
// zkconsumer_zookeeper_session_state.
var sessionStates = []connector.SessionState{connector.SessionConnected, connector.SessionDisconnected, connector.SessionExpired, connector.SessionClosed}
