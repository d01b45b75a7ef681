package rebalance

import (
	"fmt"
	"regexp"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// isInternalTopic reports whether topic is one of Kafka's internal topics
// (__consumer_offsets, __transaction_state), which wildcard subscriptions
// skip while exclude.internal.topics is true. It is a function rather than
// a map so that no caller can change the set for everyone.
func isInternalTopic(topic string) bool {
	switch topic {
	case "__consumer_offsets", "__transaction_state":
		return true
	}
	return false
}

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

// NewTopicFilter compiles a whitelist or blacklist. raw is munged as Kafka
// munges it (',' becomes '|', spaces and surrounding quotes go; see
// zkutil.NormalizeTopicFilter), then read as a java.util.regex.Pattern and
// translated to Go's regexp with the same meaning. A pattern Java would
// reject, or whose meaning Go cannot reproduce (class intersection, {,n},
// possessive quantifiers, look-around, back-references, Unicode properties,
// (?m), a '$' before more of the pattern, ...), is refused with a
// *RegexError naming the construct, never approximated.
func NewTopicFilter(pattern, raw string) (*TopicFilter, error) {
	if pattern != zkutil.PatternWhitelist && pattern != zkutil.PatternBlacklist {
		return nil, fmt.Errorf("rebalance: topic filter pattern %q: must be %s or %s", pattern, zkutil.PatternWhitelist, zkutil.PatternBlacklist)
	}
	regex := zkutil.NormalizeTopicFilter(raw)
	if regex == "" {
		return nil, fmt.Errorf("rebalance: empty topic filter")
	}
	re, err := compileJavaRegex(regex)
	if err != nil {
		return nil, err
	}
	return &TopicFilter{Pattern: pattern, Regex: regex, re: re}, nil
}

// Allows reports whether the filter admits topic, as Kafka's
// TopicFilter.isTopicAllowed does.
func (f *TopicFilter) Allows(topic string, excludeInternal bool) bool {
	if excludeInternal && isInternalTopic(topic) {
		return false
	}
	matches := f.re.MatchString(topic)
	if f.Pattern == zkutil.PatternBlacklist {
		return !matches
	}
	return matches
}
