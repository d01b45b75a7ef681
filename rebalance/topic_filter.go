package rebalance

import (
	"fmt"
	"regexp"
	"regexp/syntax"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// InternalTopics are Kafka's internal topics, which wildcard subscriptions
// skip while exclude.internal.topics is true.
var InternalTopics = map[string]bool{"__consumer_offsets": true, "__transaction_state": true}

// TopicFilter is a wildcard subscription: Kafka's Whitelist or Blacklist. It
// matches topic names with Java's String.matches semantics: the regex must
// match the whole name.
type TopicFilter struct {
	// Pattern is zkutil.PatternWhitelist or zkutil.PatternBlacklist.
	Pattern string
	// Regex is the filter after Kafka's munging (',' becomes '|', spaces
	// and surrounding quotes are removed).
	Regex string
	re    *regexp.Regexp
}

// NewTopicFilter compiles a whitelist or blacklist. Patterns that Go's RE2
// engine cannot express with Java's meaning (look-around, back-references,
// possessive quantifiers) are rejected with an error, never approximated.
func NewTopicFilter(pattern, raw string) (*TopicFilter, error) {
	if pattern != zkutil.PatternWhitelist && pattern != zkutil.PatternBlacklist {
		return nil, fmt.Errorf("rebalance: topic filter pattern %q: must be %s or %s", pattern, zkutil.PatternWhitelist, zkutil.PatternBlacklist)
	}
	regex := zkutil.NormalizeTopicFilter(raw)
	if regex == "" {
		return nil, fmt.Errorf("rebalance: empty topic filter")
	}
	// Perl syntax is the closest to java.util.regex; anchoring the whole
	// expression gives String.matches semantics.
	if _, err := syntax.Parse(regex, syntax.Perl); err != nil {
		return nil, fmt.Errorf("rebalance: topic filter %q cannot be used: %w (Java-only constructs such as look-around, back-references and possessive quantifiers are not supported)", regex, err)
	}
	re, err := regexp.Compile(`^(?:` + regex + `)$`)
	if err != nil {
		return nil, fmt.Errorf("rebalance: topic filter %q cannot be used: %w", regex, err)
	}
	return &TopicFilter{Pattern: pattern, Regex: regex, re: re}, nil
}

// Allows reports whether the filter admits topic, as Kafka's
// TopicFilter.isTopicAllowed does.
func (f *TopicFilter) Allows(topic string, excludeInternal bool) bool {
	if excludeInternal && InternalTopics[topic] {
		return false
	}
	matches := f.re.MatchString(topic)
	if f.Pattern == zkutil.PatternBlacklist {
		return !matches
	}
	return matches
}
