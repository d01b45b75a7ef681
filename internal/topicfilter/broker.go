package topicfilter

import (
	"fmt"
	"strings"

	"github.com/zkconsumer/zkconsumer/internal/javaregex"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// This file gives a whitelist to Kafka's group coordinator, which in the
// consumer group protocol of KIP-848 (group.protocol=consumer, Kafka 4.0
// and later) evaluates a member's subscription regex itself: the member
// sends it as ConsumerGroupHeartbeat's SubscribedTopicRegex (version 1 on),
// and the coordinator compiles it with RE2/J (com.google.re2j.Pattern, not
// java.util.regex), matches it against the whole name of every topic of the
// cluster (Matcher.matches) that the member's principal may describe, and
// assigns the partitions of the topics it matches, again after topics are
// created (Kafka 4.4's GroupMetadataManager: on a heartbeat, at most every
// 10 s, when topics were created since, and every
// group.consumer.regex.refresh.interval.ms).
//
// RE2/J is a Java port of Go's regexp: the same syntax (Perl flags: no
// look-around, back-references, possessive quantifiers or atomic groups)
// and the same meaning. So the regex sent is the Go translation that
// New made of the Java one (package javaregex), which refuses every
// java.util.regex construct Go, and so RE2/J, lacks or reads differently,
// and writes what it keeps in a small subset of the syntax whose meaning
// leaves nothing to either parser: literal ASCII letters and digits, every
// other character as \x{...}, classes of explicit ranges, (?:...) groups,
// *, +, {n,} and {n,m}, \A and \z. Where the two syntaxes differ, the
// java.util.regex reading is the one kept, because it is what Kafka's
// Scala consumer and Java's Pattern subscriptions give
// (TestBrokerRegexAgainstRE2J checks each item below against RE2/J 1.8,
// Kafka 4.4's):
//
//   - Look-ahead (?=, (?!, look-behind (?<=, (?<!, atomic groups (?>,
//     possessive quantifiers a*+, back-references \1 and \k<name>: RE2/J
//     refuses them (Kafka 4.4's coordinator then answers
//     INVALID_REGULAR_EXPRESSION). Refused here, with the construct named.
//   - Class intersection [a-z&&[^aeiou]] and nested classes [a[b]]: RE2/J
//     reads '&', '[' as literal characters and matches other topics
//     without a word. Refused.
//   - \Q...\E: RE2/J honours it outside classes only (inside, it refuses
//     the pattern); Java inside too. Translated to literals.
//   - '.' (RE2/J also matches \r, U+0085, U+2028, U+2029), \s (RE2/J
//     lacks \x0B), (?i) (RE2/J folds K to U+212A KELVIN SIGN too), octal
//     \0nnn (RE2/J reads \0101 as \010 then '1'), \Z and Java's POSIX
//     classes \p{Lower}, \p{Alpha}, ... (RE2/J refuses them): translated
//     to explicit characters (see package javaregex, which also translates
//     '$', \uXXXX, \e, \cX), or refused where no translation keeps the
//     meaning.
//   - (?<name>...): both, with other rules for names; the translation
//     writes no names.
//
// A blacklist cannot be sent: the coordinator assigns what the regex
// matches, and the complement of a regex cannot be written in RE2/J's
// syntax without look-ahead (it can in theory, as a regular language, but
// only through an automaton whose size can explode). It is refused.
//
// The coordinator does not skip internal topics: a regex that matches
// __consumer_offsets gets its partitions assigned (when the principal may
// describe it). Kafka's exclude.internal.topics (true by default) keeps
// wildcard subscriptions off them, and a regex cannot express "but not
// these" either, so while it holds a whitelist that matches one of Kafka
// 4.4's internal topics (Topic.INTERNAL_TOPICS) is refused; with
// exclude.internal.topics=false it is sent as is.

// brokerInternalTopics is Kafka 4.4's Topic.INTERNAL_TOPICS: the internal
// topics a coordinator's regex may see in the cluster's metadata.
var brokerInternalTopics = [...]string{"__consumer_offsets", "__transaction_state", "__share_group_state"}

// BrokerRegex returns the regex to send as the SubscribedTopicRegex of a
// KIP-848 member (group.protocol=consumer) for this filter: a regex in
// RE2/J's syntax that, under the coordinator's Matcher.matches, selects
// exactly the topics Allows(topic, false) admits. excludeInternal is
// exclude.internal.topics. It returns a *javaregex.Error when the broker cannot
// be given the filter's meaning: a blacklist, or, with excludeInternal, a
// whitelist that matches one of Kafka's internal topics, which the broker
// would assign. (Constructs that RE2/J lacks or reads differently were
// refused by New already.)
func (f *Filter) BrokerRegex(excludeInternal bool) (string, error) {
	if f.Pattern == zkutil.PatternBlacklist {
		return "", &javaregex.Error{Regex: f.Regex, Construct: "a blacklist",
			Reason: "the broker assigns the topics a regex matches, and RE2/J has no look-ahead to match every topic but those; use a whitelist"}
	}
	if excludeInternal {
		for _, t := range brokerInternalTopics {
			if f.re.MatchString(t) {
				return "", &javaregex.Error{Regex: f.Regex, Construct: fmt.Sprintf("a whitelist that matches the internal topic %s", t),
					Reason: "the broker assigns every topic the regex matches, internal ones too, and exclude.internal.topics=true forbids consuming them; make the regex match none of " +
						strings.Join(brokerInternalTopics[:], ", ") + " (for example, start it with a character other than '_'), or set exclude.internal.topics=false"}
			}
		}
	}
	re2, err := javaregex.Translate(f.Regex)
	if err != nil {
		return "", err // New translated it already
	}
	return re2, nil
}
