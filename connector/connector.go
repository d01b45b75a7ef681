package connector

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/abortdial"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/coordinator"
	"github.com/zkconsumer/zkconsumer/internal/fetch"
	"github.com/zkconsumer/zkconsumer/internal/secure"
	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/zkgroup"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// ConsumerConnector is one member of a consumer group coordinated through
// ZooKeeper: Kafka's ZookeeperConsumerConnector. With
// zkconsumer.group.coordination=kafka the same API is served by Kafka's
// group coordinator instead (see Config.GroupCoordination). Create it with New, call
// CreateMessageStreams (or CreateMessageStreamsByFilter) once, read the
// streams from your own goroutines, and call Shutdown at the end.
type ConsumerConnector struct {
	cfg      Config
	id       string
	log      *slog.Logger // baseLog with the group and consumer id
	baseLog  *slog.Logger
	session  *zksession.Session // nil in Kafka mode
	kafka    *kafkaGroup        // nil in ZooKeeper mode
	offsets  offsetStore
	fetcher  *fetch.ConsumerFetcherManager
	errs     chan error
	closing  chan struct{}
	listener RebalanceListener
	dialer   Dialer // WithDialer, nil for direct connections

	mu       sync.Mutex
	created  bool
	shutdown bool
	member   *zkgroup.Member
	streams  map[streamKey]*streamcore.Control // the streams handed out, by the owner's handle
	wildcard bool
	infos    map[zkutil.TopicPartition]*streamcore.PartitionTopicInfo
	gen      *generation
	// releasing is the generation being revoked in an orderly way; its
	// offsets may still be committed (by the listener, say) until release.
	releasing *generation

	// carried is consumption progress of ended generations (carry.go),
	// guarded by mu.
	carried map[zkutil.TopicPartition]carriedOffset
	// ownErr is why the member owns nothing until its next generation
	// (assignment.go), nil if nothing went wrong; paused holds the
	// partitions paused by the application (pause.go). Guarded by mu.
	ownErr error
	paused map[zkutil.TopicPartition]bool

	commitMu   sync.Mutex
	checkpoint map[zkutil.TopicPartition]int64 // guarded by commitMu
	// committable holds the partitions whose offsets this member may
	// commit: those of its current generation, until their revoke is done
	// (commitChanged). Guarded by commitMu.
	committable map[zkutil.TopicPartition]bool

	autoCommit sync.WaitGroup
	stopOnce   sync.Once
	stopErr    error

	// metrics is Config.Metrics, nil when off; counters holds its
	// per-topic stream counters (guarded by mu) and fetchRates the fetch
	// request rates.
	metrics    Metrics
	counters   map[string]*streamcore.Counters
	fetchRates fetchRates
	// lag keeps what the fetch responses do not say about lag (lag.go).
	lag *lagTracker
}

// streamKey names a stream: the topic ("" for wildcard streams, which serve
// every matching topic) and the thread number.
type streamKey struct {
	topic  string
	thread int
}

// Option adjusts a connector beyond its Kafka configuration.
type Option func(*options)

type options struct {
	dialer   Dialer
	listener RebalanceListener
	// lagRefresh is WithLagRefresh's interval, if set.
	lagRefresh    time.Duration
	lagRefreshSet bool
}

// WithRebalanceListener installs a listener that is told before ownership
// of partitions moves (Kafka's setConsumerRebalanceListener).
func WithRebalanceListener(l RebalanceListener) Option { return func(o *options) { o.listener = l } }

// New validates cfg, connects to ZooKeeper (bounded by
// zookeeper.connection.timeout.ms and by ctx: when ctx ends first the error
// wraps ctx.Err()) and returns a connector that has not joined its group
// yet: that happens in CreateMessageStreams. In Kafka mode it connects to
// nothing yet. ctx bounds New only: the connector lives until Shutdown.
// The keys of the other mode are logged as warnings (Config.ModeWarnings)
// on Config.Logger.
func New(ctx context.Context, cfg Config, opts ...Option) (*ConsumerConnector, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	sec, err := cfg.securityClient()
	if err != nil {
		return nil, err
	}
	zkDial, zkAuth, zkACL, err := cfg.zooKeeperSecurity(zooKeeperDialer(o.dialer))
	if err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	hostname, err := os.Hostname()
	if err != nil || hostname == "" {
		hostname = "localhost"
	}
	id, err := zkutil.NewConsumerID(cfg.GroupID, cfg.ConsumerID, hostname, time.Now(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("connector: %w", err)
	}
	c := &ConsumerConnector{
		cfg: cfg, id: id,
		baseLog:     logger,
		log:         logger.With("group", cfg.GroupID, "consumer", id),
		errs:        make(chan error, 256),
		closing:     make(chan struct{}),
		listener:    o.listener,
		dialer:      o.dialer,
		streams:     map[streamKey]*streamcore.Control{},
		checkpoint:  map[zkutil.TopicPartition]int64{},
		committable: map[zkutil.TopicPartition]bool{},
		carried:     map[zkutil.TopicPartition]carriedOffset{},
		paused:      map[zkutil.TopicPartition]bool{},
		metrics:     cfg.Metrics,
		counters:    map[string]*streamcore.Counters{},
	}
	for _, w := range cfg.ModeWarnings() {
		c.log.Warn(w)
	}
	var brokers fetch.BrokerSource
	if cfg.kafkaMode() {
		kb := newKafkaBrokers(cfg, sec, o.dialer)
		c.kafka = newKafkaGroup(c, kb, sec)
		brokers = kb
	} else {
		// Dial itself gives up after ZooKeeperConnectionTimeout, with an
		// error that wraps zksession.ErrConnectionTimeout.
		c.session, err = zksession.Dial(ctx, zksession.SessionConfig{
			Connect:           cfg.ZooKeeperConnect,
			SessionTimeout:    cfg.ZooKeeperSessionTimeout,
			ConnectionTimeout: cfg.ZooKeeperConnectionTimeout,
			Dialer:            zkDial,
			Auth:              zkAuth,
			ACL:               zkACL,
			OpenACLPaths:      []string{zkutil.ConsumersPath},
			Logger:            c.log,
		})
		if err != nil {
			return nil, fmt.Errorf("connector: %w", err)
		}
		zb := &zkBrokers{zk: c.session, report: c.report, sec: sec}
		c.offsets = c.newOffsetStore(zb, sec)
		brokers = zb
	}
	var onFetch func(fetch.FetchEvent)
	if c.metrics != nil {
		onFetch = c.onFetch
	}
	c.fetcher, err = fetch.NewConsumerFetcherManager(fetch.Config{
		ClientID:                 cfg.ClientID,
		FetchMinBytes:            int32(cfg.FetchMinBytes), // at most MaxInt32: Validate
		FetchWaitMax:             cfg.FetchWaitMax,
		SocketTimeout:            cfg.SocketTimeout,
		SocketReceiveBufferBytes: cfg.SocketReceiveBufferBytes,
		RefreshLeaderBackoff:     cfg.RefreshLeaderBackoff,
		NumFetchers:              cfg.NumConsumerFetchers,
		AutoOffsetReset:          cfg.AutoOffsetReset.String(),
		IsolationLevel:           cfg.IsolationLevel.String(),
		CheckCRCs:                cfg.CheckCRCs,
		RecycleMessages:          cfg.RecycleMessages,
		Logger:                   c.log,
		OnError:                  c.report,
		OnFetch:                  onFetch,
		Sarama:                   brokerSaramaConfig(sec, cfg.SocketTimeout, o.dialer),
	}, brokers)
	if err != nil {
		_ = c.closeCoordination()
		return nil, fmt.Errorf("connector: %w", err)
	}
	// Made before Attach, which may have Stats called at once (a scrape);
	// started once New cannot fail any more.
	lagRefresh := DefaultLagRefresh
	if o.lagRefreshSet {
		lagRefresh = o.lagRefresh
	}
	c.lag = newLagTracker(lagRefresh, cfg.SocketTimeout, fetch.NewLogEnds(c.fetcher), c.ownedInfos, c.log)
	if c.metrics != nil {
		if err := c.metrics.Attach(c); err != nil {
			_ = c.fetcher.Close()
			_ = c.closeCoordination()
			return nil, fmt.Errorf("connector: metrics: %w", err)
		}
	}
	c.lag.start()
	if c.kafka != nil {
		c.log.Info("using Kafka's group coordinator", "bootstrap.servers", cfg.BootstrapServers)
		return c, nil
	}
	c.log.Info("connected to ZooKeeper", "zookeeper", cfg.ZooKeeperConnect)
	return c, nil
}

func (c *ConsumerConnector) newOffsetStore(brokers *zkBrokers, sec *secure.Client) offsetStore {
	zkStore := c.metered(&zkOffsetStore{zk: c.session, group: c.cfg.GroupID}, OffsetsStorageZooKeeper)
	if c.cfg.OffsetsStorage != OffsetsStorageKafka {
		return zkStore
	}
	// Like the Scala consumer, commit without group membership: generation
	// -1 and no member id, which brokers accept for groups that have no
	// Kafka-coordinated members.
	// Its connections can be reset: a fenced commit cut off when the
	// lease lapses must not be delivered later (kafkaCommitStore).
	var resetter atomic.Pointer[abortdial.Dialer]
	kafka := c.metered(kafkaCommitStore{coordinator.New(c.cfg.GroupID,
		func() (sarama.Client, error) {
			ctx, cancel := context.WithTimeout(context.Background(), c.cfg.OffsetsChannelSocketTimeout)
			defer cancel()
			list, err := brokers.Brokers(ctx)
			if err != nil {
				return nil, err
			}
			if len(list) == 0 {
				return nil, errors.New("no broker registered in ZooKeeper")
			}
			addrs := make([]string, len(list))
			for i, b := range list {
				addrs[i] = b.Addr
			}
			sc := sarama.NewConfig()
			sc.ClientID = c.cfg.ClientID
			sc.Version = sarama.V0_10_2_0
			sc.Net.DialTimeout = c.cfg.OffsetsChannelSocketTimeout
			sc.Net.ReadTimeout = c.cfg.OffsetsChannelSocketTimeout
			sc.Net.WriteTimeout = c.cfg.OffsetsChannelSocketTimeout
			sc.Metadata.Full = false
			useDialer(sc, c.dialer)
			resetter.Store(resettable(sc))
			sec.Apply(sc)
			cl, err := sarama.NewClient(addrs, sc)
			return cl, sec.Explain(err)
		},
		c.cfg.OffsetsCommitMaxRetries, c.cfg.OffsetsChannelBackoff,
		coordinator.WithReset(func() {
			if d := resetter.Load(); d != nil {
				d.Reset()
			}
		}))}, OffsetsStorageKafka)
	if c.cfg.DualCommitEnabled.on(c.cfg.OffsetsStorage) {
		return &dualOffsetStore{kafka: kafka, zk: zkStore}
	}
	return kafka
}

// ConsumerID is this member's id in the group, as registered under
// /consumers/<group>/ids. In Kafka mode the coordinator gives the member
// an id of its own ("<client.id>-<uuid>"), which the logs show.
func (c *ConsumerConnector) ConsumerID() string { return c.id }

// Errors delivers errors the application should know about. Match them
// with errors.Is and errors.As against the names this package exports
// (each the same value as the package that defines it):
//   - ErrRebalanceFailed: a rebalance failed rebalance.max.retries times;
//     the member owns nothing until a later attempt succeeds;
//   - ErrOwnershipLost: the ZooKeeper session that held the partitions
//     expired; the member rejoins;
//   - ErrTopicMissing: a subscribed topic does not exist;
//   - ErrOffsetUnreadable, inside a *PartitionError: a committed offset
//     that cannot be read, which holds its partition;
//   - ErrNoLeader, inside a *PartitionError: a partition without a leader
//     (a deleted or unauthorised topic);
//   - *DecodeError: unreadable data in ZooKeeper (other members'
//     registrations);
//   - failed automatic commits (wrapping ErrAutoCommit and the cause),
//     and brokers that cannot be reached.
//
// Errors that stop a partition (ErrMessageTooLarge for a message larger
// than fetch.message.max.bytes, ErrCorruptMessage, an unreadable offset)
// come through the stream that owns the partition as well.
//
// In Kafka mode (zkconsumer.group.coordination=kafka) they include
// failures the member retries, once they have lasted a few seconds and at
// most every 30 seconds for each kind, with their cause: joins (an
// unreachable bootstrap.servers or coordinator, naming the address; a
// coordinator that cannot be found, COORDINATOR_NOT_AVAILABLE),
// heartbeats, metadata checks; subscribed topics the brokers refuse to
// describe (wrapping ErrTopicAuthorizationFailed, naming them); a lost
// membership (ErrOwnershipLost wrapping ErrMembershipLost: removed after
// session.timeout.ms, or the generation is unknown to the coordinator;
// nothing was committed and the member rejoins); a fatal group error
// (wrapping ErrGroupFatal: a connection the brokers refused to
// authenticate or whose TLS handshake failed, also wrapping
// ErrAuthentication and naming the setting to fix; another member with
// the same group.instance.id, a group authorization failure, an
// inconsistent group protocol; the member stops consuming and the
// application should shut it down); commits the coordinator refused
// (wrapping ErrCommitFenced) and ErrMaxPollIntervalExceeded.
//
// Assignment reports, at any time, whether the member owns its partitions
// and if not which of these is why.
//
// The channel is buffered; when the application does not read it, the
// oldest errors are dropped. It is closed by Shutdown. Each error sent on
// it is logged at DEBUG only, so that an application that prints what it
// reads from Errors does not see it twice; an error dropped unread, or
// one that comes after Shutdown closed the channel, is logged at WARN, so
// that none goes unseen.
func (c *ConsumerConnector) Errors() <-chan error { return c.errs }

// report sends err on Errors (see there for what is logged). The log
// records are written after c.mu is released.
func (c *ConsumerConnector) report(err error) {
	if err == nil {
		return
	}
	c.mu.Lock()
	if c.shutdown {
		c.mu.Unlock()
		c.log.Warn("consumer error after shutdown", "err", err)
		return
	}
	c.noteOwnership(err)
	var dropped []error
	for sent := false; !sent; {
		select {
		case c.errs <- err:
			sent = true
			continue
		default:
		}
		select {
		case old := <-c.errs: // drop the oldest
			dropped = append(dropped, old)
		default:
		}
	}
	c.mu.Unlock()
	c.log.Debug("consumer error reported on Errors", "err", err)
	for _, old := range dropped {
		c.log.Warn("consumer error dropped: Errors is not read", "err", old)
	}
}

// Shutdown leaves the group: it stops the automatic commits, ends the
// current generation (stopping the fetchers and, with auto.commit.enable,
// committing what the application consumed), releases the partitions,
// deletes the registration, ends every stream's iteration and closes the
// ZooKeeper session. In Kafka mode it commits through the current
// generation, then leaves the group (LeaveGroup, so the others get the
// partitions at once; a static member, with group.instance.id, stays
// until session.timeout.ms passes, as in Java). As Java's consumer does on
// close, the commit is retried after retriable errors, finding the
// coordinator again when it moved or its connection was lost, for up to
// 30 s (the default timeout of Java's close) and within ctx; it stops at
// once when the coordinator refuses the generation. The listener is
// bounded by max.poll.interval.ms and ctx. It is idempotent; later calls
// return the first result. ctx bounds the ZooKeeper work, which is also
// bounded by the session timeout plus rebalance.backoff.ms, so Shutdown
// returns even while ZooKeeper is unreachable; the shutdown completes
// either way.
//
// The RebalanceListener gets one call from Shutdown, if the member owns
// partitions: BeforeReleasingPartitions with all of them, lost false (see
// RebalanceListener), never BeforeStartingFetchers. With
// auto.commit.enable=false Shutdown commits nothing itself: commit in that
// call, with its ctx, or before calling Shutdown.
//
// Shutdown waits for the rebalance in progress, and a RebalanceListener
// runs inside one, so the listener must not call Shutdown the ordinary
// way. Given the ctx of a listener call instead (or a context derived from
// it), Shutdown, from whichever goroutine, starts the shutdown and returns
// nil at once; the shutdown completes in the background once the listener
// has returned, with the bounds above but without ctx's. It is seen to
// complete as any other: every stream's iteration ends, Errors is closed,
// and a Shutdown called meanwhile with another context waits for it and
// returns its result.
func (c *ConsumerConnector) Shutdown(ctx context.Context) error {
	if c.calledFromListener(ctx) {
		go func() { _ = c.Shutdown(context.Background()) }()
		c.mu.Lock()
		member := c.member
		c.mu.Unlock()
		if member != nil {
			// In ZooKeeper mode the listener runs in a Handler call of
			// the member, whose context ctx derives from: Close stops
			// the member without waiting for that call.
			_ = member.Close(ctx)
		}
		if c.kafka != nil {
			c.kafka.cancel() // the loop ends once the listener returns
		}
		return nil
	}
	c.stopOnce.Do(func() {
		close(c.closing)
		c.lag.stop()
		c.autoCommit.Wait()
		c.mu.Lock()
		member := c.member
		c.mu.Unlock()
		var errs []error
		if member != nil {
			errs = append(errs, member.Close(ctx))
		}
		if c.kafka != nil {
			errs = append(errs, c.kafka.close(ctx))
		}
		errs = append(errs, c.fetcher.Close())
		c.mu.Lock()
		c.shutdown = true
		for _, s := range c.streams {
			s.Shutdown()
		}
		c.mu.Unlock()
		errs = append(errs, c.closeCoordination())
		close(c.errs)
		if c.metrics != nil {
			c.metrics.Detach()
		}
		c.stopErr = errors.Join(errs...)
		c.log.Info("shut down", "err", c.stopErr)
	})
	return c.stopErr
}

// closeCoordination closes the offset store and the ZooKeeper session.
func (c *ConsumerConnector) closeCoordination() error {
	var errs []error
	if c.offsets != nil {
		errs = append(errs, c.offsets.Close())
	}
	if c.session != nil {
		errs = append(errs, c.session.Close())
	}
	return errors.Join(errs...)
}

// sessionTimeout is the group membership's timeout of the chosen mode:
// zookeeper.session.timeout.ms or session.timeout.ms.
func (c *ConsumerConnector) sessionTimeout() time.Duration {
	if c.kafka != nil {
		return c.cfg.SessionTimeout
	}
	return c.cfg.ZooKeeperSessionTimeout
}

// commitTimeout bounds one automatic commit.
func (c *ConsumerConnector) commitTimeout() time.Duration { return c.sessionTimeout() }
