package fetch

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// ErrNotStarted is returned by AddPartitions and Attach when no
// connections are running: StartConnections was not called, or its
// connections have been stopped.
var ErrNotStarted = errors.New("connections not started")

// AddPartitions starts fetching infos too, as if they had been passed to
// the StartConnections whose connections are running: their leaders are
// looked up and they are fetched from their fetched offset (or from where
// AutoOffsetReset says, if it is negative) until StopConnections, which
// returns their offsets with the others. A partition already being fetched
// is refused, unless its PartitionTopicInfo has been revoked: a revoked
// partition is no longer fetched (the fetchers drop it before their next
// request), and the new PartitionTopicInfo takes its place, so that a
// partition given up in one rebalance and owned again in a later one is
// fetched again without stopping the others. It returns ErrNotStarted
// without running connections.
func (m *ConsumerFetcherManager) AddPartitions(infos []*streamcore.PartitionTopicInfo) error {
	for _, pti := range infos {
		if pti == nil {
			return errors.New("nil PartitionTopicInfo")
		}
		if pti.FetchSize <= 0 {
			return fmt.Errorf("partition %s-%d has fetch size %d", pti.Topic, pti.Partition, pti.FetchSize)
		}
	}
	m.mu.Lock()
	r := m.run
	m.mu.Unlock()
	if r == nil {
		return ErrNotStarted
	}
	return r.add(infos)
}

// Attach runs f in a goroutine that belongs to the running connections:
// the context f gets ends when they stop (StopConnections, Close, or the
// end of the context given to StartConnections), and StopConnections and
// Close return only once f has returned. It returns ErrNotStarted without
// running connections. f may call AddPartitions.
func (m *ConsumerFetcherManager) Attach(f func(ctx context.Context)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.run
	if r == nil {
		return ErrNotStarted
	}
	r.tasks.Add(1)
	go func() {
		defer r.tasks.Done()
		f(r.ctx)
	}()
	return nil
}

// add puts infos in the run's leaderless set.
func (r *run) add(infos []*streamcore.PartitionTopicInfo) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ctx.Err() != nil {
		return ErrNotStarted
	}
	for i, pti := range infos {
		tp := zkutil.TopicPartition{Topic: pti.Topic, Partition: pti.Partition}
		if old, dup := r.partitions[tp]; dup && !old.Revoked() {
			return fmt.Errorf("partition %s is already being fetched", tp)
		}
		for _, other := range infos[:i] {
			if other.Topic == pti.Topic && other.Partition == pti.Partition {
				return fmt.Errorf("partition %s given twice", tp)
			}
		}
	}
	for _, pti := range infos {
		tp := zkutil.TopicPartition{Topic: pti.Topic, Partition: pti.Partition}
		r.partitions[tp] = pti
		r.noLeader[tp] = struct{}{}
	}
	r.signal()
	return nil
}
