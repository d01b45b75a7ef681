package zkgroup

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/topicfilter"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// Subscription is what one member consumes: either fixed topics with a
// number of streams each (Kafka's StaticTopicCount), or a wildcard filter
// with a number of streams shared by every matching topic (Kafka's
// WildcardTopicCount).
type Subscription struct {
	// Topics maps each topic to its number of streams, for a static
	// subscription.
	Topics map[string]int
	// Filter and Streams describe a wildcard subscription; Topics must
	// then be empty.
	Filter  *topicfilter.Filter
	Streams int
}

// StaticSubscription subscribes to fixed topics.
func StaticSubscription(topics map[string]int) Subscription {
	return Subscription{Topics: maps.Clone(topics)}
}

// WildcardSubscription subscribes to every topic filter admits.
func WildcardSubscription(filter *topicfilter.Filter, streams int) Subscription {
	return Subscription{Filter: filter, Streams: streams}
}

// Validate reports a subscription no Kafka member could read, or one whose
// size every member of the group would have to refuse: more than
// zkutil.MaxStreams streams for a topic or the wildcard, more than
// zkutil.MaxTopics topics or more than zkutil.MaxThreads streams in all.
func (s Subscription) Validate() error {
	if s.Filter != nil {
		if len(s.Topics) > 0 {
			return errors.New("a subscription is either static or wildcard, not both")
		}
		if s.Streams < 1 {
			return fmt.Errorf("wildcard subscription with %d streams: need at least 1", s.Streams)
		}
		if s.Streams > zkutil.MaxStreams {
			return fmt.Errorf("wildcard subscription with %d streams: at most %d are allowed", s.Streams, zkutil.MaxStreams)
		}
		return nil
	}
	if len(s.Topics) == 0 {
		return errors.New("subscription without topics")
	}
	if len(s.Topics) > zkutil.MaxTopics {
		return fmt.Errorf("subscription with %d topics: at most %d are allowed", len(s.Topics), zkutil.MaxTopics)
	}
	var total int64
	for _, t := range slices.Sorted(maps.Keys(s.Topics)) {
		n := s.Topics[t]
		if t == "" {
			return errors.New("subscription with an empty topic name")
		}
		if n < 1 {
			return fmt.Errorf("topic %q with %d streams: need at least 1", t, n)
		}
		if n > zkutil.MaxStreams {
			return fmt.Errorf("topic %q with %d streams: at most %d are allowed", t, n, zkutil.MaxStreams)
		}
		total += int64(n)
	}
	if total > zkutil.MaxThreads {
		return fmt.Errorf("subscription with %d streams in all: at most %d are allowed", total, zkutil.MaxThreads)
	}
	return nil
}

// Registration is the value a member with this subscription writes under
// /consumers/<group>/ids/<consumerId>, as Kafka's Scala consumer writes it;
// a Member adds the strategy it runs (zkutil.Registration.AssignmentStrategy).
func (s Subscription) Registration(now time.Time) zkutil.Registration {
	return s.registration(now, "")
}

// registration is Registration declaring strategy (none if "").
func (s Subscription) registration(now time.Time, strategy string) zkutil.Registration {
	if s.Filter != nil {
		return zkutil.Registration{Version: 1, Pattern: s.Filter.Pattern,
			Subscription: map[string]int{s.Filter.Regex: s.Streams}, Timestamp: now.UnixMilli(), AssignmentStrategy: strategy}
	}
	return zkutil.Registration{Version: 1, Pattern: zkutil.PatternStatic,
		Subscription: maps.Clone(s.Topics), Timestamp: now.UnixMilli(), AssignmentStrategy: strategy}
}

// subscriptionFromRegistration rebuilds another member's subscription as
// Kafka's TopicCount.constructTopicCount does.
func subscriptionFromRegistration(r zkutil.Registration) (Subscription, error) {
	if r.Pattern == zkutil.PatternWhitelist || r.Pattern == zkutil.PatternBlacklist {
		if len(r.Subscription) != 1 {
			return Subscription{}, fmt.Errorf("wildcard registration with %d entries", len(r.Subscription))
		}
		for regex, n := range r.Subscription {
			f, err := topicfilter.New(r.Pattern, regex)
			if err != nil {
				return Subscription{}, err
			}
			return WildcardSubscription(f, n), nil
		}
	}
	s := StaticSubscription(r.Subscription)
	return s, s.Validate()
}

// ThreadIDs expands the subscription into thread ids per topic for member
// consumerID. A wildcard subscription gets the same Streams thread ids for
// every topic in allTopics it admits. A stream count outside
// 1..zkutil.MaxStreams, which Validate refuses, gives no thread ids, so that
// ThreadIDs never panics and never allocates more than zkutil.MaxStreams
// ids per topic; the group view bounds the total before calling it.
func (s Subscription) ThreadIDs(consumerID string, allTopics []string, excludeInternal bool) map[string][]zkutil.ConsumerThreadID {
	out := map[string][]zkutil.ConsumerThreadID{}
	add := func(topic string, n int) {
		if n < 1 || n > zkutil.MaxStreams {
			return
		}
		ids := make([]zkutil.ConsumerThreadID, n)
		for i := range ids {
			ids[i] = zkutil.ConsumerThreadID{ConsumerID: consumerID, Thread: i}
		}
		out[topic] = ids
	}
	if s.Filter != nil {
		for _, t := range allTopics {
			if s.Filter.Allows(t, excludeInternal) {
				add(t, s.Streams)
			}
		}
		return out
	}
	for _, t := range slices.Sorted(maps.Keys(s.Topics)) {
		add(t, s.Topics[t])
	}
	return out
}

// threadCount is the number of thread ids ThreadIDs would return, computed
// without allocating them.
func (s Subscription) threadCount(allTopics []string, excludeInternal bool) int64 {
	valid := func(n int) int64 {
		if n < 1 || n > zkutil.MaxStreams {
			return 0
		}
		return int64(n)
	}
	var total int64
	if s.Filter != nil {
		for _, t := range allTopics {
			if s.Filter.Allows(t, excludeInternal) {
				total += valid(s.Streams)
			}
		}
		return total
	}
	for _, n := range s.Topics {
		total += valid(n)
	}
	return total
}
