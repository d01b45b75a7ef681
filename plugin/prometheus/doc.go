// Package zkprom exports the metrics of a zkconsumer connector to
// Prometheus. It lives in a module of its own, so that programs that do
// not use it do not depend on client_golang.
//
// Give each connector a Collector of its own through connector.Config:
//
//	cfg.Metrics = zkprom.New(prometheus.DefaultRegisterer)
//	c, err := connector.New(ctx, cfg)
//
// connector.New registers the Collector (and fails if the registry already
// has a collector with the same metrics and labels, such as another
// connector of the same group and client.id: tell them apart with
// WithConstLabels); Shutdown unregisters it, so a process that makes and
// shuts down connectors does not accumulate series. No other collector's
// series are touched.
//
// Every metric carries the labels group (group.id) and client_id
// (client.id). The names follow Kafka's old consumer (in brackets):
//
//	zkconsumer_consumer_lag{topic,partition}              gauge    high watermark - consumed offset [ConsumerLag]
//	zkconsumer_consumer_lag_seconds{topic,partition}      gauge    time lag: age of the oldest unconsumed message
//	zkconsumer_max_lag                                    gauge    largest consumer_lag [MaxLag]
//	zkconsumer_max_lag_seconds                            gauge    largest consumer_lag_seconds
//	zkconsumer_high_watermark{topic,partition}            gauge    log-end offset: fetch responses and the lag refresh
//	zkconsumer_high_watermark_age_seconds{topic,partition} gauge   since the leader last told the log-end offset
//	zkconsumer_lag_refresh_interval_seconds               gauge    connector.WithLagRefresh; 0 when off
//	zkconsumer_consumed_offset{topic,partition}           gauge    the offset a commit would write
//	zkconsumer_owned_partitions                           gauge    [OwnedPartitionsCount]
//	zkconsumer_messages_consumed_total{topic}             counter  handed out by the streams [MessagesPerSec]
//	zkconsumer_bytes_consumed_total{topic}                counter  keys and values fetched into the streams [BytesPerSec]
//	zkconsumer_queued_chunks{topic,thread}                gauge    chunks in a stream's queue [FetchQueueSize]
//	zkconsumer_fetch_request_duration_seconds{broker}     histogram [FetchRequestRateAndTimeMs]
//	zkconsumer_fetch_response_size_bytes{broker}          histogram [FetchResponseSize]
//	zkconsumer_fetch_errors_total{broker}                 counter  failed fetch requests
//	zkconsumer_min_fetch_rate                             gauge    requests/s, slowest broker, last minute [MinFetchRate]
//	zkconsumer_rebalances_total{outcome}                  counter  success, failure or aborted [RebalanceRateAndTime]
//	zkconsumer_rebalance_duration_seconds                 histogram
//	zkconsumer_commits_total{store,outcome}               counter  store zookeeper or kafka; outcome success or failure
//	zkconsumer_committed_offsets_total{store}             counter  [ZooKeeperCommitsPerSec, KafkaCommitsPerSec]
//	zkconsumer_commit_duration_seconds{store}             histogram
//	zkconsumer_fenced_seconds_total                       counter  iterators waiting on a lapsed session lease
//	zkconsumer_zookeeper_session_state{state}             gauge    1 for the current state, 0 for the others
//	zkconsumer_zookeeper_disconnects_total                counter
//	zkconsumer_zookeeper_expirations_total                counter
//
// Fetch, rebalance and commit metrics are updated as the events happen;
// everything else is read from connector.ConsumerConnector.Stats when
// Prometheus scrapes, so the message path pays nothing for it. The series
// alerts watch exist from the start, at zero: every rebalance outcome,
// every commit outcome of each store the connector writes to, and a
// broker's fetch errors from its first fetch.
//
// Lag keeps growing while the application stalls: the connector reads the
// log-end offsets from the partitions' leaders every
// zkconsumer_lag_refresh_interval_seconds, even while its fetchers are
// blocked on full queues, and zkconsumer_high_watermark_age_seconds says
// how old the figure is when the leaders do not answer. The time lag,
// zkconsumer_consumer_lag_seconds, is how long ago the oldest message the
// application has yet to consume was appended, estimated from the log-end
// offsets seen over time (see connector.PartitionStats.LagTime).
//
// The directory monitoring/ holds Prometheus alerting rules, recording
// rules that give these metrics the names kafka-lag-exporter,
// kafka_exporter and KMinion export (so that existing alerts and
// dashboards work on them), and a Grafana dashboard; a test checks them
// with Prometheus's own rule parser and PromQL engine.
package zkprom
