package zkutil

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/zkconsumer/zkconsumer/internal/zkjson"
)

// Values of the "pattern" field of a consumer registration (Scala's
// TopicCount.staticPattern, whiteListPattern and blackListPattern).
const (
	// PatternStatic subscribes to the listed topics.
	PatternStatic = "static"
	// PatternWhitelist subscribes to every topic the single regex matches.
	PatternWhitelist = "white_list"
	// PatternBlacklist subscribes to every topic the single regex does not
	// match.
	PatternBlacklist = "black_list"
)

// registrationVersion is the only version Kafka ever wrote.
const registrationVersion = 1

// Limits on what one registration may ask for. Kafka only requires a stream
// count from 1 to 2^31-1, but every member of a group expands every other
// member's registration into one thread id per stream and topic, so a single
// registration asking for 2^31 streams would make each member of the group
// allocate tens of gigabytes. A stream beyond a topic's partition count never
// gets a partition, and real subscriptions use a handful of streams
// (MirrorMaker's num.streams is typically 1 to 32) on at most some hundreds
// of listed topics, so these bounds sit orders of magnitude above anything
// useful, while a rebalance at the limit stays within some hundreds of
// megabytes (one thread id costs tens of bytes in the group view and a few
// hundred in the roundrobin assignor).
const (
	// MaxStreams is the most streams a registration may ask for per topic,
	// or for its wildcard: 65,536, far more than the partitions of any
	// real topic.
	MaxStreams = 1 << 16
	// MaxTopics is the most topics a static registration may list.
	MaxTopics = 1 << 16
	// MaxThreads is the most streams a static registration may ask for in
	// total, summed over its topics: 1,048,576. The rebalance applies the
	// same bound to the thread ids of a whole group, wildcards expanded, so
	// a registration above it could never be used anyway.
	MaxThreads = 1 << 20
)

// Registration is the value of a member's /consumers/<group>/ids/<id> node:
// what it subscribes to and with how many streams.
type Registration struct {
	// Version is the format version. Kafka always writes 1; readers ignore
	// it. DecodeRegistration reports 0 when it is missing or not an integer.
	Version int
	// Subscription maps each topic (PatternStatic) or the single regex
	// (PatternWhitelist, PatternBlacklist) to its number of streams, which
	// is from 1 to MaxStreams.
	Subscription map[string]int
	// Pattern is PatternStatic, PatternWhitelist or PatternBlacklist.
	Pattern string
	// Timestamp is the registration time in milliseconds since the epoch.
	// It is informational: no reader acts on it.
	Timestamp int64
	// AssignmentStrategy is the partition.assignment.strategy of the member
	// ("range", "roundrobin", "sticky"), which zkconsumer members write in
	// the field "assignment_strategy" so that the others can tell whether
	// they may share the group. Kafka's Scala consumer writes no such
	// field ("" here) and ignores it when it reads (it reads only
	// "pattern" and "subscription").
	AssignmentStrategy string
}

// EncodeRegistration returns the registration JSON exactly as Kafka 1.1.1
// writes it, compact and with keys in Kafka's order:
//
//	{"version":1,"subscription":{"orders":2,"payments":1},"pattern":"static","timestamp":"1531000000000"}
//
// An AssignmentStrategy is appended as a fifth field, which Scala readers
// ignore:
//
//	{"version":1,"subscription":{"orders":2},"pattern":"static","timestamp":"1531000000000","assignment_strategy":"range"}
//
// Subscription keys are sorted and the timestamp is a string. Keys are
// escaped like Kafka's CoreUtils.JSONEscapeString (which also escapes '/'),
// once: a wildcard regex therefore decodes back to itself in every Scala
// version, unlike the double escaping of Scala 1.0.1 and later.
//
// Since one registration that Scala cannot use breaks the rebalance of the
// whole group, EncodeRegistration refuses: an unknown or empty Pattern; an
// empty Subscription; a wildcard with other than one entry; a stream count
// outside 1..MaxStreams; more than MaxTopics topics or MaxThreads streams in
// all; an empty or non-UTF-8 key; a Version other than 0 or 1 (0 is written
// as 1).
func EncodeRegistration(r Registration) ([]byte, error) {
	if r.Version != 0 && r.Version != registrationVersion {
		return nil, fmt.Errorf("registration version %d is not supported, Kafka writes %d", r.Version, registrationVersion)
	}
	switch r.Pattern {
	case PatternStatic:
	case PatternWhitelist, PatternBlacklist:
		if len(r.Subscription) != 1 {
			return nil, fmt.Errorf("%s registration needs exactly one regex, got %d", r.Pattern, len(r.Subscription))
		}
	default:
		return nil, fmt.Errorf("unknown registration pattern %q", r.Pattern)
	}
	if len(r.Subscription) == 0 {
		return nil, errors.New("registration has an empty subscription")
	}
	if !utf8.ValidString(r.AssignmentStrategy) {
		return nil, fmt.Errorf("registration assignment strategy %q is not valid UTF-8", r.AssignmentStrategy)
	}
	if err := checkStreamCounts(r.Subscription); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(r.Subscription))
	for k := range r.Subscription {
		if k == "" {
			return nil, errors.New("registration subscribes to an empty topic or regex")
		}
		if !utf8.ValidString(k) {
			return nil, fmt.Errorf("registration key %q is not valid UTF-8", k)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)

	b := make([]byte, 0, 96+32*len(keys))
	b = append(b, `{"version":1,"subscription":{`...)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = zkjson.AppendString(b, k)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(r.Subscription[k]), 10)
	}
	b = append(b, `},"pattern":`...)
	b = zkjson.AppendString(b, r.Pattern)
	b = append(b, `,"timestamp":"`...)
	b = strconv.AppendInt(b, r.Timestamp, 10)
	b = append(b, '"')
	if r.AssignmentStrategy != "" {
		b = append(b, `,"assignment_strategy":`...)
		b = zkjson.AppendString(b, r.AssignmentStrategy)
	}
	b = append(b, '}')
	return b, nil
}

// DecodeRegistration parses the registration stored at path, accepting what
// every Scala version from 0.8.0 on wrote: keys in any order, any spacing,
// the timestamp as a string or a number or not at all, the version missing.
// "assignment_strategy", which zkconsumer members add, must be a string
// when present.
// The decoded keys are returned as they are, without TopicFilter munging.
//
// As in Scala's TopicCount.constructTopicCount, "pattern" (a string) and
// "subscription" (an object) are required, and a pattern other than
// white_list/black_list, or an empty subscription, means a static
// subscription; Pattern is then PatternStatic. Every stream count must be an
// integer literal: Scala rejects fractions and strings, and fails the whole
// group's rebalance on a 0. Unlike Scala, which takes up to 2^31-1,
// DecodeRegistration also refuses a count above MaxStreams, more than
// MaxTopics topics and more than MaxThreads streams in all, so that nobody
// expands an absurd registration into billions of thread ids; the caller
// skips it like any other unreadable registration. Where Scala would take
// the first of several wildcard entries, DecodeRegistration returns an error,
// since Scala's choice depends on map iteration order.
func DecodeRegistration(path string, data []byte) (Registration, error) {
	r, err := decodeRegistration(data)
	if err != nil {
		return Registration{}, decodeError(path, err)
	}
	return r, nil
}

func decodeRegistration(data []byte) (Registration, error) {
	obj, err := zkjson.ParseObject(data)
	if err != nil {
		return Registration{}, err
	}
	var r Registration
	if raw, ok := obj["version"]; ok {
		if v, err := zkjson.Int32(raw); err == nil {
			r.Version = int(v)
		}
	}
	if raw, ok := obj["timestamp"]; ok {
		r.Timestamp = lenientTimestamp(raw)
	}
	if raw, ok := obj["assignment_strategy"]; ok {
		s, err := zkjson.String(raw)
		if err != nil {
			return Registration{}, fmt.Errorf("registration assignment_strategy: %w", err)
		}
		r.AssignmentStrategy = s
	}

	rawPattern, ok := obj["pattern"]
	if !ok {
		return Registration{}, errors.New(`registration has no "pattern"`)
	}
	pattern, err := zkjson.String(rawPattern)
	if err != nil {
		return Registration{}, fmt.Errorf("registration pattern: %w", err)
	}

	rawSub, ok := obj["subscription"]
	if !ok {
		return Registration{}, errors.New(`registration has no "subscription"`)
	}
	sub, err := zkjson.Object(rawSub)
	if err != nil {
		return Registration{}, fmt.Errorf("registration subscription: %w", err)
	}
	r.Subscription = make(map[string]int, len(sub))
	for k, raw := range sub {
		n, err := zkjson.Int32(raw)
		if err != nil {
			return Registration{}, fmt.Errorf("stream count of %q: %w", k, err)
		}
		r.Subscription[k] = int(n)
	}
	if err := checkStreamCounts(r.Subscription); err != nil {
		return Registration{}, err
	}

	r.Pattern = PatternStatic
	if (pattern == PatternWhitelist || pattern == PatternBlacklist) && len(sub) > 0 {
		if len(sub) != 1 {
			return Registration{}, fmt.Errorf("%s registration has %d regexes, want 1", pattern, len(sub))
		}
		r.Pattern = pattern
	}
	return r, nil
}

// checkStreamCounts enforces 1..MaxStreams streams per entry, at most
// MaxTopics entries and at most MaxThreads streams in all. The errors name
// the offending entry (the first in key order, so that the same data always
// gives the same error) and carry no "" prefix.
func checkStreamCounts(sub map[string]int) error {
	if len(sub) > MaxTopics {
		return fmt.Errorf("registration lists %d topics, more than the limit of %d", len(sub), MaxTopics)
	}
	var total int64
	for _, k := range slices.Sorted(maps.Keys(sub)) {
		n := sub[k]
		if n < 1 {
			return fmt.Errorf("stream count of %q is %d, want at least 1", k, n)
		}
		if n > MaxStreams {
			return fmt.Errorf("stream count of %q is %d, more than the limit of %d", k, n, MaxStreams)
		}
		total += int64(n) // at most MaxTopics*MaxStreams = 2^32
	}
	if total > MaxThreads {
		return fmt.Errorf("registration asks for %d streams in all, more than the limit of %d", total, MaxThreads)
	}
	return nil
}

// lenientTimestamp reads an epoch-millisecond timestamp written as a string
// or a number. Since no reader acts on it, anything else reads as 0 instead
// of failing the registration.
func lenientTimestamp(raw json.RawMessage) int64 {
	if s, err := zkjson.String(raw); err == nil {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0
		}
		return n
	}
	n, err := zkjson.Int(raw, 64)
	if err != nil {
		return 0
	}
	return n
}

// NormalizeTopicFilter applies Kafka's TopicFilter munging to a raw
// whitelist or blacklist: trim characters up to U+0020 at both ends, replace
// ',' with '|', remove spaces, and strip runs of double and single quotes
// at the start and at the end (property files may bring quotes along). Scala applies it
// both to its configured filter and to the regexes it reads from other
// members' registrations.
//
// As with Java's "$", a quote run before a final line terminator
// (U+0085, U+2028, U+2029, which trimming keeps) is stripped too.
func NormalizeTopicFilter(raw string) string {
	s := strings.TrimFunc(raw, func(r rune) bool { return r <= ' ' })
	s = strings.ReplaceAll(s, ",", "|")
	s = strings.ReplaceAll(s, " ", "")
	s = strings.TrimLeft(s, `"'`)
	for _, term := range []string{"\u0085", "\u2028", "\u2029"} {
		if body, ok := strings.CutSuffix(s, term); ok {
			return strings.TrimRight(body, `"'`) + term
		}
	}
	return strings.TrimRight(s, `"'`)
}
