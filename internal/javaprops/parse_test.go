package javaprops

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func parseText(t *testing.T, text string) map[string]string {
	t.Helper()
	props, err := Parse([]byte(text))
	require.NoError(t, err)
	return props
}

// TestParse checks java.util.Properties.load semantics. Every
// expectation was confirmed by loading the same text with Java 17's
// Properties.load(Reader), except "lone surrogate": Java keeps the unpaired
// UTF-16 unit, which a Go string cannot hold.
func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]string
	}{
		{"empty", "", map[string]string{}},
		{"only comments and blanks", "# a\n! b\n   # c\n\n \t\f\n", map[string]string{}},

		// Separators (the Properties javadoc examples and friends).
		{"equals with spaces", "Truth = Beauty", map[string]string{"Truth": "Beauty"}},
		{"colon, indented", " Truth:Beauty", map[string]string{"Truth": "Beauty"}},
		{"spaces then colon", "Truth                    :Beauty", map[string]string{"Truth": "Beauty"}},
		{"space separator", "a b", map[string]string{"a": "b"}},
		{"tab separator", "a\tb", map[string]string{"a": "b"}},
		{"form feed separator", "a\fb", map[string]string{"a": "b"}},
		{"only the first separator counts", "a==b", map[string]string{"a": "=b"}},
		{"colon then equals", "a:=b", map[string]string{"a": "=b"}},
		{"space, equals, colon", "a =:b", map[string]string{"a": ":b"}},
		{"space separator then equals in value", "a b=c", map[string]string{"a": "b=c"}},
		{"key only", "cheeses", map[string]string{"cheeses": ""}},
		{"key and separator only", "a=", map[string]string{"a": ""}},
		{"empty key", "=b", map[string]string{"": "b"}},
		{"trailing white space is kept", "a = b \t", map[string]string{"a": "b \t"}},
		{"hash inside a value", "a=b#c", map[string]string{"a": "b#c"}},

		// Escapes.
		{"escaped separators in key", `a\=b\:c\ d=e`, map[string]string{"a=b:c d": "e"}},
		{"escaped comment char", `\#k=v`, map[string]string{"#k": "v"}},
		{"control escapes", `a=\t\n\r\f`, map[string]string{"a": "\t\n\r\f"}},
		{"unknown escapes drop the backslash", `a=\b\q\"`, map[string]string{"a": `bq"`}},
		{"escaped backslash", `a=C:\\dir\\`, map[string]string{"a": `C:\dir\`}},
		{"unicode escape", `caf\u00E9=\u20ac`, map[string]string{"café": "€"}},
		{"surrogate pair", `a=\uD83D\uDE00`, map[string]string{"a": "😀"}},
		{"lone surrogate", `a=\uD83Dx`, map[string]string{"a": "\uFFFDx"}},
		{"raw UTF-8", "grüße=😀", map[string]string{"grüße": "😀"}},
		{"escaped leading space in value", `a=\  b`, map[string]string{"a": "  b"}},

		// Lines and continuations.
		{"javadoc continuation", "fruits                           apple, banana, pear, \\\n" +
			"                                  cantaloupe, watermelon, \\\n" +
			"                                  kiwi, mango",
			map[string]string{"fruits": "apple, banana, pear, cantaloupe, watermelon, kiwi, mango"}},
		{"continuation inside key", "ab\\\n  cd=e", map[string]string{"abcd": "e"}},
		{"even backslashes do not continue", "a=b\\\\\nc=d", map[string]string{"a": `b\`, "c": "d"}},
		{"odd backslashes continue", "a=b\\\\\\\nc=d", map[string]string{"a": `b\c=d`}},
		{"continuation into a comment-like line", "a=b\\\n # c", map[string]string{"a": "b# c"}},
		{"continuation into a blank line ends", "a=b\\\n\nc=d", map[string]string{"a": "b", "c": "d"}},
		{"comments do not continue", "# x \\\na=b", map[string]string{"a": "b"}},
		{"CRLF", "a=b\r\nc=d\r\n", map[string]string{"a": "b", "c": "d"}},
		{"CR", "a=b\rc=d", map[string]string{"a": "b", "c": "d"}},
		{"CRLF continuation", "a=b\\\r\n  c\r\n", map[string]string{"a": "bc"}},
		{"trailing backslash at EOF", "a=b\\", map[string]string{"a": "b"}},
		{"last value wins", "a=1\na=2", map[string]string{"a": "2"}},
		{"lone backslash line joins the next", "\\\na=b", map[string]string{"a": "b"}},
		{"lone backslash line, then a comment", "\\\n#a=b\nc=d", map[string]string{"c": "d"}},
		{"lone backslash at EOF", "a=b\n\\\n", map[string]string{"a": "b", "": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, parseText(t, tt.in))
		})
	}
}

func TestParseMalformedUnicode(t *testing.T) {
	tests := map[string]struct {
		in, reason string
	}{
		"too short":     {"a=1\n\n# c\nb=\\u12", `value of b: malformed \uxxxx encoding: too short`},
		"not hex":       {"a=1\n\n# c\nb=\\uzzzz", `value of b: malformed \uxxxx encoding: \uzzzz`},
		"in a key":      {"a=1\n\n# c\n\\u00g1=x", `key: malformed \uxxxx encoding: \u00g1`},
		"after CR":      {"a=1\r\r# c\rb=\\u12", `value of b: malformed \uxxxx encoding: too short`},
		"continued key": {"a=1\n\n# c\nb=x\\\n  \\u0", `value of b: malformed \uxxxx encoding: too short`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			props, err := Parse([]byte(tt.in))
			assert.Nil(t, props)
			var syn *SyntaxError
			require.True(t, errors.As(err, &syn), "%v is a *SyntaxError", err)
			assert.Equal(t, &SyntaxError{Line: 4, Reason: tt.reason}, syn)
			assert.Equal(t, "line 4: "+tt.reason, err.Error())
		})
	}
}

// TestParseEncodings: UTF-8 when the input is valid UTF-8, without its
// byte order mark; ISO-8859-1, as Java reads a stream, otherwise.
func TestParseEncodings(t *testing.T) {
	for name, tt := range map[string]struct {
		in   string
		want map[string]string
	}{
		"ISO-8859-1":            {"name=caf\xe9\n", map[string]string{"name": "café"}},
		"UTF-8":                 {"name=café\n", map[string]string{"name": "café"}},
		"byte order mark":       {"\xef\xbb\xbfgroup.id=g\n", map[string]string{"group.id": "g"}},
		"escapes in ISO-8859-1": {"\xe9=\\u20ac\n", map[string]string{"é": "€"}},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tt.want, parseText(t, tt.in))
		})
	}
	_, err := Parse([]byte("a=\\u00\n"))
	assert.EqualError(t, err, `line 1: value of a: malformed \uxxxx encoding: too short`)
}

func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"", "a=b", "a b\\\n c", "# c\n!d\n", `k\u00e9=\uD83D\uDE00`, "a=\\u12", "\\\r\n#x\r\ny:z\\",
		"\xe9=\xff", "\ufeffk=v",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		a, errA := Parse([]byte(in))
		b, errB := Parse([]byte(in))
		assert.Equal(t, errA, errB)
		assert.Equal(t, a, b)
		if errA != nil {
			var syn *SyntaxError
			require.True(t, errors.As(errA, &syn), "the only error is a *SyntaxError")
			assert.Positive(t, syn.Line)
		}
		// A value never contains a raw line terminator: those only come
		// from escapes, and the input had none.
		if errA == nil && !strings.Contains(in, `\`) {
			for k, v := range a {
				assert.NotContains(t, k+v, "\n")
				assert.NotContains(t, k+v, "\r")
			}
		}
	})
}
