package connector

import (
	"errors"
	"fmt"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
)

// Pause stops consuming partitions without leaving the group, for
// backpressure: the fetchers stop fetching them (a fetcher blocked on the
// full stream of a paused partition lets go, so its other partitions keep
// flowing), and their streams hand out nothing more of them and drop what
// they had fetched of them, so that a paused partition holds no memory.
// The member keeps the partitions and their offsets; nothing is skipped or
// delivered twice. Resume continues exactly where they stopped. A message
// handed out before the pause can still be marked consumed and committed.
//
// Pauses belong to the assignment, as in Kafka's Java consumer: a
// rebalance keeps the pauses of the partitions this member owns again in
// the next generation and forgets those of partitions that move away (Java's
// eager rebalances, those of its range and roundrobin assignors, forget
// every pause; its cooperative ones keep those of the partitions that stay,
// as here). Partitions this member does not own in its current generation
// are refused with an error wrapping ErrNotOwner (Java throws
// IllegalStateException); the others are paused. Pausing a paused
// partition does nothing.
//
// Keep reading the streams while partitions are paused, as Java's consumer
// keeps calling poll: a reader blocked in Next holds nothing up, while in
// Kafka mode a reader that holds fetched messages (of paused partitions
// too) without asking for more for max.poll.interval.ms makes the member
// leave the group (ErrMaxPollIntervalExceeded). Stats and Assignment show
// which partitions are paused.
func (c *ConsumerConnector) Pause(partitions ...TopicPartition) error {
	return c.setPaused(partitions, true)
}

// Resume undoes Pause: the partitions are fetched again from after the last
// message their streams handed out.
// Partitions this member does not own are refused as in Pause (a rebalance
// may have moved them: they start unpaused wherever they are owned next);
// resuming a partition that is not paused does nothing.
func (c *ConsumerConnector) Resume(partitions ...TopicPartition) error {
	return c.setPaused(partitions, false)
}

func (c *ConsumerConnector) setPaused(partitions []TopicPartition, pause bool) error {
	gen, _, err := c.ownership()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotOwner, err)
	}
	var errs []error
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return fmt.Errorf("%w: %w", ErrNotOwner, ErrRebalanceInProgress)
	}
	for _, tp := range partitions {
		info, ok := c.infos[tp]
		if !ok {
			errs = append(errs, fmt.Errorf("%w: %s", ErrNotOwner, tp))
			continue
		}
		if pause {
			c.paused[tp] = true
			info.Pause()
		} else {
			delete(c.paused, tp)
			info.Resume()
		}
	}
	return errors.Join(errs...)
}

// keepPauses pauses, in the generation starting with infos, the partitions
// paused in the last one, and forgets the pauses of partitions it does not
// own. Called with c.mu held, before fetching starts.
func (c *ConsumerConnector) keepPauses(infos map[TopicPartition]*streamcore.PartitionTopicInfo) {
	for tp := range c.paused {
		if info, ok := infos[tp]; ok {
			info.Pause()
		} else {
			delete(c.paused, tp)
		}
	}
}
