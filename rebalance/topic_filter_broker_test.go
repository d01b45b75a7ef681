package rebalance

import (
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// topicCorpus is legal topic names (the only strings a coordinator matches
// a regex against), chosen to probe the patterns of filterCases.
var topicCorpus = []string{
	"a", "b", "A", "B", "K", "k", "t1", "aa", "ab", "abc", "ac", "bdd", "aabcdd", "orders", "orders-eu", "orders.eu",
	"orders_eu", "ordersX", "orders-12", "payments", "payment", "payments-", "foo.bar", "fooxbar", "a.bxc", "axbxc",
	"a.b", "axb", "ABCDE", "-", ".", "_", "..x", "x-1", "0", "9a", "KBa", "kba", "De", "DE", "aBc", "aBC", "ab-_", "aB-_",
	"__consumer_offsets", "__transaction_state", "__share_group_state", "_internal", "rx-new", "a-z", "Z", "z",
}

// brokerSyntax is the little of RE2/J's syntax BrokerRegex writes: ASCII
// letters and digits, \x{...}, classes of ranges, (?:...) groups,
// alternation, *, +, counts, \A and \z. A change of the translation that
// writes more must be checked against RE2/J again.
var brokerSyntax = regexp.MustCompile(`\A(?:[A-Za-z0-9|()*+{},\[\]^-]|\(\?:|\\x\{[0-9A-F]{1,6}\}|\\[Az])*\z`)

// matchesLikeRE2J compiles regex with Go's regexp, of which RE2/J is a
// port with the same syntax and flags, anchored as Matcher.matches is.
func matchesLikeRE2J(t *testing.T, regex string) *regexp.Regexp {
	t.Helper()
	re, err := regexp.Compile(`\A(?:` + regex + `)\z`)
	require.NoError(t, err, "%q", regex)
	return re
}

// TestBrokerRegexTranslation: every whitelist NewTopicFilter accepts gets
// a broker regex written in the small syntax above that selects exactly
// the topics the filter admits (read as Go's regexp reads it, which RE2/J
// ports; TestBrokerRegexAgainstRE2J asks RE2/J itself).
func TestBrokerRegexTranslation(t *testing.T) {
	for _, tc := range filterCases {
		if tc.refused != "" {
			continue
		}
		t.Run(tc.raw, func(t *testing.T) {
			f, err := NewTopicFilter(zkutil.PatternWhitelist, tc.raw)
			require.NoError(t, err)
			regex, err := f.BrokerRegex(false)
			require.NoError(t, err)
			require.Regexp(t, brokerSyntax, regex)
			re := matchesLikeRE2J(t, regex)
			for name := range tc.match {
				require.Equal(t, f.Allows(name, false), re.MatchString(name), "%q on %q", regex, name)
			}
			for _, name := range topicCorpus {
				require.Equal(t, f.Allows(name, false), re.MatchString(name), "%q on %q", regex, name)
			}
		})
	}
	f, err := NewTopicFilter(zkutil.PatternWhitelist, "orders.*, payments")
	require.NoError(t, err)
	regex, err := f.BrokerRegex(true)
	require.NoError(t, err)
	require.Equal(t, `(?:orders(?:[\x{0}-\x{9}\x{B}-\x{C}\x{E}-\x{84}\x{86}-\x{2027}\x{202A}-\x{10FFFF}])*|payments)`, regex)
}

// TestBrokerRegexRefusals: what the broker cannot be given is refused
// with a *RegexError naming it: a blacklist (RE2/J has no look-ahead to
// negate a regex), and, with exclude.internal.topics, a whitelist that
// matches one of Kafka 4.4's internal topics (the coordinator assigns
// them). Constructs RE2/J lacks or reads differently never reach
// BrokerRegex: NewTopicFilter refuses them (re2jDiffers).
func TestBrokerRegexRefusals(t *testing.T) {
	b, err := NewTopicFilter(zkutil.PatternBlacklist, "internal-.*")
	require.NoError(t, err)
	_, err = b.BrokerRegex(false)
	var rerr *RegexError
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
		f, err := NewTopicFilter(zkutil.PatternWhitelist, tc.raw)
		require.NoError(t, err)
		regex, err := f.BrokerRegex(true)
		if tc.internal == "" {
			require.NoError(t, err, tc.raw)
			for _, name := range brokerInternalTopics {
				require.False(t, matchesLikeRE2J(t, regex).MatchString(name), "%q matches %s", regex, name)
			}
			continue
		}
		require.ErrorAs(t, err, &rerr, tc.raw)
		require.Contains(t, rerr.Construct, "internal topic "+tc.internal, tc.raw)
		require.Contains(t, rerr.Reason, "exclude.internal.topics=false", tc.raw)
		// Without exclude.internal.topics it is sent, and matches it.
		regex, err = f.BrokerRegex(false)
		require.NoError(t, err)
		require.True(t, matchesLikeRE2J(t, regex).MatchString(tc.internal), "%q on %s", regex, tc.internal)
	}

	for _, tc := range re2jDiffers {
		_, err := NewTopicFilter(zkutil.PatternWhitelist, tc.raw)
		if tc.construct == "" {
			require.NoError(t, err, tc.raw)
			continue
		}
		require.ErrorAs(t, err, &rerr, tc.raw)
		require.Contains(t, rerr.Construct, tc.construct, tc.raw)
	}
}

// re2jDiffers is java.util.regex constructs that RE2/J, the coordinator's
// regex engine, refuses (witness "") or reads differently: on witness the
// two disagree. NewTopicFilter refuses each, naming construct, or, where
// construct is "", translates it to RE2/J syntax with Java's meaning;
// TestBrokerRegexAgainstRE2J shows RE2/J's reading of the regex as
// written.
var re2jDiffers = []struct{ raw, construct, witness string }{
	{`(a)\1`, `back-reference "\1"`, ""},
	{`(?<n>a)\k<n>`, `back-reference "\k<name>"`, ""},
	{`(?=a)a`, `look-ahead "(?="`, ""},
	{`(?!b)a`, `look-ahead "(?!"`, ""},
	{`(?<=a)b`, `look-behind "(?<="`, ""},
	{`(?<!a)b`, `look-behind "(?<!"`, ""},
	{`a*+`, `possessive quantifier`, ""},
	{`(?>a|ab)c`, `atomic group "(?>"`, ""},
	{`[a-z&&[^aeiou]]`, `class intersection "&&"`, "b"},
	{`[a-c&&b]`, `class intersection "&&"`, "a"},
	{`[a[b]]`, `nested class "["`, "b"},
	{`a\Z`, ``, ""},
	{`[\Q]-\E]`, ``, ""},
	{`a.c`, ``, "a\rc"},
	{`(?i)k`, ``, "\u212a"},
	{`a\sb`, ``, "a\x0bb"},
	{`\p{Lower}`, ``, ""},
	{`\p{Alpha}`, ``, ""},
	{`\p{Punct}`, ``, ""},
	{`\0101`, ``, "A"},
}

// TestBrokerRegexAgainstRE2J asks RE2/J itself (the re2j jar of Kafka
// 4.4, which its coordinator compiles SubscribedTopicRegex with) and
// java.util.regex: every whitelist NewTopicFilter accepts, from
// filterCases and thousands of random ones, gets a broker regex that RE2/J
// compiles and that matches, under Matcher.matches, exactly the strings
// String.matches accepts for the whitelist (topic names and others); and
// each construct of re2jDiffers is one RE2/J refuses or reads otherwise
// than Java, so refusing it is needed.
func TestBrokerRegexAgainstRE2J(t *testing.T) {
	lib, err := testcluster.Kafka4Lib()
	require.NoError(t, err)
	jars, err := filepath.Glob(filepath.Join(lib, "re2j-*.jar"))
	require.NoError(t, err)
	require.Len(t, jars, 1, "the re2j jar among Kafka 4's")
	askRE2J := func(patterns []string, inputs [][]string) []oracleResult {
		return askOracle(t, patterns, inputs, "-cp", jars[0], "testdata/RE2JOracle.java")
	}

	// The table, and random whitelists.
	var javaPatterns, brokerPatterns []string
	var inputs [][]string
	add := func(raw string, names []string) bool {
		f, err := NewTopicFilter(zkutil.PatternWhitelist, raw)
		if err != nil {
			return false
		}
		regex, err := f.BrokerRegex(false)
		require.NoError(t, err, raw)
		javaPatterns = append(javaPatterns, f.Regex)
		brokerPatterns = append(brokerPatterns, regex)
		inputs = append(inputs, names)
		return true
	}
	for _, tc := range filterCases {
		if tc.refused == "" {
			names := append([]string(nil), topicCorpus...)
			for name := range tc.match {
				names = append(names, name)
			}
			require.True(t, add(tc.raw, names), tc.raw)
		}
	}
	fromTable := len(javaPatterns)
	random, randomInputs := randomJavaPatterns(t, 3000, 24)
	for i, p := range random {
		add(p, randomInputs[i]) // Java is asked about the munged regex too
	}
	t.Logf("%d whitelists of the table and %d random ones", fromTable, len(javaPatterns)-fromTable)
	java := askJava(t, javaPatterns, inputs)
	re2j := askRE2J(brokerPatterns, inputs)
	for i := range javaPatterns {
		require.Empty(t, java[i].err, "%q", javaPatterns[i])
		require.Empty(t, re2j[i].err, "RE2/J refuses %q, the broker regex of %q", brokerPatterns[i], javaPatterns[i])
		for j, s := range inputs[i] {
			require.Equal(t, java[i].matches[j], re2j[i].matches[j], "%q (RE2/J: %q) on %q", javaPatterns[i], brokerPatterns[i], s)
		}
	}

	// The constructs refused, sent as they are.
	var raws []string
	var witnesses [][]string
	for _, tc := range re2jDiffers {
		raws = append(raws, zkutil.NormalizeTopicFilter(tc.raw))
		witnesses = append(witnesses, []string{tc.witness})
	}
	java = askJava(t, raws, witnesses)
	re2j = askRE2J(raws, witnesses)
	for i, tc := range re2jDiffers {
		require.Empty(t, java[i].err, "Java accepts %q", tc.raw)
		if tc.witness == "" {
			require.NotEmpty(t, re2j[i].err, "RE2/J refuses %q", tc.raw)
			t.Logf("RE2/J on %q: %s", tc.raw, re2j[i].err)
			continue
		}
		require.Empty(t, re2j[i].err, "RE2/J accepts %q", tc.raw)
		require.NotEqual(t, java[i].matches[0], re2j[i].matches[0], "RE2/J reads %q otherwise than Java on %q", tc.raw, tc.witness)
	}
}
