package zkutil

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/zkconsumer/zkconsumer/internal/zkjson"
)

// NoOffset is the offset that means "nothing committed" (Kafka's
// OffsetAndMetadata.InvalidOffset, -1). DecodeOffset returns it when a tool
// stored -1; the consumer then applies auto.offset.reset.
const NoOffset int64 = -1

// EncodeOffset returns the value of an offset node: the offset in decimal,
// as Java's Long.toString writes it ("1234"). The offset stored is the next
// one to consume.
func EncodeOffset(offset int64) []byte {
	return strconv.AppendInt(nil, offset, 10)
}

// DecodeOffset parses the value of the offset node at path. It accepts what
// Java's Long.parseLong accepts (an optional sign, then decimal digits) with
// surrounding ASCII whitespace, such as the trailing newline of a value
// written by hand with zkCli. The result is an offset of 0 or more, or
// NoOffset; empty data, anything non-numeric and values below -1 are
// errors.
func DecodeOffset(path string, data []byte) (int64, error) {
	s := strings.Trim(string(data), " \t\r\n\v\f")
	if s == "" {
		return 0, decodeError(path, errors.New("empty offset"))
	}
	// With base 10, ParseInt accepts exactly [+-]?[0-9]+, like parseLong.
	n, err := strconv.ParseInt(s, 10, 64)
	if errors.Is(err, strconv.ErrRange) {
		return 0, decodeError(path, fmt.Errorf("offset %s is out of range", zkjson.Quote([]byte(s))))
	}
	if err != nil {
		return 0, decodeError(path, fmt.Errorf("offset %s is not a decimal number", zkjson.Quote([]byte(s))))
	}
	if n < NoOffset {
		return 0, decodeError(path, fmt.Errorf("offset %d is negative", n))
	}
	return n, nil
}
