package zkgroup

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/zkconsumer/zkconsumer/internal/zkassign"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// sweepOwners releases every owner node that in's session holds for this
// member outside mine, the partitions it was just assigned. It is the safety net
// behind m.stale: it runs after a successful claim whenever an owner node
// write of ours had an unknown outcome (a claim whose rollback could not
// finish, a release that failed), so that such a node is released even if
// nothing recorded it, instead of blocking the peer it is assigned to. It
// reads the owner node of every partition of the group's topics that is
// not ours (the rebalance reads only its own otherwise), so it runs only
// then; it clears m.unsure once every read and delete succeeded.
func (m *Member) sweepOwners(ctx context.Context, in Bound, view zkassign.AssignmentContext, mine map[zkutil.TopicPartition]zkutil.ConsumerThreadID) {
	var others []zkutil.TopicPartition
	for topic, parts := range view.PartitionsForTopic {
		for _, p := range parts {
			tp := zkutil.TopicPartition{Topic: topic, Partition: p}
			if _, ok := mine[tp]; !ok {
				others = append(others, tp)
			}
		}
	}
	session := in.ID()
	var failed, swept atomic.Int64
	deleted := make([]bool, len(others))
	forEach(len(others), nil, func(i int) {
		tp := others[i]
		path := zkutil.OwnerPath(m.cfg.Group, tp.Topic, tp.Partition)
		data, stat, err := in.Get(ctx, path)
		switch {
		case errors.Is(err, zksession.ErrNoNode):
			return
		case err != nil:
			failed.Add(1)
			return
		case stat.EphemeralOwner != session:
			return
		}
		th, err := zkutil.ParseConsumerThreadID(string(data))
		if err != nil || th.ConsumerID != m.cfg.ConsumerID {
			return
		}
		deleted[i] = true // tried: no longer known held, whatever the outcome
		err = in.DeleteEphemeral(ctx, path, stat.Version)
		switch {
		case err == nil:
			swept.Add(1)
		case !errors.Is(err, zksession.ErrNoNode):
			failed.Add(1)
		}
	})
	for i, tp := range others {
		if deleted[i] {
			delete(m.known, tp)
		}
	}
	if n := swept.Load(); n > 0 {
		m.log.Warn("released owner nodes left behind by an interrupted claim or release", "nodes", n)
	}
	if failed.Load() == 0 {
		m.unsure = false
		for tp := range m.stale {
			if _, ok := mine[tp]; !ok {
				delete(m.stale, tp) // swept, or not ours
			}
		}
	}
}
