package javastr

import (
	"cmp"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Compare orders strings like Java's String.compareTo, by UTF-16 code
// units, and returns -1, 0 or +1. This differs from Go's byte order only
// when a rune in U+E000..U+FFFF meets a rune above U+FFFF: UTF-16 puts the
// surrogate first. Strings Java would consider equal (distinct invalid
// UTF-8 bytes, all read as U+FFFD) fall back to byte order so that the
// result is a total order.
func Compare(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if a[i] < utf8.RuneSelf && b[j] < utf8.RuneSelf {
			if a[i] != b[j] {
				return cmp.Compare(a[i], b[j])
			}
			i++
			j++
			continue
		}
		ra, na := utf8.DecodeRuneInString(a[i:])
		rb, nb := utf8.DecodeRuneInString(b[j:])
		if ra != rb {
			if ua, ub := firstUnit(ra), firstUnit(rb); ua != ub {
				return cmp.Compare(ua, ub)
			}
			// Same high surrogate: the low surrogates, and so the runes, decide.
			return cmp.Compare(ra, rb)
		}
		i += na
		j += nb
	}
	switch {
	case i < len(a):
		return 1
	case j < len(b):
		return -1
	}
	return strings.Compare(a, b)
}

// firstUnit returns the first UTF-16 code unit of r.
func firstUnit(r rune) rune {
	if r > 0xFFFF {
		hi, _ := utf16.EncodeRune(r)
		return hi
	}
	return r
}
