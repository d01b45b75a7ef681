package connector

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// LagTime is the time since the log end passed the consumed offset,
// interpolated between the observations around it.
func TestLagTimeInterpolates(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	var p partLag
	p.observe(100, t0)                     // offsets 0..99 existed at t0
	p.observe(200, t0.Add(10*time.Second)) // 100..199 came in the next 10 s
	p.observe(200, t0.Add(20*time.Second)) // nothing new: no sample
	p.observe(300, t0.Add(30*time.Second)) // 200..299 came between 10 s and 30 s, as far as we know
	require.Len(t, p.history, 3)
	now := t0.Add(60 * time.Second)

	// Message 149, the 50th of the 100 that came between t0 and t0+10s.
	require.Equal(t, 55*time.Second, p.lagTime(149, now))
	// Message 100, the first after t0: appended just after it.
	require.Equal(t, 59900*time.Millisecond, p.lagTime(100, now))
	// Message 199, the last of the first interval: by t0+10s.
	require.Equal(t, 50*time.Second, p.lagTime(199, now))
	// Message 249: half way between the observations at 10 s and 30 s.
	require.Equal(t, 40*time.Second, p.lagTime(249, now))
	// Caught up: nothing to consume.
	require.Zero(t, p.lagTime(300, now))
	require.Zero(t, p.lagTime(350, now))
	// Older than the first observation: at least since then.
	require.Equal(t, 60*time.Second, p.lagTime(50, now))
	// Never negative, even with a clock that went back.
	require.Zero(t, p.lagTime(50, t0.Add(-time.Second)))
}

// While the application does not move, LagTime grows one second per
// second, whatever the log does.
func TestLagTimeGrowsWhileStalled(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	var p partLag
	p.observe(10, t0)
	p.observe(20, t0.Add(time.Second))
	const consumed = 15
	prev := p.lagTime(consumed, t0.Add(time.Second))
	for i := 2; i < 100; i++ {
		now := t0.Add(time.Duration(i) * time.Second)
		p.observe(int64(20+i*7), now)
		p.prune(consumed)
		got := p.lagTime(consumed, now)
		require.Equal(t, prev+time.Second, got, "at %d s", i)
		prev = got
	}
}

// The history keeps what LagTime needs: pruning drops the samples below
// the consumed offset but the last; a full history is thinned, not cut;
// a log end below the last one (a truncated log) starts it over.
func TestLagHistoryBounds(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	var p partLag
	for i := range 1000 {
		p.observe(int64(i+1)*10, t0.Add(time.Duration(i)*time.Second))
	}
	require.LessOrEqual(t, len(p.history), maxLogEndSamples)
	require.Equal(t, int64(10), p.history[0].offset, "thinning keeps the oldest samples")
	require.Equal(t, int64(20), p.history[1].offset)
	require.Equal(t, int64(10000), p.history[len(p.history)-1].offset, "and the newest")
	for i := 1; i < len(p.history); i++ {
		require.Greater(t, p.history[i].offset, p.history[i-1].offset)
		require.True(t, p.history[i].at.After(p.history[i-1].at))
	}
	// The oldest message is still dated from the first observation.
	now := t0.Add(1000 * time.Second)
	require.Equal(t, 1000*time.Second, p.lagTime(5, now))

	p.prune(5000)
	require.LessOrEqual(t, p.history[0].offset, int64(5000))
	require.Greater(t, p.history[1].offset, int64(5000))
	// The estimate for the consumed offset does not change by pruning.
	before := p.lagTime(5000, now)
	p.prune(5000)
	require.Equal(t, before, p.lagTime(5000, now))

	p.observe(42, now)
	require.Equal(t, []logEndSample{{42, now}}, p.history)
}

// The tracker's figures for a partition: without a refresh the fetch
// responses' high watermark alone, with it the larger of the two and the
// age of the last answer (or of the ownership before one).
func TestLagTrackerStats(t *testing.T) {
	info := newTestInfo(t, "t", 0, 100)
	t0 := time.Now()

	var none *lagTracker
	require.Equal(t, partitionLag{highWatermark: -1}, none.stats(info, t0), "no high watermark yet")
	info.SetHighWatermark(150)
	require.Equal(t, partitionLag{highWatermark: 150, lag: 50, lagKnown: true}, none.stats(info, t0))

	tr := newLagTracker(time.Second, time.Second, nil, nil, nil)
	got := tr.stats(info, t0)
	require.Equal(t, partitionLag{highWatermark: 150, lag: 50, lagKnown: true}, got, "first sight: age 0, time lag 0")
	got = tr.stats(info, t0.Add(3*time.Second))
	require.Equal(t, 3*time.Second, got.age, "never read from the leader: the age of the ownership")
	require.Equal(t, 3*time.Second, got.lagTime, "the backlog is at least as old as its first sight")

	// The leader says the log has grown while the fetcher stood still.
	p := tr.parts[zkutil.TopicPartition{Topic: "t", Partition: 0}]
	p.listed, p.readAt = 400, t0.Add(4*time.Second)
	got = tr.stats(info, t0.Add(5*time.Second))
	require.Equal(t, int64(400), got.highWatermark)
	require.Equal(t, int64(300), got.lag)
	require.Equal(t, time.Second, got.age)
	require.Equal(t, 5*time.Second, got.lagTime)

	// A fetch response newer than the last answer wins.
	info.SetHighWatermark(450)
	require.Equal(t, int64(450), tr.stats(info, t0.Add(6*time.Second)).highWatermark)

	off := newLagTracker(0, time.Second, nil, nil, nil)
	require.Zero(t, off.stats(info, t0.Add(time.Hour)).age, "no age without the refresh")
}

// newTestInfo returns a partition consumed up to consumed, as a
// generation makes it.
func newTestInfo(t *testing.T, topic string, partition int32, consumed int64) *streamcore.PartitionTopicInfo {
	t.Helper()
	_, ctl, err := streamcore.NewKafkaStream(1, -1)
	require.NoError(t, err)
	return streamcore.NewPartitionTopicInfo(topic, partition, ctl.Queue(), consumed, consumed, 1024)
}

// Each round reads the leaders' log ends; while they do not answer, the
// lag stays as of the last answer and its age grows, and the logs say so
// once per failing streak; a partition owned by nobody for a while is
// forgotten.
func TestLagTrackerRounds(t *testing.T) {
	info := newTestInfo(t, "t", 0, 100)
	info.SetHighWatermark(150)
	tp := zkutil.TopicPartition{Topic: "t", Partition: 0}
	owned := []*streamcore.PartitionTopicInfo{info}
	var logs bytes.Buffer
	tr := newLagTracker(time.Second, time.Second, nil,
		func() []*streamcore.PartitionTopicInfo { return owned },
		slog.New(slog.NewTextHandler(&logs, nil)))
	clock := time.Unix(1_000_000, 0)
	tr.now = func() time.Time { return clock }
	answer, fail := int64(150), error(nil)
	tr.read = func(ctx context.Context) (map[zkutil.TopicPartition]int64, error) {
		require.NoError(t, ctx.Err())
		if fail != nil {
			return nil, fail
		}
		return map[zkutil.TopicPartition]int64{tp: answer}, nil
	}
	ctx := context.Background()
	step := func(d time.Duration) {
		clock = clock.Add(d)
		tr.round(ctx)
	}

	step(0)
	answer = 400 // the log grows, the fetcher does not see it
	step(time.Second)
	got := tr.stats(info, clock.Add(500*time.Millisecond))
	require.Equal(t, int64(400), got.highWatermark)
	require.Equal(t, int64(300), got.lag)
	require.Equal(t, 500*time.Millisecond, got.age)

	fail = errors.New("broker 1 down")
	step(time.Second)
	answer = 900
	step(time.Second)
	got = tr.stats(info, clock)
	require.Equal(t, int64(300), got.lag, "as of the last answer")
	require.Equal(t, 2*time.Second, got.age)
	require.Equal(t, 1, strings.Count(logs.String(), "level=WARN"), logs.String())
	require.Contains(t, logs.String(), "broker 1 down")

	fail = nil
	step(time.Second)
	got = tr.stats(info, clock)
	require.Equal(t, int64(800), got.lag)
	require.Zero(t, got.age)
	require.Contains(t, logs.String(), "log-end offsets read again")

	owned = nil
	step(time.Minute)
	require.Contains(t, tr.parts, tp, "a short gap keeps the history")
	step(time.Minute)
	require.Empty(t, tr.parts)
}
