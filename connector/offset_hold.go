package connector

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// ErrOffsetUnreadable means that the committed offset of a partition this
// member owns cannot be read: its /consumers/<group>/offsets node holds
// garbage, or Kafka (offsets.storage=kafka) reports an error for it alone.
// The error wrapping it names the node and the value (errors.As finds a
// *DecodeError) or Kafka's error.
//
// Such a partition is held: it is not consumed from a guessed position
// (auto.offset.reset could skip messages), nothing is committed for it, and
// the other partitions are not affected. Its offset is read again every
// rebalance.backoff.ms and at every rebalance, so consumption starts as
// soon as an operator repairs the node (or deletes it, and auto.offset.reset
// applies as for a partition that never had an offset). The error comes as
// a *PartitionError, on Errors and through the stream that owns the
// partition, when the partition is assigned and whenever the reason
// changes.
var ErrOffsetUnreadable = errors.New("connector: committed offset unreadable")

// heldPartition is an owned partition whose committed offset could not be
// read.
type heldPartition struct {
	tp       zkutil.TopicPartition
	info     *streamcore.PartitionTopicInfo
	err      error // why, wrapping ErrOffsetUnreadable
	notified bool  // err went to the stream
}

// holdUnreadable reports the partitions of gen whose offset could not be
// read and keeps retrying them, in a goroutine that belongs to the
// generation's fetcher connections (StopConnections waits for it).
func (c *ConsumerConnector) holdUnreadable(gen *generation, infos map[zkutil.TopicPartition]*streamcore.PartitionTopicInfo, unreadable map[zkutil.TopicPartition]error) {
	if len(unreadable) == 0 {
		return
	}
	held := make([]*heldPartition, 0, len(unreadable))
	for _, tp := range slices.SortedFunc(maps.Keys(unreadable), compareTP) {
		h := &heldPartition{tp: tp, info: infos[tp], err: heldError(unreadable[tp])}
		c.reportHeld(h)
		held = append(held, h)
	}
	if err := c.fetcher.Attach(func(ctx context.Context) { c.retryHeld(ctx, gen, held) }); err != nil {
		c.log.Warn("cannot retry held partitions: the generation's connections are gone", "generation", gen.id, "err", err)
	}
}

func compareTP(a, b zkutil.TopicPartition) int {
	return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
}

func heldError(cause error) error {
	return fmt.Errorf("%w: %w; the partition is held (not consumed) until its offset can be read", ErrOffsetUnreadable, cause)
}

// reportHeld puts h's error on Errors, as a *streamcore.PartitionError.
func (c *ConsumerConnector) reportHeld(h *heldPartition) {
	c.log.Warn("holding a partition whose committed offset cannot be read", "partition", h.tp.String(), "err", h.err)
	c.report(&streamcore.PartitionError{Topic: h.tp.Topic, Partition: h.tp.Partition, Err: h.err})
}

// retryHeld tells each held partition's stream why it is held, then reads
// the held offsets again every rebalance.backoff.ms, starting to fetch each
// partition whose offset has become readable, until none is left or ctx
// (the generation's connections) ends.
func (c *ConsumerConnector) retryHeld(ctx context.Context, gen *generation, held []*heldPartition) {
	timer := time.NewTimer(c.cfg.RebalanceBackoff)
	defer timer.Stop()
	for len(held) > 0 {
		for _, h := range held {
			c.notifyHeld(ctx, h)
		}
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		held = c.rereadHeld(ctx, gen, held)
		timer.Reset(c.cfg.RebalanceBackoff)
	}
}

// notifyHeld puts h's error on the stream that owns it, unless done
// already. It waits at most rebalance.backoff.ms for room in the stream's
// queue and otherwise tries again in the next round.
func (c *ConsumerConnector) notifyHeld(ctx context.Context, h *heldPartition) {
	if h.notified {
		return
	}
	nctx, cancel := context.WithTimeout(ctx, c.cfg.RebalanceBackoff)
	defer cancel()
	err := h.info.EnqueueError(nctx, h.err)
	switch {
	case err == nil, errors.Is(err, streamcore.ErrClosed): // closed: revoked or shut down, nobody to tell
		h.notified = true
	case ctx.Err() == nil:
		c.log.Debug("stream queue full: telling the held partition's stream later", "partition", h.tp.String())
	}
}

// rereadHeld reads the offsets of held again, starts fetching the
// partitions that have become readable and returns the others.
func (c *ConsumerConnector) rereadHeld(ctx context.Context, gen *generation, held []*heldPartition) []*heldPartition {
	tps := make([]zkutil.TopicPartition, len(held))
	for i, h := range held {
		tps[i] = h.tp
	}
	offsets, unreadable, err := c.offsets.Fetch(ctx, tps)
	if err != nil {
		if ctx.Err() == nil {
			c.log.Info("reading held offsets again failed; will retry", "err", err)
		}
		return held
	}
	still := held[:0]
	for _, h := range held {
		if h.info.Revoked() {
			continue // moved away in an incremental hand-over
		}
		off, ok := offsets[h.tp]
		if !ok {
			if cause := unreadable[h.tp]; cause != nil && heldError(cause).Error() != h.err.Error() {
				h.err, h.notified = heldError(cause), false // another reason: tell again
				c.reportHeld(h)
			}
			still = append(still, h)
			continue
		}
		if !c.resumeHeld(gen, h, off) {
			return nil // the connections stopped: the generation is over
		}
	}
	return still
}

// resumeHeld starts fetching h from off, its offset now read.
func (c *ConsumerConnector) resumeHeld(gen *generation, h *heldPartition, off int64) bool {
	h.info.ResetFetchOffset(off)
	h.info.ResetConsumeOffset(off)
	c.commitMu.Lock()
	c.checkpoint[h.tp] = off
	c.commitMu.Unlock()
	if err := c.fetcher.AddPartitions([]*streamcore.PartitionTopicInfo{h.info}); err != nil {
		c.log.Info("not resuming a held partition: the generation is over", "partition", h.tp.String(), "generation", gen.id, "err", err)
		return false
	}
	c.log.Info("committed offset readable again: consuming the held partition", "partition", h.tp.String(), "offset", off, "generation", gen.id)
	return true
}
