package javaregex

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// filterCase is one whitelist as a user writes it, with what Kafka 1.1.1
// (java.util.regex on Java 17, checked by TestFilterTableAgainstJava) and
// Compile make of it after Kafka's munging (compileRaw).
type filterCase struct {
	raw string
	// javaOK: Pattern.compile accepts the munged regex.
	javaOK bool
	// refused: a substring of Compile's error, "" if it accepts.
	refused string
	// match: what String.matches says for these names (when Java accepts).
	match map[string]bool
}

var filterCases = []filterCase{
	// The two constructs of the bug report.
	{raw: `[a-z&&[^aeiou]]`, javaOK: true, refused: `class intersection "&&" at index 4`,
		match: map[string]bool{"b": true, "a": false, "&": false, "[": false}},
	{raw: `a{,3}`, javaOK: false, refused: `"{" not followed by a count at index 1`},

	// Kafka's munging: commas, spaces, quotes.
	{raw: `"orders.*, payments"`, javaOK: true, match: map[string]bool{"orders-eu": true, "payments": true, "payment": false, " payments": false}},
	{raw: `'a' , 'b'`, javaOK: true, match: map[string]bool{"a'": true, "'b": true, "a": false}},
	// Munged to a{2|3}: through a whitelist, Kafka never accepts {n,m} or {n,}.
	{raw: `a{2,3}`, javaOK: false, refused: `counted repetition at index 1`},
	{raw: `a{2,}`, javaOK: false, refused: `counted repetition at index 1`},
	{raw: `[a,b]`, javaOK: true, match: map[string]bool{"a": true, "|": true, ",": false}},

	// Same meaning in both, translated as is.
	{raw: `foo\..*`, javaOK: true, match: map[string]bool{"foo.bar": true, "fooxbar": false}},
	{raw: `(orders|payments)-[0-9]+`, javaOK: true, match: map[string]bool{"orders-12": true, "payments-": false}},
	{raw: `a*?b+?c??d{2}?`, javaOK: true, match: map[string]bool{"bdd": true, "aabcdd": true, "ac": false}},
	{raw: `\Qa.b\E.c`, javaOK: true, match: map[string]bool{"a.bxc": true, "axbxc": false}},
	{raw: `[\Q]-\E]`, javaOK: true, match: map[string]bool{"]": true, "-": true, "\\": false}},
	{raw: `\Qa.b`, javaOK: true, match: map[string]bool{"a.b": true, "axb": false}},
	{raw: `(?<topic>t)\d`, javaOK: true, match: map[string]bool{"t1": true}},
	{raw: `\x41\x{42}\u0043\0104\0105`, javaOK: true, match: map[string]bool{"ABCDE": true}},
	{raw: `\011`, javaOK: true, match: map[string]bool{"\t": true, "9": false}},
	{raw: `\e\cA\ck`, javaOK: true, match: map[string]bool{"\x1b\x01+": true}},
	{raw: `\uD83D\uDE00`, javaOK: true, match: map[string]bool{"😀": true}},
	{raw: `[]a]`, javaOK: true, match: map[string]bool{"]": true, "a": true}},
	{raw: `[a-]\d[--/]`, javaOK: true, match: map[string]bool{"-0.": true, "a9-": true}},
	{raw: `[\d-z]`, javaOK: true, match: map[string]bool{"-": true, "5": true, "y": false}},
	{raw: `^orders$`, javaOK: true, match: map[string]bool{"orders": true, "orders\n": false}},
	{raw: `a\z`, javaOK: true, match: map[string]bool{"a": true}},
	{raw: `(a$|b)?\Z`, javaOK: true, match: map[string]bool{"a": true, "b": true, "": true, "a\n": false}},

	// Different meanings, translated.
	{raw: `a.c`, javaOK: true, match: map[string]bool{"abc": true, "a\rc": false, "a\u0085c": false, "a\u2028c": false, "a\nc": false}},
	{raw: `(?s)a.c`, javaOK: true, match: map[string]bool{"a\nc": true, "a\rc": true}},
	{raw: `(?d)a.c`, javaOK: true, match: map[string]bool{"a\nc": false, "a\rc": true, "a\u2028c": true}},
	{raw: `a\sb`, javaOK: true, match: map[string]bool{"a\x0bb": true, "a b": true}},
	{raw: `(?i)k[a-c]\x41`, javaOK: true, match: map[string]bool{"KBa": true, "\u212abA": false}},
	{raw: `(?i)[^k]`, javaOK: true, match: map[string]bool{"K": false, "\u212a": true}},
	{raw: `(?i)é`, javaOK: true, match: map[string]bool{"é": true, "É": false}},
	{raw: `(?i)[Z-a]`, javaOK: true, match: map[string]bool{"z": true, "A": true, "_": true, "b": false}},
	{raw: `(a(?i)b)c|(?i:d)e`, javaOK: true, match: map[string]bool{"aBc": true, "aBC": false, "De": true, "DE": false}},
	{raw: `\p{Lower}+\P{Alnum}\p{Punct}`, javaOK: true, match: map[string]bool{"ab-_": true, "aB-_": false, "a\u00e9\u00a7": false}},
	{raw: `(?i)\p{Alpha}`, javaOK: true, match: map[string]bool{"K": true, "\u017f": false}},

	// Different meanings, refused.
	{raw: `[a[b]]`, javaOK: true, refused: `nested class "[" at index 2`, match: map[string]bool{"b": true}},
	{raw: `[[:alpha:]]`, javaOK: true, refused: `nested class "["`, match: map[string]bool{":": true, "b": false}},
	{raw: `a*+`, javaOK: true, refused: `possessive quantifier at index 1`, match: map[string]bool{"aa": true}},
	{raw: `a{2}+`, javaOK: true, refused: `possessive quantifier`, match: map[string]bool{"aa": true}},
	{raw: `(?>a|ab)c`, javaOK: true, refused: `atomic group "(?>"`, match: map[string]bool{"abc": false, "ac": true}},
	{raw: `(?=a)a`, javaOK: true, refused: `look-ahead "(?="`, match: map[string]bool{"a": true}},
	{raw: `(?!b)a`, javaOK: true, refused: `look-ahead "(?!"`, match: map[string]bool{"a": true}},
	{raw: `(?<=a)b`, javaOK: true, refused: `look-behind "(?<="`},
	{raw: `(?<!a)b`, javaOK: true, refused: `look-behind "(?<!"`},
	{raw: `(a)\1`, javaOK: true, refused: `back-reference "\1"`, match: map[string]bool{"aa": true}},
	{raw: `(?<n>a)\k<n>`, javaOK: true, refused: `back-reference "\k<name>"`, match: map[string]bool{"aa": true}},
	{raw: `a$\n`, javaOK: true, refused: `"$" or "\Z" before more of the pattern at index 1`, match: map[string]bool{"a\n": true}},
	{raw: `a\Z\r`, javaOK: true, refused: `before more of the pattern`, match: map[string]bool{"a\r": true}},
	{raw: `(a$)*`, javaOK: true, refused: `before more of the pattern`},
	{raw: `\p{javaLowerCase}`, javaOK: true, refused: `character property "\p{javaLowerCase}"`, match: map[string]bool{"a": true, "é": true}},
	{raw: `\p{L}`, javaOK: true, refused: `character property "\p{L}"`, match: map[string]bool{"é": true}},
	{raw: `\pL`, javaOK: true, refused: `character property "\p{L}"`},
	{raw: `\p{IsLatin}`, javaOK: true, refused: `character property "\p{IsLatin}"`},
	{raw: `(?i)\p{Lower}`, javaOK: true, refused: `"\p{Lower}" under (?i)`},
	{raw: `\h`, javaOK: true, refused: `"\h"`, match: map[string]bool{"\u00a0": true}},
	{raw: `\v`, javaOK: true, refused: `"\v"`, match: map[string]bool{"\n": true, "\x0b": true}},
	{raw: `\R`, javaOK: true, refused: `linebreak "\R"`, match: map[string]bool{"\r\n": true}},
	{raw: `\X`, javaOK: true, refused: `grapheme cluster "\X"`, match: map[string]bool{"a": true}},
	{raw: `\N{SPACE}`, javaOK: true, refused: `named character`, match: map[string]bool{" ": true}},
	{raw: `a\b`, javaOK: true, refused: `word boundary "\b"`, match: map[string]bool{"a": true}},
	{raw: `\Ga`, javaOK: true, refused: `"\G"`, match: map[string]bool{"a": true}},
	{raw: `(?m)a$`, javaOK: true, refused: `flag (?m)`},
	{raw: `(?u)a`, javaOK: true, refused: `flag (?u)`},
	{raw: `(?U)\w`, javaOK: true, refused: `flag (?U)`, match: map[string]bool{"é": true}},
	{raw: `(?x)a#c`, javaOK: true, refused: `flag (?x)`},
	{raw: `(?c)a`, javaOK: true, refused: `flag (?c)`},
	{raw: `a{1001}`, javaOK: true, refused: `repetition count 1001`},
	{raw: `a{2}{3}`, javaOK: true, refused: `stacked quantifiers`},

	// Java refuses, Go would accept.
	{raw: `(?P<n>a)`, refused: `"(?P<name>"`},
	{raw: `(?<a_b>x)`, refused: `group name`},
	{raw: `(?<n>x)(?<n>y)`, refused: `Named capturing group <n> is already defined`},
	{raw: `\0`, refused: `octal escape "\0"`},
	{raw: `\08`, refused: `octal escape "\0"`},
	{raw: `\y`, refused: `"\y"`},
	{raw: `\Qa\E\E`, refused: `"\E"`},
	{raw: `[\b]`, refused: `"\b" in a character class`},
	{raw: `a{`, refused: `"{" not followed by a count`},
	{raw: `{a}`, refused: `"{" that does not follow an operand`},
	{raw: `a{1,2`, refused: `Unclosed counted closure`},
	{raw: `x{2,1}`, refused: `Unclosed counted closure`}, // munged to x{2|1}
	{raw: `[z-a]`, refused: `Illegal character range`},
	{raw: `[a-\d]`, refused: `Illegal character range`},
	{raw: `\x4`, refused: `Illegal hexadecimal escape sequence`},
	{raw: `\x{110000}`, refused: `Hexadecimal codepoint is too big`},
	{raw: `\u12`, refused: `Illegal Unicode escape sequence`},
	{raw: `\c`, refused: `Illegal control escape sequence`},
	{raw: `\p{lower}`, refused: `character property "\p{lower}"`},
	{raw: `*a`, refused: `Dangling meta character '*'`},
	{raw: `a**`, refused: `stacked quantifiers`},
	{raw: `(a`, refused: `Unclosed group`},
	{raw: `a)`, refused: `Unmatched closing ')'`},
	{raw: `[a`, refused: `Unclosed character class`},
	{raw: `[^]`, refused: `Unclosed character class`},
	{raw: `(?#c)a`, refused: `Unknown inline modifier`},
	{raw: `a\`, refused: `"\" at the end`},
}

// compileRaw compiles a whitelist as a user writes it, munged as Kafka
// munges it (',' becomes '|', spaces and surrounding quotes go).
func compileRaw(raw string) (*regexp.Regexp, error) {
	return Compile(zkutil.NormalizeTopicFilter(raw))
}

// TestJavaSemantics: Compile refuses, naming the construct, every pattern
// that java.util.regex would refuse or read differently from Go's regexp,
// and matches strings exactly as String.matches does for every pattern it
// accepts.
func TestJavaSemantics(t *testing.T) {
	for _, tc := range filterCases {
		t.Run(tc.raw, func(t *testing.T) {
			re, err := compileRaw(tc.raw)
			if tc.refused != "" {
				require.Error(t, err)
				var rerr *Error
				require.True(t, errors.As(err, &rerr), "%T %v", err, err)
				require.Contains(t, err.Error(), tc.refused)
				require.Equal(t, zkutil.NormalizeTopicFilter(tc.raw), rerr.Regex)
				return
			}
			require.NoError(t, err)
			require.True(t, tc.javaOK)
			for name, want := range tc.match {
				require.Equal(t, want, re.MatchString(name), "MatchString(%q)", name)
			}
		})
	}
}

// oracleResult is Java's verdict on one pattern: a syntax error, or
// whether each string matches.
type oracleResult struct {
	err     string
	matches []bool
}

// askJava runs every pattern and its strings through java.util.regex (see
// testdata/JavaRegexOracle.java) in one JVM.
func askJava(t *testing.T, patterns []string, inputs [][]string) []oracleResult {
	t.Helper()
	return askOracle(t, patterns, inputs, "testdata/JavaRegexOracle.java")
}

// askOracle runs every pattern and its strings through a regex oracle,
// the single-file Java program given last in args (after JVM options such
// as a class path), in one JVM.
func askOracle(t *testing.T, patterns []string, inputs [][]string, args ...string) []oracleResult {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a JVM: skipped by -short")
	}
	java, err := exec.LookPath("java")
	require.NoError(t, err, "this test checks the translation against a JVM's regex engine and needs Java 11 or later")
	var in strings.Builder
	enc := func(s string) string {
		if s == "" {
			return "-"
		}
		return hex.EncodeToString([]byte(s))
	}
	for i, p := range patterns {
		in.WriteString(enc(p))
		for _, s := range inputs[i] {
			in.WriteString(" " + enc(s))
		}
		in.WriteByte('\n')
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, java, append([]string{"-Xshare:auto", "-XX:TieredStopAtLevel=1"}, args...)...)
	cmd.Stdin = strings.NewReader(in.String())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "java: %s", stderr.String())
	var results []oracleResult
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "E "):
			results = append(results, oracleResult{err: strings.TrimPrefix(line, "E ")})
		case strings.HasPrefix(line, "M "):
			var r oracleResult
			for _, c := range strings.TrimPrefix(line, "M ") {
				r.matches = append(r.matches, c == '1')
			}
			results = append(results, r)
		default:
			t.Fatalf("unexpected oracle output %q", line)
		}
	}
	require.Len(t, results, len(patterns))
	return results
}

// TestFilterTableAgainstJava checks the expectations of filterCases against
// java.util.regex itself: which patterns it refuses and what String.matches
// says for the listed names.
func TestFilterTableAgainstJava(t *testing.T) {
	var patterns []string
	var inputs [][]string
	for _, tc := range filterCases {
		patterns = append(patterns, zkutil.NormalizeTopicFilter(tc.raw))
		var names []string
		for name := range tc.match {
			names = append(names, name)
		}
		inputs = append(inputs, names)
	}
	results := askJava(t, patterns, inputs)
	for i, tc := range filterCases {
		r := results[i]
		require.Equal(t, tc.javaOK, r.err == "", "%q: Java says %q", tc.raw, r.err)
		if tc.javaOK {
			_, err := compileRaw(tc.raw)
			require.NotContains(t, fmt.Sprint(err), "java.util.regex.Pattern refuses it", "%q", tc.raw)
		}
		for j, name := range inputs[i] {
			require.Equal(t, tc.match[name], r.matches[j], "%q matches %q in Java", tc.raw, name)
		}
	}
}

// javaPieces are fragments the differential test strings together into
// patterns: valid and invalid syntax of both dialects, flags, classes,
// escapes and the characters whose treatment differs.
var javaPieces = []string{
	"a", "b", "A", "K", "k", "é", "É", "0", "_", "-", ".", ",", "&", "#", "\n", "\r", "\u0085", "\u2028", "\t",
	`\.`, `\\`, `\-`, `\é`, `\d`, `\D`, `\w`, `\W`, `\s`, `\S`, `\n`, `\r`, `\t`, `\e`, `\ca`, `\x41`, `\x{212A}`,
	`\u00e9`, `\uD83D\uDE00`, `\0101`, `\012`, `\0`, `\1`, `\k<n>`, `\Q`, `\E`, `\Qa.]\E`, `\p{Lower}`, `\p{Upper}`,
	`\p{Alpha}`, `\P{Alnum}`, `\p{Punct}`, `\p{Space}`, `\p{XDigit}`, `\p{L}`, `\pL`, `\h`, `\v`, `\R`, `\b`, `\B`,
	`\z`, `\Z`, `\A`, `\G`, "^", "$", "[", "]", "[^", "[a-c]", "[^a]", "[A-z]", "[a-z&&[^b]]", "&&", "(", ")", "(?:",
	"(?i)", "(?-i)", "(?i:", "(?s)", "(?d)", "(?m)", "(?u)", "(?<n>", "(?P<n>", "(?=a)", "(?>", "|", "*", "+", "?",
	"*?", "*+", "{2}", "{0,2}", "{1,}", "{,2}", "{", "}", "{2,1}", "{0}", `\P{Lower}`, `[\s\d]`, `[^\w]`,
	`[\x00-\x{10FFFF}]`, "(?id)", "(?i-s:", "[-a]", "[a-]", `\Z\z`, "$$", `[\Q]\E-a]`, `[a-\x{212A}]`,
}

// pieceSamples are strings each piece may match, so that the differential
// test also tries strings close to the pattern; pieces not listed (flags,
// groups, anchors, quantifiers) contribute nothing.
var pieceSamples = map[string][]string{
	"a": {"a", "A"}, "b": {"b", "B"}, "A": {"A", "a"}, "K": {"K", "k", "\u212a"}, "k": {"k", "K", "\u212a"},
	"é": {"é", "É"}, "É": {"É", "é"}, "_": {"_"}, "-": {"-"}, ".": {"a", "\r", "\n", "\u0085", "."}, ",": {","},
	`\.`: {"."}, `\\`: {"\\"}, `\-`: {"-"}, `\é`: {"é"}, `\d`: {"5"}, `\D`: {"x", "\n"}, `\w`: {"_", "é"},
	`\W`: {"-", "é"}, `\s`: {"\x0b", " ", "\n"}, `\S`: {"a", "\x0b"}, `\n`: {"\n"}, `\r`: {"\r"}, `\t`: {"\t"},
	`\e`: {"\x1b"}, `\ca`: {"!"}, `\x41`: {"A", "a"}, `\x{212A}`: {"\u212a", "k"}, `\u00e9`: {"é", "É"},
	`\uD83D\uDE00`: {"😀"}, `\0101`: {"A"}, `\012`: {"\n"}, `\Qa.]\E`: {"a.]", "A.]"}, `\p{Lower}`: {"k", "K"},
	`\p{Upper}`: {"K", "k"}, `\p{Alpha}`: {"a", "\u212a"}, `\P{Alnum}`: {"-", "é"}, `\p{Punct}`: {"!", "\u00a7"},
	`\p{Space}`: {"\x0b"}, `\p{XDigit}`: {"A", "f"}, "[a-c]": {"b", "B"}, "[^a]": {"k", "A", "a"},
	"[A-z]": {"_", "k"}, "&": {"&"}, "#": {"#"}, "\n": {"\n"}, "\r": {"\r"}, "\u0085": {"\u0085"},
	"\u2028": {"\u2028"}, "\t": {"\t"}, "0": {"0"}, "]": {"]"}, "}": {"}"}, "$": {"\n", "\r\n"}, `\Z`: {"\n"},
}

// javaInputs are the characters of the strings matched against them.
var javaInputs = []string{"a", "b", "A", "B", "k", "K", "\u212a", "é", "É", "0", "9", "_", "-", ".", ",", "&",
	"\n", "\r", "\u0085", "\u2028", "\x0b", "\t", "]", "\\", "\x1b", "\x01", "!", "😀"}

// TestJavaRegexDifferential strings random fragments together and checks
// every result against java.util.regex: what Java refuses is refused, and
// what is accepted matches exactly the strings Java's matches() accepts.
func TestJavaRegexDifferential(t *testing.T) {
	const patternsN, inputsN = 4000, 24
	patterns, inputs := randomJavaPatterns(t, patternsN, inputsN)
	results := askJava(t, patterns, inputs)
	accepted, javaOnly, matched := 0, 0, 0
	for i, p := range patterns {
		re, err := Compile(p)
		r := results[i]
		if err != nil {
			var rerr *Error
			require.True(t, errors.As(err, &rerr), "%q: %v", p, err)
			if r.err == "" {
				javaOnly++
				require.NotContains(t, err.Error(), "java.util.regex.Pattern refuses it", "%q: Java accepts it", p)
			}
			continue
		}
		require.Empty(t, r.err, "%q is accepted but Java refuses it", p)
		accepted++
		for j, s := range inputs[i] {
			require.Equal(t, r.matches[j], re.MatchString(s), "%q on %q: Java says %v", p, s, r.matches[j])
			if r.matches[j] {
				matched++
			}
		}
	}
	t.Logf("%d of %d patterns accepted and agreeing with Java on %d strings each (%d matches); %d refused that Java accepts", accepted, patternsN, inputsN, matched, javaOnly)
	require.Greater(t, accepted, patternsN/10, "the generator should give many usable patterns")
}

// randomJavaPatterns strings random fragments of javaPieces together into
// n patterns, each with inputsN strings to match: half random strings of
// javaInputs, half made of the samples of the pattern's pieces.
func randomJavaPatterns(t *testing.T, patternsN, inputsN int) (patterns []string, inputs [][]string) {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for range patternsN {
		var p strings.Builder
		var pieces []string
		for range 1 + rng.IntN(7) {
			piece := javaPieces[rng.IntN(len(javaPieces))]
			pieces = append(pieces, piece)
			p.WriteString(piece)
		}
		patterns = append(patterns, p.String())
		var in []string
		for range inputsN / 2 {
			var s strings.Builder
			for range rng.IntN(5) {
				s.WriteString(javaInputs[rng.IntN(len(javaInputs))])
			}
			in = append(in, s.String())
		}
		for range inputsN / 2 {
			var s strings.Builder
			for _, piece := range pieces {
				if samples := pieceSamples[piece]; len(samples) > 0 {
					for range rng.IntN(3) {
						s.WriteString(samples[rng.IntN(len(samples))])
					}
				}
			}
			in = append(in, s.String())
		}
		inputs = append(inputs, in)
	}
	return patterns, inputs
}

// FuzzTranslateJavaRegex: no pattern panics the translation, and whatever
// it accepts compiles.
func FuzzTranslateJavaRegex(f *testing.F) {
	for _, tc := range filterCases {
		f.Add(tc.raw)
	}
	for _, p := range javaPieces {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, regex string) {
		goRegex, err := Translate(regex)
		if err != nil {
			var rerr *Error
			require.True(t, errors.As(err, &rerr))
			require.NotEmpty(t, rerr.Construct)
			return
		}
		_, err = Compile(regex)
		if err != nil && !strings.Contains(err.Error(), "Go's regexp cannot compile") {
			t.Fatalf("%q translated to %q: %v", regex, goRegex, err)
		}
	})
}

func ExampleCompile_refused() {
	_, err := Compile("[a-z&&[^aeiou]]")
	fmt.Println(err)
	// Output: topic filter "[a-z&&[^aeiou]]": class intersection "&&" at index 4: Java intersects the classes; Go's regexp has no intersection and would read literal characters
}
