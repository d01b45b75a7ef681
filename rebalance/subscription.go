package rebalance

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

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
	Filter  *TopicFilter
	Streams int
}

// StaticSubscription subscribes to fixed topics.
func StaticSubscription(topics map[string]int) Subscription {
	return Subscription{Topics: maps.Clone(topics)}
}

// WildcardSubscription subscribes to every topic filter admits.
func WildcardSubscription(filter *TopicFilter, streams int) Subscription {
	return Subscription{Filter: filter, Streams: streams}
}

// Validate reports a subscription no Kafka member could read.
func (s Subscription) Validate() error {
	if s.Filter != nil {
		if len(s.Topics) > 0 {
			return errors.New("rebalance: a subscription is either static or wildcard, not both")
		}
		if s.Streams < 1 {
			return fmt.Errorf("rebalance: wildcard subscription with %d streams: need at least 1", s.Streams)
		}
		return nil
	}
	if len(s.Topics) == 0 {
		return errors.New("rebalance: subscription without topics")
	}
	for t, n := range s.Topics {
		if t == "" {
			return errors.New("rebalance: subscription with an empty topic name")
		}
		if n < 1 {
			return fmt.Errorf("rebalance: topic %q with %d streams: need at least 1", t, n)
		}
	}
	return nil
}

// Registration is the value this member writes under
// /consumers/<group>/ids/<consumerId>.
func (s Subscription) Registration(now time.Time) zkutil.Registration {
	if s.Filter != nil {
		return zkutil.Registration{Version: 1, Pattern: s.Filter.Pattern,
			Subscription: map[string]int{s.Filter.Regex: s.Streams}, Timestamp: now.UnixMilli()}
	}
	return zkutil.Registration{Version: 1, Pattern: zkutil.PatternStatic,
		Subscription: maps.Clone(s.Topics), Timestamp: now.UnixMilli()}
}

// subscriptionFromRegistration rebuilds another member's subscription as
// Kafka's TopicCount.constructTopicCount does.
func subscriptionFromRegistration(r zkutil.Registration) (Subscription, error) {
	if r.Pattern == zkutil.PatternWhitelist || r.Pattern == zkutil.PatternBlacklist {
		if len(r.Subscription) != 1 {
			return Subscription{}, fmt.Errorf("rebalance: wildcard registration with %d entries", len(r.Subscription))
		}
		for regex, n := range r.Subscription {
			f, err := NewTopicFilter(r.Pattern, regex)
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
// every topic in allTopics it admits.
func (s Subscription) ThreadIDs(consumerID string, allTopics []string, excludeInternal bool) map[string][]zkutil.ConsumerThreadID {
	out := map[string][]zkutil.ConsumerThreadID{}
	add := func(topic string, n int) {
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
