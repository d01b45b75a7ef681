package zkutil

import (
	"fmt"
	"strconv"
	"strings"
)

// ConsumerThreadID identifies one stream ("thread" in Kafka's words) of one
// group member. Its string form, "<consumerId>-<thread>", is the value of the
// owner znodes and the key by which assignors order threads.
type ConsumerThreadID struct {
	// ConsumerID is the member's consumer id, Thread the stream's number
	// within it, from 0.
	ConsumerID string
	Thread     int
}

// String returns "<consumerId>-<thread>", as Scala's ConsumerThreadId does.
func (id ConsumerThreadID) String() string {
	return id.ConsumerID + "-" + strconv.Itoa(id.Thread)
}

// Less orders thread ids by their string form, which is Java's
// String.compareTo for the ASCII ids Kafka allows ("c-10" < "c-2").
func (id ConsumerThreadID) Less(other ConsumerThreadID) bool {
	return id.String() < other.String()
}

// ParseConsumerThreadID splits an owner value at its last '-', the way
// Kafka's tools recover the consumer id from an owner znode.
func ParseConsumerThreadID(s string) (ConsumerThreadID, error) {
	i := strings.LastIndexByte(s, '-')
	if i <= 0 || i == len(s)-1 {
		return ConsumerThreadID{}, fmt.Errorf("owner value %q is not <consumerId>-<thread>", s)
	}
	n, err := strconv.Atoi(s[i+1:])
	if err != nil || n < 0 || strconv.Itoa(n) != s[i+1:] {
		return ConsumerThreadID{}, fmt.Errorf("owner value %q has no thread number", s)
	}
	return ConsumerThreadID{ConsumerID: s[:i], Thread: n}, nil
}
