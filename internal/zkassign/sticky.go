package zkassign

import (
	"cmp"
	"slices"

	"github.com/zkconsumer/zkconsumer/internal/javastr"
	"github.com/zkconsumer/zkconsumer/internal/strategyname"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// StickyAssignor is zkconsumer's sticky strategy (strategyname.Sticky), for
// groups whose members are all zkconsumer members running it: Kafka's
// Scala consumer does not know it (members refuse to mix it with other
// strategies, see StrategyError).
//
// It balances the number of partitions per thread over all the topics of
// the group, and among the balanced assignments it keeps as many
// partitions as it can with the thread that owned them in
// AssignmentContext.Previous (the group's last agreed assignment):
//
//   - With identical subscriptions (every thread consumes every topic) the
//     counts of any two threads differ by at most one, and the number of
//     partitions that change thread is the least any assignment that
//     balanced can have: a member that joins takes only what it needs to be
//     even, a member that leaves gives away only its own partitions,
//     whatever its place in the group's order (range moves about half the
//     group's partitions when the first member of the order joins or
//     leaves).
//   - With different subscriptions it is balanced as far as a single move
//     can tell: no partition could move to another thread that consumes
//     its topic and owns at least two fewer partitions. An exact balance
//     may then be impossible (a topic only one thread consumes), and the
//     one reached is not always the best possible.
//
// Partitions with no previous owner in the group (new partitions, those of
// members that left) go to the least loaded thread that consumes their
// topic, the one with fewest partitions of that topic first, so that a
// topic's partitions spread over the threads.
//
// It is a pure function of its input: it depends on no map order and no
// clock, so every member computing it from the same context gets the same
// assignment. How the members come to the same Previous is the business of
// the Member (the group's sticky_assignment node, see the package
// documentation); the assignor only computes. Computed again with its own
// result as Previous, it returns that result unchanged. Unlike range it computes every topic of the group, not
// only this member's, since a thread's load is counted over all of them.
type StickyAssignor struct{}

// Name returns strategyname.Sticky.
func (StickyAssignor) Name() string { return strategyname.Sticky }

// Assign computes the sticky assignment of ctx (see StickyAssignor).
func (StickyAssignor) Assign(ctx AssignmentContext) (Assignment, error) {
	nc, err := normalize(ctx)
	if err != nil {
		return nil, err
	}
	s := newStickyState(nc, ctx.Previous)
	s.fill()
	s.balance()
	out := newAssignment(nc.consumers)
	for i, tp := range s.tps {
		out.add(tp, s.threads[s.owner[i]])
	}
	return out, nil
}

// stickyState is the working state of one StickyAssignor.Assign. Threads,
// topics and partitions are numbered in their canonical order (Java string
// order for threads and topics, ascending partitions), and every choice
// breaks ties by those numbers, never by map order.
type stickyState struct {
	threads []zkutil.ConsumerThreadID // every thread of the group, sorted
	topics  []string                  // every topic with threads and partitions, sorted
	tps     []zkutil.TopicPartition   // every partition to assign, by topic then partition
	topicOf []int                     // tps index -> topics index

	eligible [][]int  // topic -> the threads consuming it, ascending
	consumes [][]bool // topic -> thread -> whether it consumes the topic

	prev  []int   // tps index -> previous owner still eligible, -1 if none
	owner []int   // tps index -> current owner, -1 while unassigned
	load  []int   // thread -> partitions owned
	kept  []int   // thread -> partitions owned that it owned before
	byTop [][]int // thread -> topic -> partitions of the topic owned
	owned [][]int // thread -> tps indexes owned, in no particular order
}

func newStickyState(nc normalizedContext, previous map[zkutil.TopicPartition]zkutil.ConsumerThreadID) *stickyState {
	s := &stickyState{}
	threadIndex := map[zkutil.ConsumerThreadID]int{}
	var all []zkutil.ConsumerThreadID
	for _, ths := range nc.threadsForTopic {
		all = append(all, ths...)
	}
	s.threads = sortThreads(all)
	for i, th := range s.threads {
		threadIndex[th] = i
	}
	for t, ths := range nc.threadsForTopic {
		if len(ths) > 0 && len(nc.partitionsForTopic[t]) > 0 {
			s.topics = append(s.topics, t)
		}
	}
	slices.SortFunc(s.topics, javastr.Compare)

	n := len(s.threads)
	s.eligible = make([][]int, len(s.topics))
	s.consumes = make([][]bool, len(s.topics))
	for ti, t := range s.topics {
		s.consumes[ti] = make([]bool, n)
		for _, th := range nc.threadsForTopic[t] {
			i := threadIndex[th]
			s.eligible[ti] = append(s.eligible[ti], i)
			s.consumes[ti][i] = true
		}
		slices.Sort(s.eligible[ti])
		for _, p := range nc.partitionsForTopic[t] {
			s.tps = append(s.tps, zkutil.TopicPartition{Topic: t, Partition: p})
			s.topicOf = append(s.topicOf, ti)
		}
	}

	s.prev = make([]int, len(s.tps))
	s.owner = make([]int, len(s.tps))
	s.load = make([]int, n)
	s.kept = make([]int, n)
	s.owned = make([][]int, n)
	s.byTop = make([][]int, n)
	for i := range s.byTop {
		s.byTop[i] = make([]int, len(s.topics))
	}
	for i, tp := range s.tps {
		s.prev[i], s.owner[i] = -1, -1
		th, ok := previous[tp]
		if !ok {
			continue
		}
		if ti, ok := threadIndex[th]; ok && s.consumes[s.topicOf[i]][ti] {
			s.prev[i] = ti
			s.give(i, ti)
		}
	}
	return s
}

// give makes thread th the owner of partition i, which has none.
func (s *stickyState) give(i, th int) {
	s.owner[i] = th
	s.load[th]++
	s.byTop[th][s.topicOf[i]]++
	s.owned[th] = append(s.owned[th], i)
	if s.prev[i] == th {
		s.kept[th]++
	}
}

// take removes partition i from its owner.
func (s *stickyState) take(i int) {
	th := s.owner[i]
	s.owner[i] = -1
	s.load[th]--
	s.byTop[th][s.topicOf[i]]--
	if k := slices.Index(s.owned[th], i); k >= 0 {
		s.owned[th] = slices.Delete(s.owned[th], k, k+1)
	}
	if s.prev[i] == th {
		s.kept[th]--
	}
}

// receiver returns the thread that should take a partition of topic ti:
// among those consuming it with fewer than limit partitions, the least
// loaded, then the one with fewest partitions of the topic, then the first.
// It returns -1 if there is none.
func (s *stickyState) receiver(ti, limit int) int {
	best := -1
	for _, th := range s.eligible[ti] {
		if s.load[th] >= limit {
			continue
		}
		if best < 0 || cmp.Or(cmp.Compare(s.load[th], s.load[best]), cmp.Compare(s.byTop[th][ti], s.byTop[best][ti])) < 0 {
			best = th
		}
	}
	return best
}

// fill gives every partition without a previous owner to a receiver.
func (s *stickyState) fill() {
	for i := range s.tps {
		if s.owner[i] < 0 {
			s.give(i, s.receiver(s.topicOf[i], int(^uint(0)>>1)))
		}
	}
}

// balance moves partitions, one at a time, from a thread to another that
// consumes their topic and owns at least two fewer, until no such move is
// left. Each move lowers the sum of the squared loads, so it ends. The
// giver is the most loaded thread that can give, the one keeping fewest of
// its previous partitions first (so that the threads that stay one above
// the others are those that keep most); it gives a partition it did not
// own before if it has one (a move that costs nothing), else one of the
// topic it owns most of.
func (s *stickyState) balance() {
	order := make([]int, len(s.threads))
	for {
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int {
			return cmp.Or(cmp.Compare(s.load[b], s.load[a]), cmp.Compare(s.kept[a], s.kept[b]), cmp.Compare(a, b))
		})
		moved := false
		for _, a := range order {
			if s.moveFrom(a) {
				moved = true
				break
			}
		}
		if !moved {
			return
		}
	}
}

// moveFrom moves one partition away from thread a if it can (see balance).
func (s *stickyState) moveFrom(a int) bool {
	if s.load[a] < 2 {
		return false
	}
	candidates := slices.Clone(s.owned[a])
	slices.SortFunc(candidates, func(i, j int) int {
		ki, kj := s.prev[i] == a, s.prev[j] == a
		if ki != kj {
			if ki {
				return 1
			}
			return -1
		}
		return cmp.Or(cmp.Compare(s.byTop[a][s.topicOf[j]], s.byTop[a][s.topicOf[i]]), cmp.Compare(i, j))
	})
	for _, i := range candidates {
		if b := s.receiver(s.topicOf[i], s.load[a]-1); b >= 0 {
			s.take(i)
			s.give(i, b)
			return true
		}
	}
	return false
}
