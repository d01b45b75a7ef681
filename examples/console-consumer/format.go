package main

import (
	"io"
	"strconv"
	"strings"

	"github.com/zkconsumer/zkconsumer/stream"
)

// formatter prints messages as Kafka 1.1.1's DefaultMessageFormatter does:
// the timestamp, key and value that are enabled, separated by
// key.separator and ended by line.separator; nothing at all when none is
// enabled. print.partition and print.offset come from later Kafka versions
// (2.7+, where they follow the timestamp); 1.1.1 ignores them. Like Kafka,
// it ignores properties it does not know and takes separators literally
// (no escapes).
type formatter struct {
	printTimestamp, printPartition, printOffset, printKey, printValue bool
	keySeparator, lineSeparator                                       string
}

func newFormatter(props map[string]string) *formatter {
	f := &formatter{printValue: true, keySeparator: "\t", lineSeparator: "\n"}
	flag := func(key string, dst *bool) {
		if v, ok := props[key]; ok {
			*dst = strings.EqualFold(javaTrim(v), "true")
		}
	}
	flag("print.timestamp", &f.printTimestamp)
	flag("print.partition", &f.printPartition)
	flag("print.offset", &f.printOffset)
	flag("print.key", &f.printKey)
	flag("print.value", &f.printValue)
	if v, ok := props["key.separator"]; ok {
		f.keySeparator = v
	}
	if v, ok := props["line.separator"]; ok {
		f.lineSeparator = v
	}
	return f
}

// javaTrim removes leading and trailing characters up to U+0020, as Java's
// String.trim does.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// format appends m's line to buf.
func (f *formatter) format(buf []byte, m *stream.Message) []byte {
	first := true
	field := func() {
		if !first {
			buf = append(buf, f.keySeparator...)
		}
		first = false
	}
	if f.printTimestamp {
		field()
		if m.TimestampType == stream.NoTimestampType {
			buf = append(buf, "NO_TIMESTAMP"...)
		} else {
			buf = append(buf, m.TimestampType.String()...)
			buf = append(buf, ':')
			ts := int64(-1) // Kafka's "no timestamp" inside a typed message
			if !m.Timestamp.IsZero() {
				ts = m.Timestamp.UnixMilli()
			}
			buf = strconv.AppendInt(buf, ts, 10)
		}
	}
	if f.printPartition {
		field()
		buf = append(buf, "Partition:"...)
		buf = strconv.AppendInt(buf, int64(m.Partition), 10)
	}
	if f.printOffset {
		field()
		buf = append(buf, "Offset:"...)
		buf = strconv.AppendInt(buf, m.Offset, 10)
	}
	if f.printKey {
		field()
		buf = appendBytes(buf, m.Key)
	}
	if f.printValue {
		field()
		buf = appendBytes(buf, m.Value)
	}
	if !first {
		buf = append(buf, f.lineSeparator...)
	}
	return buf
}

// appendBytes appends b, or "null" for a missing key or value, as Kafka
// prints them.
func appendBytes(buf, b []byte) []byte {
	if b == nil {
		return append(buf, "null"...)
	}
	return append(buf, b...)
}

// write prints m's line on out in one write; Kafka's System.out flushes
// every message too, so output appears as messages arrive.
func (f *formatter) write(out io.Writer, buf []byte, m *stream.Message) ([]byte, error) {
	buf = f.format(buf[:0], m)
	if len(buf) == 0 {
		return buf, nil
	}
	_, err := out.Write(buf)
	return buf, err
}
