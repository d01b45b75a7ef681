package kafkagroup

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/zkconsumer/zkconsumer/internal/javastr"
	"github.com/zkconsumer/zkconsumer/internal/strategyname"
)

// errInvalidSubscriptions is wrapped by the errors a groupAssignor returns
// for input no coordinator can produce: an empty member id or topic name, a
// negative partition count, or two members with one group.instance.id.
var errInvalidSubscriptions = errors.New("invalid group subscriptions")

// memberSubscription is one member of a group coordinated by Kafka's broker,
// as the leader sees it in the JoinGroup response: the topics its
// subscription metadata lists and its static group.instance.id, "" for a
// dynamic member.
type memberSubscription struct {
	// Topics are the topics the member subscribes to; order and
	// duplicates do not matter.
	Topics []string
	// InstanceID is the member's group.instance.id (KIP-345), "" if none.
	InstanceID string
	// Owned are the partitions the member says it owns (topic to
	// partition ids; ConsumerProtocol subscription version 1 and later):
	// under the cooperative protocol, those it kept delivering while it
	// rejoined. Only cooperativeStickyAssignor reads them.
	Owned map[string][]int32
	// Generation is the generation of the member's last assignment, as
	// the cooperative-sticky assignor reads it (see
	// cooperativeStickyGeneration), noGeneration if unknown. Only
	// cooperativeStickyAssignor reads it, and only with Owned.
	Generation int32
}

// groupAssignment maps each member id to its partitions: topic to
// partition ids in ascending order. Every member of the input has an entry,
// an empty map when it gets nothing.
type groupAssignment map[string]map[string][]int32

// groupAssignor is an assignor of Kafka's Java consumer
// (ConsumerPartitionAssignor), computed by the group leader from every
// member's subscription and the partition count of each topic.
// Implementations are pure and safe for concurrent use.
type groupAssignor interface {
	// Name is the protocol name members list in JoinGroup, Java's
	// ConsumerPartitionAssignor.name().
	Name() string
	// Assign computes the assignment. partitionCounts holds the number of
	// partitions of each topic known to the metadata; subscribed topics
	// that are missing or have no partitions are left unassigned, as the
	// Java leader does.
	Assign(partitionCounts map[string]int32, members map[string]memberSubscription) (groupAssignment, error)
}

// newGroupAssignor returns the Java-compatible assignor named strategy:
// strategyname.Range ("range", Java's RangeAssignor),
// strategyname.RoundRobin ("roundrobin", Java's RoundRobinAssignor)
// or strategyname.CooperativeSticky ("cooperative-sticky", Java's
// CooperativeStickyAssignor). Other names give an error wrapping
// strategyname.ErrUnknown.
func newGroupAssignor(strategy string) (groupAssignor, error) {
	switch strategy {
	case strategyname.Range:
		return rangeAssignor{}, nil
	case strategyname.RoundRobin:
		return roundRobinAssignor{}, nil
	case strategyname.CooperativeSticky:
		return cooperativeStickyAssignor{}, nil
	}
	return nil, fmt.Errorf("%w %q for a Kafka-coordinated group: allowed values are %q, %q and %q",
		strategyname.ErrUnknown, strategy, strategyname.Range, strategyname.RoundRobin, strategyname.CooperativeSticky)
}

// rangeAssignor computes what Kafka's Java RangeAssignor (3.x) assigns
// when no rack information is in play: for each topic, its partitions in
// ascending order are cut into contiguous ranges, one per subscribed member
// in member order (see normalizeGroup); the first count % members members get
// one partition more.
//
// Java 3.5 and later switch to a rack-aware variant when members send a
// client.rack and partition replicas have racks; this assignor never does:
// its members advertise no rack, so the Java leader of a mixed group takes
// the same non-rack path as long as no Java member sets client.rack.
type rangeAssignor struct{}

var _ groupAssignor = rangeAssignor{}

// Name returns strategyname.Range.
func (rangeAssignor) Name() string { return strategyname.Range }

// Assign implements groupAssignor.
func (rangeAssignor) Assign(partitionCounts map[string]int32, members map[string]memberSubscription) (groupAssignment, error) {
	order, subscribed, err := normalizeGroup(partitionCounts, members)
	if err != nil {
		return nil, err
	}
	out := emptyGroupAssignment(members)
	for _, topic := range sortedTopics(subscribed) {
		n := partitionCounts[topic]
		if n <= 0 {
			continue
		}
		var consumers []string
		for _, id := range order {
			if subscribed[topic][id] {
				consumers = append(consumers, id)
			}
		}
		// Java's split, the one rebalance's RangeAssignor makes too:
		// each gets n/len(consumers), the first n%len(consumers) one more.
		per, extra := n/int32(len(consumers)), n%int32(len(consumers))
		var next int32
		for i, id := range consumers {
			share := per
			if int32(i) < extra {
				share++
			}
			for range share {
				out[id][topic] = append(out[id][topic], next)
				next++
			}
		}
	}
	return out, nil
}

// roundRobinAssignor computes what Kafka's Java RoundRobinAssignor
// assigns: every partition of every subscribed topic, topics in Java string
// order and partitions ascending, goes to the next member in a circle over
// all members in member order (see normalizeGroup), skipping members that do
// not subscribe to the partition's topic.
type roundRobinAssignor struct{}

var _ groupAssignor = roundRobinAssignor{}

// Name returns strategyname.RoundRobin.
func (roundRobinAssignor) Name() string { return strategyname.RoundRobin }

// Assign implements groupAssignor.
func (roundRobinAssignor) Assign(partitionCounts map[string]int32, members map[string]memberSubscription) (groupAssignment, error) {
	order, subscribed, err := normalizeGroup(partitionCounts, members)
	if err != nil {
		return nil, err
	}
	out := emptyGroupAssignment(members)
	next := 0
	for _, topic := range sortedTopics(subscribed) {
		for p := range max(partitionCounts[topic], 0) {
			// The topic has a subscriber, so this loop ends within
			// one turn of the circle.
			for !subscribed[topic][order[next]] {
				next = (next + 1) % len(order)
			}
			out[order[next]][topic] = append(out[order[next]][topic], p)
			next = (next + 1) % len(order)
		}
	}
	return out, nil
}

// normalizeGroup checks the input and returns the member ids in Java's
// AbstractPartitionAssignor.MemberInfo order: members with a
// group.instance.id first, by instance id, then the others by member id,
// both in Java String.compareTo order; and, per topic, the set of members
// subscribing to it.
func normalizeGroup(partitionCounts map[string]int32, members map[string]memberSubscription) ([]string, map[string]map[string]bool, error) {
	for topic, n := range partitionCounts {
		if topic == "" || n < 0 {
			return nil, nil, fmt.Errorf("%w: topic %q with %d partitions", errInvalidSubscriptions, topic, n)
		}
	}
	instances := map[string]string{}
	subscribed := map[string]map[string]bool{}
	for id, m := range members {
		if id == "" {
			return nil, nil, fmt.Errorf("%w: empty member id", errInvalidSubscriptions)
		}
		if m.InstanceID != "" {
			if other, dup := instances[m.InstanceID]; dup {
				return nil, nil, fmt.Errorf("%w: members %q and %q share group.instance.id %q",
					errInvalidSubscriptions, min(id, other), max(id, other), m.InstanceID)
			}
			instances[m.InstanceID] = id
		}
		for _, topic := range m.Topics {
			if topic == "" {
				return nil, nil, fmt.Errorf("%w: member %q subscribes to an empty topic name", errInvalidSubscriptions, id)
			}
			if subscribed[topic] == nil {
				subscribed[topic] = map[string]bool{}
			}
			subscribed[topic][id] = true
		}
	}
	order := slices.Collect(maps.Keys(members))
	slices.SortFunc(order, func(a, b string) int {
		ia, ib := members[a].InstanceID, members[b].InstanceID
		switch {
		case ia != "" && ib != "":
			return javastr.Compare(ia, ib)
		case ia != "":
			return -1
		case ib != "":
			return 1
		}
		return javastr.Compare(a, b)
	})
	return order, subscribed, nil
}

// sortedTopics returns the keys of subscribed in Java String.compareTo
// order.
func sortedTopics(subscribed map[string]map[string]bool) []string {
	topics := slices.Collect(maps.Keys(subscribed))
	slices.SortFunc(topics, javastr.Compare)
	return topics
}

// emptyGroupAssignment returns a groupAssignment with an empty entry for
// every member.
func emptyGroupAssignment(members map[string]memberSubscription) groupAssignment {
	out := make(groupAssignment, len(members))
	for id := range members {
		out[id] = map[string][]int32{}
	}
	return out
}
