package testcluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/IBM/sarama"
)

// PartitionReplicas returns the replica list of every partition of topic, in
// the controller's order (the first replica is the preferred leader),
// indexed by partition id.
func (c *Cluster) PartitionReplicas(topic string) ([][]int32, error) {
	admin, err := sarama.NewClusterAdmin(c.brokerAddrs, c.ClientConfig())
	if err != nil {
		return nil, fmt.Errorf("testcluster: admin client: %w", err)
	}
	defer admin.Close()
	return partitionReplicas(admin, topic)
}

func partitionReplicas(admin sarama.ClusterAdmin, topic string) ([][]int32, error) {
	mds, err := admin.DescribeTopics([]string{topic})
	if err != nil {
		return nil, fmt.Errorf("testcluster: describe topic %s: %w", topic, err)
	}
	if len(mds) != 1 || !errors.Is(mds[0].Err, sarama.ErrNoError) {
		return nil, fmt.Errorf("testcluster: describe topic %s: unexpected answer", topic)
	}
	out := make([][]int32, len(mds[0].Partitions))
	for _, p := range mds[0].Partitions {
		if int(p.ID) >= len(out) {
			return nil, fmt.Errorf("testcluster: topic %s: partition %d beyond the %d described", topic, p.ID, len(out))
		}
		out[p.ID] = slices.Clone(p.Replicas)
	}
	return out, nil
}

// MoveLeader makes broker to the leader of a partition without stopping any
// process: it reorders the partition's replicas so that to comes first (a
// reassignment onto the same replicas, which completes at once), then asks
// the controller for a preferred-leader election, and waits until the
// partition's state in ZooKeeper (the metadata, in KRaft mode) names the
// new leader. to must be a replica in the ISR.
func (c *Cluster) MoveLeader(ctx context.Context, topic string, partition int32, to int) error {
	admin, err := sarama.NewClusterAdmin(c.brokerAddrs, c.ClientConfig())
	if err != nil {
		return fmt.Errorf("testcluster: admin client: %w", err)
	}
	defer admin.Close()
	// The replicas are reordered even when the metadata already names to
	// first: a broker's metadata can lag the controller's (KRaft), and a
	// stale order skipped the reorder while the controller's own order
	// kept another broker preferred, so the election never moved the
	// leader (seen beside another suite).
	reorder := func() error {
		replicas, err := partitionReplicas(admin, topic)
		if err != nil {
			return err
		}
		if int(partition) >= len(replicas) || partition < 0 {
			return fmt.Errorf("testcluster: topic %s has no partition %d", topic, partition)
		}
		current := replicas[partition]
		if !slices.Contains(current, int32(to)) {
			return fmt.Errorf("testcluster: broker %d is not a replica of %s-%d (replicas %v)", to, topic, partition, current)
		}
		order := []int32{int32(to)}
		for _, r := range current {
			if r != int32(to) {
				order = append(order, r)
			}
		}
		// The admin call sends one block per index: the partitions below
		// ours are "reassigned" onto their current replicas, which
		// changes nothing.
		plan := replicas[:partition+1]
		plan[partition] = order
		if err := admin.AlterPartitionReassignments(topic, plan); err != nil {
			return fmt.Errorf("testcluster: reorder replicas of %s-%d to %v: %w", topic, partition, order, err)
		}
		return waitReassigned(ctx, admin, topic, partition)
	}
	if err := reorder(); err != nil {
		return err
	}
	res, err := admin.ElectLeaders(sarama.PreferredElection, map[string][]int32{topic: {partition}})
	if err != nil {
		return fmt.Errorf("testcluster: preferred-leader election of %s-%d: %w", topic, partition, err)
	}
	if r := res[topic][partition]; r != nil && !errors.Is(r.ErrorCode, sarama.ErrNoError) && !errors.Is(r.ErrorCode, sarama.ErrElectionNotNeeded) {
		return fmt.Errorf("testcluster: preferred-leader election of %s-%d: %w", topic, partition, r.ErrorCode)
	}
	for i := 1; ; i++ {
		st, err := c.ReadPartitionState(ctx, topic, partition)
		if err == nil && st.Leader == to {
			return nil
		}
		if i%20 == 0 {
			// The election can find nothing to do while the new replica
			// order or the replica's return to the ISR has not reached
			// the controller's view yet (seen on busy KRaft clusters):
			// reorder and ask again.
			_ = reorder()
			_, _ = admin.ElectLeaders(sarama.PreferredElection, map[string][]int32{topic: {partition}})
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testcluster: %s-%d did not move its leader to broker %d (state %+v, err %v): %w", topic, partition, to, st, err, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitReassigned waits until the controller lists no reassignment in
// progress for the partition.
func waitReassigned(ctx context.Context, admin sarama.ClusterAdmin, topic string, partition int32) error {
	for {
		status, err := admin.ListPartitionReassignments(topic, []int32{partition})
		if err == nil && status[topic][partition] == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testcluster: reassignment of %s-%d did not complete (err %v): %w", topic, partition, err, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
