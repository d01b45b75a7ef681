package javaregex

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

// brokerSyntax is the little of RE2/J's syntax Translate writes, which a
// KIP-848 member sends to the coordinator: ASCII
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

// TestTranslationSyntax: every whitelist Compile accepts is translated
// into the small syntax above, selecting exactly the topics the compiled
// regex matches (read as Go's regexp reads it, which RE2/J
// ports; TestBrokerRegexAgainstRE2J asks RE2/J itself).
func TestTranslationSyntax(t *testing.T) {
	for _, tc := range filterCases {
		if tc.refused != "" {
			continue
		}
		t.Run(tc.raw, func(t *testing.T) {
			f, err := compileRaw(tc.raw)
			require.NoError(t, err)
			regex, err := Translate(zkutil.NormalizeTopicFilter(tc.raw))
			require.NoError(t, err)
			require.Regexp(t, brokerSyntax, regex)
			re := matchesLikeRE2J(t, regex)
			for name := range tc.match {
				require.Equal(t, f.MatchString(name), re.MatchString(name), "%q on %q", regex, name)
			}
			for _, name := range topicCorpus {
				require.Equal(t, f.MatchString(name), re.MatchString(name), "%q on %q", regex, name)
			}
		})
	}
}

// TestRE2JDiffersRefused: Compile refuses the constructs of re2jDiffers
// that RE2/J, the coordinator's regex engine, lacks or reads otherwise,
// naming them; the others it translates with Java's meaning.
func TestRE2JDiffersRefused(t *testing.T) {
	var rerr *Error
	for _, tc := range re2jDiffers {
		_, err := compileRaw(tc.raw)
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
// two disagree. Compile refuses each, naming construct, or, where
// construct is "", translates it to RE2/J syntax with Java's meaning;
// TestTranslationAgainstRE2J shows RE2/J's reading of the regex as
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

// TestTranslationAgainstRE2J asks RE2/J itself (the re2j jar of Kafka
// 4.4, which its coordinator compiles SubscribedTopicRegex with) and
// java.util.regex: every whitelist Compile accepts, from
// filterCases and thousands of random ones, is translated into a regex that RE2/J
// compiles and that matches, under Matcher.matches, exactly the strings
// String.matches accepts for the whitelist (topic names and others); and
// each construct of re2jDiffers is one RE2/J refuses or reads otherwise
// than Java, so refusing it is needed.
func TestTranslationAgainstRE2J(t *testing.T) {
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
		munged := zkutil.NormalizeTopicFilter(raw)
		if _, err := Compile(munged); err != nil || munged == "" {
			return false
		}
		regex, err := Translate(munged)
		require.NoError(t, err, raw)
		javaPatterns = append(javaPatterns, munged)
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
