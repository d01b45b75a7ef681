package main

import (
	"strconv"
	"strings"

	"github.com/zkconsumer/zkconsumer/connector"
)

// formatter prints messages as Kafka 1.1.1's DefaultMessageFormatter does:
// the timestamp, key and value that are enabled, separated by
// key.separator and ended by line.separator; nothing at all when none is
// enabled. print.partition and print.offset come from later Kafka versions
// (2.7+, where they follow the timestamp); 1.1.1 ignores them. Like Kafka,
// it ignores properties it does not know and takes separators literally
// (no escapes).
//
// key.deserializer and value.deserializer (or --key-deserializer and
// --value-deserializer) name one of Kafka's deserializer classes; the key
// or value is then printed as the toString of what it returns. As in
// Kafka, a missing key or value is handed to the deserializer as the four
// bytes "null".
type formatter struct {
	printTimestamp, printPartition, printOffset, printKey, printValue bool
	keySeparator, lineSeparator                                       string
	keyDeserializer, valueDeserializer                                deserializer
}

func newFormatter(props map[string]string) (*formatter, error) {
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
	var err error
	if v, ok := props["key.deserializer"]; ok {
		if f.keyDeserializer, err = lookupDeserializer(v); err != nil {
			return nil, err
		}
	}
	if v, ok := props["value.deserializer"]; ok {
		if f.valueDeserializer, err = lookupDeserializer(v); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// javaTrim removes leading and trailing characters up to U+0020, as Java's
// String.trim does.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// format appends m's line to buf.
func (f *formatter) format(buf []byte, m *connector.Message) ([]byte, error) {
	first := true
	field := func() {
		if !first {
			buf = append(buf, f.keySeparator...)
		}
		first = false
	}
	if f.printTimestamp {
		field()
		if m.TimestampType == connector.NoTimestampType {
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
	var err error
	if f.printKey {
		field()
		if buf, err = appendBytes(buf, m.Key, f.keyDeserializer); err != nil {
			return buf, err
		}
	}
	if f.printValue {
		field()
		if buf, err = appendBytes(buf, m.Value, f.valueDeserializer); err != nil {
			return buf, err
		}
	}
	if !first {
		buf = append(buf, f.lineSeparator...)
	}
	return buf, nil
}

var null = []byte("null")

// appendBytes appends b, "null" for a missing key or value, as Kafka
// prints them, through d when there is one.
func appendBytes(buf, b []byte, d deserializer) ([]byte, error) {
	if b == nil {
		b = null
	}
	if d != nil {
		return d(buf, b)
	}
	return append(buf, b...), nil
}
