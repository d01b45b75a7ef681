package kafkagroup

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	"github.com/zkconsumer/zkconsumer/internal/javastr"
	"github.com/zkconsumer/zkconsumer/internal/strategyname"
)

// noGeneration is the generation of a member whose subscription carries
// none (Java's AbstractStickyAssignor.DEFAULT_GENERATION): its owned
// partitions count only while no member claims a known generation.
const noGeneration int32 = -1

// cooperativeStickyUserData encodes what Java's CooperativeStickyAssignor
// puts in the user data of a member's subscription: the generation id of
// the last assignment the member received (noGeneration before the first),
// a big-endian int32. The leader reads it only when the subscription itself
// carries no generation (ConsumerProtocol subscription versions 0 and 1,
// or a generation of -1).
func cooperativeStickyUserData(generation int32) []byte {
	return binary.BigEndian.AppendUint32(nil, uint32(generation))
}

// cooperativeStickyGeneration returns the generation a cooperative-sticky
// leader attributes to a subscription, as Java's CooperativeStickyAssignor
// does: the subscription's own generation id when it carries one that is
// not negative (subscription version 2 and later), else the one in its
// user data; noGeneration when there is none, or when the user data is too
// short to hold one.
func cooperativeStickyGeneration(version int16, generationID int32, userData []byte) int32 {
	switch {
	case version >= 2 && generationID >= 0:
		return generationID
	case len(userData) < 4:
		return noGeneration
	}
	return int32(binary.BigEndian.Uint32(userData))
}

// supportsCooperative reports whether the group assignor named strategy
// supports Kafka's cooperative rebalance protocol (Java's
// ConsumerPartitionAssignor.supportedProtocols contains COOPERATIVE): only
// strategyname.CooperativeSticky does. A member runs the cooperative
// protocol when every assignor it lists supports it, as Java's
// ConsumerCoordinator decides.
func supportsCooperative(strategy string) bool {
	return strategy == strategyname.CooperativeSticky
}

// cooperativeStickyAssignor computes what Kafka's Java
// CooperativeStickyAssignor (3.x, no rack information in play) assigns:
// balanced (member partition counts differ by at most one where every
// member subscribes to the same topics; otherwise no partition can move to
// a member with two fewer), sticky (each member keeps as many of the
// partitions it owned as balance allows), and cooperative: a partition
// that another member still owns is left out of this assignment, so that
// its owner revokes it first and it is handed out in the rebalance that
// follows (KIP-429's two phases).
//
// Owned partitions count as Java counts them (memberSubscription.Owned
// and Generation): of two claims of one partition, that of the member of
// the higher generation counts. Where every member subscribes to the same
// topics, a partition claimed by two members of one generation belongs to
// neither and is assigned only in the next rebalance; otherwise the first
// claim (by member id) counts. Where Java's
// constrained algorithm (every member subscribes to the same topics)
// visits members in hash-map order, this one visits them sorted by member
// id, so ties between equally loaded members may be broken differently;
// the general case (members subscribe to different topics) reaches a
// balance of the same kind as Java's but not necessarily the same
// assignment. Members of one group need not agree on it: only the leader
// assigns.
type cooperativeStickyAssignor struct{}

var _ groupAssignor = cooperativeStickyAssignor{}

// Name returns strategyname.CooperativeSticky.
func (cooperativeStickyAssignor) Name() string { return strategyname.CooperativeSticky }

// Assign implements groupAssignor.
func (cooperativeStickyAssignor) Assign(partitionCounts map[string]int32, members map[string]memberSubscription) (groupAssignment, error) {
	order, subscribed, err := normalizeGroup(partitionCounts, members)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(order, javastr.Compare)
	topics := map[string]int32{} // the group's topics that have partitions
	for topic := range subscribed {
		if n := partitionCounts[topic]; n > 0 {
			topics[topic] = n
		}
	}
	owned, doubly := validOwnership(order, members, topics)
	if len(order) == 0 {
		return groupAssignment{}, nil
	}
	var assigned map[string][]topicPartition
	var moving map[topicPartition]string
	if sameSubscriptions(order, members) {
		if assigned, moving, err = constrainedSticky(order, topics, owned, doubly); err != nil {
			return nil, err
		}
	} else {
		assigned = generalSticky(order, topics, subscribed, latestClaims(order, members, topics))
		moving = transferring(order, members, assigned)
	}
	out := emptyGroupAssignment(members)
	for _, id := range order {
		for _, p := range assigned[id] {
			if _, ok := moving[p]; ok {
				continue // revoked from its owner now, assigned next time
			}
			out[id][p.topic] = append(out[id][p.topic], p.partition)
		}
		for _, ps := range out[id] {
			slices.Sort(ps)
		}
	}
	return out, nil
}

// topicPartition is a partition inside the assignor.
type topicPartition struct {
	topic     string
	partition int32
}

func compareTopicPartitions(a, b topicPartition) int {
	if c := javastr.Compare(a.topic, b.topic); c != 0 {
		return c
	}
	return int(a.partition) - int(b.partition)
}

// ownedList returns the partitions m claims in topics, sorted.
func ownedList(m memberSubscription, topics map[string]int32) []topicPartition {
	var out []topicPartition
	for topic, ps := range m.Owned {
		n, ok := topics[topic]
		if !ok {
			continue // a topic gone, or no longer subscribed by anyone
		}
		for _, p := range ps {
			if p >= 0 && p < n {
				out = append(out, topicPartition{topic, p})
			}
		}
	}
	slices.SortFunc(out, compareTopicPartitions)
	return slices.Compact(out)
}

// validOwnership returns the claims the constrained algorithm honours,
// partition by partition as Java's does: of two members claiming one
// partition, the one of the higher generation (members without one count
// as noGeneration) keeps it; two of the same generation both lose it, and
// it is returned as doubly claimed.
func validOwnership(order []string, members map[string]memberSubscription, topics map[string]int32) (map[string][]topicPartition, map[topicPartition]bool) {
	owned := make(map[string][]topicPartition, len(order))
	owner := map[topicPartition]string{}
	doubly := map[topicPartition]bool{}
	drop := func(id string, p topicPartition) {
		owned[id] = slices.DeleteFunc(owned[id], func(q topicPartition) bool { return q == p })
	}
	for _, id := range order {
		g := max(members[id].Generation, noGeneration)
		for _, p := range ownedList(members[id], topics) {
			other, claimed := owner[p]
			if !claimed {
				owned[id] = append(owned[id], p)
				owner[p] = id
				continue
			}
			switch og := max(members[other].Generation, noGeneration); {
			case g == og:
				doubly[p] = true
				drop(other, p)
				owner[p] = id
			case g > og:
				drop(other, p)
				owned[id] = append(owned[id], p)
				owner[p] = id
			}
		}
	}
	for id, ps := range owned {
		owned[id] = slices.DeleteFunc(ps, func(p topicPartition) bool { return doubly[p] })
	}
	return owned, doubly
}

// latestClaims returns, for the general case, the claim that counts for
// each partition, as Java's general sticky algorithm takes it: that of the
// member of the highest generation claiming it (members without a
// generation count as noGeneration); of two claims in one generation the
// first member's (by id) counts.
func latestClaims(order []string, members map[string]memberSubscription, topics map[string]int32) map[string][]topicPartition {
	type claim struct {
		id  string
		gen int32
	}
	best := map[topicPartition]claim{}
	for _, id := range order {
		g := max(members[id].Generation, noGeneration)
		for _, p := range ownedList(members[id], topics) {
			if c, ok := best[p]; !ok || g > c.gen {
				best[p] = claim{id, g}
			}
		}
	}
	owned := make(map[string][]topicPartition, len(order))
	for _, p := range slices.SortedFunc(maps.Keys(best), compareTopicPartitions) {
		owned[best[p].id] = append(owned[best[p].id], p)
	}
	return owned
}

// sameSubscriptions reports whether every member subscribes to the same
// set of topics.
func sameSubscriptions(order []string, members map[string]memberSubscription) bool {
	set := func(ts []string) []string {
		s := slices.Clone(ts)
		slices.Sort(s)
		return slices.Compact(s)
	}
	first := set(members[order[0]].Topics)
	for _, id := range order[1:] {
		if !slices.Equal(first, set(members[id].Topics)) {
			return false
		}
	}
	return true
}

// allPartitions lists every partition of topics, topics in Java string
// order, partitions ascending.
func allPartitions(topics map[string]int32) []topicPartition {
	names := slices.Collect(maps.Keys(topics))
	slices.SortFunc(names, javastr.Compare)
	var out []topicPartition
	for _, t := range names {
		for p := range topics[t] {
			out = append(out, topicPartition{t, p})
		}
	}
	return out
}

// constrainedSticky is the assignment of a group whose members all
// subscribe to the same topics, with the quotas of Java's constrained
// sticky algorithm: with P partitions and N members every member gets
// floor(P/N) or ceil(P/N), and exactly P mod N members get the larger
// share. Each member first keeps its valid owned partitions (ordered by
// partition number, then topic) up to its quota (the larger one while members with the larger share are still
// wanted, else the smaller) and gives the rest up; the partitions left
// over then go round-robin, in partition order, to the members below the
// smaller quota (sorted by id), then to those at exactly the smaller quota
// while members with the larger share are still wanted. It also returns
// the partitions that change owner: given up by a member, or doubly
// claimed, and now assigned to another one.
func constrainedSticky(order []string, topics map[string]int32, owned map[string][]topicPartition, doubly map[topicPartition]bool) (map[string][]topicPartition, map[topicPartition]string, error) {
	all := allPartitions(topics)
	n := len(order)
	minQuota, maxQuota := len(all)/n, (len(all)+n-1)/n
	wantOver, over := len(all)%n, 0
	assigned := make(map[string][]topicPartition, n)
	taken := map[topicPartition]bool{}
	revoked := map[topicPartition]bool{}
	var under, atMin []string
	keep := func(id string, ps []topicPartition, quota int) {
		assigned[id] = append(assigned[id], ps[:quota]...)
		for _, p := range ps[:quota] {
			taken[p] = true
		}
		for _, p := range ps[quota:] {
			revoked[p] = true
		}
	}
	for _, id := range order {
		// Java keeps, of what a member owns, the first by partition
		// number, then topic.
		ps := slices.Clone(owned[id])
		slices.SortFunc(ps, func(a, b topicPartition) int {
			if a.partition != b.partition {
				return int(a.partition) - int(b.partition)
			}
			return javastr.Compare(a.topic, b.topic)
		})
		switch {
		case len(ps) < minQuota:
			keep(id, ps, len(ps))
			under = append(under, id)
		case len(ps) >= maxQuota && over < wantOver:
			over++
			if over == wantOver {
				atMin = nil
			}
			keep(id, ps, maxQuota)
		default:
			keep(id, ps, minQuota)
			if over < wantOver {
				atMin = append(atMin, id)
			}
		}
	}
	moving := map[topicPartition]string{}
	i, j := 0, 0 // round-robin cursors over under and atMin
	for _, p := range all {
		if taken[p] {
			continue
		}
		var id string
		fromUnder := len(under) > 0
		switch {
		case fromUnder:
			i %= len(under)
			id = under[i]
		case len(atMin) > 0:
			j %= len(atMin)
			id = atMin[j]
		default:
			// The quotas account for every partition: a bug if reached.
			return nil, nil, fmt.Errorf("cooperative-sticky: partition %s-%d left over with every member at its quota", p.topic, p.partition)
		}
		assigned[id] = append(assigned[id], p)
		if revoked[p] || doubly[p] {
			moving[p] = id
		}
		switch got := len(assigned[id]); {
		case fromUnder && got == minQuota:
			under = slices.Delete(under, i, i+1)
			atMin = append(atMin, id)
		case fromUnder:
			i++
		case got == maxQuota:
			over++
			atMin = slices.Delete(atMin, j, j+1)
			if over == wantOver {
				atMin = nil
			}
		default:
			j++
		}
	}
	return assigned, moving, nil
}

// generalSticky is the assignment of a group whose members subscribe to
// different topics: every member keeps its valid owned partitions of
// topics it still subscribes to; each other partition, those with the
// fewest possible owners first, goes to the subscribed member with the
// fewest partitions (ties by member id); then, while a partition can move
// from a member to a subscribed one with at least two fewer, it moves
// (partitions the donor did not own before move first).
func generalSticky(order []string, topics map[string]int32, subscribed map[string]map[string]bool, owned map[string][]topicPartition) map[string][]topicPartition {
	assigned := make(map[string][]topicPartition, len(order))
	taken := map[topicPartition]bool{}
	prior := map[topicPartition]string{}
	for _, id := range order {
		for _, p := range owned[id] {
			if subscribed[p.topic][id] {
				assigned[id] = append(assigned[id], p)
				taken[p] = true
				prior[p] = id
			}
		}
	}
	var free []topicPartition
	for _, p := range allPartitions(topics) {
		if !taken[p] {
			free = append(free, p)
		}
	}
	slices.SortStableFunc(free, func(a, b topicPartition) int { return len(subscribed[a.topic]) - len(subscribed[b.topic]) })
	least := func(eligible func(string) bool, skip string) string {
		best := ""
		for _, id := range order {
			if id == skip || !eligible(id) {
				continue
			}
			if best == "" || len(assigned[id]) < len(assigned[best]) {
				best = id
			}
		}
		return best
	}
	for _, p := range free {
		id := least(func(id string) bool { return subscribed[p.topic][id] }, "")
		assigned[id] = append(assigned[id], p)
	}
	// Balance: every move lowers the sum of squared loads, so this ends.
	for moved := true; moved; {
		moved = false
		donors := slices.Clone(order)
		slices.SortStableFunc(donors, func(a, b string) int { return len(assigned[b]) - len(assigned[a]) })
		for _, from := range donors {
			ps := slices.Clone(assigned[from])
			// Partitions the donor did not own before move first.
			slices.SortStableFunc(ps, func(a, b topicPartition) int {
				ao, bo := prior[a] == from, prior[b] == from
				switch {
				case ao == bo:
					return 0
				case bo:
					return -1
				}
				return 1
			})
			for _, p := range ps {
				to := least(func(id string) bool { return subscribed[p.topic][id] }, from)
				if to == "" || len(assigned[from])-len(assigned[to]) < 2 {
					continue
				}
				assigned[from] = slices.DeleteFunc(assigned[from], func(q topicPartition) bool { return q == p })
				assigned[to] = append(assigned[to], p)
				moved = true
				break
			}
			if moved {
				break
			}
		}
	}
	return assigned
}

// transferring returns the partitions the general case assigns to a member
// that did not own them while another member that claimed them (validly
// or not) loses them: as Java's CooperativeStickyAssignor does, they are
// left out of this assignment.
func transferring(order []string, members map[string]memberSubscription, assigned map[string][]topicPartition) map[topicPartition]string {
	added := map[topicPartition]string{}
	revoked := map[topicPartition]bool{}
	for _, id := range order {
		claimed := map[topicPartition]bool{}
		for topic, ps := range members[id].Owned {
			for _, p := range ps {
				claimed[topicPartition{topic, p}] = true
			}
		}
		now := map[topicPartition]bool{}
		for _, p := range assigned[id] {
			now[p] = true
			if !claimed[p] {
				added[p] = id
			}
		}
		for p := range claimed {
			if !now[p] {
				revoked[p] = true
			}
		}
	}
	for p := range added {
		if !revoked[p] {
			delete(added, p)
		}
	}
	return added
}
