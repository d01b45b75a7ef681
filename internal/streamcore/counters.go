package streamcore

import (
	"sync/atomic"
	"time"
)

// Counters accumulates what the streams of one topic did, for metrics. The
// connector gives every PartitionTopicInfo of a topic the same Counters
// (SetCounters) and reads them when metrics are collected; without
// Counters nothing is counted.
//
// They are updated once per chunk, never per message, so that counting
// costs the message path nothing measurable:
//   - messages consumed are counted when an iterator leaves a chunk (it has
//     handed out its last message, the chunk was dropped by a pause, or it
//     was dropped by a revocation, Control.Clear or Control.Shutdown), so
//     the count trails the messages handed out by at most the chunk being
//     read;
//   - bytes (keys plus values) are counted when a fetcher enqueues a chunk,
//     as Kafka's ConsumerTopicMetrics BytesPerSec was;
//   - fenced time is counted when an iterator stops waiting on a fence.
//
// All methods are safe for concurrent use. The zero value is ready.
type Counters struct {
	messages atomic.Int64
	bytes    atomic.Int64
	fenced   atomic.Int64 // nanoseconds
}

// Messages returns the number of messages iterators have handed out.
func (c *Counters) Messages() int64 { return c.messages.Load() }

// Bytes returns the bytes of message keys and values enqueued for the
// streams.
func (c *Counters) Bytes() int64 { return c.bytes.Load() }

// FencedTime returns the time iterators spent waiting for a fence to hold
// again (the lease of the ZooKeeper session that owns the partition) with
// a message of the topic ready to hand out.
func (c *Counters) FencedTime() time.Duration { return time.Duration(c.fenced.Load()) }

// SetCounters makes the partition's chunks count in c. It must be called
// before the partition is handed to a fetcher; nil, the default, counts
// nothing.
func (p *PartitionTopicInfo) SetCounters(c *Counters) { p.counters = c }

// HighWatermark returns the partition's high watermark as of the last fetch
// response that carried it (the offset after the last message replicated
// to all in-sync replicas), or -1 before the first.
func (p *PartitionTopicInfo) HighWatermark() int64 { return p.highWatermark.Load() - 1 }

// SetHighWatermark records the high watermark of a fetch response; fetchers
// call it once per partition and response.
func (p *PartitionTopicInfo) SetHighWatermark(hw int64) { p.highWatermark.Store(hw + 1) }

// Lag returns how many offsets the application is behind the partition's
// high watermark: HighWatermark minus ConsumedOffset, never below zero. It
// counts offsets, not messages, so records the fetcher filters out
// (transaction markers, aborted transactions) count until they are passed
// over. ok is false while the high watermark or the consumed offset is
// unknown (before the first fetch response, or with no offset yet).
func (p *PartitionTopicInfo) Lag() (lag int64, ok bool) {
	hw, consumed := p.HighWatermark(), p.ConsumedOffset()
	if hw < 0 || consumed < 0 {
		return 0, false
	}
	return max(0, hw-consumed), true
}
