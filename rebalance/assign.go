package rebalance

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/zkconsumer/zkconsumer/internal/zkassign"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// Group is a consumer group as Range and RoundRobin read it.
type Group struct {
	// Members maps each member id (its consumer.id, the name of its node
	// under /consumers/<group>/ids) to its subscription: the number of
	// streams it consumes each topic with. A wildcard member lists every
	// topic its filter admits, each with the filter's stream count.
	Members map[string]map[string]int
	// Partitions maps each topic to its partition ids. A topic missing
	// here has no partitions; a topic no member subscribes to is ignored.
	Partitions map[string][]int32
}

// Stream is one stream of a member, which Kafka calls a consumer thread:
// the member's id and the stream's number, from 0.
type Stream struct {
	// Member is the member's id.
	Member string
	// N is the stream's number among the member's streams of the topic.
	N int
}

// String returns "<member>-<n>", the form Kafka writes in an owner node.
func (s Stream) String() string { return s.Member + "-" + strconv.Itoa(s.N) }

// Owners maps each topic, then each of its partitions, to the stream
// that owns it. Partitions of topics without streams are absent.
type Owners map[string]map[int32]Stream

// HashFormat is the string form of a topic-partition whose Java hash
// orders the partitions in RoundRobin. Kafka 1.0.0 changed it
// (KAFKA-5822), so roundrobin members of Kafka before and after 1.0 never
// agree; every member of a group uses the same format.
type HashFormat int

const (
	// HashDash writes partition 3 of topic t as "t-3", as Kafka 1.0.0 to
	// 1.1.1 does.
	HashDash HashFormat = iota
	// HashBracket writes partition 3 of topic t as "[t,3]", as Kafka
	// 0.8.2 to 0.11.0 does.
	HashBracket
)

// String returns "dash" or "bracket", the values of
// connector.Config.RoundRobinHashFormat that select f.
func (f HashFormat) String() string {
	switch f {
	case HashDash:
		return "dash"
	case HashBracket:
		return "bracket"
	}
	return "HashFormat(" + strconv.Itoa(int(f)) + ")"
}

// Range is Kafka's range strategy (partition.assignment.strategy=range,
// the default): for each topic, its partitions in ascending order are cut
// into contiguous ranges, one per stream of the members subscribing to it,
// the streams ordered by their string form ("C1-10" before "C1-2"); the
// first partitions%streams streams get one partition more. Streams left
// without a partition own none.
//
// It returns an error for a group no registration can describe: an empty
// member id or topic, a negative stream count or partition.
func Range(g Group) (Owners, error) {
	ctx, err := readGroup(g)
	if err != nil {
		return nil, err
	}
	out := Owners{}
	// A member's range assignment covers the topics it subscribes to, as
	// in Kafka; every member's covers the group's.
	for _, member := range ctx.Consumers {
		ctx.ConsumerID, ctx.MyTopicThreadIDs = member, threadsOf(member, g.Members[member])
		a, err := zkassign.RangeAssignor{}.Assign(ctx)
		if err != nil {
			return nil, fmt.Errorf("rebalance: %w", err)
		}
		out.add(a)
	}
	return out, nil
}

// RoundRobin is Kafka's roundrobin strategy
// (partition.assignment.strategy=roundrobin) as Kafka 0.10.2 and later
// run it, where members may subscribe to different topics: the streams of
// all members, ordered by their string form, form a ring; the partitions
// of all topics, ordered by the Java hash of their string form in format,
// are dealt in that order by one cursor going round the ring, each to the
// next stream that subscribes to its topic. When every member subscribes
// to the same topics, Kafka before 0.10.2 decides the same.
//
// Partitions whose hashes are equal keep the order of their topics by
// name and then their ids; Kafka's own order of such ties comes from a
// hash map, so Kafka members can disagree on them among themselves (two
// partitions of different topics, such as "Aa-0" and "BB-0").
//
// It returns an error for a group no registration can describe, as Range
// does, or for a format other than HashDash and HashBracket.
func RoundRobin(g Group, format HashFormat) (Owners, error) {
	var f zkassign.RoundRobinHashFormat
	switch format {
	case HashDash:
		f = zkassign.HashFormatDash
	case HashBracket:
		f = zkassign.HashFormatBracket
	default:
		return nil, fmt.Errorf("rebalance: unknown roundrobin hash format %v", format)
	}
	ctx, err := readGroup(g)
	if err != nil || len(ctx.Consumers) == 0 {
		return Owners{}, err
	}
	// The ring covers every member's topics whichever member computes it.
	ctx.ConsumerID = ctx.Consumers[0]
	ctx.MyTopicThreadIDs = threadsOf(ctx.ConsumerID, g.Members[ctx.ConsumerID])
	a, err := zkassign.RoundRobinAssignor{HashFormat: f}.Assign(ctx)
	if err != nil {
		return nil, fmt.Errorf("rebalance: %w", err)
	}
	out := Owners{}
	out.add(a)
	return out, nil
}

// readGroup checks g and returns it as the assignors read a group, without
// a computing member.
func readGroup(g Group) (zkassign.AssignmentContext, error) {
	ctx := zkassign.AssignmentContext{
		ConsumersForTopic:  map[string][]zkutil.ConsumerThreadID{},
		PartitionsForTopic: map[string][]int32{},
	}
	for member, topics := range g.Members {
		if member == "" {
			return ctx, errors.New("rebalance: a member with an empty id")
		}
		for topic, n := range topics {
			if topic == "" {
				return ctx, fmt.Errorf("rebalance: member %q subscribes to an empty topic name", member)
			}
			if n < 0 {
				return ctx, fmt.Errorf("rebalance: member %q has %d streams of topic %q", member, n, topic)
			}
		}
		ctx.Consumers = append(ctx.Consumers, member)
		for topic, threads := range threadsOf(member, topics) {
			ctx.ConsumersForTopic[topic] = append(ctx.ConsumersForTopic[topic], threads...)
		}
	}
	slices.Sort(ctx.Consumers)
	for topic, parts := range g.Partitions {
		if topic == "" {
			return ctx, errors.New("rebalance: partitions of an empty topic name")
		}
		for _, p := range parts {
			if p < 0 {
				return ctx, fmt.Errorf("rebalance: topic %q has a negative partition %d", topic, p)
			}
		}
		ctx.PartitionsForTopic[topic] = parts
	}
	return ctx, nil
}

// threadsOf returns a member's streams per topic of its subscription.
func threadsOf(member string, topics map[string]int) map[string][]zkutil.ConsumerThreadID {
	out := make(map[string][]zkutil.ConsumerThreadID, len(topics))
	for topic, n := range topics {
		if n == 0 {
			continue
		}
		threads := make([]zkutil.ConsumerThreadID, n)
		for i := range threads {
			threads[i] = zkutil.ConsumerThreadID{ConsumerID: member, Thread: i}
		}
		out[topic] = threads
	}
	return out
}

// add records the owners of a.
func (o Owners) add(a zkassign.Assignment) {
	for tp, th := range a.Flatten() {
		byPartition, ok := o[tp.Topic]
		if !ok {
			byPartition = map[int32]Stream{}
			o[tp.Topic] = byPartition
		}
		byPartition[tp.Partition] = Stream{Member: th.ConsumerID, N: th.Thread}
	}
}
