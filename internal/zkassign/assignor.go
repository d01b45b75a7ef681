package zkassign

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/zkconsumer/zkconsumer/internal/javastr"
	"github.com/zkconsumer/zkconsumer/internal/strategyname"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// ErrInvalidContext is wrapped by the errors Assign returns when an
// AssignmentContext holds values no ZooKeeper registration can produce, such
// as a thread with an empty consumer id or a negative partition.
var ErrInvalidContext = errors.New("invalid assignment context")

// AssignmentContext is everything an assignor needs, read fresh from
// ZooKeeper by the caller at the start of each rebalance attempt. It mirrors
// Scala's kafka.consumer.AssignmentContext.
//
// Assignors never modify the context and never depend on the order of its
// slices or on map iteration order: thread ids are deduplicated and sorted by
// their string form (Java String.compareTo order), partitions are
// deduplicated and sorted ascending.
type AssignmentContext struct {
	// ConsumerID is the id of the member computing the assignment.
	ConsumerID string
	// MyTopicThreadIDs holds this member's thread ids per subscribed topic
	// (Scala's myTopicThreadIds). Every thread must belong to ConsumerID.
	MyTopicThreadIDs map[string][]zkutil.ConsumerThreadID
	// ConsumersForTopic holds every member's thread ids per topic, this
	// member included (Scala's consumersForTopic, from
	// /consumers/<group>/ids). Topics with no threads are ignored.
	ConsumersForTopic map[string][]zkutil.ConsumerThreadID
	// PartitionsForTopic holds the partition ids of each topic (Scala's
	// partitionsForTopic, from /brokers/topics/<topic>). A topic that is
	// missing here has no partitions.
	PartitionsForTopic map[string][]int32
	// Consumers lists every member id of the group (the children of
	// /consumers/<group>/ids). Each gets an entry in the Assignment, even
	// when it owns nothing.
	Consumers []string
	// Previous is the group's assignment before this one, partition ->
	// thread, which StickyAssignor keeps as much of as balance allows.
	// Range and roundrobin ignore it. Entries for partitions or threads
	// that are no longer in the context are ignored.
	Previous map[zkutil.TopicPartition]zkutil.ConsumerThreadID
}

// Assignment maps each member id to the partitions it owns and, for each
// partition, the thread that owns it. It is the global decision: every
// member computes the same Assignment and claims its own share.
type Assignment map[string]map[zkutil.TopicPartition]zkutil.ConsumerThreadID

// Assignor decides which thread of which member owns each partition. It is
// Kafka's PartitionAssignor. Implementations are pure functions of the
// context and safe for concurrent use.
type Assignor interface {
	// Name returns the partition.assignment.strategy value that selects
	// this assignor.
	Name() string
	// Assign computes the global assignment for ctx. It returns an error
	// wrapping ErrInvalidContext if ctx is malformed.
	Assign(ctx AssignmentContext) (Assignment, error)
}

// AssignorOption configures NewAssignor.
type AssignorOption func(*assignorOptions)

type assignorOptions struct {
	hashFormat RoundRobinHashFormat
}

// WithRoundRobinHashFormat selects the topic-partition format whose hash
// orders partitions in the roundrobin assignor. The default,
// HashFormatDash, matches Scala consumers 1.0.0 to 1.1.1; HashFormatBracket
// matches 0.8.2 to 0.11.0.x. Every roundrobin member of a group must use the
// same format. The range assignor ignores this option.
func WithRoundRobinHashFormat(f RoundRobinHashFormat) AssignorOption {
	return func(o *assignorOptions) { o.hashFormat = f }
}

// NewAssignor returns the assignor for a partition.assignment.strategy value:
// strategyname.Range, strategyname.RoundRobin or strategyname.Sticky. Any other value gives
// an error wrapping strategyname.ErrUnknown.
func NewAssignor(name string, opts ...AssignorOption) (Assignor, error) {
	var o assignorOptions
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	switch name {
	case strategyname.Range:
		return RangeAssignor{}, nil
	case strategyname.RoundRobin:
		if err := o.hashFormat.validate(); err != nil {
			return nil, err
		}
		return RoundRobinAssignor{HashFormat: o.hashFormat}, nil
	case strategyname.Sticky:
		return StickyAssignor{}, nil
	default:
		return nil, fmt.Errorf("%w %q: allowed values are %q, %q and %q",
			strategyname.ErrUnknown, name, strategyname.Range, strategyname.RoundRobin, strategyname.Sticky)
	}
}

// normalizedContext is an AssignmentContext checked and put into the
// canonical order both assignors rely on.
type normalizedContext struct {
	// myTopics are the topics this member subscribes to, in Java order.
	myTopics []string
	// threadsForTopic holds deduplicated thread ids in Java string order;
	// topics without threads are absent.
	threadsForTopic map[string][]zkutil.ConsumerThreadID
	// partitionsForTopic holds deduplicated partitions in ascending order.
	partitionsForTopic map[string][]int32
	consumers          []string
}

// normalize validates ctx and returns sorted, deduplicated copies of its
// contents. It never modifies ctx.
func normalize(ctx AssignmentContext) (normalizedContext, error) {
	if ctx.ConsumerID == "" {
		return normalizedContext{}, fmt.Errorf("%w: empty ConsumerID", ErrInvalidContext)
	}
	nc := normalizedContext{
		myTopics:           make([]string, 0, len(ctx.MyTopicThreadIDs)),
		threadsForTopic:    make(map[string][]zkutil.ConsumerThreadID, len(ctx.ConsumersForTopic)),
		partitionsForTopic: make(map[string][]int32, len(ctx.PartitionsForTopic)),
		consumers:          make([]string, 0, len(ctx.Consumers)),
	}

	for topic, threads := range ctx.MyTopicThreadIDs {
		if topic == "" {
			return normalizedContext{}, fmt.Errorf("%w: empty topic in MyTopicThreadIDs", ErrInvalidContext)
		}
		for _, th := range threads {
			if err := validateThread(th); err != nil {
				return normalizedContext{}, fmt.Errorf("%w (MyTopicThreadIDs, topic %q)", err, topic)
			}
			if th.ConsumerID != ctx.ConsumerID {
				return normalizedContext{}, fmt.Errorf("%w: thread %q in MyTopicThreadIDs does not belong to member %q",
					ErrInvalidContext, th.String(), ctx.ConsumerID)
			}
		}
		nc.myTopics = append(nc.myTopics, topic)
	}
	slices.SortFunc(nc.myTopics, javastr.Compare)

	for topic, threads := range ctx.ConsumersForTopic {
		if topic == "" {
			return normalizedContext{}, fmt.Errorf("%w: empty topic in ConsumersForTopic", ErrInvalidContext)
		}
		for _, th := range threads {
			if err := validateThread(th); err != nil {
				return normalizedContext{}, fmt.Errorf("%w (ConsumersForTopic, topic %q)", err, topic)
			}
		}
		if sorted := sortThreads(threads); len(sorted) > 0 {
			nc.threadsForTopic[topic] = sorted
		}
	}

	for topic, parts := range ctx.PartitionsForTopic {
		if topic == "" {
			return normalizedContext{}, fmt.Errorf("%w: empty topic in PartitionsForTopic", ErrInvalidContext)
		}
		for _, p := range parts {
			if p < 0 {
				return normalizedContext{}, fmt.Errorf("%w: negative partition %d of topic %q", ErrInvalidContext, p, topic)
			}
		}
		sorted := slices.Clone(parts)
		slices.Sort(sorted)
		nc.partitionsForTopic[topic] = slices.Compact(sorted)
	}

	for _, id := range ctx.Consumers {
		if id == "" {
			return normalizedContext{}, fmt.Errorf("%w: empty member id in Consumers", ErrInvalidContext)
		}
		nc.consumers = append(nc.consumers, id)
	}
	return nc, nil
}

// validateThread rejects thread ids no registration can produce. With a
// non-empty consumer id and a non-negative thread number, distinct thread ids
// have distinct string forms, so ordering by string form is a total order.
func validateThread(th zkutil.ConsumerThreadID) error {
	if th.ConsumerID == "" {
		return fmt.Errorf("%w: thread %d has an empty consumer id", ErrInvalidContext, th.Thread)
	}
	if th.Thread < 0 {
		return fmt.Errorf("%w: thread of member %q has negative number %d", ErrInvalidContext, th.ConsumerID, th.Thread)
	}
	return nil
}

// sortThreads returns a deduplicated copy of threads ordered by string form
// with Java's String.compareTo, as Scala's ConsumerThreadId ordering does.
func sortThreads(threads []zkutil.ConsumerThreadID) []zkutil.ConsumerThreadID {
	keyed := make([]keyedThread, 0, len(threads))
	for _, th := range threads {
		keyed = append(keyed, keyedThread{key: th.String(), id: th})
	}
	slices.SortStableFunc(keyed, func(a, b keyedThread) int { return javastr.Compare(a.key, b.key) })
	keyed = slices.CompactFunc(keyed, func(a, b keyedThread) bool { return a.id == b.id })
	out := make([]zkutil.ConsumerThreadID, len(keyed))
	for i, k := range keyed {
		out[i] = k.id
	}
	return out
}

// keyedThread caches a thread id's string form while sorting.
type keyedThread struct {
	key string
	id  zkutil.ConsumerThreadID
}

// Flatten returns the assignment as partition -> thread.
func (a Assignment) Flatten() map[zkutil.TopicPartition]zkutil.ConsumerThreadID {
	out := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	for _, tps := range a {
		maps.Copy(out, tps)
	}
	return out
}

// newAssignment returns an Assignment with an empty entry for every member.
func newAssignment(consumers []string) Assignment {
	a := make(Assignment, len(consumers))
	for _, id := range consumers {
		a[id] = map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	}
	return a
}

// add records that thread th owns tp, creating th's member entry if needed
// (a member whose registration appeared after Consumers was read still gets
// its share, as in Scala's getAndMaybePut).
func (a Assignment) add(tp zkutil.TopicPartition, th zkutil.ConsumerThreadID) {
	m, ok := a[th.ConsumerID]
	if !ok {
		m = map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
		a[th.ConsumerID] = m
	}
	m[tp] = th
}
