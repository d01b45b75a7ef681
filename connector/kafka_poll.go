package connector

import (
	"errors"
	"fmt"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
)

// ErrMaxPollIntervalExceeded is reported on Errors in Kafka mode when a
// stream's reader held messages up for max.poll.interval.ms: it was not
// blocked in Next, messages were waiting for it (queued, or fetched and not
// yet consumed, such as the one it is processing), and it consumed nothing
// and asked for nothing in that time. As Kafka's Java
// consumer does when poll is not called in time, the member then leaves
// the group, after committing what was consumed, so that the others take
// its partitions over at once instead of waiting for a stalled
// application; it joins again once every stalled stream is read again.
var ErrMaxPollIntervalExceeded = errors.New("connector: a stream was not read for max.poll.interval.ms; left the group")

// streamProgress is what the stall check remembers of one stream.
type streamProgress struct {
	polls    uint64
	consumed int64 // sum of its partitions' consumed offsets
	since    time.Time
}

// stalled updates seen and returns the streams whose reader has held
// messages up for interval: it is not blocked in Next, messages are
// waiting for it (queued, or fetched and not yet consumed), and neither
// has it asked for a chunk nor has any of its partitions' consumed offsets
// moved since.
func (k *kafkaGroup) stalled(gen *generation, seen map[*streamcore.Control]*streamProgress, now time.Time, interval time.Duration) []*streamcore.Control {
	c := k.c
	c.mu.Lock()
	if c.gen != gen {
		c.mu.Unlock()
		return nil
	}
	consumed := map[*streamcore.ChunkQueue]int64{}
	pending := map[*streamcore.ChunkQueue]bool{}
	for _, info := range c.infos {
		consumed[info.Queue()] += info.ConsumedOffset()
		if info.FetchedOffset() > info.ConsumedOffset() {
			pending[info.Queue()] = true
		}
	}
	streams := make([]*streamcore.Control, 0, len(c.streams))
	for _, s := range c.streams {
		streams = append(streams, s)
	}
	c.mu.Unlock()
	var out []*streamcore.Control
	for _, s := range streams {
		q := s.Queue()
		cur := streamProgress{polls: s.Polls(), consumed: consumed[q], since: now}
		prev := seen[s]
		idle := s.Waiting() || (q.Len() == 0 && !pending[q])
		if prev == nil || idle || cur.polls != prev.polls || cur.consumed != prev.consumed {
			seen[s] = &cur
			continue
		}
		if now.Sub(prev.since) >= interval {
			out = append(out, s)
		}
	}
	return out
}

// leave takes the member out of the group after stalled streams (its
// generation has been revoked and committed), reports it, and waits until
// every stalled stream's reader asks for messages again, or Shutdown.
func (r *kafkaRun) leave(stalled []*streamcore.Control) {
	c := r.k.c
	polls := make([]uint64, len(stalled))
	for i, s := range stalled {
		polls[i] = s.Polls()
	}
	if err := r.member.Leave(); err != nil {
		c.log.Warn("leaving the group after a stall failed", "err", err)
	}
	c.log.Warn("streams not read for max.poll.interval.ms: left the group until they are read again",
		"streams", len(stalled), "max.poll.interval.ms", c.cfg.MaxPollInterval.Milliseconds())
	c.report(fmt.Errorf("%w (%d of the streams, %v)", ErrMaxPollIntervalExceeded, len(stalled), c.cfg.MaxPollInterval))
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		read := true
		for i, s := range stalled {
			if s.Polls() == polls[i] && !s.Waiting() {
				read = false
			}
		}
		if read {
			c.log.Info("stalled streams are read again: rejoining the group")
			return
		}
		select {
		case <-r.ctx.Done():
			return
		case <-tick.C:
		}
	}
}
