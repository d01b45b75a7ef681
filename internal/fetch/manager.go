package fetch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/IBM/sarama"
	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// ConsumerFetcherManager moves the messages of the partitions assigned in
// one rebalance generation from their leaders into the streams' queues
// (Kafka's ConsumerFetcherManager). StartConnections begins a generation's
// fetching and StopConnections ends it; the manager can be started again.
//
// All methods are safe for concurrent use.
type ConsumerFetcherManager struct {
	cfg     Config
	sarama  *sarama.Config
	brokers BrokerSource
	log     *slog.Logger

	// leaderlessGrace and leaderlessRepeat pace the reports of partitions
	// without a leader (see noteLeaderless); tests shorten them.
	leaderlessGrace, leaderlessRepeat time.Duration

	mu       sync.Mutex
	closed   bool
	run      *run
	stopping chan struct{} // closed when the StopConnections in progress is done
}

// NewConsumerFetcherManager returns a manager that finds brokers through
// brokers. It connects to nothing until StartConnections.
func NewConsumerFetcherManager(cfg Config, brokers BrokerSource) (*ConsumerFetcherManager, error) {
	if brokers == nil {
		return nil, errors.New("nil BrokerSource")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &ConsumerFetcherManager{
		cfg:     cfg,
		sarama:  cfg.saramaConfig(),
		brokers: brokers,
		log:     cfg.Logger,

		leaderlessGrace:  defaultLeaderlessGrace,
		leaderlessRepeat: defaultLeaderlessRepeat,
	}, nil
}

// StartConnections starts fetching infos, the partitions of one generation.
// It returns at once: a leader finder goroutine looks up each partition's
// leader and hands it to the fetcher for its leader, which starts at the
// partition's fetched offset. A partition whose fetched offset is negative
// (nothing committed) first has both offsets reset by AutoOffsetReset.
//
// Fetching stops when ctx ends or StopConnections is called; the caller
// must call StopConnections in either case to wait for it and collect the
// offsets. It returns ErrAlreadyStarted if the previous call has not been
// stopped and ErrClosed after Close.
func (m *ConsumerFetcherManager) StartConnections(ctx context.Context, infos []*streamcore.PartitionTopicInfo) error {
	partitions := make(map[zkutil.TopicPartition]*streamcore.PartitionTopicInfo, len(infos))
	for _, pti := range infos {
		if pti == nil {
			return errors.New("nil PartitionTopicInfo")
		}
		tp := zkutil.TopicPartition{Topic: pti.Topic, Partition: pti.Partition}
		if _, dup := partitions[tp]; dup {
			return fmt.Errorf("partition %s given twice", tp)
		}
		if pti.FetchSize <= 0 {
			return fmt.Errorf("partition %s has fetch size %d", tp, pti.FetchSize)
		}
		partitions[tp] = pti
	}
	for {
		m.mu.Lock()
		switch {
		case m.closed:
			m.mu.Unlock()
			return ErrClosed
		case m.run != nil:
			m.mu.Unlock()
			return ErrAlreadyStarted
		case m.stopping != nil:
			s := m.stopping
			m.mu.Unlock()
			<-s
			continue
		}
		r := newRun(ctx, m, partitions)
		m.run = r
		m.mu.Unlock()
		m.log.Info("starting fetchers", "partitions", len(partitions))
		go r.leaderFinder()
		return nil
	}
}

// StopConnections stops the leader finder, then every fetcher, and waits
// for them and for the goroutines started by Attach. A fetcher blocked on a full queue is interrupted; the chunk it
// was putting is dropped and will be fetched again.
//
// It returns each partition's next fetch offset (PartitionTopicInfo's
// fetched offset): everything below it went to the stream, nothing at or
// above it did. A partition that never got an offset (negative fetched
// offset and no leader found yet) keeps its negative offset. A partition
// revoked while the connections ran (PartitionTopicInfo.Revoke, an
// incremental rebalance gave it up) and not added again is not in the
// map: it was no longer fetched.
//
// No goroutine of the manager survives it. It is idempotent: without
// running connections it returns an empty map.
func (m *ConsumerFetcherManager) StopConnections() map[zkutil.TopicPartition]int64 {
	m.mu.Lock()
	r := m.run
	m.run = nil
	if r == nil {
		s := m.stopping
		m.mu.Unlock()
		if s != nil {
			<-s
		}
		return map[zkutil.TopicPartition]int64{}
	}
	done := make(chan struct{})
	m.stopping = done
	m.mu.Unlock()

	offsets := r.stop()

	m.mu.Lock()
	m.stopping = nil
	m.mu.Unlock()
	close(done)
	m.log.Info("stopped fetchers", "partitions", len(offsets))
	return offsets
}

// Close stops the connections, as StopConnections, and makes later calls
// to StartConnections fail with ErrClosed. Every broker connection belongs
// to a fetcher or to one metadata request, so none is left open. Close is
// idempotent and returns nil.
func (m *ConsumerFetcherManager) Close() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.StopConnections()
	return nil
}

// run is one StartConnections..StopConnections span: the partitions of a
// generation, the leader finder and the fetchers serving them.
type run struct {
	m            *ConsumerFetcherManager
	ctx          context.Context
	cancel       context.CancelCauseFunc
	finderDone   chan struct{}
	wake         chan struct{} // cap 1: leaderless partitions to look at
	fetchVersion int16
	decodeOpts   decodeOpts

	// Owned by the leader finder.
	finderFailing   bool // its last round failed
	leaderlessParts map[zkutil.TopicPartition]*leaderlessState
	mdConn          metadataConn // its connection for metadata requests

	tasks sync.WaitGroup // goroutines started by Attach

	mu         sync.Mutex
	partitions map[zkutil.TopicPartition]*streamcore.PartitionTopicInfo // grows with AddPartitions
	noLeader   map[zkutil.TopicPartition]struct{}
	fetchers   map[fetcherKey]*fetcher

	refusals refusals // the fetchers' reports of failing partitions
}

func newRun(parent context.Context, m *ConsumerFetcherManager, partitions map[zkutil.TopicPartition]*streamcore.PartitionTopicInfo) *run {
	ctx, cancel := context.WithCancelCause(parent)
	r := &run{
		m:            m,
		ctx:          ctx,
		cancel:       cancel,
		finderDone:   make(chan struct{}),
		wake:         make(chan struct{}, 1),
		fetchVersion: fetchVersion(m.sarama.Version),
		decodeOpts: decodeOpts{readCommitted: m.cfg.readCommitted(), checkCRCs: m.cfg.CheckCRCs, maxDecoded: m.cfg.MaxDecodedBytes,
			recycle: m.cfg.RecycleMessages},
		partitions: partitions,
		noLeader:   make(map[zkutil.TopicPartition]struct{}, len(partitions)),
		fetchers:   map[fetcherKey]*fetcher{},

		leaderlessParts: map[zkutil.TopicPartition]*leaderlessState{},
	}
	for tp := range partitions {
		r.noLeader[tp] = struct{}{}
	}
	r.signal()
	return r
}

// stop ends the run and returns the partitions' fetched offsets.
func (r *run) stop() map[zkutil.TopicPartition]int64 {
	r.cancel(errStopped)
	<-r.finderDone
	r.mu.Lock()
	fetchers := r.fetchers
	r.fetchers = map[fetcherKey]*fetcher{}
	r.mu.Unlock()
	for _, f := range fetchers {
		f.stop()
	}
	r.tasks.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	offsets := make(map[zkutil.TopicPartition]int64, len(r.partitions))
	for tp, pti := range r.partitions {
		if !pti.Revoked() {
			offsets[tp] = pti.FetchedOffset()
		}
	}
	return offsets
}

// signal wakes the leader finder.
func (r *run) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// partitionsWithError hands partitions back to the leader finder (Kafka's
// addPartitionsWithError): their fetcher gave them up, and they resume at
// their fetched offset once a leader is found again.
func (r *run) partitionsWithError(tps []zkutil.TopicPartition) {
	if len(tps) == 0 {
		return
	}
	r.mu.Lock()
	for _, tp := range tps {
		if _, ok := r.partitions[tp]; ok {
			r.noLeader[tp] = struct{}{}
		}
	}
	r.mu.Unlock()
	r.signal()
}

// report passes err to Config.OnError, if set.
func (r *run) report(err error) {
	if r.m.cfg.OnError != nil && r.ctx.Err() == nil {
		r.m.cfg.OnError(err)
	}
}
