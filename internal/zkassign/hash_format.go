package zkassign

import (
	"fmt"
	"strconv"
)

// RoundRobinHashFormat is the string form of a topic-partition whose Java
// hash orders partitions in the roundrobin assignor. Kafka 1.0.0 changed
// TopicAndPartition.toString (KAFKA-5822), which changed the order, so Scala
// roundrobin consumers before and after 1.0 never agree; every roundrobin
// member of a group must use the same format.
type RoundRobinHashFormat int

const (
	// HashFormatDash formats partition 3 of topic t as "t-3", as Scala
	// consumers 1.0.0 to 1.1.1 do. It is the default.
	HashFormatDash RoundRobinHashFormat = iota
	// HashFormatBracket formats partition 3 of topic t as "[t,3]", as Scala
	// consumers 0.8.2 to 0.11.0.x do.
	HashFormatBracket
)

// String returns "dash" or "bracket", the names ParseRoundRobinHashFormat
// accepts.
func (f RoundRobinHashFormat) String() string {
	switch f {
	case HashFormatDash:
		return "dash"
	case HashFormatBracket:
		return "bracket"
	default:
		return "RoundRobinHashFormat(" + strconv.Itoa(int(f)) + ")"
	}
}

// ParseRoundRobinHashFormat returns the format named "dash" (Kafka 1.0+) or
// "bracket" (Kafka 0.8.2 to 0.11).
func ParseRoundRobinHashFormat(s string) (RoundRobinHashFormat, error) {
	switch s {
	case "dash":
		return HashFormatDash, nil
	case "bracket":
		return HashFormatBracket, nil
	default:
		return 0, fmt.Errorf("unknown roundrobin hash format %q: allowed values are \"dash\" and \"bracket\"", s)
	}
}

// validate rejects values other than the declared constants.
func (f RoundRobinHashFormat) validate() error {
	switch f {
	case HashFormatDash, HashFormatBracket:
		return nil
	default:
		return fmt.Errorf("invalid roundrobin hash format %v", f)
	}
}

// format returns the string whose Java hash orders partition p of topic.
func (f RoundRobinHashFormat) format(topic string, p int32) string {
	ps := strconv.FormatInt(int64(p), 10)
	if f == HashFormatBracket {
		return "[" + topic + "," + ps + "]"
	}
	return topic + "-" + ps
}
