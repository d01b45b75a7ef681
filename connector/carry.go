package connector

import (
	"time"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// carriedOffset is how far the application had consumed a partition when
// this member's generation ended without its offsets being committed for
// sure (its session was lost).
type carriedOffset struct {
	offset int64
	at     time.Time
}

// carryTTL is how long consumption progress is carried across generations:
// long enough for any rejoin after a lost session, short enough that a topic
// deleted and created again is not read from an offset of its old life.
func (c *ConsumerConnector) carryTTL() time.Duration { return 10 * c.sessionTimeout() }

// carryProgress remembers, with auto.commit.enable, the consumed offset of
// each partition of an ending generation. Everything below it was consumed
// by this process, as an automatic commit would have recorded had it been
// possible; when this member owns the partition again it resumes there
// instead of redelivering what it consumed since the last commit that
// reached ZooKeeper (for example after a ZooKeeper outage that expired its
// session). Without automatic commits the application decides what is
// committed, so nothing is carried.
func (c *ConsumerConnector) carryProgress(infos map[zkutil.TopicPartition]*streamcore.PartitionTopicInfo) {
	if !c.cfg.AutoCommitEnable {
		return
	}
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for tp, info := range infos {
		if off := info.ConsumedOffset(); off >= 0 {
			c.carried[tp] = carriedOffset{offset: off, at: now}
		}
	}
}

// startOffset returns where consumption of tp starts: the committed offset,
// or this process's own later progress (see carryProgress).
func (c *ConsumerConnector) startOffset(tp zkutil.TopicPartition, committed int64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	cr, ok := c.carried[tp]
	delete(c.carried, tp)
	if !ok || cr.offset <= committed || time.Since(cr.at) > c.carryTTL() {
		return committed
	}
	c.log.Info("resuming from this member's own progress beyond the committed offset",
		"topic", tp.Topic, "partition", tp.Partition, "committed", committed, "consumed", cr.offset)
	return cr.offset
}
