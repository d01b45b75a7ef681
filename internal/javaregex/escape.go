package javaregex

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file reads the escape sequences of Java's regex syntax.

// escaped is what an escape sequence stands for: a character, a set of
// characters, or (outside classes) an anchor.
type escaped struct {
	r      rune
	set    runeSet
	isSet  bool
	anchor nodeKind
	isAnch bool
}

// parseEscape reads the escape starting at the current '\'.
func (p *javaParser) parseEscape(inClass bool) (*jnode, error) {
	pos := p.toks[p.i].pos
	e, err := p.readEscape(inClass)
	if err != nil {
		return nil, err
	}
	switch {
	case e.isAnch:
		return &jnode{kind: e.anchor, pos: pos}, nil
	case e.isSet:
		return &jnode{kind: nSet, pos: pos, set: e.set}, nil
	}
	return p.literal(e.r, pos), nil
}

func (p *javaParser) readEscape(inClass bool) (escaped, error) {
	pos := p.toks[p.i].pos
	p.i++ // '\'
	if p.eof() {
		return escaped{}, p.javaErr(pos, `"\" at the end`, "Unexpected internal error")
	}
	t := p.toks[p.i]
	p.i++
	name := `"\` + string(t.r) + `"`
	if t.quoted {
		return escaped{}, p.javaErr(pos, name, "Illegal/unsupported escape sequence")
	}
	set := func(s runeSet) (escaped, error) { return escaped{set: s, isSet: true}, nil }
	anchor := func(k nodeKind) (escaped, error) {
		if inClass {
			return escaped{}, p.javaErr(pos, name+" in a character class", "Illegal/unsupported escape sequence")
		}
		return escaped{anchor: k, isAnch: true}, nil
	}
	switch t.r {
	case '0':
		return p.readOctal(pos)
	case '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return escaped{}, p.fail(pos, "back-reference "+name, "Go's regexp has no back-references")
	case 'k':
		return escaped{}, p.fail(pos, `back-reference "\k<name>"`, "Go's regexp has no back-references")
	case 't':
		return escaped{r: '\t'}, nil
	case 'n':
		return escaped{r: '\n'}, nil
	case 'r':
		return escaped{r: '\r'}, nil
	case 'f':
		return escaped{r: '\f'}, nil
	case 'a':
		return escaped{r: '\a'}, nil
	case 'e':
		return escaped{r: 0x1B}, nil
	case 'c':
		if p.eof() || p.toks[p.i].quoted {
			return escaped{}, p.javaErr(pos, `"\c"`, "Illegal control escape sequence")
		}
		r := p.toks[p.i].r
		p.i++
		return escaped{r: r ^ 64}, nil
	case 'x':
		return p.readHex(pos)
	case 'u':
		return p.readUnicode(pos)
	case 'd':
		return set(digitSet)
	case 'D':
		return set(digitSet.negate())
	case 'w':
		return set(wordSet)
	case 'W':
		return set(wordSet.negate())
	case 's':
		return set(spaceSet)
	case 'S':
		return set(spaceSet.negate())
	case 'p', 'P':
		return p.readProperty(pos, t.r == 'P')
	case 'A':
		return anchor(nBegin)
	case 'z':
		return anchor(nEnd)
	case 'Z':
		return anchor(nEndJava)
	case 'b', 'B':
		if inClass {
			return escaped{}, p.javaErr(pos, name+" in a character class", "Illegal/unsupported escape sequence")
		}
		return escaped{}, p.fail(pos, "word boundary "+name, "Java's word characters for it changed in Java 19 and differ from Go's for non-ASCII letters")
	case 'G':
		return escaped{}, p.fail(pos, name, "Go's regexp has no end-of-previous-match anchor")
	case 'h', 'H', 'v', 'V':
		return escaped{}, p.fail(pos, name, "its meaning depends on the Java version (Java 8 added \\h and \\H and made \\v vertical whitespace, a vertical tab before), and Go's regexp has no \\h and reads \\v as a vertical tab")
	case 'R':
		return escaped{}, p.fail(pos, `linebreak "\R"`, "its backtracking differs between Java versions and Go's regexp does not have it")
	case 'X':
		return escaped{}, p.fail(pos, `grapheme cluster "\X"`, "Go's regexp and Java 7 and 8 do not have it")
	case 'N':
		return escaped{}, p.fail(pos, `named character "\N{...}"`, "Go's regexp and Java 7 and 8 do not have it")
	}
	if t.r < utf8.RuneSelf && (t.r >= 'a' && t.r <= 'z' || t.r >= 'A' && t.r <= 'Z') {
		return escaped{}, p.javaErr(pos, name, "Illegal/unsupported escape sequence")
	}
	return escaped{r: t.r}, nil // \ before anything else is that character
}

// readOctal reads the digits of \0n, \0nn or \0mnn (m at most 3).
func (p *javaParser) readOctal(pos int) (escaped, error) {
	digit := func(k int, maxDigit rune) (rune, bool) {
		j := p.i + k
		if j >= len(p.toks) || p.toks[j].quoted || p.toks[j].r < '0' || p.toks[j].r > maxDigit {
			return 0, false
		}
		return p.toks[j].r - '0', true
	}
	n, ok := digit(0, '7')
	if !ok {
		return escaped{}, p.javaErr(pos, `octal escape "\0"`, "Illegal octal escape sequence")
	}
	m, ok := digit(1, '7')
	if !ok {
		p.i++
		return escaped{r: n}, nil
	}
	if o, ok := digit(2, '7'); ok && n <= 3 {
		p.i += 3
		return escaped{r: n*64 + m*8 + o}, nil
	}
	p.i += 2
	return escaped{r: n*8 + m}, nil
}

// hexDigits reads up to n hex digits (all n when exact).
func (p *javaParser) hexDigits(n int, exact bool) (rune, int) {
	var v rune
	k := 0
	for ; k < n && !p.eof() && !p.toks[p.i].quoted; k++ {
		d, err := strconv.ParseUint(string(p.toks[p.i].r), 16, 8)
		if err != nil {
			break
		}
		if v <= utf8.MaxRune {
			v = v*16 + rune(d)
		}
		p.i++
	}
	if exact && k != n {
		return -1, k
	}
	return v, k
}

// readHex reads \xhh or \x{h...h}.
func (p *javaParser) readHex(pos int) (escaped, error) {
	if p.peekIs('{') {
		p.i++
		v, k := p.hexDigits(len(p.toks), false)
		if k == 0 || !p.peekIs('}') {
			return escaped{}, p.javaErr(pos, `"\x{...}"`, "Unclosed hexadecimal escape sequence")
		}
		p.i++
		if v > utf8.MaxRune {
			return escaped{}, p.javaErr(pos, `"\x{...}"`, "Hexadecimal codepoint is too big")
		}
		return p.checkCodePoint(pos, v)
	}
	v, _ := p.hexDigits(2, true)
	if v < 0 {
		return escaped{}, p.javaErr(pos, `"\x"`, "Illegal hexadecimal escape sequence")
	}
	return escaped{r: v}, nil
}

// readUnicode reads \uhhhh, joining a surrogate pair written as two escapes.
func (p *javaParser) readUnicode(pos int) (escaped, error) {
	v, _ := p.hexDigits(4, true)
	if v < 0 {
		return escaped{}, p.javaErr(pos, `"\u"`, "Illegal Unicode escape sequence")
	}
	if v >= 0xD800 && v < 0xDC00 && p.peekIs('\\') && p.peekAt(1, 'u') {
		save := p.i
		p.i += 2
		if lo, _ := p.hexDigits(4, true); lo >= 0xDC00 && lo < 0xE000 {
			return escaped{r: 0x10000 + (v-0xD800)<<10 + (lo - 0xDC00)}, nil
		}
		p.i = save
	}
	return p.checkCodePoint(pos, v)
}

func (p *javaParser) checkCodePoint(pos int, v rune) (escaped, error) {
	if v >= 0xD800 && v < 0xE000 {
		return escaped{}, p.fail(pos, fmt.Sprintf("lone surrogate U+%04X", v), "Go strings cannot hold it")
	}
	return escaped{r: v}, nil
}

// readProperty reads the name of \p{Name} or \P{Name} and resolves Java's
// POSIX classes.
func (p *javaParser) readProperty(pos int, negated bool) (escaped, error) {
	var name string
	switch {
	case p.peekIs('{'):
		p.i++
		var b strings.Builder
		for !p.eof() && !p.peekIs('}') {
			b.WriteRune(p.toks[p.i].r)
			p.i++
		}
		if p.eof() {
			return escaped{}, p.javaErr(pos, `"\p{"`, "Unclosed character family")
		}
		p.i++
		name = b.String()
	case !p.eof():
		name = string(p.toks[p.i].r)
		p.i++
	default:
		return escaped{}, p.javaErr(pos, `"\p"`, "Illegal character family")
	}
	construct := `"\p{` + name + `}"`
	if negated {
		construct = `"\P{` + name + `}"`
	}
	s, ok := posixSets[name]
	if !ok {
		return escaped{}, p.fail(pos, "character property "+construct,
			"only Java's POSIX classes (\\p{Lower}, \\p{Alnum}, \\p{Punct}, ...) are supported; Java and Unicode properties depend on the JVM's Unicode version")
	}
	if p.flags.caseInsensitive && (name == "Lower" || name == "Upper") {
		return escaped{}, p.fail(pos, construct+" under (?i)", "its case-insensitive meaning changed between Java 8 and 17")
	}
	if negated {
		s = s.negate()
	}
	return escaped{set: s, isSet: true}, nil
}
