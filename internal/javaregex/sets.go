package javaregex

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// runeRange is the code points lo to hi, both included.
type runeRange struct{ lo, hi rune }

// runeSet is a set of code points as sorted, disjoint, non-adjacent ranges.
// Java's classes are resolved into runeSets and written out as explicit
// ranges, so that no class syntax is left for Go to read differently.
type runeSet []runeRange

// Java's predefined classes, ASCII as in Java without (?U).
var (
	digitSet = runeSet{{'0', '9'}}
	wordSet  = runeSet{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}
	// spaceSet is Java's \s, which unlike Go's has \x0B.
	spaceSet = runeSet{{'\t', '\r'}, {' ', ' '}}
)

// posixSets are Java's POSIX character classes (\p{Lower} and so on), all
// US-ASCII without (?U).
var posixSets = map[string]runeSet{
	"Lower":  {{'a', 'z'}},
	"Upper":  {{'A', 'Z'}},
	"ASCII":  {{0, 0x7F}},
	"Alpha":  {{'A', 'Z'}, {'a', 'z'}},
	"Digit":  {{'0', '9'}},
	"Alnum":  {{'0', '9'}, {'A', 'Z'}, {'a', 'z'}},
	"Punct":  {{'!', '/'}, {':', '@'}, {'[', '`'}, {'{', '~'}},
	"Graph":  {{'!', '~'}},
	"Print":  {{' ', '~'}},
	"Blank":  {{'\t', '\t'}, {' ', ' '}},
	"Cntrl":  {{0, 0x1F}, {0x7F, 0x7F}},
	"XDigit": {{'0', '9'}, {'A', 'F'}, {'a', 'f'}},
	"Space":  {{'\t', '\r'}, {' ', ' '}},
}

// dotSet is what Java's '.' matches under flags: everything but its line
// terminators (\n, \r, U+0085, U+2028, U+2029), everything but \n with
// (?d), everything with (?s).
func dotSet(f javaFlags) runeSet {
	switch {
	case f.dotAll:
		return runeSet{{0, utf8.MaxRune}}
	case f.unixLines:
		return runeSet{{'\n', '\n'}}.negate()
	}
	return runeSet{{'\n', '\n'}, {'\r', '\r'}, {0x85, 0x85}, {0x2028, 0x2029}}.negate()
}

// union returns s ∪ t.
func (s runeSet) union(t runeSet) runeSet {
	all := append(slices.Clone(s), t...)
	slices.SortFunc(all, func(a, b runeRange) int { return int(a.lo) - int(b.lo) })
	var out runeSet
	for _, r := range all {
		if n := len(out); n > 0 && r.lo <= out[n-1].hi+1 {
			out[n-1].hi = max(out[n-1].hi, r.hi)
			continue
		}
		out = append(out, r)
	}
	return out
}

// negate returns the code points not in s.
func (s runeSet) negate() runeSet {
	var out runeSet
	next := rune(0)
	for _, r := range s {
		if r.lo > next {
			out = append(out, runeRange{next, r.lo - 1})
		}
		next = r.hi + 1
	}
	if next <= utf8.MaxRune {
		out = append(out, runeRange{next, utf8.MaxRune})
	}
	return out
}

// foldASCII adds the other case of every ASCII letter in s: Java's
// CASE_INSENSITIVE without UNICODE_CASE, for characters and ranges alike.
func (s runeSet) foldASCII() runeSet {
	var add runeSet
	for _, r := range s {
		for _, letters := range []runeRange{{'A', 'Z'}, {'a', 'z'}} {
			lo, hi := max(r.lo, letters.lo), min(r.hi, letters.hi)
			if lo <= hi {
				add = append(add, runeRange{lo ^ 0x20, hi ^ 0x20})
			}
		}
	}
	return s.union(add)
}

// write appends s in Go syntax: a single character, or a class of explicit
// ranges.
func (s runeSet) write(b *strings.Builder) {
	if len(s) == 1 && s[0].lo == s[0].hi {
		writeRune(b, s[0].lo)
		return
	}
	if len(s) == 0 {
		fmt.Fprintf(b, `[^\x{0}-\x{%X}]`, utf8.MaxRune)
		return
	}
	b.WriteByte('[')
	for _, r := range s {
		writeRune(b, r.lo)
		if r.hi != r.lo {
			b.WriteByte('-')
			writeRune(b, r.hi)
		}
	}
	b.WriteByte(']')
}

// writeRune writes r so that Go reads it as that character and nothing
// else, inside or outside a class.
func writeRune(b *strings.Builder, r rune) {
	if r < utf8.RuneSelf && (r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z') {
		b.WriteRune(r)
		return
	}
	fmt.Fprintf(b, `\x{%X}`, r)
}
