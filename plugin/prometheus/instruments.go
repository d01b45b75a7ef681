package zkprom

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkconsumer/zkconsumer/connector"
)

// instruments are the metrics of one attached connector.
type instruments struct {
	stats func() connector.Stats

	// Read from Stats at each scrape.
	lag, highWatermark, consumedOffset *prometheus.Desc
	lagSeconds, highWatermarkAge       *prometheus.Desc
	maxLag, maxLagSeconds, lagRefresh  *prometheus.Desc
	ownedPartitions                    *prometheus.Desc
	messages, bytes                    *prometheus.Desc
	queuedChunks, minFetchRate, fenced *prometheus.Desc
	sessionState                       *prometheus.Desc
	disconnects, expirations           *prometheus.Desc

	// Updated by events.
	fetchDuration, fetchSize *prometheus.HistogramVec
	fetchErrors              *prometheus.CounterVec
	rebalances               *prometheus.CounterVec
	rebalanceDuration        prometheus.Histogram
	commits                  *prometheus.CounterVec
	committedOffsets         *prometheus.CounterVec
	commitDuration           *prometheus.HistogramVec
}

const namespace = "zkconsumer"

func newInstruments(labels prometheus.Labels, stats func() connector.Stats) *instruments {
	desc := func(name, help string, vars ...string) *prometheus.Desc {
		return prometheus.NewDesc(namespace+"_"+name, help, vars, labels)
	}
	histogram := func(name, help string, buckets []float64, vars ...string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: name, Help: help, Buckets: buckets, ConstLabels: labels,
		}, vars)
	}
	counter := func(name, help string, vars ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: name, Help: help, ConstLabels: labels,
		}, vars)
	}
	durations := []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}
	return &instruments{
		stats: stats,

		lag:              desc("consumer_lag", "Offsets the application has yet to consume: the partition's high watermark minus the consumed offset (the offset a commit would write).", "topic", "partition"),
		lagSeconds:       desc("consumer_lag_seconds", "Time lag: seconds since the oldest message the application has yet to consume was appended to the log, estimated from the log-end offsets seen over time; 0 when caught up.", "topic", "partition"),
		highWatermark:    desc("high_watermark", "Log-end offset (high watermark) of the partition: the newer of the last fetch response's and the last one read from its leader.", "topic", "partition"),
		highWatermarkAge: desc("high_watermark_age_seconds", "Seconds since the partition's log-end offset was last read from its leader (since it was assigned, before the first answer): how old consumer_lag may be.", "topic", "partition"),
		consumedOffset:   desc("consumed_offset", "Offset a commit would write: one past the last message the application has finished with.", "topic", "partition"),
		maxLag:           desc("max_lag", "Largest consumer_lag of the owned partitions."),
		maxLagSeconds:    desc("max_lag_seconds", "Largest consumer_lag_seconds of the owned partitions."),
		lagRefresh:       desc("lag_refresh_interval_seconds", "How often the log-end offsets of the owned partitions are read from their leaders; 0 when they are not (lag then comes from fetch responses only)."),
		ownedPartitions:  desc("owned_partitions", "Partitions owned by the current generation."),
		messages:         desc("messages_consumed_total", "Messages handed out by the streams, counted per chunk.", "topic"),
		bytes:            desc("bytes_consumed_total", "Bytes of message keys and values fetched into the streams' queues.", "topic"),
		queuedChunks:     desc("queued_chunks", "Chunks waiting in a stream's queue.", "topic", "thread"),
		minFetchRate:     desc("min_fetch_rate", "Smallest fetch request rate, in requests per second over the last minute, of the brokers fetched from."),
		fenced:           desc("fenced_seconds_total", "Time iterators spent waiting, with a message ready, for the ZooKeeper session lease to hold again."),
		sessionState:     desc("zookeeper_session_state", "1 for the current state of the ZooKeeper session, 0 for the others.", "state"),
		disconnects:      desc("zookeeper_disconnects_total", "Connections to ZooKeeper lost while the session was established."),
		expirations:      desc("zookeeper_expirations_total", "ZooKeeper sessions expired."),

		fetchDuration: histogram("fetch_request_duration_seconds", "Time from sending a fetch request to having its response, including the broker's fetch.wait.max.ms.", durations, "broker"),
		fetchSize:     histogram("fetch_response_size_bytes", "Size of fetch responses.", prometheus.ExponentialBuckets(64, 4, 12), "broker"),
		fetchErrors:   counter("fetch_errors_total", "Fetch requests that failed.", "broker"),
		rebalances:    counter("rebalances_total", "Rebalances by outcome: success, failure (rebalance.max.retries attempts failed) or aborted.", "outcome"),
		rebalanceDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Name: "rebalance_duration_seconds", Help: "Duration of rebalances, backoffs included.",
			Buckets: durations, ConstLabels: labels,
		}),
		commits:          counter("commits_total", "Writes of offsets to a store (zookeeper or kafka), by outcome.", "store", "outcome"),
		committedOffsets: counter("committed_offsets_total", "Offsets written successfully to a store.", "store"),
		commitDuration:   histogram("commit_duration_seconds", "Duration of writes of offsets to a store, retries included.", durations, "store"),
	}
}

// Values of the outcome label.
const (
	outcomeSuccess = "success"
	outcomeFailure = "failure"
	outcomeAborted = "aborted"
)

// initialize creates, at zero, every series of the event metrics whose
// labels are known in advance, so that they exist before their first
// event (an alert on increase(...) then sees the first failure): the
// rebalance outcomes and, for each of stores, the commit outcomes. The
// brokers' series start with their first fetch.
func (ins *instruments) initialize(stores []connector.OffsetsStorage) {
	for _, outcome := range []string{outcomeSuccess, outcomeFailure, outcomeAborted} {
		ins.rebalances.WithLabelValues(outcome)
	}
	for _, s := range stores {
		store := s.String()
		for _, outcome := range []string{outcomeSuccess, outcomeFailure} {
			ins.commits.WithLabelValues(store, outcome)
		}
		ins.committedOffsets.WithLabelValues(store)
		ins.commitDuration.WithLabelValues(store)
	}
}

// events are the instruments updated by events.
func (ins *instruments) events() []prometheus.Collector {
	return []prometheus.Collector{
		ins.fetchDuration, ins.fetchSize, ins.fetchErrors,
		ins.rebalances, ins.rebalanceDuration,
		ins.commits, ins.committedOffsets, ins.commitDuration,
	}
}

func (ins *instruments) describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		ins.lag, ins.lagSeconds, ins.highWatermark, ins.highWatermarkAge, ins.consumedOffset,
		ins.maxLag, ins.maxLagSeconds, ins.lagRefresh, ins.ownedPartitions,
		ins.messages, ins.bytes, ins.queuedChunks, ins.minFetchRate, ins.fenced,
		ins.sessionState, ins.disconnects, ins.expirations,
	} {
		ch <- d
	}
	for _, c := range ins.events() {
		c.Describe(ch)
	}
}

func (ins *instruments) collect(ch chan<- prometheus.Metric) {
	st := ins.stats()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	for _, p := range st.Partitions {
		part := strconv.FormatInt(int64(p.Partition), 10)
		if p.LagKnown {
			gauge(ins.lag, float64(p.Lag), p.Topic, part)
			gauge(ins.lagSeconds, p.LagTime.Seconds(), p.Topic, part)
		}
		if p.HighWatermark >= 0 {
			gauge(ins.highWatermark, float64(p.HighWatermark), p.Topic, part)
		}
		if st.LagRefresh > 0 {
			gauge(ins.highWatermarkAge, p.HighWatermarkAge.Seconds(), p.Topic, part)
		}
		if p.ConsumedOffset >= 0 {
			gauge(ins.consumedOffset, float64(p.ConsumedOffset), p.Topic, part)
		}
	}
	gauge(ins.maxLag, float64(st.MaxLag))
	gauge(ins.maxLagSeconds, st.MaxLagTime.Seconds())
	gauge(ins.lagRefresh, st.LagRefresh.Seconds())
	gauge(ins.ownedPartitions, float64(len(st.Partitions)))
	for _, t := range st.Topics {
		counter(ins.messages, float64(t.Messages), t.Topic)
		counter(ins.bytes, float64(t.Bytes), t.Topic)
	}
	for _, s := range st.Streams {
		topic := s.Topic
		if topic == "" {
			topic = "*" // the streams of a topic filter
		}
		gauge(ins.queuedChunks, float64(s.QueuedChunks), topic, strconv.Itoa(s.Thread))
	}
	gauge(ins.minFetchRate, st.MinFetchRate)
	counter(ins.fenced, st.FencedTime.Seconds())
	for _, state := range sessionStates {
		v := 0.0
		if st.Session.State == state {
			v = 1
		}
		gauge(ins.sessionState, v, state.String())
	}
	counter(ins.disconnects, float64(st.Session.Disconnects))
	counter(ins.expirations, float64(st.Session.Expirations))
	for _, c := range ins.events() {
		c.Collect(ch)
	}
}
