package connector

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/fetch"
	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/zkgroup"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// Metrics receives the measurements of one connector (Config.Metrics). The
// connector pushes low-rate events to it (one per fetch request,
// rebalance or commit, never one per message) and it pulls everything else,
// counters and gauges, from ConsumerConnector.Stats when it is collected.
// An adapter for Prometheus lives in the separate module
// github.com/zkconsumer/zkconsumer/plugin/prometheus, so that this one
// depends on no metrics library.
//
// A Metrics value serves one connector. Its methods are called from the
// connector's goroutines, concurrently, and must return quickly without
// calling back into the connector, except Stats.
type Metrics interface {
	// Attach is called once by New when the connector is ready, before
	// New returns it; the implementation keeps c to call c.Stats. An error
	// (say, the same metrics registered twice) fails New.
	Attach(c *ConsumerConnector) error
	// Detach is called once by Shutdown when the connector has stopped:
	// the implementation drops everything it exports about the connector.
	Detach()
	// Fetch is told about every fetch request sent to a broker.
	Fetch(FetchEvent)
	// Rebalance is told about every rebalance when it ends.
	Rebalance(RebalanceEvent)
	// Commit is told about every write of offsets to one store.
	Commit(CommitEvent)
}

// FetchEvent describes one fetch request: the broker, its duration, the
// size of its response and its error (Kafka's
// FetchRequestAndResponseMetrics and FetcherStats).
type FetchEvent struct {
	// Broker is the id of the broker fetched from; Addr its address.
	Broker int32
	Addr   string
	// Duration is the time from sending the request to having its
	// response decoded, including the broker's wait for
	// Config.FetchMinBytes (up to Config.FetchWaitMax).
	Duration time.Duration
	// Bytes is the size of the response as read from the connection.
	Bytes int64
	// Err is why the request failed, nil if it did not. Errors of single
	// partitions in a response do not count.
	Err error
}

// RebalanceEvent describes one rebalance, in either coordination mode
// (Kafka's RebalanceRateAndTime).
type RebalanceEvent struct {
	// Outcome is how it ended.
	Outcome RebalanceOutcome
	// Attempts is the number of attempts it made.
	Attempts int
	// Duration is the time from its start to its end, backoffs included.
	Duration time.Duration
}

// CommitEvent describes one write of offsets to one store (Kafka's
// ZooKeeperCommitsPerSec and KafkaCommitsPerSec). With
// dual.commit.enabled, a commit makes one event per store. Commits that
// find no offset changed write nothing and make no event.
type CommitEvent struct {
	// Store is the store written: OffsetsStorageZooKeeper
	// (/consumers/<group>/offsets) or OffsetsStorageKafka (the group
	// coordinator).
	Store OffsetsStorage
	// Partitions is the number of offsets written.
	Partitions int
	// Duration is how long the write took.
	Duration time.Duration
	// Err is why it failed, nil if it did not; with an error, some offsets
	// may have been written.
	Err error
}

// Stats is a snapshot of a connector's state for metrics (ConsumerConnector.Stats).
type Stats struct {
	// Group is group.id, ClientID client.id, ConsumerID the member id.
	Group, ClientID, ConsumerID string
	// Partitions are the partitions the current generation owns, by topic
	// and partition; none between generations.
	Partitions []PartitionStats
	// MaxLag is the largest Lag of Partitions whose lag is known, 0 if
	// none (Kafka's MaxLag, but of consumed rather than fetched offsets).
	MaxLag int64
	// MaxLagTime is the largest LagTime of Partitions, 0 if none.
	MaxLagTime time.Duration
	// LagRefresh is how often the log-end offsets of the owned partitions
	// are read from their leaders (WithLagRefresh); 0 when they are not.
	LagRefresh time.Duration
	// OffsetStores are the stores commits write to, in the order they are
	// written: OffsetsStorageZooKeeper, OffsetsStorageKafka, or
	// OffsetsStorageKafka then OffsetsStorageZooKeeper with
	// dual.commit.enabled. They are the values of CommitEvent.Store.
	OffsetStores []OffsetsStorage
	// Topics are the totals of every topic consumed since New, by topic.
	Topics []TopicStats
	// Streams are the streams, by topic and thread.
	Streams []StreamStats
	// MinFetchRate is the smallest fetch request rate, in requests per
	// second over the last minute, of the brokers fetched from in the last
	// minute; 0 when none (Kafka's MinFetchRate).
	MinFetchRate float64
	// FencedTime is the time the streams' iterators have spent waiting,
	// with a message ready, for the lease of the ZooKeeper session that
	// owns its partition to hold again (see Config.ZooKeeperSessionTimeout).
	FencedTime time.Duration
	// Session is the ZooKeeper session's state and event counts (zero in
	// Kafka mode).
	Session SessionStats
}

// PartitionStats is one owned partition.
type PartitionStats struct {
	// Topic and Partition name the partition.
	Topic     string
	Partition int32
	// ConsumedOffset is the offset a commit would write: one past the
	// last message the application has finished with; -1 if unknown.
	ConsumedOffset int64
	// FetchedOffset is the offset the next fetch starts at.
	FetchedOffset int64
	// HighWatermark is the partition's log-end offset (its high
	// watermark: the offset after the last message replicated to every
	// in-sync replica) as last seen: the larger of the one the last fetch
	// response carried and the one the lag refresh last read from the
	// partition's leader (WithLagRefresh); -1 before either. A fetcher
	// blocked on a full queue sends no fetch request, so without the
	// refresh it would stop growing with the fetcher.
	HighWatermark int64
	// HighWatermarkAge is how old the HighWatermark behind Lag may be: the
	// time since the lag refresh last read it from the partition's leader,
	// or, before its first answer, since the partition was first owned.
	// It stays below the refresh interval plus one request while the
	// leader answers and grows when it does not (an alert on it catches a
	// lag that no longer moves because nobody measures it). Zero when the
	// refresh is off.
	HighWatermarkAge time.Duration
	// Lag is HighWatermark minus ConsumedOffset, never below zero: the
	// offsets the application has yet to consume, including those fetched
	// and queued. It counts offsets, not messages, so records the fetcher
	// filters out (transaction markers, aborted transactions) count until
	// they are passed over. LagKnown is false, and Lag 0, while either
	// offset is unknown.
	Lag      int64
	LagKnown bool
	// LagTime is the time lag: how long ago the oldest message the
	// application has yet to consume (the one at ConsumedOffset) was
	// appended to the log, estimated from the log-end offsets this
	// connector has seen and when (fetch responses, the lag refresh and
	// calls to Stats): the moment the log end passed ConsumedOffset,
	// interpolated linearly between the two observations around it, and
	// subtracted from now. It is as precise as the observations are dense
	// (the refresh interval while the fetchers are blocked) and does not
	// depend on message timestamps, which producers set. When the message
	// is older than the first observation (a backlog the partition had
	// when this member got it), it is the time since that observation: a
	// lower bound. Zero when Lag is zero or unknown. While the application
	// is stalled it grows by one second per second.
	LagTime time.Duration
	// Paused reports whether the application paused the partition
	// (ConsumerConnector.Pause).
	Paused bool
}

// TopicStats are the totals of one topic since New.
type TopicStats struct {
	// Topic is the topic's name.
	Topic string
	// Messages is the number of messages the streams handed out, counted
	// per chunk: it trails the messages handed out by at most the chunk
	// each stream is reading.
	Messages int64
	// Bytes is the bytes of message keys and values fetched into the
	// streams' queues (Kafka's BytesPerSec, counted on enqueue).
	Bytes int64
	// FencedTime is the part of Stats.FencedTime spent on this topic.
	FencedTime time.Duration
}

// StreamStats is one stream.
type StreamStats struct {
	// Topic is the stream's topic; "" for the streams of
	// CreateMessageStreamsByFilter, which serve every matching topic.
	Topic string
	// Thread is the stream's number within its topic (Kafka's threadId).
	Thread int
	// QueuedChunks is the number of chunks in its queue (Kafka's
	// FetchQueueSize).
	QueuedChunks int
}

// Stats returns a snapshot of the connector's state for metrics. It takes
// no network round trip; it works with or without Config.Metrics, but
// Topics and MinFetchRate stay empty without it (nothing is counted).
func (c *ConsumerConnector) Stats() Stats {
	st := Stats{
		Group:        c.cfg.GroupID,
		ClientID:     c.cfg.ClientID,
		ConsumerID:   c.id,
		MinFetchRate: c.fetchRates.min(time.Now()),
		OffsetStores: c.offsetStores(),
	}
	if c.lag != nil && c.lag.refresh > 0 {
		st.LagRefresh = c.lag.refresh
	}
	if c.session != nil {
		st.Session = sessionStatsOf(c.session.Stats())
	}
	infos := c.ownedInfos()
	c.mu.Lock()
	for k, s := range c.streams {
		st.Streams = append(st.Streams, StreamStats{Topic: k.topic, Thread: k.thread, QueuedChunks: s.Queue().Len()})
	}
	for topic, tc := range c.counters {
		st.Topics = append(st.Topics, TopicStats{Topic: topic, Messages: tc.Messages(), Bytes: tc.Bytes(), FencedTime: tc.FencedTime()})
	}
	c.mu.Unlock()
	now := time.Now()
	for _, info := range infos {
		l := c.lag.stats(info, now)
		st.Partitions = append(st.Partitions, PartitionStats{
			Topic: info.Topic, Partition: info.Partition,
			ConsumedOffset: info.ConsumedOffset(), FetchedOffset: info.FetchedOffset(),
			HighWatermark: l.highWatermark, HighWatermarkAge: l.age,
			Lag: l.lag, LagKnown: l.lagKnown, LagTime: l.lagTime,
			Paused: info.Paused(),
		})
		st.MaxLag = max(st.MaxLag, l.lag)
		st.MaxLagTime = max(st.MaxLagTime, l.lagTime)
	}
	for _, t := range st.Topics {
		st.FencedTime += t.FencedTime
	}
	slices.SortFunc(st.Partitions, func(a, b PartitionStats) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	slices.SortFunc(st.Topics, func(a, b TopicStats) int { return cmp.Compare(a.Topic, b.Topic) })
	slices.SortFunc(st.Streams, func(a, b StreamStats) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Thread, b.Thread))
	})
	return st
}

// ownedInfos returns the partitions of the current generation that are
// not revoked.
func (c *ConsumerConnector) ownedInfos() []*streamcore.PartitionTopicInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	infos := make([]*streamcore.PartitionTopicInfo, 0, len(c.infos))
	for _, info := range c.infos {
		if !info.Revoked() {
			infos = append(infos, info)
		}
	}
	return infos
}

// offsetStores names the stores commits go to (Stats.OffsetStores).
func (c *ConsumerConnector) offsetStores() []OffsetsStorage {
	switch {
	case c.kafka != nil:
		return []OffsetsStorage{OffsetsStorageKafka}
	case c.cfg.OffsetsStorage != OffsetsStorageKafka:
		return []OffsetsStorage{OffsetsStorageZooKeeper}
	case c.cfg.DualCommitEnabled.on(c.cfg.OffsetsStorage):
		return []OffsetsStorage{OffsetsStorageKafka, OffsetsStorageZooKeeper}
	}
	return []OffsetsStorage{OffsetsStorageKafka}
}

// countersFor returns the Counters of topic, made on first use; nil
// without Config.Metrics.
func (c *ConsumerConnector) countersFor(topic string) *streamcore.Counters {
	if c.metrics == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	tc := c.counters[topic]
	if tc == nil {
		tc = new(streamcore.Counters)
		c.counters[topic] = tc
	}
	return tc
}

// onFetch is the fetcher's OnFetch hook when metrics are on.
func (c *ConsumerConnector) onFetch(e fetch.FetchEvent) {
	c.fetchRates.mark(e.Broker, time.Now())
	c.metrics.Fetch(FetchEvent(e))
}

// meteredStore is an offset store whose commits are reported to Metrics.
type meteredStore struct {
	offsetStore
	name    OffsetsStorage
	metrics Metrics
}

func (s *meteredStore) Commit(ctx context.Context, in owner, offsets map[zkutil.TopicPartition]int64) error {
	start := time.Now()
	err := s.offsetStore.Commit(ctx, in, offsets)
	s.metrics.Commit(CommitEvent{Store: s.name, Partitions: len(offsets), Duration: time.Since(start), Err: err})
	return err
}

// metered wraps store to report its commits when metrics are on.
func (c *ConsumerConnector) metered(store offsetStore, name OffsetsStorage) offsetStore {
	if c.metrics == nil {
		return store
	}
	return &meteredStore{offsetStore: store, name: name, metrics: c.metrics}
}

// onRebalance is the member's OnRebalance hook: nil when metrics are off.
func (c *ConsumerConnector) onRebalance() func(zkgroup.RebalanceResult) {
	if c.metrics == nil {
		return nil
	}
	return func(r zkgroup.RebalanceResult) { c.metrics.Rebalance(rebalanceEvent(r)) }
}

// rebalanceEvent is r as the metrics see it.
func rebalanceEvent(r zkgroup.RebalanceResult) RebalanceEvent {
	return RebalanceEvent{Outcome: RebalanceOutcome(r.Outcome), Attempts: r.Attempts, Duration: r.Duration}
}
