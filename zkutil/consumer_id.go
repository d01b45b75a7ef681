package zkutil

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// maxUUIDDraws bounds the retries of NewConsumerID on a random source that
// keeps producing values Java could not take 8 hex digits of.
const maxUUIDDraws = 16

// NewConsumerID returns the id under which a member registers, as Scala's
// ZookeeperConsumerConnector builds it: "<group>_<configuredID>" when
// consumer.id is set, otherwise
//
//	<group>_<hostname>-<epochMillis>-<hex>
//
// where hex is the first 8 characters of Java's Long.toHexString of the
// most significant half of a random (version 4) UUID, for example
// "mygroup_host1.example.com-1531000000000-5f3a9c2e". As in Java, the hex is
// not zero-padded: a half such as 0x00ab... yields "ab...". The 8 bytes of
// that half are read from random (crypto/rand.Reader in production); a
// half with fewer than 8 hex digits, on which Java would throw, is drawn
// again.
//
// group must pass ValidateGroupID; configuredID is not checked, as Kafka
// does not check consumer.id. hostname is what Java's
// InetAddress.getLocalHost().getHostName() returns, and must not be empty
// when configuredID is.
func NewConsumerID(group, configuredID, hostname string, now time.Time, random io.Reader) (string, error) {
	if err := ValidateGroupID(group); err != nil {
		return "", err
	}
	if configuredID != "" {
		return group + "_" + configuredID, nil
	}
	if hostname == "" {
		return "", errors.New("consumer id needs a host name when consumer.id is not set")
	}
	hex, err := uuidPrefix(random)
	if err != nil {
		return "", err
	}
	return group + "_" + hostname + "-" + strconv.FormatInt(now.UnixMilli(), 10) + "-" + hex, nil
}

// uuidPrefix returns Long.toHexString(uuid.getMostSignificantBits)
// .substring(0, 8) of a random version 4 UUID.
func uuidPrefix(random io.Reader) (string, error) {
	if random == nil {
		return "", errors.New("consumer id needs a random source")
	}
	var msb [8]byte
	for range maxUUIDDraws {
		if _, err := io.ReadFull(random, msb[:]); err != nil {
			return "", fmt.Errorf("reading random bytes for the consumer id: %w", err)
		}
		msb[6] = msb[6]&0x0f | 0x40 // version 4
		// Java's toHexString treats the long as unsigned and drops
		// leading zeros, as FormatUint does.
		hex := strconv.FormatUint(binary.BigEndian.Uint64(msb[:]), 16)
		if len(hex) >= 8 {
			return hex[:8], nil
		}
	}
	return "", errors.New("random source keeps producing UUIDs with leading zeros")
}

// ValidateGroupID checks group.id the way Kafka's Config.validateChars does:
// only ASCII letters, digits, '.', '_' and '-'. Unlike Kafka, it also
// rejects the empty string, which would make the group's paths invalid.
func ValidateGroupID(group string) error {
	return validateChars("group.id", group)
}

func validateChars(prop, value string) error {
	if value == "" {
		return fmt.Errorf("%s is empty", prop)
	}
	for i := 0; i < len(value); i++ {
		c := value[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("%s %q is illegal: it contains a character other than ASCII alphanumerics, '.', '_' and '-'", prop, value)
		}
	}
	return nil
}
