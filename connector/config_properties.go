package connector

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ConfigFromProperties builds a Config from Kafka consumer properties,
// starting from DefaultConfig. Values are trimmed as Kafka trims them. As
// in Kafka, rebalance.backoff.ms defaults to zookeeper.sync.time.ms when
// only the latter is given.
//
// Keys that the old consumer does not know produce a warning, as Kafka's
// VerifiableProperties.verify logs "Property ... is not valid"; keys
// starting with "external" are exempt, as in Kafka. A warning is also given
// for an explicit zero or empty value of a key whose default follows another
// key (client.id, consumer.id, zookeeper.connection.timeout.ms,
// group.instance.id): zkconsumer treats it as unset. Warnings are sorted.
//
// Every problem is reported at once: a value that does not parse (a
// non-numeric number, a boolean other than exactly "true" or "false") and
// every error Validate finds in the result (a missing group.id, a value out
// of range, ...), one *ConfigError per key, joined; all of them match
// ErrInvalidConfig. On error the Config holds every value that did parse.
// The Config itself is not validated (the fields that follow others are
// still unset), so callers may adjust it; the connector's constructor
// calls Validate.
func ConfigFromProperties(props map[string]string) (Config, []string, error) {
	c := DefaultConfig()
	var warnings []string
	var errs []error
	failed := map[string]bool{}
	known := make(map[string]bool, len(properties))
	for _, p := range properties {
		known[p.key] = true
		raw, ok := props[p.key]
		if !ok {
			continue
		}
		value := javaTrim(raw)
		if reason := p.set(&c, value); reason != "" {
			errs = append(errs, &ConfigError{Key: p.key, Value: value, Reason: reason})
			failed[p.key] = true
			continue
		}
		if _, set := p.get(&c); p.derived && !set {
			warnings = append(warnings, fmt.Sprintf("connector: property %s=%q is treated as unset, so its default applies", p.key, value))
		}
	}
	_, backoff := props[keyRebalanceBackoff]
	if _, sync := props[keyZooKeeperSyncTime]; sync && !backoff && !failed[keyZooKeeperSyncTime] {
		c.RebalanceBackoff = c.ZooKeeperSyncTime
	}
	for _, key := range securityKeys() {
		known[key] = true
	}
	for _, err := range setSecurityProperties(&c.Security, props) {
		var ce *ConfigError
		if errors.As(err, &ce) {
			failed[ce.Key] = true
		}
		errs = append(errs, err)
	}
	// Validation in the same round, on a copy; a key whose value did not
	// parse is reported once.
	check := c
	for _, err := range flattenErrors(check.Validate()) {
		var ce *ConfigError
		if errors.As(err, &ce) && failed[ce.Key] {
			continue
		}
		errs = append(errs, err)
	}
	for _, key := range c.ignoredKeys(func(key string) bool { _, ok := props[key]; return ok }) {
		warnings = append(warnings, c.ignoredKeyWarning(key))
	}
	for key := range props {
		if known[key] || strings.HasPrefix(key, "external") {
			continue
		}
		w := fmt.Sprintf("connector: property %s is not valid for the ZooKeeper-based consumer and is ignored", key)
		if hint, ok := renamedKeys[key]; ok {
			w += " (" + hint + ")"
		}
		warnings = append(warnings, w)
	}
	slices.Sort(warnings)
	return c, warnings, errors.Join(errs...)
}

// Properties returns the configuration as Kafka consumer properties, one
// key per field except Logger, Metrics, Security's settings that have no
// key (such as its TokenProvider), and the fields the chosen
// GroupCoordination ignores (see ModeWarnings). It contains Security's
// secrets: do not log it. Fields left unset so that they follow another
// field (see DefaultConfig) are omitted, so ConfigFromProperties restores
// the same Config. Durations are written in whole milliseconds.
func (c Config) Properties() map[string]string {
	out := make(map[string]string, len(properties))
	for _, p := range properties {
		if v, ok := p.get(&c); ok && !c.omitsKey(p.key) {
			out[p.key] = v
		}
	}
	for k, v := range c.Security.settings().Properties() {
		out[k] = v
	}
	return out
}

// ParseProperties reads Java properties, such as Kafka's
// config/consumer.properties, from r, with the rules of
// java.util.Properties.load; ConfigFromProperties turns the result into a
// Config. To load a file, open it and pass the *os.File:
//
//	f, err := os.Open("consumer.properties")
//	...
//	props, err := connector.ParseProperties(f)
//	f.Close()
//	cfg, warnings, err := connector.ConfigFromProperties(props)
//
// The rules:
//
//   - lines end at "\n", "\r" or "\r\n"; blank lines are skipped;
//   - a line whose first non-blank character is '#' or '!' is a comment;
//   - a line ending in an odd number of backslashes continues on the next
//     line, whose leading white space is dropped; comments do not continue;
//   - the key ends at the first unescaped '=', ':', space, tab or form feed;
//     white space around the separator is skipped, and the rest of the line,
//     trailing white space included, is the value;
//   - escapes \t \n \r \f and \uXXXX are decoded, a backslash before any
//     other character stands for that character, and a malformed \uXXXX is
//     a *SyntaxError;
//   - a repeated key keeps its last value.
//
// Java decodes an InputStream as ISO-8859-1. ParseProperties decodes UTF-8
// when the input is valid UTF-8 (dropping a leading byte order mark) and
// falls back to ISO-8859-1 otherwise, so files written by Java tools and by
// UTF-8 editors both load; \uXXXX escapes work in either. An error reading
// r is returned wrapped, and does not match ErrInvalidConfig.
func ParseProperties(r io.Reader) (map[string]string, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("connector: reading properties: %w", err)
	}
	props, serr := parseProperties(decodeProperties(data))
	if serr != nil {
		return nil, serr
	}
	return props, nil
}

// SyntaxError reports properties that java.util.Properties.load would
// refuse (a malformed \uxxxx escape), from ParseProperties. It matches
// ErrInvalidConfig, as the errors of ConfigFromProperties and Validate do;
// errors reading the input do not.
type SyntaxError struct {
	// Line is the 1-based line where the offending logical line starts.
	Line int
	// Reason says what is wrong, naming the key or the value.
	Reason string
}

// Error formats the error as "connector: properties: line <n>: <reason>".
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("connector: properties: line %d: %s", e.Line, e.Reason)
}

// Unwrap returns ErrInvalidConfig.
func (e *SyntaxError) Unwrap() error { return ErrInvalidConfig }

// decodeProperties turns file bytes into text: UTF-8 without its byte order
// mark if valid, ISO-8859-1 otherwise.
func decodeProperties(data []byte) string {
	if utf8.Valid(data) {
		return string(bytes.TrimPrefix(data, []byte("\uFEFF")))
	}
	runes := make([]rune, len(data))
	for i, b := range data {
		runes[i] = rune(b)
	}
	return string(runes)
}

// parseProperties parses properties text; see ParseProperties.
func parseProperties(text string) (map[string]string, *SyntaxError) {
	lr := lineReader{in: []rune(text)}
	props := make(map[string]string)
	for {
		line, start, ok := lr.next()
		if !ok {
			return props, nil
		}
		rawKey, rawValue := splitKeyValue(line)
		key, err := unescapeProperty(rawKey)
		if err != nil {
			return nil, &SyntaxError{Line: lr.lineAt(start), Reason: "key: " + err.Error()}
		}
		value, err := unescapeProperty(rawValue)
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

// unescapeProperty decodes the escapes of a key or value. UTF-16 surrogate
// pairs written as two \uXXXX escapes become one character; a lone surrogate
// becomes U+FFFD.
func unescapeProperty(in []rune) (string, error) {
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

// flattenErrors returns the errors joined in err (nil: none).
func flattenErrors(err error) []error {
	if err == nil {
		return nil
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		return joined.Unwrap()
	}
	return []error{err}
}
