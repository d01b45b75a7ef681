package zkjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// ParseObject decodes data as one JSON object. JSON null, arrays and
// scalars are errors (json.Unmarshal would turn null into a nil map).
func ParseObject(data []byte) (map[string]json.RawMessage, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, errors.New("empty data, want a JSON object")
	}
	if trimmed[0] != '{' {
		return nil, fmt.Errorf("not a JSON object: %s", Quote(trimmed))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &m); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	return m, nil
}

// Int32 decodes raw as a JSON integer literal in the int32 range.
func Int32(raw json.RawMessage) (int32, error) {
	n, err := Int(raw, 32)
	return int32(n), err
}

// Int decodes raw as a JSON integer literal of at most bitSize bits.
func Int(raw json.RawMessage, bitSize int) (int64, error) {
	s := string(bytes.TrimSpace(raw))
	if !IsIntegerLiteral(s) {
		return 0, fmt.Errorf("%s is not an integer", Quote([]byte(s)))
	}
	n, err := strconv.ParseInt(s, 10, bitSize)
	if err != nil {
		return 0, fmt.Errorf("%s is out of range for a %d-bit integer", s, bitSize)
	}
	return n, nil
}

// IsIntegerLiteral reports whether s is "-?[0-9]+", the only number
// literals that Jackson reads as integers (fractions and exponents are
// floating point, even "1.0" and "1e2").
func IsIntegerLiteral(s string) bool {
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// String decodes raw as a JSON string (not null).
func String(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return "", fmt.Errorf("%s is not a string", Quote(raw))
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	return s, nil
}

// Array decodes raw as a JSON array (not null).
func Array(raw json.RawMessage) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil, fmt.Errorf("%s is not an array", Quote(raw))
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, err
	}
	return elems, nil
}

// Int32Array decodes raw as a JSON array of int32 integers (not null).
func Int32Array(raw json.RawMessage) ([]int32, error) {
	elems, err := Array(raw)
	if err != nil {
		return nil, err
	}
	out := make([]int32, 0, len(elems))
	for _, e := range elems {
		n, err := Int32(e)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// Object decodes raw as a JSON object (not null).
func Object(raw json.RawMessage) (map[string]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, fmt.Errorf("%s is not an object", Quote(raw))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// IsNull reports whether raw is the literal null.
func IsNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

// Quote renders a value for an error message, shortened so that a
// megabyte of garbage does not end up in a log line.
func Quote(b []byte) string {
	const maxLen = 64
	if len(b) > maxLen {
		return strconv.Quote(string(b[:maxLen])) + "..."
	}
	return strconv.Quote(string(b))
}

// AppendString appends s as a quoted JSON string, escaped the way
// Kafka's CoreUtils.JSONEscapeString does: '"', '\\' and '/' get a
// backslash, \b \f \n \r \t their short escapes, and the C0 controls, DEL
// and the C1 controls (U+0000-U+001F, U+007F-U+009F) become \u00xx with
// lowercase hex. Everything else, including non-ASCII, is written as UTF-8.
// Any standard JSON decoder reads the result back as s. s must be valid
// UTF-8.
func AppendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\' || r == '/':
			dst = append(dst, '\\', byte(r))
		case r == '\b':
			dst = append(dst, '\\', 'b')
		case r == '\f':
			dst = append(dst, '\\', 'f')
		case r == '\n':
			dst = append(dst, '\\', 'n')
		case r == '\r':
			dst = append(dst, '\\', 'r')
		case r == '\t':
			dst = append(dst, '\\', 't')
		case r <= 0x1f || (r >= 0x7f && r <= 0x9f):
			dst = append(dst, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xf])
		default:
			dst = utf8.AppendRune(dst, r)
		}
	}
	return append(dst, '"')
}
