package zkassign

import (
	"github.com/zkconsumer/zkconsumer/internal/strategyname"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// RangeAssignor is Kafka's range strategy (partition.assignment.strategy =
// "range", the default). For each topic, the partitions in ascending order
// are cut into contiguous ranges, one per thread of every subscribing member
// in string order; the first len(partitions) % len(threads) threads get one
// extra partition.
//
// For example, with members C1 and C2 of two threads each and partitions
// p0..p4 of one topic: p0 and p1 go to C1-0, p2 to C1-1, p3 to C2-0 and p4 to
// C2-1. Threads sort as strings, so "C1-10" comes before "C1-2".
//
// As in Scala, only the topics this member subscribes to (the keys of
// AssignmentContext.MyTopicThreadIDs) are assigned, but for those topics the
// result holds every member's share. Threads left without a partition get
// none, silently.
type RangeAssignor struct{}

var _ Assignor = RangeAssignor{}

// Name returns strategyname.Range.
func (RangeAssignor) Name() string { return strategyname.Range }

// Assign computes the range assignment of the topics in
// ctx.MyTopicThreadIDs. A topic without threads in ctx.ConsumersForTopic is
// skipped; a topic missing from ctx.PartitionsForTopic has no partitions.
func (RangeAssignor) Assign(ctx AssignmentContext) (Assignment, error) {
	nc, err := normalize(ctx)
	if err != nil {
		return nil, err
	}
	a := newAssignment(nc.consumers)
	for _, topic := range nc.myTopics {
		threads := nc.threadsForTopic[topic]
		if len(threads) == 0 {
			continue // Scala would divide by zero here.
		}
		parts := nc.partitionsForTopic[topic]
		for i, th := range threads {
			start, n := rangeShare(i, len(threads), len(parts))
			for _, p := range parts[start : start+n] {
				a.add(zkutil.TopicPartition{Topic: topic, Partition: p}, th)
			}
		}
	}
	return a, nil
}

// rangeShare is the range assignment's split of n items among members: the
// i-th member (0-based) gets the n items from start, each member n/members
// of them and the first n%members one more, as Kafka's range assignors of
// both consumers do.
func rangeShare(i, members, n int) (start, count int) {
	per, extra := n/members, n%members
	start = per*i + min(i, extra)
	count = per
	if i < extra {
		count++
	}
	return start, count
}
