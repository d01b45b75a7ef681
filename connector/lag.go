package connector

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/fetch"
	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// DefaultLagRefresh is how often a connector reads the log-end offsets of
// the partitions it owns from their leaders unless WithLagRefresh says
// otherwise.
const DefaultLagRefresh = 10 * time.Second

// WithLagRefresh sets how often the connector reads the log-end offset
// (high watermark) of every partition it owns from the partition's leader:
// one ListOffsets request per leader broker, on a connection of its own,
// every d (default DefaultLagRefresh). Kafka's consumer took the high
// watermark only from its fetch responses, so when the application stops
// reading, the queues fill, the fetchers stop and the lag it reported
// stopped growing, just when it mattered. With the refresh, Stats' Lag and
// LagTime keep growing and HighWatermarkAge says how old the figure is.
//
// Zero or a negative d turns the requests off: the high watermark then
// comes from fetch responses alone (no request is made for it) and
// HighWatermarkAge stays zero.
func WithLagRefresh(d time.Duration) Option {
	return func(o *options) { o.lagRefresh, o.lagRefreshSet = d, true }
}

// lagTracker keeps, for each partition the connector owns, what the fetch
// responses do not tell: the log-end offset last read from the leader and
// when, and a short history of log-end offsets over time from which
// LagTime is computed. A goroutine of its own refreshes it every tick;
// Stats reads it.
type lagTracker struct {
	// refresh is how often log-end offsets are read (<= 0: never); tick
	// how often the history is sampled (refresh, or DefaultLagRefresh).
	refresh, tick time.Duration
	// timeout bounds one round of requests.
	timeout time.Duration
	// read reads the log-end offsets of the partitions being fetched
	// (fetch.LogEnds.Read); nil without refresh. closeRead closes its
	// connections.
	read      func(context.Context) (map[zkutil.TopicPartition]int64, error)
	closeRead func() error
	owned     func() []*streamcore.PartitionTopicInfo
	log       *slog.Logger
	now       func() time.Time

	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	parts   map[zkutil.TopicPartition]*partLag
	failing bool // the last round of requests failed (for the logs)
}

// newLagTracker returns a tracker that is not running yet (start).
func newLagTracker(refresh, timeout time.Duration, logEnds *fetch.LogEnds, owned func() []*streamcore.PartitionTopicInfo, log *slog.Logger) *lagTracker {
	t := &lagTracker{
		refresh: refresh,
		tick:    refresh,
		timeout: timeout,
		owned:   owned,
		log:     log,
		now:     time.Now,
		parts:   map[zkutil.TopicPartition]*partLag{},
	}
	switch {
	case refresh <= 0:
		t.tick = DefaultLagRefresh
	case logEnds != nil:
		t.read, t.closeRead = logEnds.Read, logEnds.Close
	}
	return t
}

// start runs the tracker's goroutine until stop.
func (t *lagTracker) start() {
	ctx, cancel := context.WithCancel(context.Background())
	t.cancel, t.done = cancel, make(chan struct{})
	go t.run(ctx)
}

// stop ends the goroutine, waits for it and closes the connections. It is
// safe to call on a tracker that never started.
func (t *lagTracker) stop() {
	if t == nil {
		return
	}
	if t.cancel != nil {
		t.cancel()
		<-t.done
	}
	if t.closeRead != nil {
		_ = t.closeRead()
	}
}

func (t *lagTracker) run(ctx context.Context) {
	defer close(t.done)
	ticker := time.NewTicker(t.tick)
	defer ticker.Stop()
	for {
		t.round(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// round reads the log-end offsets of the owned partitions (with refresh)
// and records one sample of each partition's log end.
func (t *lagTracker) round(ctx context.Context) {
	infos := t.owned()
	var listed map[zkutil.TopicPartition]int64
	var err error
	if t.read != nil && len(infos) > 0 {
		rctx, cancel := context.WithTimeout(ctx, t.timeout)
		listed, err = t.read(rctx)
		cancel()
		if ctx.Err() != nil {
			return // stopping
		}
	}
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case err != nil && !t.failing:
		t.log.Warn("lag: cannot read log-end offsets; lag is as of the last answer (see HighWatermarkAge)", "error", err)
	case err == nil && t.failing:
		t.log.Info("lag: log-end offsets read again")
	}
	t.failing = err != nil
	for _, info := range infos {
		p := t.partLocked(zkutil.TopicPartition{Topic: info.Topic, Partition: info.Partition}, now)
		if off, ok := listed[zkutil.TopicPartition{Topic: info.Topic, Partition: info.Partition}]; ok {
			p.listed, p.readAt = off, now
		}
		if hw := max(info.HighWatermark(), p.listed); hw >= 0 {
			p.observe(hw, now)
		}
		p.prune(info.ConsumedOffset())
	}
	// A partition owned by no generation for a while is forgotten; a
	// short gap (a rebalance that gives it back) keeps its history.
	forget := max(time.Minute, 3*t.tick)
	for tp, p := range t.parts {
		if now.Sub(p.seen) > forget {
			delete(t.parts, tp)
		}
	}
}

// partLocked returns the state of tp, made on first sight, and marks it
// owned at now. t.mu is held.
func (t *lagTracker) partLocked(tp zkutil.TopicPartition, now time.Time) *partLag {
	p := t.parts[tp]
	if p == nil {
		p = &partLag{listed: -1, since: now}
		t.parts[tp] = p
	}
	p.seen = now
	return p
}

// partitionLag is what the tracker adds to one partition's Stats.
type partitionLag struct {
	highWatermark int64
	lag           int64
	lagKnown      bool
	lagTime       time.Duration
	age           time.Duration
}

// stats computes the lag figures of info at now: the high watermark is
// the larger of the fetch responses' and the last one read from the
// leader, and LagTime comes from the history (to which this call adds a
// sample). A nil tracker (a connector being made) uses the fetch
// responses' alone.
func (t *lagTracker) stats(info *streamcore.PartitionTopicInfo, now time.Time) partitionLag {
	consumed := info.ConsumedOffset()
	out := partitionLag{highWatermark: info.HighWatermark()}
	if t == nil {
		if out.highWatermark >= 0 && consumed >= 0 {
			out.lag, out.lagKnown = max(0, out.highWatermark-consumed), true
		}
		return out
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.partLocked(zkutil.TopicPartition{Topic: info.Topic, Partition: info.Partition}, now)
	out.highWatermark = max(out.highWatermark, p.listed)
	if t.refresh > 0 {
		out.age = now.Sub(p.since)
		if !p.readAt.IsZero() {
			out.age = now.Sub(p.readAt)
		}
	}
	if out.highWatermark < 0 || consumed < 0 {
		return out
	}
	p.observe(out.highWatermark, now)
	out.lag, out.lagKnown = max(0, out.highWatermark-consumed), true
	out.lagTime = p.lagTime(consumed, now)
	return out
}

// partLag is the tracker's state of one partition.
type partLag struct {
	// listed is the log-end offset last read from the leader, -1 before
	// the first answer; readAt is when it was read.
	listed int64
	readAt time.Time
	// since is when the partition was first seen owned, seen the last
	// time.
	since, seen time.Time
	// history holds log-end observations in increasing order of offset
	// and time (see observe).
	history []logEndSample
}

// logEndSample says that the partition's log ended at offset at time at:
// every message below offset had been appended by then.
type logEndSample struct {
	offset int64
	at     time.Time
}

// maxLogEndSamples bounds a partition's history; when it is full, every
// other sample between the oldest two and the newest goes (thin), so the
// history covers ever longer spans with coarser steps instead of
// forgetting its oldest part.
const maxLogEndSamples = 64

// observe records that the log ended at offset at time at. Only a log end
// beyond the last one recorded adds a sample (the earliest time each
// offset was seen is what LagTime needs); one below it means the log was
// truncated (a leader elected with less, a topic made again), and the
// history starts over.
func (p *partLag) observe(offset int64, at time.Time) {
	n := len(p.history)
	switch {
	case n > 0 && offset < p.history[n-1].offset:
		p.history = append(p.history[:0], logEndSample{offset, at})
	case n == 0 || offset > p.history[n-1].offset:
		if n == maxLogEndSamples {
			p.thin()
		}
		p.history = append(p.history, logEndSample{offset, at})
	}
}

// thin drops every other sample, except the oldest two and the newest.
// After prune, the oldest two are the observations around the consumed
// offset, which date the oldest unconsumed message: they stay exact.
func (p *partLag) thin() {
	h := p.history
	kept := h[:2]
	for i := 2; i < len(h)-1; i += 2 {
		kept = append(kept, h[i])
	}
	kept = append(kept, h[len(h)-1])
	clear(h[len(kept):])
	p.history = kept
}

// prune drops the samples LagTime no longer needs once the application has
// consumed up to consumed: of those at or below it, only the last stays.
// The consumed offset only moves back when a new generation starts from a
// committed offset below it, which the kept sample still bounds.
func (p *partLag) prune(consumed int64) {
	i := 0
	for i+1 < len(p.history) && p.history[i+1].offset <= consumed {
		i++
	}
	if i > 0 {
		n := copy(p.history, p.history[i:])
		clear(p.history[n:])
		p.history = p.history[:n]
	}
}

// lagTime estimates how long ago the message at offset consumed (the
// oldest one the application has yet to consume) was appended: the time
// at which the log end passed consumed, interpolated linearly between the
// two observations around it, subtracted from now. When consumed is below
// every observation, the message is older than the first one and the
// result is the time since that observation: a lower bound. It is zero
// when the log end is at consumed (nothing to consume).
func (p *partLag) lagTime(consumed int64, now time.Time) time.Duration {
	h := p.history
	i := 0
	for i < len(h) && h[i].offset <= consumed {
		i++
	}
	switch {
	case i == len(h):
		return 0 // caught up as of the last observation
	case i == 0:
		return max(0, now.Sub(h[0].at))
	}
	prev, next := h[i-1], h[i]
	// Messages prev.offset .. next.offset-1 came between prev.at and
	// next.at; message consumed is the (consumed-prev.offset+1)th of them.
	frac := float64(consumed-prev.offset+1) / float64(next.offset-prev.offset)
	appended := prev.at.Add(time.Duration(frac * float64(next.at.Sub(prev.at))))
	return max(0, now.Sub(appended))
}
