package zkprom_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/connector"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	zkprom "github.com/zkconsumer/zkconsumer/plugin/prometheus"
)

// scrape fetches url and returns every sample of the text format by its
// series ("name{labels}"), labels as the exposition writes them (sorted).
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		require.NoError(t, err, line)
		out[line[:i]] = v
	}
	require.NoError(t, sc.Err())
	return out
}

// sum adds the samples of the series named name whose labels contain every
// one of match (such as `topic="t"`).
func sum(samples map[string]float64, name string, match ...string) (total float64, n int) {
	for series, v := range samples {
		if series != name && !strings.HasPrefix(series, name+"{") {
			continue
		}
		ok := true
		for _, m := range match {
			ok = ok && strings.Contains(series, m)
		}
		if ok {
			total += v
			n++
		}
	}
	return total, n
}

// TestScrapeAgainstRealCluster consumes part of a topic with the Collector
// installed and scrapes /metrics: lag, counts, fetches, the rebalance, the
// commit and the session are there with the real numbers, and Shutdown
// removes every series.
func TestScrapeAgainstRealCluster(t *testing.T) {
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const n, k = 200, 50
	topic := testcluster.UniqueName("prom")
	require.NoError(t, c.CreateTopic(ctx, topic, 2, 1))
	_, err := c.Produce(ctx, topic, n, testcluster.ProduceOptions{Partition: -1, ValueSize: 64})
	require.NoError(t, err)

	reg := prometheus.NewRegistry()
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	cfg := connector.DefaultConfig()
	cfg.ZooKeeperConnect = c.ZKConnect()
	cfg.GroupID = testcluster.UniqueName("g-prom")
	cfg.AutoOffsetReset = connector.AutoOffsetResetSmallest
	cfg.AutoCommitInterval = time.Hour
	cfg.Metrics = zkprom.New(reg)
	conn, err := connector.New(ctx, cfg)
	require.NoError(t, err)
	defer func() { _ = conn.Shutdown(context.Background()) }()
	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	s := streams[topic][0]
	var bytes int
	next := func() {
		m, err := s.Next(ctx)
		require.NoError(t, err)
		bytes += len(m.Key) + len(m.Value)
		s.MarkConsumed(m)
	}
	for range k {
		next()
	}
	require.NoError(t, conn.CommitOffsets(ctx))

	labels := `client_id="` + cfg.GroupID + `",group="` + cfg.GroupID + `"`
	var got map[string]float64
	require.Eventually(t, func() bool {
		got = scrape(t, srv.URL)
		hw, parts := sum(got, "zkconsumer_high_watermark", `topic="`+topic+`"`)
		return parts == 2 && hw == n
	}, 30*time.Second, 20*time.Millisecond, "the high watermarks of both partitions")
	lag, parts := sum(got, "zkconsumer_consumer_lag", labels, `topic="`+topic+`"`)
	require.Equal(t, 2, parts)
	require.Equal(t, float64(n-k), lag, "lag is what remains")
	maxLag, _ := sum(got, "zkconsumer_max_lag")
	require.GreaterOrEqual(t, maxLag, float64(n-k)/2)
	owned, _ := sum(got, "zkconsumer_owned_partitions", labels)
	require.Equal(t, 2.0, owned)
	fetches, brokers := sum(got, "zkconsumer_fetch_request_duration_seconds_count", `broker="`)
	require.Positive(t, fetches)
	require.Equal(t, 1, brokers, "one broker")
	size, _ := sum(got, "zkconsumer_fetch_response_size_bytes_sum")
	require.GreaterOrEqual(t, size, float64(k*64))
	rate, _ := sum(got, "zkconsumer_min_fetch_rate")
	require.Positive(t, rate)
	ok, _ := sum(got, "zkconsumer_rebalances_total", `outcome="success"`)
	require.GreaterOrEqual(t, ok, 1.0)
	_, hist := sum(got, "zkconsumer_rebalance_duration_seconds_count")
	require.Equal(t, 1, hist)
	commits, _ := sum(got, "zkconsumer_commits_total", `store="zookeeper"`, `outcome="success"`)
	require.Equal(t, 1.0, commits)
	offsets, _ := sum(got, "zkconsumer_committed_offsets_total", `store="zookeeper"`)
	require.Equal(t, 2.0, offsets)
	connected, _ := sum(got, "zkconsumer_zookeeper_session_state", `state="connected"`)
	require.Equal(t, 1.0, connected)
	_, queues := sum(got, "zkconsumer_queued_chunks", `topic="`+topic+`"`, `thread="0"`)
	require.Equal(t, 1, queues)
	for _, name := range []string{"zkconsumer_zookeeper_disconnects_total", "zkconsumer_zookeeper_expirations_total", "zkconsumer_fenced_seconds_total"} {
		v, series := sum(got, name, labels)
		require.Equal(t, 1, series, name)
		require.Zero(t, v, name)
	}

	for range n - k {
		next()
	}
	short, cancelShort := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancelShort()
	_, err = s.Next(short)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	got = scrape(t, srv.URL)
	msgs, _ := sum(got, "zkconsumer_messages_consumed_total", `topic="`+topic+`"`)
	require.Equal(t, float64(n), msgs)
	b, _ := sum(got, "zkconsumer_bytes_consumed_total", `topic="`+topic+`"`)
	require.Equal(t, float64(bytes), b)
	lag, _ = sum(got, "zkconsumer_consumer_lag")
	require.Zero(t, lag)

	require.NoError(t, conn.Shutdown(ctx))
	got = scrape(t, srv.URL)
	require.Empty(t, got, "Shutdown unregisters every series")
}

// TestScrapeLagWhileStalled: the application reads a few messages and
// stops, its fetcher blocks on the full queue, and messages keep coming.
// What Prometheus scrapes keeps up: the lag is the log end minus what was
// consumed, its age stays small, the time lag grows, and the failure
// series alerts watch are there at zero before anything failed.
func TestScrapeLagWhileStalled(t *testing.T) {
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const batches, batch, more, read = 10, 30, 900, 20
	topic := testcluster.UniqueName("prom-stall")
	require.NoError(t, c.CreateTopic(ctx, topic, 1, 1))
	for i := range batches {
		_, err := c.Produce(ctx, topic, batch, testcluster.ProduceOptions{Partition: 0, ValueSize: 100, FirstSeq: i * batch})
		require.NoError(t, err)
	}

	reg := prometheus.NewRegistry()
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	cfg := connector.DefaultConfig()
	cfg.ZooKeeperConnect = c.ZKConnect()
	cfg.GroupID = testcluster.UniqueName("g-prom-stall")
	cfg.AutoOffsetReset = connector.AutoOffsetResetSmallest
	cfg.AutoCommitInterval = time.Hour
	cfg.QueuedMaxMessageChunks = 1
	cfg.FetchMessageMaxBytes = 4096
	cfg.Metrics = zkprom.New(reg)
	conn, err := connector.New(ctx, cfg, connector.WithLagRefresh(200*time.Millisecond))
	require.NoError(t, err)
	defer func() { _ = conn.Shutdown(context.Background()) }()

	// Before anything happened, the failure series are there, at zero.
	got := scrape(t, srv.URL)
	for _, series := range [][]string{
		{"zkconsumer_commits_total", `outcome="failure"`, `store="zookeeper"`},
		{"zkconsumer_rebalances_total", `outcome="failure"`},
		{"zkconsumer_zookeeper_expirations_total"},
	} {
		v, n := sum(got, series[0], series[1:]...)
		require.Equal(t, 1, n, "%v before the first event", series)
		require.Zero(t, v, series)
	}
	refresh, _ := sum(got, "zkconsumer_lag_refresh_interval_seconds")
	require.Equal(t, 0.2, refresh)

	streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	s := streams[topic][0]
	for range read {
		m, err := s.Next(ctx)
		require.NoError(t, err)
		s.MarkConsumed(m)
	}
	// The fetcher blocks on the full queue; then more messages come.
	var fetched int64
	require.Eventually(t, func() bool {
		st := conn.Stats()
		if len(st.Partitions) != 1 || len(st.Streams) != 1 {
			return false
		}
		before := st.Partitions[0].FetchedOffset
		time.Sleep(300 * time.Millisecond)
		fetched = conn.Stats().Partitions[0].FetchedOffset
		return fetched == before && fetched < batches*batch && st.Streams[0].QueuedChunks == 1
	}, time.Minute, 10*time.Millisecond, "the fetcher blocks")
	_, err = c.Produce(ctx, topic, more, testcluster.ProduceOptions{Partition: 0, ValueSize: 100, FirstSeq: batches * batch})
	require.NoError(t, err)

	want := float64(batches*batch + more - read)
	part := `topic="` + topic + `"`
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		got = scrape(t, srv.URL)
		lag, _ := sum(got, "zkconsumer_consumer_lag", part)
		assert.Equal(ct, want, lag, "zkconsumer_consumer_lag")
	}, 30*time.Second, 20*time.Millisecond)
	hw, _ := sum(got, "zkconsumer_high_watermark", part)
	require.Equal(t, float64(batches*batch+more), hw)
	maxLag, _ := sum(got, "zkconsumer_max_lag")
	require.Equal(t, want, maxLag)
	age, n := sum(got, "zkconsumer_high_watermark_age_seconds", part)
	require.Equal(t, 1, n)
	require.Less(t, age, 5.0)
	lagSeconds, _ := sum(got, "zkconsumer_consumer_lag_seconds", part)
	require.Positive(t, lagSeconds)
	time.Sleep(time.Second)
	later, _ := sum(scrape(t, srv.URL), "zkconsumer_consumer_lag_seconds", part)
	require.InDelta(t, lagSeconds+1, later, 0.5, "the time lag grows with the clock")
	maxLagSeconds, _ := sum(scrape(t, srv.URL), "zkconsumer_max_lag_seconds")
	require.GreaterOrEqual(t, maxLagSeconds, later)
	require.Equal(t, fetched, conn.Stats().Partitions[0].FetchedOffset, "the fetcher was blocked all along")
}
