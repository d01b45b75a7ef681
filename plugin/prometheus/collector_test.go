package zkprom

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/connector"
)

func fixedStats() connector.Stats {
	return connector.Stats{
		Group: "g", ClientID: "c", ConsumerID: "g_host-1-abc",
		Partitions: []connector.PartitionStats{
			{
				Topic: "t", Partition: 0, ConsumedOffset: 5, FetchedOffset: 9, HighWatermark: 12, HighWatermarkAge: 3 * time.Second,
				Lag: 7, LagKnown: true, LagTime: 2500 * time.Millisecond,
			},
			{Topic: "t", Partition: 1, ConsumedOffset: -1, FetchedOffset: -1, HighWatermark: -1, HighWatermarkAge: 4 * time.Second},
		},
		MaxLag:       7,
		MaxLagTime:   2500 * time.Millisecond,
		LagRefresh:   10 * time.Second,
		OffsetStores: []connector.OffsetsStorage{connector.OffsetsStorageZooKeeper},
		Topics:       []connector.TopicStats{{Topic: "t", Messages: 40, Bytes: 4000, FencedTime: 1500 * time.Millisecond}},
		Streams:      []connector.StreamStats{{Topic: "t", Thread: 0, QueuedChunks: 2}, {Topic: "", Thread: 1}},
		MinFetchRate: 2.5,
		FencedTime:   1500 * time.Millisecond,
		Session:      connector.SessionStats{State: connector.SessionConnected, Disconnects: 1, Expirations: 2},
	}
}

// The pulled metrics are exactly the connector's Stats, with the group and
// client id on every series.
func TestCollectorExportsStats(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	c := New(reg, WithConstLabels(prometheus.Labels{"app": "x"}))
	require.NoError(t, c.attach(fixedStats))
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(`
# HELP zkconsumer_consumer_lag Offsets the application has yet to consume: the partition's high watermark minus the consumed offset (the offset a commit would write).
# TYPE zkconsumer_consumer_lag gauge
zkconsumer_consumer_lag{app="x",client_id="c",group="g",partition="0",topic="t"} 7
# HELP zkconsumer_consumer_lag_seconds Time lag: seconds since the oldest message the application has yet to consume was appended to the log, estimated from the log-end offsets seen over time; 0 when caught up.
# TYPE zkconsumer_consumer_lag_seconds gauge
zkconsumer_consumer_lag_seconds{app="x",client_id="c",group="g",partition="0",topic="t"} 2.5
# HELP zkconsumer_high_watermark_age_seconds Seconds since the partition's log-end offset was last read from its leader (since it was assigned, before the first answer): how old consumer_lag may be.
# TYPE zkconsumer_high_watermark_age_seconds gauge
zkconsumer_high_watermark_age_seconds{app="x",client_id="c",group="g",partition="0",topic="t"} 3
zkconsumer_high_watermark_age_seconds{app="x",client_id="c",group="g",partition="1",topic="t"} 4
# HELP zkconsumer_max_lag Largest consumer_lag of the owned partitions.
# TYPE zkconsumer_max_lag gauge
zkconsumer_max_lag{app="x",client_id="c",group="g"} 7
# HELP zkconsumer_max_lag_seconds Largest consumer_lag_seconds of the owned partitions.
# TYPE zkconsumer_max_lag_seconds gauge
zkconsumer_max_lag_seconds{app="x",client_id="c",group="g"} 2.5
# HELP zkconsumer_lag_refresh_interval_seconds How often the log-end offsets of the owned partitions are read from their leaders; 0 when they are not (lag then comes from fetch responses only).
# TYPE zkconsumer_lag_refresh_interval_seconds gauge
zkconsumer_lag_refresh_interval_seconds{app="x",client_id="c",group="g"} 10
# HELP zkconsumer_owned_partitions Partitions owned by the current generation.
# TYPE zkconsumer_owned_partitions gauge
zkconsumer_owned_partitions{app="x",client_id="c",group="g"} 2
# HELP zkconsumer_messages_consumed_total Messages handed out by the streams, counted per chunk.
# TYPE zkconsumer_messages_consumed_total counter
zkconsumer_messages_consumed_total{app="x",client_id="c",group="g",topic="t"} 40
# HELP zkconsumer_bytes_consumed_total Bytes of message keys and values fetched into the streams' queues.
# TYPE zkconsumer_bytes_consumed_total counter
zkconsumer_bytes_consumed_total{app="x",client_id="c",group="g",topic="t"} 4000
# HELP zkconsumer_queued_chunks Chunks waiting in a stream's queue.
# TYPE zkconsumer_queued_chunks gauge
zkconsumer_queued_chunks{app="x",client_id="c",group="g",thread="0",topic="t"} 2
zkconsumer_queued_chunks{app="x",client_id="c",group="g",thread="1",topic="*"} 0
# HELP zkconsumer_min_fetch_rate Smallest fetch request rate, in requests per second over the last minute, of the brokers fetched from.
# TYPE zkconsumer_min_fetch_rate gauge
zkconsumer_min_fetch_rate{app="x",client_id="c",group="g"} 2.5
# HELP zkconsumer_fenced_seconds_total Time iterators spent waiting, with a message ready, for the ZooKeeper session lease to hold again.
# TYPE zkconsumer_fenced_seconds_total counter
zkconsumer_fenced_seconds_total{app="x",client_id="c",group="g"} 1.5
# HELP zkconsumer_zookeeper_session_state 1 for the current state of the ZooKeeper session, 0 for the others.
# TYPE zkconsumer_zookeeper_session_state gauge
zkconsumer_zookeeper_session_state{app="x",client_id="c",group="g",state="closed"} 0
zkconsumer_zookeeper_session_state{app="x",client_id="c",group="g",state="connected"} 1
zkconsumer_zookeeper_session_state{app="x",client_id="c",group="g",state="disconnected"} 0
zkconsumer_zookeeper_session_state{app="x",client_id="c",group="g",state="expired"} 0
# HELP zkconsumer_zookeeper_disconnects_total Connections to ZooKeeper lost while the session was established.
# TYPE zkconsumer_zookeeper_disconnects_total counter
zkconsumer_zookeeper_disconnects_total{app="x",client_id="c",group="g"} 1
# HELP zkconsumer_zookeeper_expirations_total ZooKeeper sessions expired.
# TYPE zkconsumer_zookeeper_expirations_total counter
zkconsumer_zookeeper_expirations_total{app="x",client_id="c",group="g"} 2
`), "zkconsumer_consumer_lag", "zkconsumer_consumer_lag_seconds", "zkconsumer_high_watermark_age_seconds",
		"zkconsumer_max_lag", "zkconsumer_max_lag_seconds", "zkconsumer_lag_refresh_interval_seconds", "zkconsumer_owned_partitions",
		"zkconsumer_messages_consumed_total", "zkconsumer_bytes_consumed_total", "zkconsumer_queued_chunks",
		"zkconsumer_min_fetch_rate", "zkconsumer_fenced_seconds_total", "zkconsumer_zookeeper_session_state",
		"zkconsumer_zookeeper_disconnects_total", "zkconsumer_zookeeper_expirations_total"))
	// A partition with no high watermark or offset yet has no such series.
	require.Equal(t, 1, testutil.CollectAndCount(c, "zkconsumer_high_watermark"))
	require.Equal(t, 1, testutil.CollectAndCount(c, "zkconsumer_consumed_offset"))
	// The pedantic registry checks every metric against Describe.
	_, err := reg.Gather()
	require.NoError(t, err)
}

// Events land in counters and histograms by broker, outcome and store.
func TestCollectorRecordsEvents(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	c := New(reg)
	require.NoError(t, c.attach(fixedStats))
	c.Fetch(connector.FetchEvent{Broker: 3, Duration: 20 * time.Millisecond, Bytes: 1000})
	c.Fetch(connector.FetchEvent{Broker: 3, Duration: 40 * time.Millisecond, Bytes: 3000})
	c.Fetch(connector.FetchEvent{Broker: 4, Err: errors.New("connection reset")})
	c.Rebalance(connector.RebalanceEvent{Outcome: connector.RebalanceSucceeded, Attempts: 1, Duration: time.Second})
	c.Rebalance(connector.RebalanceEvent{Outcome: connector.RebalanceFailed, Attempts: 4, Duration: 8 * time.Second})
	c.Commit(connector.CommitEvent{Store: connector.OffsetsStorageKafka, Partitions: 3, Duration: time.Millisecond})
	c.Commit(connector.CommitEvent{Store: connector.OffsetsStorageZooKeeper, Partitions: 3, Duration: time.Millisecond, Err: errors.New("no")})

	require.Equal(t, 1.0, testutil.ToFloat64(c.ins.Load().fetchErrors.WithLabelValues("4")))
	require.Equal(t, 1.0, testutil.ToFloat64(c.ins.Load().rebalances.WithLabelValues("success")))
	require.Equal(t, 1.0, testutil.ToFloat64(c.ins.Load().rebalances.WithLabelValues("failure")))
	require.Equal(t, 1.0, testutil.ToFloat64(c.ins.Load().commits.WithLabelValues("kafka", "success")))
	require.Equal(t, 1.0, testutil.ToFloat64(c.ins.Load().commits.WithLabelValues("zookeeper", "failure")))
	require.Equal(t, 3.0, testutil.ToFloat64(c.ins.Load().committedOffsets.WithLabelValues("kafka")))
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(`
# HELP zkconsumer_fetch_response_size_bytes Size of fetch responses.
# TYPE zkconsumer_fetch_response_size_bytes histogram
zkconsumer_fetch_response_size_bytes_bucket{broker="3",client_id="c",group="g",le="64"} 0
zkconsumer_fetch_response_size_bytes_bucket{broker="3",client_id="c",group="g",le="256"} 0
zkconsumer_fetch_response_size_bytes_bucket{broker="3",client_id="c",group="g",le="1024"} 1
zkconsumer_fetch_response_size_bytes_bucket{broker="3",client_id="c",group="g",le="4096"} 2
zkconsumer_fetch_response_size_bytes_bucket{broker="3",client_id="c",group="g",le="16384"} 2
zkconsumer_fetch_response_size_bytes_bucket{broker="3",client_id="c",group="g",le="65536"} 2
zkconsumer_fetch_response_size_bytes_bucket{broker="3",client_id="c",group="g",le="262144"} 2
zkconsumer_fetch_response_size_bytes_bucket{broker="3",client_id="c",group="g",le="1.048576e+06"} 2
zkconsumer_fetch_response_size_bytes_bucket{broker="3",client_id="c",group="g",le="4.194304e+06"} 2
zkconsumer_fetch_response_size_bytes_bucket{broker="3",client_id="c",group="g",le="1.6777216e+07"} 2
zkconsumer_fetch_response_size_bytes_bucket{broker="3",client_id="c",group="g",le="6.7108864e+07"} 2
zkconsumer_fetch_response_size_bytes_bucket{broker="3",client_id="c",group="g",le="2.68435456e+08"} 2
zkconsumer_fetch_response_size_bytes_bucket{broker="3",client_id="c",group="g",le="+Inf"} 2
zkconsumer_fetch_response_size_bytes_sum{broker="3",client_id="c",group="g"} 4000
zkconsumer_fetch_response_size_bytes_count{broker="3",client_id="c",group="g"} 2
`), "zkconsumer_fetch_response_size_bytes"))
	_, err := reg.Gather()
	require.NoError(t, err)
}

// Detach unregisters the collector and nothing else; a second connector
// of the same group and client id in one registry is refused unless
// WithConstLabels tells them apart; a Collector serves one connector.
func TestCollectorRegistration(t *testing.T) {
	reg := prometheus.NewRegistry()
	other := prometheus.NewCounter(prometheus.CounterOpts{Name: "zkconsumer_unrelated_total", Help: "x"})
	reg.MustRegister(other)
	id := func(v string) Option { return WithConstLabels(prometheus.Labels{"instance_id": v}) }
	a := New(reg, id("1"))
	require.NoError(t, a.attach(fixedStats))
	require.ErrorIs(t, a.attach(fixedStats), ErrAttached)

	var dup prometheus.AlreadyRegisteredError
	require.ErrorAs(t, New(reg, id("1")).attach(fixedStats), &dup)
	b := New(reg, id("2"))
	require.NoError(t, b.attach(fixedStats))
	c := New(reg, id("1"))
	otherClient := func() connector.Stats {
		st := fixedStats()
		st.ClientID = "c2"
		return st
	}
	require.NoError(t, c.attach(otherClient), "another client id is another set of series")

	a.Detach()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if mf.GetName() == "zkconsumer_unrelated_total" {
				continue
			}
			require.True(t, labels["instance_id"] == "2" || labels["client_id"] == "c2", "%s %v left after Detach", mf.GetName(), labels)
		}
	}
	b.Detach()
	c.Detach()
	mfs, err = reg.Gather()
	require.NoError(t, err)
	require.Len(t, mfs, 1, "only the unrelated metric is left")
	a.Detach() // idempotent
}

// Every series an alert may watch exists, at zero, before its first event:
// the rebalance outcomes, the commits of each store the connector writes
// to, and a broker's fetch errors from its first fetch on. Without it,
// increase(zkconsumer_commits_total{outcome="failure"}[5m]) has no series
// to work on when the first failure comes, and misses it.
func TestCollectorSeriesExistBeforeTheirFirstEvent(t *testing.T) {
	require.Equal(t, string(connector.RebalanceSucceeded), outcomeSuccess)
	require.Equal(t, string(connector.RebalanceFailed), outcomeFailure)
	require.Equal(t, string(connector.RebalanceAborted), outcomeAborted)

	reg := prometheus.NewPedanticRegistry()
	c := New(reg)
	dual := func() connector.Stats {
		st := fixedStats()
		st.OffsetStores = []connector.OffsetsStorage{connector.OffsetsStorageKafka, connector.OffsetsStorageZooKeeper}
		return st
	}
	require.NoError(t, c.attach(dual))
	series := func() map[string]float64 {
		t.Helper()
		mfs, err := reg.Gather()
		require.NoError(t, err)
		out := map[string]float64{}
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				key := mf.GetName()
				for _, l := range m.GetLabel() {
					if l.GetName() != "group" && l.GetName() != "client_id" {
						key += "," + l.GetName() + "=" + l.GetValue()
					}
				}
				switch {
				case m.GetCounter() != nil:
					out[key] = m.GetCounter().GetValue()
				case m.GetHistogram() != nil:
					out[key+",count"] = float64(m.GetHistogram().GetSampleCount())
				}
			}
		}
		return out
	}
	got := series()
	for _, key := range []string{
		"zkconsumer_rebalances_total,outcome=success",
		"zkconsumer_rebalances_total,outcome=failure",
		"zkconsumer_rebalances_total,outcome=aborted",
		"zkconsumer_commits_total,outcome=success,store=kafka",
		"zkconsumer_commits_total,outcome=failure,store=kafka",
		"zkconsumer_commits_total,outcome=success,store=zookeeper",
		"zkconsumer_commits_total,outcome=failure,store=zookeeper",
		"zkconsumer_committed_offsets_total,store=kafka",
		"zkconsumer_committed_offsets_total,store=zookeeper",
		"zkconsumer_commit_duration_seconds,store=kafka,count",
		"zkconsumer_commit_duration_seconds,store=zookeeper,count",
		"zkconsumer_rebalance_duration_seconds,count",
	} {
		v, ok := got[key]
		require.True(t, ok, "%s missing before its first event; have %v", key, got)
		require.Zero(t, v, key)
	}
	_, ok := got["zkconsumer_fetch_errors_total,broker=3"]
	require.False(t, ok, "brokers are not known in advance")

	c.Fetch(connector.FetchEvent{Broker: 3, Duration: time.Millisecond, Bytes: 10})
	got = series()
	v, ok := got["zkconsumer_fetch_errors_total,broker=3"]
	require.True(t, ok, "a broker's errors exist from its first fetch")
	require.Zero(t, v)
	c.Fetch(connector.FetchEvent{Broker: 3, Err: errors.New("reset")})
	require.Equal(t, 1.0, series()["zkconsumer_fetch_errors_total,broker=3"])
	c.Commit(connector.CommitEvent{Store: connector.OffsetsStorageKafka, Err: errors.New("fenced")})
	require.Equal(t, 1.0, series()["zkconsumer_commits_total,outcome=failure,store=kafka"])
}
