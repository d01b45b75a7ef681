// Package topicfilter is Kafka's wildcard subscription, a whitelist or a
// blacklist of topics: which topics it admits (Allows, with Java's regex
// semantics through package javaregex), and the regex a KIP-848 member
// sends its coordinator for it (BrokerRegex).
package topicfilter

import (
	"fmt"
	"regexp"

	"github.com/zkconsumer/zkconsumer/internal/javaregex"
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

// Filter is a wildcard subscription: Kafka's Whitelist or Blacklist. It
// matches topic names with Java's String.matches semantics: the regex must
// match the whole name.
type Filter struct {
	// Pattern is zkutil.PatternWhitelist or zkutil.PatternBlacklist.
	Pattern string
	// Regex is the filter after Kafka's munging (',' becomes '|', spaces
	// and surrounding quotes are removed).
	Regex string
	re    *regexp.Regexp
}

// New compiles a whitelist or blacklist. raw is munged as Kafka
// munges it (',' becomes '|', spaces and surrounding quotes go; see
// zkutil.NormalizeTopicFilter), then read as a java.util.regex.Pattern and
// translated to Go's regexp with the same meaning. A pattern Java would
// reject, or whose meaning Go cannot reproduce (class intersection, {,n},
// possessive quantifiers, look-around, back-references, Unicode properties,
// (?m), a '$' before more of the pattern, ...), is refused with a
// *javaregex.Error naming the construct, never approximated.
func New(pattern, raw string) (*Filter, error) {
	if pattern != zkutil.PatternWhitelist && pattern != zkutil.PatternBlacklist {
		return nil, fmt.Errorf("topic filter pattern %q: must be %s or %s", pattern, zkutil.PatternWhitelist, zkutil.PatternBlacklist)
	}
	regex := zkutil.NormalizeTopicFilter(raw)
	if regex == "" {
		return nil, fmt.Errorf("empty topic filter")
	}
	re, err := javaregex.Compile(regex)
	if err != nil {
		return nil, err
	}
	return &Filter{Pattern: pattern, Regex: regex, re: re}, nil
}

// Allows reports whether the filter admits topic, as Kafka's
// TopicFilter.isTopicAllowed does.
func (f *Filter) Allows(topic string, excludeInternal bool) bool {
	if excludeInternal && isInternalTopic(topic) {
		return false
	}
	matches := f.re.MatchString(topic)
	if f.Pattern == zkutil.PatternBlacklist {
		return !matches
	}
	return matches
}
