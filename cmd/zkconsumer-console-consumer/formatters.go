package main

import (
	"encoding/binary"
	"hash/crc32"
	"strconv"

	"github.com/zkconsumer/zkconsumer/connector"
)

// messageFormatter prints messages as one of Kafka's MessageFormatter
// classes (--formatter) does.
type messageFormatter interface {
	// format appends what the formatter prints for m to buf. When it
	// fails, buf keeps what was appended before the failure: Kafka's
	// formatters write piece by piece, and what they wrote stays written.
	format(buf []byte, m *connector.Message) ([]byte, error)
}

const defaultFormatterClass = "kafka.tools.DefaultMessageFormatter"

// formatterClasses are Kafka 1.1.1's formatters of consumed messages, by
// class name, each made from the --property values. Kafka also loads any
// class on its classpath; the group-metadata formatters of
// __consumer_offsets are not implemented here.
var formatterClasses = map[string]func(props map[string]string) (messageFormatter, error){
	defaultFormatterClass: func(props map[string]string) (messageFormatter, error) {
		return newFormatter(props)
	},
	// Kafka's LoggingMessageFormatter prints what DefaultMessageFormatter
	// prints and logs each message at INFO, which the logging
	// configuration of Kafka's tools (WARN) does not show.
	"kafka.tools.LoggingMessageFormatter": func(props map[string]string) (messageFormatter, error) {
		return newFormatter(props)
	},
	"kafka.tools.NoOpMessageFormatter": func(map[string]string) (messageFormatter, error) {
		return noOpFormatter{}, nil
	},
	"kafka.tools.ChecksumMessageFormatter": func(props map[string]string) (messageFormatter, error) {
		prefix := ""
		if t, ok := props["topic"]; ok {
			prefix = t + ":"
		}
		return checksumFormatter{prefix: prefix}, nil
	},
}

// newMessageFormatter makes the formatter of class, or fails as Kafka's
// Class.forName does for a class it cannot load.
func newMessageFormatter(class string, props map[string]string) (messageFormatter, error) {
	newF, ok := formatterClasses[class]
	if !ok {
		return nil, classNotFound(class)
	}
	return newF(props)
}

// noOpFormatter prints nothing (kafka.tools.NoOpMessageFormatter).
type noOpFormatter struct{}

func (noOpFormatter) format(buf []byte, _ *connector.Message) ([]byte, error) { return buf, nil }

// checksumFormatter prints the CRC-32 of each message as Kafka 1.1.1's
// ChecksumMessageFormatter computes it: the checksum of the message in the
// old message format (v1 when it has a timestamp type, v0 otherwise),
// uncompressed, after the property topic and a colon when it is set.
type checksumFormatter struct{ prefix string }

func (f checksumFormatter) format(buf []byte, m *connector.Message) ([]byte, error) {
	buf = append(buf, f.prefix...)
	buf = append(buf, "checksum:"...)
	buf = strconv.AppendUint(buf, uint64(legacyChecksum(m)), 10)
	return append(buf, '\n'), nil
}

// legacyChecksum is the CRC-32 (IEEE) of m encoded as a message of format
// v0 or v1, from the magic byte on: magic, attributes (the timestamp type
// in bit 3), the timestamp (v1), then key and value with int32 lengths, -1
// for null.
func legacyChecksum(m *connector.Message) uint32 {
	var head [14]byte
	n := 0
	if m.TimestampType == connector.NoTimestampType {
		head[0], head[1] = 0, 0
		n = 2
	} else {
		head[0] = 1
		if m.TimestampType == connector.LogAppendTime {
			head[1] = 0x08
		}
		ts := int64(-1)
		if !m.Timestamp.IsZero() {
			ts = m.Timestamp.UnixMilli()
		}
		binary.BigEndian.PutUint64(head[2:], uint64(ts))
		n = 10
	}
	crc := crc32.Update(0, crc32.IEEETable, head[:n])
	crc = updateBytes(crc, m.Key)
	return updateBytes(crc, m.Value)
}

func updateBytes(crc uint32, b []byte) uint32 {
	var size [4]byte
	l := int32(-1)
	if b != nil {
		l = int32(len(b))
	}
	binary.BigEndian.PutUint32(size[:], uint32(l))
	crc = crc32.Update(crc, crc32.IEEETable, size[:])
	return crc32.Update(crc, crc32.IEEETable, b)
}
