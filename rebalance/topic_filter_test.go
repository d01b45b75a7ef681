package rebalance

import (
	"testing"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

func TestInternalTopicsAreSkippedOnlyWhenExcluded(t *testing.T) {
	f, err := NewTopicFilter(zkutil.PatternWhitelist, ".*")
	if err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{"__consumer_offsets", "__transaction_state"} {
		if !isInternalTopic(topic) {
			t.Errorf("isInternalTopic(%q) = false", topic)
		}
		if f.Allows(topic, true) {
			t.Errorf("whitelist .* with exclude.internal.topics=true allows %q", topic)
		}
		if !f.Allows(topic, false) {
			t.Errorf("whitelist .* with exclude.internal.topics=false refuses %q", topic)
		}
	}
	for _, topic := range []string{"orders", "__consumer_offsets2", "_consumer_offsets"} {
		if isInternalTopic(topic) {
			t.Errorf("isInternalTopic(%q) = true", topic)
		}
		if !f.Allows(topic, true) {
			t.Errorf("whitelist .* refuses %q", topic)
		}
	}
}
