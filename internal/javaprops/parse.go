package javaprops

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Parse reads the properties in data. Java decodes a stream as
// ISO-8859-1; Parse decodes UTF-8 when data is valid UTF-8 (dropping a
// leading byte order mark) and ISO-8859-1 otherwise. Its only error is a
// *SyntaxError.
func Parse(data []byte) (map[string]string, error) {
	props, err := parse(decode(data))
	if err != nil {
		return nil, err
	}
	return props, nil
}

// SyntaxError reports properties that java.util.Properties.load would
// refuse: a malformed \uxxxx escape.
type SyntaxError struct {
	// Line is the 1-based line where the offending logical line starts.
	Line int
	// Reason says what is wrong, naming the key or the value.
	Reason string
}

// Error formats the error as "line <n>: <reason>".
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d: %s", e.Line, e.Reason)
}

// decode turns file bytes into text: UTF-8 without its byte order
// mark if valid, ISO-8859-1 otherwise.
func decode(data []byte) string {
	if utf8.Valid(data) {
		return string(bytes.TrimPrefix(data, []byte("\uFEFF")))
	}
	runes := make([]rune, len(data))
	for i, b := range data {
		runes[i] = rune(b)
	}
	return string(runes)
}

// parse parses properties text; see Parse.
func parse(text string) (map[string]string, *SyntaxError) {
	lr := lineReader{in: []rune(text)}
	props := make(map[string]string)
	for {
		line, start, ok := lr.next()
		if !ok {
			return props, nil
		}
		rawKey, rawValue := splitKeyValue(line)
		key, err := unescape(rawKey)
		if err != nil {
			return nil, &SyntaxError{Line: lr.lineAt(start), Reason: "key: " + err.Error()}
		}
		value, err := unescape(rawValue)
		if err != nil {
			return nil, &SyntaxError{Line: lr.lineAt(start), Reason: "value of " + key + ": " + err.Error()}
		}
		props[key] = value
	}
}

func isPropertySpace(r rune) bool { return r == ' ' || r == '\t' || r == '\f' }

func isLineEnd(r rune) bool { return r == '\n' || r == '\r' }

// lineReader yields logical lines, comments and blank lines removed and
// continuations joined, following java.util.Properties.LineReader (Java 9+)
// character for character.
type lineReader struct {
	in  []rune
	pos int
}

// next returns the next logical line, still escaped, and the offset of its
// first character.
func (r *lineReader) next() (buf []rune, start int, ok bool) {
	skipSpace := true          // dropping leading white space
	appendedLineBegin := false // at the start of a continuation line
	precedingBackslash := false
	for {
		if r.pos >= len(r.in) {
			if len(buf) == 0 {
				return nil, 0, false
			}
			if precedingBackslash {
				buf = buf[:len(buf)-1]
			}
			return buf, start, true
		}
		c := r.in[r.pos]
		r.pos++
		if skipSpace {
			if isPropertySpace(c) || (!appendedLineBegin && isLineEnd(c)) {
				continue
			}
			skipSpace, appendedLineBegin = false, false
		}
		if len(buf) == 0 && (c == '#' || c == '!') {
			// A comment runs to the end of its natural line and never
			// continues. As in Java 9+, a line continued from a lone
			// backslash is still empty, so it may be a comment.
			for r.pos < len(r.in) && !isLineEnd(r.in[r.pos]) {
				r.pos++
			}
			if r.pos >= len(r.in) {
				return nil, 0, false
			}
			r.pos++
			skipSpace = true
			continue
		}
		if !isLineEnd(c) {
			if len(buf) == 0 {
				start = r.pos - 1
			}
			buf = append(buf, c)
			precedingBackslash = c == '\\' && !precedingBackslash
			continue
		}
		if len(buf) == 0 {
			skipSpace = true
			continue
		}
		if r.pos >= len(r.in) {
			if precedingBackslash {
				buf = buf[:len(buf)-1]
			}
			return buf, start, true
		}
		if !precedingBackslash {
			return buf, start, true
		}
		// The backslash joins the next natural line, without its leading
		// white space.
		buf = buf[:len(buf)-1]
		skipSpace, appendedLineBegin, precedingBackslash = true, true, false
		if c == '\r' && r.in[r.pos] == '\n' {
			r.pos++
		}
	}
}

// lineAt returns the 1-based natural line number of offset pos.
func (r *lineReader) lineAt(pos int) int {
	line := 1
	for i := 0; i < pos && i < len(r.in); i++ {
		if r.in[i] == '\n' || (r.in[i] == '\r' && (i+1 >= len(r.in) || r.in[i+1] != '\n')) {
			line++
		}
	}
	return line
}

// splitKeyValue splits a logical line at the first unescaped separator as
// Properties.load does.
func splitKeyValue(line []rune) (key, value []rune) {
	keyLen, valueStart := 0, len(line)
	hasSep, precedingBackslash := false, false
	for keyLen < len(line) {
		c := line[keyLen]
		if !precedingBackslash && (c == '=' || c == ':') {
			valueStart, hasSep = keyLen+1, true
			break
		}
		if !precedingBackslash && isPropertySpace(c) {
			valueStart = keyLen + 1
			break
		}
		precedingBackslash = c == '\\' && !precedingBackslash
		keyLen++
	}
	for valueStart < len(line) {
		c := line[valueStart]
		if !isPropertySpace(c) {
			if hasSep || (c != '=' && c != ':') {
				break
			}
			hasSep = true
		}
		valueStart++
	}
	return line[:keyLen], line[valueStart:]
}

// unescape decodes the escapes of a key or value. UTF-16 surrogate
// pairs written as two \uXXXX escapes become one character; a lone surrogate
// becomes U+FFFD.
func unescape(in []rune) (string, error) {
	var b strings.Builder
	b.Grow(len(in))
	var pendingHigh rune = -1 // a high surrogate waiting for its low half
	flush := func() {
		if pendingHigh >= 0 {
			b.WriteRune(utf8.RuneError)
			pendingHigh = -1
		}
	}
	for i := 0; i < len(in); i++ {
		c := in[i]
		if c != '\\' {
			flush()
			b.WriteRune(c)
			continue
		}
		i++
		if i >= len(in) {
			break // cannot happen: a trailing backslash continues the line
		}
		c = in[i]
		switch c {
		case 'u':
			if i+4 >= len(in) {
				return "", errors.New(`malformed \uxxxx encoding: too short`)
			}
			var r rune
			for _, h := range in[i+1 : i+5] {
				d, ok := hexDigit(h)
				if !ok {
					return "", fmt.Errorf(`malformed \uxxxx encoding: \u%s`, string(in[i+1:i+5]))
				}
				r = r<<4 | d
			}
			i += 4
			switch {
			case utf16.IsSurrogate(r) && r < 0xDC00: // high half
				flush()
				pendingHigh = r
				continue
			case utf16.IsSurrogate(r): // low half
				if pendingHigh >= 0 {
					b.WriteRune(utf16.DecodeRune(pendingHigh, r))
					pendingHigh = -1
					continue
				}
				r = utf8.RuneError
			}
			flush()
			b.WriteRune(r)
			continue
		case 't':
			c = '\t'
		case 'r':
			c = '\r'
		case 'n':
			c = '\n'
		case 'f':
			c = '\f'
		}
		flush()
		b.WriteRune(c)
	}
	flush()
	return b.String(), nil
}

func hexDigit(r rune) (rune, bool) {
	switch {
	case '0' <= r && r <= '9':
		return r - '0', true
	case 'a' <= r && r <= 'f':
		return r - 'a' + 10, true
	case 'A' <= r && r <= 'F':
		return r - 'A' + 10, true
	}
	return 0, false
}
