package zkassign

import (
	"cmp"
	"slices"

	"github.com/zkconsumer/zkconsumer/internal/javastr"
	"github.com/zkconsumer/zkconsumer/internal/strategyname"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// RoundRobinAssignor is Kafka's roundrobin strategy
// (partition.assignment.strategy = "roundrobin") with the semantics of Scala
// consumers 0.10.2 and later, where members may subscribe to different
// topics.
//
// All threads of all members, deduplicated and sorted as strings, form a
// ring. All partitions of all subscribed topics are sorted by the Java hash
// of their string form (see RoundRobinHashFormat), then dealt out in that
// order by a single cursor going round the ring: each partition goes to the
// next thread that subscribes to its topic, and the threads passed over on the
// way are used up as well. When all members subscribe to the same topics,
// every thread ends up within one partition of every other.
//
// Partitions whose hashes are equal keep their order from before the sort.
// Scala builds that order from a HashMap of topics, which is not
// reproducible; this assignor lists topics by name (Java string order) and
// partitions ascending within a topic. Scala members can therefore disagree
// with Go members, and among themselves, only when two partitions of
// different topics hash alike, as "Aa-0" and "BB-0" do.
//
// Consumers 0.8.2 to 0.10.1 give the same result when subscriptions are
// identical and refuse to assign otherwise.
type RoundRobinAssignor struct {
	// HashFormat selects the topic-partition string whose hash orders the
	// partitions; the zero value is HashFormatDash (Kafka 1.0+).
	HashFormat RoundRobinHashFormat
}

var _ Assignor = RoundRobinAssignor{}

// Name returns strategyname.RoundRobin.
func (RoundRobinAssignor) Name() string { return strategyname.RoundRobin }

// Assign computes the roundrobin assignment of every topic in
// ctx.PartitionsForTopic that has threads in ctx.ConsumersForTopic. Topics
// without threads are skipped.
func (r RoundRobinAssignor) Assign(ctx AssignmentContext) (Assignment, error) {
	if err := r.HashFormat.validate(); err != nil {
		return nil, err
	}
	nc, err := normalize(ctx)
	if err != nil {
		return nil, err
	}
	a := newAssignment(nc.consumers)

	type subscription struct {
		topic  string
		thread zkutil.ConsumerThreadID
	}
	subscribed := make(map[subscription]struct{})
	var ring []zkutil.ConsumerThreadID
	for topic, threads := range nc.threadsForTopic {
		for _, th := range threads {
			subscribed[subscription{topic, th}] = struct{}{}
		}
		ring = append(ring, threads...)
	}
	ring = sortThreads(ring)

	topics := make([]string, 0, len(nc.partitionsForTopic))
	for topic := range nc.partitionsForTopic {
		if len(nc.threadsForTopic[topic]) > 0 {
			topics = append(topics, topic)
		}
	}
	slices.SortFunc(topics, javastr.Compare)

	type hashedPartition struct {
		tp   zkutil.TopicPartition
		hash int32
	}
	var tps []hashedPartition
	for _, topic := range topics {
		for _, p := range nc.partitionsForTopic[topic] {
			tps = append(tps, hashedPartition{
				tp:   zkutil.TopicPartition{Topic: topic, Partition: p},
				hash: javaStringHash(r.HashFormat.format(topic, p)),
			})
		}
	}
	slices.SortStableFunc(tps, func(x, y hashedPartition) int { return cmp.Compare(x.hash, y.hash) })

	// Every topic left in tps has at least one thread in ring, so each
	// search below ends within one lap.
	cursor := 0
	for _, hp := range tps {
		for {
			th := ring[cursor]
			cursor = (cursor + 1) % len(ring)
			if _, ok := subscribed[subscription{hp.tp.Topic, th}]; ok {
				a.add(hp.tp, th)
				break
			}
		}
	}
	return a, nil
}
