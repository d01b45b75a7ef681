package main

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"

	"github.com/zkconsumer/zkconsumer/stream"
)

// formatter prints messages as Kafka's DefaultMessageFormatter does.
type formatter struct {
	printKey, printPartition, printOffset, printTimestamp bool
	keySeparator, lineSeparator                           string
}

func newFormatter(props []string) (*formatter, error) {
	f := &formatter{keySeparator: "\t", lineSeparator: "\n"}
	for _, kv := range props {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("--property %q: want key=value", kv)
		}
		boolean := strings.EqualFold(strings.TrimSpace(v), "true")
		switch k {
		case "print.key":
			f.printKey = boolean
		case "print.partition":
			f.printPartition = boolean
		case "print.offset":
			f.printOffset = boolean
		case "print.timestamp":
			f.printTimestamp = boolean
		case "key.separator":
			f.keySeparator = unescape(v)
		case "line.separator":
			f.lineSeparator = unescape(v)
		default:
			return nil, fmt.Errorf("--property %q: unknown formatter property", k)
		}
	}
	return f, nil
}

// unescape turns "\t" and "\n" written on a command line into the
// characters.
func unescape(s string) string {
	return strings.NewReplacer(`\t`, "\t", `\n`, "\n", `\r`, "\r").Replace(s)
}

func (f *formatter) write(out *bufio.Writer, m *stream.Message) {
	if f.printTimestamp {
		if m.Timestamp.IsZero() {
			out.WriteString("NO_TIMESTAMP")
		} else {
			out.WriteString("CreateTime:")
			out.WriteString(strconv.FormatInt(m.Timestamp.UnixMilli(), 10))
		}
		out.WriteString(f.keySeparator)
	}
	if f.printPartition {
		out.WriteString("Partition:")
		out.WriteString(strconv.FormatInt(int64(m.Partition), 10))
		out.WriteString(f.keySeparator)
	}
	if f.printOffset {
		out.WriteString("Offset:")
		out.WriteString(strconv.FormatInt(m.Offset, 10))
		out.WriteString(f.keySeparator)
	}
	if f.printKey {
		if m.Key == nil {
			out.WriteString("null")
		} else {
			out.Write(m.Key)
		}
		out.WriteString(f.keySeparator)
	}
	if m.Value == nil {
		out.WriteString("null")
	} else {
		out.Write(m.Value)
	}
	out.WriteString(f.lineSeparator)
}
