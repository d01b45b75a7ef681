package topicfilter

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/javaregex"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

func TestInternalTopicsAreSkippedOnlyWhenExcluded(t *testing.T) {
	f, err := New(zkutil.PatternWhitelist, ".*")
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

// TestBlacklistAdmitsWhatTheWhitelistRefuses: a blacklist of a regex
// admits exactly the topics the whitelist of the same regex refuses, after
// the same munging; a regex Java's Pattern would read otherwise is refused
// for both, with the translator's error.
func TestBlacklistAdmitsWhatTheWhitelistRefuses(t *testing.T) {
	for raw, topics := range map[string][]string{
		"orders.*, payments": {"orders", "orders-eu", "payments", "payment", "x"},
		"(?i)k":              {"k", "K", "\u212a"},
		"a.c":                {"abc", "a\rc", "ac"},
	} {
		w, err := New(zkutil.PatternWhitelist, raw)
		require.NoError(t, err)
		b, err := New(zkutil.PatternBlacklist, raw)
		require.NoError(t, err)
		require.Equal(t, w.Regex, b.Regex)
		for _, topic := range topics {
			require.Equal(t, !w.Allows(topic, false), b.Allows(topic, false), "%q on %q", raw, topic)
		}
	}
	for _, pattern := range []string{zkutil.PatternWhitelist, zkutil.PatternBlacklist} {
		_, err := New(pattern, "[a-z&&[^aeiou]]")
		var rerr *javaregex.Error
		require.ErrorAs(t, err, &rerr, pattern)
		require.Equal(t, `class intersection "&&"`, rerr.Construct)
	}
	_, err := New("static", "a")
	require.ErrorContains(t, err, `topic filter pattern "static"`)
	_, err = New(zkutil.PatternWhitelist, " \"\" ")
	require.ErrorContains(t, err, "empty topic filter")
}
