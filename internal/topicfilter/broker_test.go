package topicfilter

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/javaregex"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestBrokerRegexOfAWhitelist: a whitelist's broker regex is the
// translation of its munged regex.
func TestBrokerRegexOfAWhitelist(t *testing.T) {
	f, err := New(zkutil.PatternWhitelist, "orders.*, payments")
	require.NoError(t, err)
	regex, err := f.BrokerRegex(true)
	require.NoError(t, err)
	require.Equal(t, `(?:orders(?:[\x{0}-\x{9}\x{B}-\x{C}\x{E}-\x{84}\x{86}-\x{2027}\x{202A}-\x{10FFFF}])*|payments)`, regex)
}

// TestBrokerRegexRefusals: what the broker cannot be given is refused
// with a *javaregex.Error naming it: a blacklist (RE2/J has no look-ahead to
// negate a regex), and, with exclude.internal.topics, a whitelist that
// matches one of Kafka 4.4's internal topics (the coordinator assigns
// them). Constructs RE2/J lacks or reads differently never reach
// BrokerRegex: New refuses them (javaregex's re2jDiffers).
func TestBrokerRegexRefusals(t *testing.T) {
	b, err := New(zkutil.PatternBlacklist, "internal-.*")
	require.NoError(t, err)
	_, err = b.BrokerRegex(false)
	var rerr *javaregex.Error
	require.ErrorAs(t, err, &rerr)
	require.Equal(t, "a blacklist", rerr.Construct)
	require.Contains(t, rerr.Reason, "look-ahead")

	for _, tc := range []struct {
		raw, internal string // internal: the internal topic named, "" if accepted
	}{
		{".*", "__consumer_offsets"},
		{"__.*", "__consumer_offsets"},
		{"__transaction_state, orders", "__transaction_state"},
		{"_+share_group_state", "__share_group_state"},
		{"(?i)__CONSUMER_OFFSETS", "__consumer_offsets"},
		{"[a-z].*", ""},
		{"_[^_].*", ""},
		{"__cluster_metadata", ""}, // not a topic the metadata lists
	} {
		f, err := New(zkutil.PatternWhitelist, tc.raw)
		require.NoError(t, err)
		regex, err := f.BrokerRegex(true)
		if tc.internal == "" {
			require.NoError(t, err, tc.raw)
			for _, name := range brokerInternalTopics {
				require.False(t, anchored(t, regex).MatchString(name), "%q matches %s", regex, name)
			}
			continue
		}
		require.ErrorAs(t, err, &rerr, tc.raw)
		require.Contains(t, rerr.Construct, "internal topic "+tc.internal, tc.raw)
		require.Contains(t, rerr.Reason, "exclude.internal.topics=false", tc.raw)
		// Without exclude.internal.topics it is sent, and matches it.
		regex, err = f.BrokerRegex(false)
		require.NoError(t, err)
		require.True(t, anchored(t, regex).MatchString(tc.internal), "%q on %s", regex, tc.internal)
	}
}

// anchored compiles regex with Go's regexp, of which RE2/J is a port with
// the same syntax and flags, anchored as Matcher.matches is.
func anchored(t *testing.T, regex string) *regexp.Regexp {
	t.Helper()
	re, err := regexp.Compile(`\A(?:` + regex + `)\z`)
	require.NoError(t, err, "%q", regex)
	return re
}
