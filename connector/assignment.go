package connector

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
)

// Assignment is this member's share of its group at one moment, as
// ConsumerConnector.Assignment reports it.
type Assignment struct {
	// Generation numbers the generation the partitions belong to: the
	// member's own count of generations in ZooKeeper mode, the
	// coordinator's generation id in Kafka mode. Zero when Err is set.
	Generation int64
	// Partitions lists the owned partitions by topic, each list sorted.
	// It is empty when Err is set, and may be empty in a generation too:
	// a group with more streams than partitions leaves some idle.
	Partitions map[string][]int32
	// Streams maps each owned partition to the stream that consumes it:
	// its index among its topic's streams as CreateMessageStreams
	// returned them (among all streams, for CreateMessageStreamsByFilter).
	Streams map[TopicPartition]int
	// Paused lists the owned partitions that are paused (see Pause), by
	// topic, each list sorted.
	Paused map[string][]int32
	// Err is nil while the member owns the generation's partitions;
	// otherwise it says why the member owns nothing:
	//   - ErrNotJoined: CreateMessageStreams has not been called;
	//   - ErrRebalanceInProgress: between generations;
	//   - an error wrapping ErrRebalanceFailed: the last rebalance failed
	//     rebalance.max.retries times (ZooKeeper mode); the member keeps
	//     trying in the background;
	//   - an error wrapping ErrOwnershipLost: the ZooKeeper session that
	//     claimed the partitions expired, or (Kafka mode, also wrapping
	//     ErrMembershipLost) the coordinator dropped the member; it
	//     rejoins;
	//   - ErrMaxPollIntervalExceeded: Kafka mode, the member left the group
	//     because a stream was not read;
	//   - an error wrapping ErrGroupFatal: Kafka mode, the member stopped;
	//   - ErrShutdown.
	Err error
}

// Assignment reports the partitions this member owns now, in either
// coordination mode, or why it owns none. Call it after
// CreateMessageStreams to tell whether the first rebalance succeeded:
// CreateMessageStreams returns the streams even when that rebalance
// failed (the member keeps trying), and Assignment().Err then wraps
// ErrRebalanceFailed. It is safe to call at any time, including from a
// RebalanceListener (where it describes the generation being released or
// started).
func (c *ConsumerConnector) Assignment() Assignment {
	gen, infos, err := c.ownership()
	if err != nil {
		return Assignment{Err: err}
	}
	a := Assignment{
		Generation: gen.id,
		Partitions: gen.ownedTopics(),
		Streams:    make(map[TopicPartition]int, len(gen.owned)),
		Paused:     map[string][]int32{},
	}
	for tp, th := range gen.owned {
		a.Streams[tp] = th.Thread
	}
	for _, tp := range slices.SortedFunc(maps.Keys(infos), compareTP) {
		if infos[tp].Paused() {
			a.Paused[tp.Topic] = append(a.Paused[tp.Topic], tp.Partition)
		}
	}
	return a
}

// ownership returns the current generation and its partitions while this
// member owns them, or why it owns nothing (see Assignment.Err).
func (c *ConsumerConnector) ownership() (*generation, map[TopicPartition]*streamcore.PartitionTopicInfo, error) {
	c.mu.Lock()
	shutdown, created, gen, infos, lastErr := c.shutdown, c.created, c.gen, c.infos, c.ownErr
	c.mu.Unlock()
	if gen == nil {
		select {
		case <-c.closing: // Shutdown has released the partitions
			shutdown = true
		default:
		}
	}
	switch {
	case shutdown:
		return nil, nil, ErrShutdown
	case !created:
		return nil, nil, ErrNotJoined
	case gen == nil && lastErr != nil:
		return nil, nil, lastErr
	case gen == nil:
		return nil, nil, ErrRebalanceInProgress
	case !c.stillOwns(gen):
		if gen.kafka != nil {
			if err := gen.kafka.Err(); err != nil {
				return nil, nil, fmt.Errorf("%w: %w", ErrOwnershipLost, err)
			}
			return nil, nil, ErrRebalanceInProgress
		}
		if c.session.ID() != gen.zk.SessionID {
			return nil, nil, fmt.Errorf("%w: the ZooKeeper session that claimed the partitions is gone", ErrOwnershipLost)
		}
		return nil, nil, ErrRebalanceInProgress
	}
	return gen, infos, nil
}

// noteOwnership records, from an error the member reports, why this
// member owns nothing until its next generation starts (which clears it).
// Called with c.mu held.
func (c *ConsumerConnector) noteOwnership(err error) {
	switch {
	case errors.Is(err, ErrRebalanceFailed), errors.Is(err, ErrOwnershipLost),
		errors.Is(err, ErrGroupFatal), errors.Is(err, ErrMaxPollIntervalExceeded):
		c.ownErr = err
	}
}
