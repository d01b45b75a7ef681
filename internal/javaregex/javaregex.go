// Package javaregex translates a regex in the syntax of
// java.util.regex.Pattern, which Kafka's Scala consumer compiles for its
// whitelists and blacklists, into Go's regexp syntax with the same meaning
// under String.matches, or refuses it with an *Error naming the construct.
// Translate is the translation; Compile compiles it for whole-string
// matching.
package javaregex

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Translate turns the regex of a whitelist or blacklist from the
// syntax of java.util.regex.Pattern, which Kafka's Scala consumer compiles,
// into Go's regexp syntax with the same meaning under String.matches (the
// whole topic name must match). The translation parses the Java syntax
// itself and writes Go syntax that leaves nothing to interpretation: every
// literal and character class is spelled out as explicit code points, and
// every group is non-capturing. A pattern Java would reject is refused, and
// so is every construct whose meaning Go cannot reproduce or whose meaning
// differs between the Java versions Kafka 1.1.1 runs on (7 to 17); the
// *Error names the construct.
//
// What differs, and what is done about it:
//
//   - Class intersection [a-z&&[^aeiou]] and nested (union) classes [a[b]]:
//     RE2 reads them as literal characters. Refused.
//   - a{,3}: Java refuses it, RE2 reads it as the literal "a{,3}"; any other
//     '{' that does not start a valid {n}, {n,} or {n,m} is a Java error too.
//     Refused. Counts above 1000 exceed RE2's limit: refused. A count with
//     nothing to repeat ("{2}" at the start) repeats an empty match in Java
//     and is an error in RE2: refused. (Kafka's munging turns the comma of
//     {n,m} into '|', so through a whitelist only {n} is usable anyway.)
//   - Possessive quantifiers (a*+), atomic groups (?>...), look-around,
//     back-references (\1, \k<name>): RE2 has none. Refused. Lazy
//     quantifiers (a*?) cannot change what String.matches accepts: kept.
//   - '.': Java excludes \n, \r, U+0085, U+2028 and U+2029 (only \n with
//     (?d)); RE2 only \n. Translated to an explicit class.
//   - \s: Java includes \x0B, RE2 does not. Translated.
//   - '$' and \Z: Java also matches before a final line terminator. At the
//     end of the pattern, where String.matches needs the end of the input
//     anyway, they are translated to \z; anywhere else they are refused.
//   - (?i): Java folds ASCII letters only (without (?u)), RE2 folds Unicode
//     (K also matches U+212A KELVIN SIGN). Translated by spelling out
//     both cases of each ASCII letter. \p{Lower} and \p{Upper} under (?i)
//     changed meaning between Java 8 and 17: refused.
//   - Flags (?m), (?u), (?x), (?U) and (?c): refused ((?U) even means
//     something else in RE2). (?i), (?s) and (?d) are translated.
//   - \p{Lower} and the other POSIX classes of Java are ASCII; RE2 does not
//     know them. Translated. \p{javaLowerCase}, Unicode categories, scripts,
//     blocks and binary properties depend on the JVM's Unicode version:
//     refused.
//   - \h, \v, \R, \X, \N{...}, \b{g}, \b, \B, \G: absent from RE2, absent
//     from Java 7, or changed meaning in later Java versions. Refused.
//   - Octal: Java's is \0n, \0nn or \0mnn; RE2 reads \12 as octal where
//     Java sees a back-reference. Translated (\0...) or refused (\1-\9).
//   - \uXXXX (and surrogate pairs), \e, \cX: absent from RE2. Translated.
//   - \Q...\E: both have it, but Java also honours it inside classes.
//     Translated to literals.
//   - (?<name>...): both have it with different rules for names; Java's
//     are checked. (?P<name>...) is RE2 only: refused.

// Error reports a whitelist or blacklist regex that cannot be used:
// java.util.regex.Pattern would reject it, or Go's regexp cannot give it
// Java's meaning.
type Error struct {
	// Regex is the regex after Kafka's munging.
	Regex string
	// Index is where the construct starts, in characters (code points)
	// from 0, as in Java's "near index".
	Index int
	// Construct names what was found, for example `class intersection "&&"`.
	Construct string
	// Reason tells why it cannot be used.
	Reason string
}

// Error returns "topic filter <regex>: <construct> at index <i>: <reason>".
func (e *Error) Error() string {
	return fmt.Sprintf("topic filter %q: %s at index %d: %s", e.Regex, e.Construct, e.Index, e.Reason)
}

// Translate returns a Go regexp for regex (a Java regex) that
// matches a whole string exactly when Java's String.matches would, or a
// *Error.
func Translate(regex string) (string, error) {
	if !utf8.ValidString(regex) {
		return "", &Error{Regex: regex, Construct: "invalid UTF-8", Reason: "a Java string cannot hold it"}
	}
	p := &javaParser{regex: regex, toks: lexJava(regex), names: map[string]bool{}}
	n, err := p.parseRegex()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := p.emit(&b, n, true); err != nil {
		return "", err
	}
	return b.String(), nil
}

// jtok is one character of the pattern. Characters between \Q and \E are
// quoted: always literal, even inside a class, as Java treats them.
type jtok struct {
	r      rune
	quoted bool
	pos    int
}

// lexJava splits the pattern into characters, resolving \Q...\E.
func lexJava(regex string) []jtok {
	rs := []rune(regex)
	toks := make([]jtok, 0, len(rs))
	for i := 0; i < len(rs); i++ {
		if rs[i] != '\\' || i+1 >= len(rs) {
			toks = append(toks, jtok{r: rs[i], pos: i})
			continue
		}
		if rs[i+1] != 'Q' {
			// An escape pair: the parser reads it, the lexer must not
			// see a \Q in its second half.
			toks = append(toks, jtok{r: rs[i], pos: i}, jtok{r: rs[i+1], pos: i + 1})
			i++
			continue
		}
		i += 2
		for ; i < len(rs); i++ {
			if rs[i] == '\\' && i+1 < len(rs) && rs[i+1] == 'E' {
				i++
				break
			}
			toks = append(toks, jtok{r: rs[i], quoted: true, pos: i})
		}
	}
	return toks
}

// javaFlags are the flags of Java's embedded (?...) groups that can be
// translated.
type javaFlags struct {
	caseInsensitive bool // (?i), ASCII only
	dotAll          bool // (?s)
	unixLines       bool // (?d)
}

type nodeKind int

const (
	nSet     nodeKind = iota // one character out of set
	nBegin                   // ^ or \A
	nEnd                     // \z
	nEndJava                 // $ or \Z: the end, or before a final line terminator
	nGroup                   // alternatives of sequences
	nRepeat                  // sub repeated min to max times (max -1: unbounded)
)

type jnode struct {
	kind     nodeKind
	pos      int
	set      runeSet
	alts     [][]*jnode
	sub      *jnode
	min, max int
}

// maxGoRepeat is the largest count Go's regexp accepts in {n,m}.
const maxGoRepeat = 1000

type javaParser struct {
	regex string
	toks  []jtok
	i     int
	flags javaFlags
	names map[string]bool
}

func (p *javaParser) fail(pos int, construct, reason string) error {
	return &Error{Regex: p.regex, Index: pos, Construct: construct, Reason: reason}
}

// javaErr is a pattern Java itself refuses.
func (p *javaParser) javaErr(pos int, construct, javaMessage string) error {
	return p.fail(pos, construct, "java.util.regex.Pattern refuses it ("+javaMessage+")")
}

func (p *javaParser) eof() bool { return p.i >= len(p.toks) }

func (p *javaParser) endPos() int { return utf8.RuneCountInString(p.regex) }

// peekIs reports whether the next token is the unquoted rune r.
func (p *javaParser) peekIs(r rune) bool {
	return !p.eof() && !p.toks[p.i].quoted && p.toks[p.i].r == r
}

// peekAt reports whether the token k ahead is the unquoted rune r.
func (p *javaParser) peekAt(k int, r rune) bool {
	j := p.i + k
	return j < len(p.toks) && !p.toks[j].quoted && p.toks[j].r == r
}

func (p *javaParser) parseRegex() (*jnode, error) {
	n, err := p.parseAlternation(0)
	if err != nil {
		return nil, err
	}
	if !p.eof() { // an unmatched ')'
		return nil, p.javaErr(p.toks[p.i].pos, `unmatched ")"`, "Unmatched closing ')'")
	}
	return n, nil
}

func (p *javaParser) parseAlternation(depth int) (*jnode, error) {
	g := &jnode{kind: nGroup, alts: [][]*jnode{nil}}
	for !p.eof() {
		t := p.toks[p.i]
		if !t.quoted && t.r == ')' {
			if depth == 0 {
				return nil, p.javaErr(t.pos, `unmatched ")"`, "Unmatched closing ')'")
			}
			break
		}
		if !t.quoted && t.r == '|' {
			p.i++
			g.alts = append(g.alts, nil)
			continue
		}
		atom, err := p.parseAtom()
		if err != nil {
			return nil, err
		}
		if atom == nil {
			continue // inline flags
		}
		if atom, err = p.parseQuantifier(atom); err != nil {
			return nil, err
		}
		last := len(g.alts) - 1
		g.alts[last] = append(g.alts[last], atom)
	}
	return g, nil
}

func (p *javaParser) parseAtom() (*jnode, error) {
	t := p.toks[p.i]
	if t.quoted {
		p.i++
		return p.literal(t.r, t.pos), nil
	}
	switch t.r {
	case '(':
		return p.parseGroup()
	case '[':
		p.i++
		set, err := p.parseClass(t.pos)
		if err != nil {
			return nil, err
		}
		return &jnode{kind: nSet, pos: t.pos, set: set}, nil
	case '.':
		p.i++
		return &jnode{kind: nSet, pos: t.pos, set: dotSet(p.flags)}, nil
	case '^':
		p.i++
		return &jnode{kind: nBegin, pos: t.pos}, nil
	case '$':
		p.i++
		return &jnode{kind: nEndJava, pos: t.pos}, nil
	case '\\':
		return p.parseEscape(false)
	case '*', '+', '?':
		return nil, p.javaErr(t.pos, fmt.Sprintf("quantifier %q without an operand", t.r), fmt.Sprintf("Dangling meta character '%c'", t.r))
	case '{':
		if _, _, err := p.parseCount(t.pos); err == nil {
			return nil, p.fail(t.pos, "counted repetition without an operand", "Java repeats an empty match there, Go's regexp refuses it")
		}
		return nil, p.javaErr(t.pos, `"{" that does not follow an operand`, "Illegal repetition")
	}
	p.i++
	return p.literal(t.r, t.pos), nil
}

// literal is the character r under the current flags.
func (p *javaParser) literal(r rune, pos int) *jnode {
	s := runeSet{{r, r}}
	if p.flags.caseInsensitive {
		s = s.foldASCII()
	}
	return &jnode{kind: nSet, pos: pos, set: s}
}

func (p *javaParser) parseGroup() (*jnode, error) {
	open := p.toks[p.i].pos
	p.i++
	saved := p.flags
	if p.peekIs('?') {
		p.i++
		if p.eof() {
			return nil, p.javaErr(open, `"(?" at the end`, "Unknown group type")
		}
		t := p.toks[p.i]
		switch {
		case t.quoted:
			return nil, p.javaErr(t.pos, `"(?" followed by a quoted character`, "Unknown inline modifier")
		case t.r == ':':
			p.i++
		case t.r == '=' || t.r == '!':
			return nil, p.fail(open, "look-ahead \"(?"+string(t.r)+"\"", "Go's regexp has no look-around")
		case t.r == '>':
			return nil, p.fail(open, `atomic group "(?>"`, "Go's regexp has no atomic groups")
		case t.r == '<' && (p.peekAt(1, '=') || p.peekAt(1, '!')):
			return nil, p.fail(open, "look-behind \"(?<"+string(p.toks[p.i+1].r)+"\"", "Go's regexp has no look-around")
		case t.r == '<':
			p.i++
			if err := p.parseGroupName(open); err != nil {
				return nil, err
			}
		case t.r == 'P':
			return nil, p.javaErr(open, `"(?P<name>"`, "Unknown inline modifier; (?P<name>...) is Go syntax, Java's is (?<name>...)")
		default:
			scoped, err := p.parseFlags(open)
			if err != nil {
				return nil, err
			}
			if !scoped {
				return nil, nil // (?i) applies to the rest of the enclosing group
			}
		}
	}
	g, err := p.parseAlternation(1)
	if err != nil {
		return nil, err
	}
	if p.eof() {
		return nil, p.javaErr(open, `unclosed group "("`, "Unclosed group")
	}
	p.i++ // ')'
	p.flags = saved
	g.pos = open
	return g, nil
}

// parseGroupName reads the name of (?<name>...), which Java wants as an
// ASCII letter followed by ASCII letters and digits, unique in the pattern.
func (p *javaParser) parseGroupName(open int) error {
	var name strings.Builder
	for !p.eof() && !p.peekIs('>') {
		t := p.toks[p.i]
		ok := !t.quoted && (t.r >= 'a' && t.r <= 'z' || t.r >= 'A' && t.r <= 'Z' || name.Len() > 0 && t.r >= '0' && t.r <= '9')
		if !ok {
			return p.javaErr(t.pos, "group name", "named capturing group is missing trailing '>'; names are a letter followed by letters and digits")
		}
		name.WriteRune(t.r)
		p.i++
	}
	if p.eof() || name.Len() == 0 {
		return p.javaErr(open, "group name", "named capturing group is missing trailing '>'")
	}
	p.i++ // '>'
	if p.names[name.String()] {
		return p.javaErr(open, "group name <"+name.String()+">", "Named capturing group <"+name.String()+"> is already defined")
	}
	p.names[name.String()] = true
	return nil
}

// parseFlags reads the flags of "(?flags)" or "(?flags:", after the '?',
// and reports whether they are scoped (followed by ':').
func (p *javaParser) parseFlags(open int) (scoped bool, err error) {
	on := true
	for !p.eof() {
		t := p.toks[p.i]
		p.i++
		if t.quoted {
			return false, p.javaErr(t.pos, "inline flags", "Unknown inline modifier")
		}
		switch t.r {
		case ')':
			return false, nil
		case ':':
			return true, nil
		case '-':
			on = false
		case 'i':
			p.flags.caseInsensitive = on
		case 's':
			p.flags.dotAll = on
		case 'd':
			p.flags.unixLines = on
		case 'm':
			return false, p.fail(t.pos, "flag (?m)", "MULTILINE makes ^ and $ match at Java's line terminators (\\r, U+0085, U+2028, U+2029 too), which Go's (?m) does not")
		case 'u':
			return false, p.fail(t.pos, "flag (?u)", "Java's UNICODE_CASE folding differs from Go's")
		case 'U':
			return false, p.fail(t.pos, "flag (?U)", "it means UNICODE_CHARACTER_CLASS in Java but ungreedy in Go")
		case 'x':
			return false, p.fail(t.pos, "flag (?x)", "COMMENTS mode is not supported")
		case 'c':
			return false, p.fail(t.pos, "flag (?c)", "canonical equivalence is not supported")
		default:
			return false, p.javaErr(t.pos, fmt.Sprintf("inline flag %q", t.r), "Unknown inline modifier")
		}
	}
	return false, p.javaErr(open, `unclosed group "("`, "Unknown inline modifier")
}

// parseQuantifier applies a following *, +, ?, {n}, {n,} or {n,m}, with its
// lazy (?) or possessive (+) suffix, to atom.
func (p *javaParser) parseQuantifier(atom *jnode) (*jnode, error) {
	if p.eof() || p.toks[p.i].quoted {
		return atom, nil
	}
	t := p.toks[p.i]
	lo, hi := 0, 0
	switch t.r {
	case '*':
		lo, hi = 0, -1
		p.i++
	case '+':
		lo, hi = 1, -1
		p.i++
	case '?':
		lo, hi = 0, 1
		p.i++
	case '{':
		var err error
		if lo, hi, err = p.parseCount(t.pos); err != nil {
			return nil, err
		}
	default:
		return atom, nil
	}
	if p.peekIs('+') {
		return nil, p.fail(t.pos, "possessive quantifier", "Go's regexp has no possessive quantifiers")
	}
	if p.peekIs('?') {
		p.i++ // lazy: String.matches accepts the same strings
	}
	if !p.eof() && !p.toks[p.i].quoted && strings.ContainsRune("*+?{", p.toks[p.i].r) {
		return nil, p.fail(p.toks[p.i].pos, "stacked quantifiers", "Java refuses or misreads a quantifier that follows another")
	}
	if lo > maxGoRepeat || hi > maxGoRepeat {
		return nil, p.fail(t.pos, fmt.Sprintf("repetition count %d", max(lo, hi)), fmt.Sprintf("Go's regexp allows at most %d", maxGoRepeat))
	}
	return &jnode{kind: nRepeat, pos: t.pos, sub: atom, min: lo, max: hi}, nil
}

// parseCount reads {n}, {n,} or {n,m}.
func (p *javaParser) parseCount(open int) (lo, hi int, err error) {
	p.i++ // '{'
	readInt := func() (int, bool) {
		start := p.i
		n := 0
		for !p.eof() && !p.toks[p.i].quoted && p.toks[p.i].r >= '0' && p.toks[p.i].r <= '9' {
			if n <= maxGoRepeat {
				n = n*10 + int(p.toks[p.i].r-'0')
			}
			p.i++
		}
		return n, p.i > start
	}
	lo, ok := readInt()
	if !ok {
		return 0, 0, p.javaErr(open, `"{" not followed by a count`, "Illegal repetition; {,n} is Go syntax")
	}
	hi = lo
	if p.peekIs(',') {
		p.i++
		if hi, ok = readInt(); !ok {
			hi = -1
		}
	}
	if !p.peekIs('}') {
		return 0, 0, p.javaErr(open, "counted repetition", "Unclosed counted closure")
	}
	p.i++
	if hi != -1 && hi < lo {
		return 0, 0, p.javaErr(open, "counted repetition", "Illegal repetition range")
	}
	return lo, hi, nil
}

// parseClass reads a character class after its '['.
func (p *javaParser) parseClass(open int) (runeSet, error) {
	negated := false
	if p.peekIs('^') {
		negated = true
		p.i++
	}
	var set runeSet // unsorted until the class ends
	empty := true   // Java reads ']' as a literal while the class is empty
	for {
		if p.eof() {
			return nil, p.javaErr(open, `unclosed class "["`, "Unclosed character class")
		}
		t := p.toks[p.i]
		if !t.quoted {
			switch {
			case t.r == ']' && !empty:
				p.i++
				set = set.union(nil)
				if p.flags.caseInsensitive {
					set = set.foldASCII()
				}
				if negated {
					set = set.negate()
				}
				return set, nil
			case t.r == '[':
				return nil, p.fail(t.pos, `nested class "["`, "Java reads it as a union (and Go as a literal '['); write one class")
			case t.r == '&' && p.peekAt(1, '&'):
				return nil, p.fail(t.pos, `class intersection "&&"`, "Java intersects the classes; Go's regexp has no intersection and would read literal characters")
			case t.r == '\\':
				e, err := p.readEscape(true)
				if err != nil {
					return nil, err
				}
				if e.isSet {
					set = append(set, e.set...)
					empty = false
					continue
				}
				if err := p.classRange(&set, e.r, t.pos); err != nil {
					return nil, err
				}
				empty = false
				continue
			}
		}
		p.i++
		if err := p.classRange(&set, t.r, t.pos); err != nil {
			return nil, err
		}
		empty = false
	}
}

// classRange adds lo, or the range lo-hi when a '-' and a character follow,
// to the unsorted set.
func (p *javaParser) classRange(set *runeSet, lo rune, pos int) error {
	if !p.peekIs('-') || p.peekAt(1, '[') || p.peekAt(1, ']') || p.i+1 >= len(p.toks) {
		*set = append(*set, runeRange{lo, lo})
		return nil
	}
	p.i++ // '-'
	t := p.toks[p.i]
	hi := t.r
	if !t.quoted && t.r == '\\' {
		e, err := p.readEscape(true)
		if err != nil {
			return err
		}
		if e.isSet {
			return p.javaErr(pos, "character range ending in a class", "Illegal character range")
		}
		hi = e.r
	} else {
		p.i++
	}
	if hi < lo {
		return p.javaErr(pos, fmt.Sprintf("character range %q-%q", lo, hi), "Illegal character range")
	}
	*set = append(*set, runeRange{lo, hi})
	return nil
}

// emit writes n as Go syntax. tail reports whether nothing that consumes
// input can follow n in a match: only there do Java's $ and \Z translate.
func (p *javaParser) emit(b *strings.Builder, n *jnode, tail bool) error {
	switch n.kind {
	case nSet:
		n.set.write(b)
	case nBegin:
		b.WriteString(`\A`)
	case nEnd:
		b.WriteString(`\z`)
	case nEndJava:
		if !tail {
			return p.fail(n.pos, `"$" or "\Z" before more of the pattern`,
				"Java's also matches before a final line terminator, which Go's regexp cannot express; only at the end of the pattern is it the same")
		}
		b.WriteString(`\z`)
	case nGroup:
		b.WriteString("(?:")
		for i, alt := range n.alts {
			if i > 0 {
				b.WriteByte('|')
			}
			for j, m := range alt {
				if err := p.emit(b, m, tail && onlyEndsAfter(alt[j+1:])); err != nil {
					return err
				}
			}
		}
		b.WriteByte(')')
	case nRepeat:
		b.WriteString("(?:")
		if err := p.emit(b, n.sub, tail && n.max != -1 && n.max <= 1); err != nil {
			return err
		}
		b.WriteByte(')')
		switch {
		case n.min == 0 && n.max == -1:
			b.WriteByte('*')
		case n.min == 1 && n.max == -1:
			b.WriteByte('+')
		case n.max == -1:
			fmt.Fprintf(b, "{%d,}", n.min)
		default:
			fmt.Fprintf(b, "{%d,%d}", n.min, n.max)
		}
	}
	return nil
}

// onlyEndsAfter reports whether ns holds nothing but end anchors, which
// String.matches only ever evaluates at the end of the input.
func onlyEndsAfter(ns []*jnode) bool {
	for _, n := range ns {
		if n.kind != nEnd && n.kind != nEndJava {
			return false
		}
	}
	return true
}

// Compile translates regex and compiles it for whole-string
// matching.
func Compile(regex string) (*regexp.Regexp, error) {
	goRegex, err := Translate(regex)
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile(`\A(?:` + goRegex + `)\z`)
	if err != nil {
		return nil, &Error{Regex: regex, Construct: "the whole pattern", Reason: "Go's regexp cannot compile its translation: " + err.Error()}
	}
	return re, nil
}
