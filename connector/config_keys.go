package connector

import (
	"encoding"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// This file declares every property key of Config but Security's (those
// are internal/secure's table, which SecurityConfig mirrors): its
// spelling, its default, the field it sets and how it is parsed and
// printed, in one table, properties. DefaultConfig, ConfigFromProperties,
// Properties and ModeWarnings all read that table, so a key added there is
// loaded, printed and defaulted everywhere at once.

// Property keys, as Kafka 1.1.1's ConsumerConfig and ZKConfig spell them,
// Kafka 3.9's Java consumer for the keys of GroupCoordination "kafka",
// and the zkconsumer extensions.
const (
	keyGroupID                     = "group.id"
	keyZooKeeperConnect            = "zookeeper.connect"
	keyConsumerID                  = "consumer.id"
	keyClientID                    = "client.id"
	keySocketTimeout               = "socket.timeout.ms"
	keySocketReceiveBufferBytes    = "socket.receive.buffer.bytes"
	keyFetchMessageMaxBytes        = "fetch.message.max.bytes"
	keyFetchMaxBytes               = "fetch.max.bytes"
	keyNumConsumerFetchers         = "num.consumer.fetchers"
	keyAutoCommitEnable            = "auto.commit.enable"
	keyAutoCommitInterval          = "auto.commit.interval.ms"
	keyQueuedMaxMessageChunks      = "queued.max.message.chunks"
	keyRebalanceMaxRetries         = "rebalance.max.retries"
	keyRebalanceBackoff            = "rebalance.backoff.ms"
	keyFetchMinBytes               = "fetch.min.bytes"
	keyFetchWaitMax                = "fetch.wait.max.ms"
	keyRefreshLeaderBackoff        = "refresh.leader.backoff.ms"
	keyAutoOffsetReset             = "auto.offset.reset"
	keyConsumerTimeout             = "consumer.timeout.ms"
	keyExcludeInternalTopics       = "exclude.internal.topics"
	keyPartitionAssignmentStrategy = "partition.assignment.strategy"
	keyOffsetsStorage              = "offsets.storage"
	keyDualCommitEnabled           = "dual.commit.enabled"
	keyOffsetsChannelBackoff       = "offsets.channel.backoff.ms"
	keyOffsetsChannelSocketTimeout = "offsets.channel.socket.timeout.ms"
	keyOffsetsCommitMaxRetries     = "offsets.commit.max.retries"
	keyZooKeeperSessionTimeout     = "zookeeper.session.timeout.ms"
	keyZooKeeperConnectionTimeout  = "zookeeper.connection.timeout.ms"
	keyZooKeeperSyncTime           = "zookeeper.sync.time.ms"

	keyRoundRobinHashFormat = "zkconsumer.roundrobin.hash.format"
	keyRebalanceProtocol    = "zkconsumer.rebalance.protocol"
	keyIsolationLevel       = "zkconsumer.isolation.level"
	keyRecycleMessages      = "zkconsumer.recycle.messages"

	// keyCheckCRCs is the Java consumer's key, with its meaning.
	keyCheckCRCs = "check.crcs"

	// Group coordination.
	keyGroupCoordination = "zkconsumer.group.coordination"
	keyBootstrapServers  = "bootstrap.servers"
	keySessionTimeout    = "session.timeout.ms"
	keyHeartbeatInterval = "heartbeat.interval.ms"
	keyMaxPollInterval   = "max.poll.interval.ms"
	keyGroupInstanceID   = "group.instance.id"
	keyMetadataMaxAge    = "metadata.max.age.ms"

	// The group protocol (GroupCoordination "kafka").
	keyGroupProtocol       = "group.protocol"
	keyGroupRemoteAssignor = "group.remote.assignor"
)

// property maps one key to one Config field.
type property struct {
	key string
	// setDefault sets the field to its default (DefaultConfig).
	setDefault func(c *Config)
	// set parses a value, already trimmed, into the field. It returns the
	// reason the value is unacceptable, or "".
	set func(c *Config, value string) string
	// get formats the field; ok is false when the field is unset (a default
	// that follows another field) and the key should be left out.
	get func(c *Config) (value string, ok bool)
	// derived marks fields whose zero value means "follow another field";
	// an explicit zero or empty value for them earns a warning.
	derived bool
}

// properties lists every key the loader understands, with its default, in
// the order ConfigFromProperties reads them (and so reports their errors).
// The derived entries (derivedStringProp, derivedMsProp, derivedEnumProp)
// have no default of their own: unset, they follow another field or are
// generated (see Validate and each field's doc).
var properties = []property{
	stringProp(keyGroupID, "", func(c *Config) *string { return &c.GroupID }), // required
	stringProp(keyZooKeeperConnect, "", func(c *Config) *string { return &c.ZooKeeperConnect }),
	derivedStringProp(keyConsumerID, func(c *Config) *string { return &c.ConsumerID }), // generated: <host>-<millis>-<uuid8>
	msProp(keySocketTimeout, 30000*time.Millisecond, func(c *Config) *time.Duration { return &c.SocketTimeout }),
	intProp(keySocketReceiveBufferBytes, -1, func(c *Config) *int { return &c.SocketReceiveBufferBytes }),
	intProp(keyFetchMessageMaxBytes, 1024*1024, func(c *Config) *int { return &c.FetchMessageMaxBytes }),
	intProp(keyNumConsumerFetchers, 1, func(c *Config) *int { return &c.NumConsumerFetchers }),
	boolProp(keyAutoCommitEnable, true, func(c *Config) *bool { return &c.AutoCommitEnable }),
	msProp(keyAutoCommitInterval, 60000*time.Millisecond, func(c *Config) *time.Duration { return &c.AutoCommitInterval }),
	intProp(keyQueuedMaxMessageChunks, 2, func(c *Config) *int { return &c.QueuedMaxMessageChunks }),
	intProp(keyRebalanceMaxRetries, 4, func(c *Config) *int { return &c.RebalanceMaxRetries }),
	intProp(keyFetchMinBytes, 1, func(c *Config) *int { return &c.FetchMinBytes }),
	intProp(keyFetchMaxBytes, 50*1024*1024, func(c *Config) *int { return &c.FetchMaxBytes }),
	msProp(keyFetchWaitMax, 100*time.Millisecond, func(c *Config) *time.Duration { return &c.FetchWaitMax }),
	// ConfigFromProperties makes it follow zookeeper.sync.time.ms when
	// only the latter is given, as Kafka does.
	msProp(keyRebalanceBackoff, 2000*time.Millisecond, func(c *Config) *time.Duration { return &c.RebalanceBackoff }),
	msProp(keyRefreshLeaderBackoff, 200*time.Millisecond, func(c *Config) *time.Duration { return &c.RefreshLeaderBackoff }),
	msProp(keyOffsetsChannelBackoff, 1000*time.Millisecond, func(c *Config) *time.Duration { return &c.OffsetsChannelBackoff }),
	msProp(keyOffsetsChannelSocketTimeout, 10000*time.Millisecond, func(c *Config) *time.Duration { return &c.OffsetsChannelSocketTimeout }),
	intProp(keyOffsetsCommitMaxRetries, 5, func(c *Config) *int { return &c.OffsetsCommitMaxRetries }),
	enumProp(keyOffsetsStorage, OffsetsStorageZooKeeper, func(c *Config) *OffsetsStorage { return &c.OffsetsStorage }),
	{
		// Follows offsets.storage (DualCommitDefault); Validate fills it in.
		key:        keyDualCommitEnabled,
		setDefault: func(c *Config) { c.DualCommitEnabled = DualCommitDefault },
		set: func(c *Config, value string) string {
			// Exactly "true" or "false", as Kafka's getBoolean reads it.
			if _, reason := parseBool(value); reason != "" {
				return reason
			}
			return textReason(c.DualCommitEnabled.UnmarshalText([]byte(value)))
		},
		get: func(c *Config) (string, bool) {
			return c.DualCommitEnabled.String(), c.DualCommitEnabled != DualCommitDefault
		},
	},
	enumProp(keyAutoOffsetReset, AutoOffsetResetLargest, func(c *Config) *OffsetReset { return &c.AutoOffsetReset }),
	msProp(keyConsumerTimeout, -1*time.Millisecond, func(c *Config) *time.Duration { return &c.ConsumerTimeout }),
	derivedStringProp(keyClientID, func(c *Config) *string { return &c.ClientID }), // follows group.id
	boolProp(keyExcludeInternalTopics, true, func(c *Config) *bool { return &c.ExcludeInternalTopics }),
	{
		key:        keyPartitionAssignmentStrategy,
		setDefault: func(c *Config) { c.PartitionAssignmentStrategy = []AssignmentStrategy{StrategyRange} },
		set: func(c *Config, value string) string {
			list, err := parseStrategies(value)
			if err == nil {
				c.PartitionAssignmentStrategy = list
			}
			return textReason(err)
		},
		get: func(c *Config) (string, bool) { return formatStrategies(c.PartitionAssignmentStrategy), true },
	},
	msProp(keyZooKeeperSessionTimeout, 6000*time.Millisecond, func(c *Config) *time.Duration { return &c.ZooKeeperSessionTimeout }),
	derivedMsProp(keyZooKeeperConnectionTimeout, func(c *Config) *time.Duration { return &c.ZooKeeperConnectionTimeout }), // follows zookeeper.session.timeout.ms
	msProp(keyZooKeeperSyncTime, 2000*time.Millisecond, func(c *Config) *time.Duration { return &c.ZooKeeperSyncTime }),
	enumProp(keyRoundRobinHashFormat, RoundRobinHashDash, func(c *Config) *RoundRobinHashFormat { return &c.RoundRobinHashFormat }),
	enumProp(keyRebalanceProtocol, RebalanceCooperative, func(c *Config) *RebalanceProtocol { return &c.RebalanceProtocol }),
	enumProp(keyIsolationLevel, IsolationReadUncommitted, func(c *Config) *IsolationLevel { return &c.IsolationLevel }),
	boolProp(keyCheckCRCs, true, func(c *Config) *bool { return &c.CheckCRCs }),
	boolProp(keyRecycleMessages, false, func(c *Config) *bool { return &c.RecycleMessages }),

	// Group coordination; the defaults of the keys of "kafka" are Kafka
	// 3.9's Java consumer's.
	enumProp(keyGroupCoordination, CoordinationZooKeeper, func(c *Config) *Coordination { return &c.GroupCoordination }),
	stringProp(keyBootstrapServers, "", func(c *Config) *string { return &c.BootstrapServers }),
	msProp(keySessionTimeout, 45000*time.Millisecond, func(c *Config) *time.Duration { return &c.SessionTimeout }),
	msProp(keyHeartbeatInterval, 3000*time.Millisecond, func(c *Config) *time.Duration { return &c.HeartbeatInterval }),
	msProp(keyMaxPollInterval, 300000*time.Millisecond, func(c *Config) *time.Duration { return &c.MaxPollInterval }),
	derivedStringProp(keyGroupInstanceID, func(c *Config) *string { return &c.GroupInstanceID }), // none
	msProp(keyMetadataMaxAge, 300000*time.Millisecond, func(c *Config) *time.Duration { return &c.MetadataMaxAge }),

	// The group protocol.
	enumProp(keyGroupProtocol, GroupProtocolClassic, func(c *Config) *GroupProtocol { return &c.GroupProtocol }),
	derivedEnumProp(keyGroupRemoteAssignor, func(c *Config) *RemoteAssignor { return &c.GroupRemoteAssignor }), // the broker's choice
}

// zookeeperOnlyKeys are the keys that mean nothing with
// zkconsumer.group.coordination=kafka; kafkaOnlyKeys those that mean
// nothing with zookeeper. Their order is that of ModeWarnings.
var (
	zookeeperOnlyKeys = []string{
		keyZooKeeperConnect, keyZooKeeperSessionTimeout, keyZooKeeperConnectionTimeout, keyZooKeeperSyncTime,
		keyOffsetsStorage, keyDualCommitEnabled, keyOffsetsChannelBackoff, keyOffsetsChannelSocketTimeout,
		keyRebalanceMaxRetries, keyRebalanceBackoff, keyRoundRobinHashFormat, keyRebalanceProtocol,
	}
	kafkaOnlyKeys = []string{
		keyBootstrapServers, keySessionTimeout, keyHeartbeatInterval, keyMaxPollInterval,
		keyGroupInstanceID, keyMetadataMaxAge, keyGroupProtocol, keyGroupRemoteAssignor,
	}
)

// renamedKeys suggests the key to use for names that people carry over from
// the new (Java) consumer or from Kafka 0.7.
var renamedKeys = map[string]string{
	"enable.auto.commit":        "did you mean auto.commit.enable?",
	"max.partition.fetch.bytes": "did you mean fetch.message.max.bytes?",
	"fetch.max.wait.ms":         "did you mean fetch.wait.max.ms?",
	"receive.buffer.bytes":      "did you mean socket.receive.buffer.bytes?",
	"isolation.level":           "did you mean " + keyIsolationLevel + "?",
	"queued.max.messages":       "did you mean queued.max.message.chunks?",
	"groupid":                   "did you mean group.id?",
	"consumerid":                "did you mean consumer.id?",
	"zk.connect":                "did you mean zookeeper.connect?",
	"zk.sessiontimeout.ms":      "did you mean zookeeper.session.timeout.ms?",
	"zk.connectiontimeout.ms":   "did you mean zookeeper.connection.timeout.ms?",
	"zk.synctime.ms":            "did you mean zookeeper.sync.time.ms?",
	"socket.buffersize":         "did you mean socket.receive.buffer.bytes?",
	"fetch.size":                "did you mean fetch.message.max.bytes?",
	"autocommit.enable":         "did you mean auto.commit.enable?",
	"autocommit.interval.ms":    "did you mean auto.commit.interval.ms?",
	"queuedchunks.max":          "did you mean queued.max.message.chunks?",
	"rebalance.retries.max":     "did you mean rebalance.max.retries?",
	"autooffset.reset":          "did you mean auto.offset.reset?",
}

// defaultOf returns the setDefault of a property whose field is set to
// def.
func defaultOf[T any](field func(*Config) *T, def T) func(*Config) {
	return func(c *Config) { *field(c) = def }
}

func stringProp(key, def string, field func(*Config) *string) property {
	return property{
		key:        key,
		setDefault: defaultOf(field, def),
		set: func(c *Config, value string) string {
			*field(c) = value
			return ""
		},
		get: func(c *Config) (string, bool) { return *field(c), true },
	}
}

// derivedStringProp is stringProp for a field whose empty value means
// unset (left out of Properties, and an explicit empty value earns a
// warning).
func derivedStringProp(key string, field func(*Config) *string) property {
	p := stringProp(key, "", field)
	p.derived = true
	p.get = func(c *Config) (string, bool) {
		v := *field(c)
		return v, v != ""
	}
	return p
}

func boolProp(key string, def bool, field func(*Config) *bool) property {
	return property{
		key:        key,
		setDefault: defaultOf(field, def),
		set: func(c *Config, value string) string {
			b, reason := parseBool(value)
			if reason == "" {
				*field(c) = b
			}
			return reason
		},
		get: func(c *Config) (string, bool) {
			return strconv.FormatBool(*field(c)), true
		},
	}
}

func intProp(key string, def int, field func(*Config) *int) property {
	return property{
		key:        key,
		setDefault: defaultOf(field, def),
		set: func(c *Config, value string) string {
			n, reason := parseInt(value)
			if reason == "" {
				*field(c) = int(n)
			}
			return reason
		},
		get: func(c *Config) (string, bool) {
			return itoa(*field(c)), true
		},
	}
}

// msProp maps key, a number of milliseconds, to a time.Duration field.
func msProp(key string, def time.Duration, field func(*Config) *time.Duration) property {
	return property{
		key:        key,
		setDefault: defaultOf(field, def),
		set: func(c *Config, value string) string {
			n, reason := parseInt(value)
			if reason == "" {
				*field(c) = time.Duration(n) * time.Millisecond
			}
			return reason
		},
		get: func(c *Config) (string, bool) {
			return strconv.FormatInt((*field(c)).Milliseconds(), 10), true
		},
	}
}

// derivedMsProp is msProp for a field whose zero value means unset (left
// out of Properties, and an explicit zero earns a warning).
func derivedMsProp(key string, field func(*Config) *time.Duration) property {
	p := msProp(key, 0, field)
	p.derived = true
	p.get = func(c *Config) (string, bool) {
		d := *field(c)
		return strconv.FormatInt(d.Milliseconds(), 10), d != 0
	}
	return p
}

// textOption is a pointer to a field of one of the option types.
type textOption[T any] interface {
	*T
	fmt.Stringer
	encoding.TextUnmarshaler
}

// enumProp maps key to a field of an option type, through its
// UnmarshalText and String.
func enumProp[T any, P textOption[T]](key string, def T, field func(*Config) P) property {
	return property{
		key:        key,
		setDefault: func(c *Config) { *field(c) = def },
		set: func(c *Config, value string) string {
			return textReason(field(c).UnmarshalText([]byte(value)))
		},
		get: func(c *Config) (string, bool) { return field(c).String(), true },
	}
}

// derivedEnumProp is enumProp for an option whose zero value means unset
// (left out of Properties, and an explicit empty value earns a warning).
func derivedEnumProp[T comparable, P textOption[T]](key string, field func(*Config) P) property {
	var zero T
	p := enumProp(key, zero, field)
	p.derived = true
	p.get = func(c *Config) (string, bool) {
		return field(c).String(), *field(c) != zero
	}
	return p
}

// textReason is the reason of err, a *ConfigError from UnmarshalText, or
// "" for nil.
func textReason(err error) string {
	if err == nil {
		return ""
	}
	if ce, ok := errors.AsType[*ConfigError](err); ok {
		return ce.Reason
	}
	return err.Error()
}

// parseInt parses a Java int as Integer.parseInt does: optional sign,
// decimal digits, 32-bit range.
func parseInt(s string) (int32, string) {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || s == "" || strings.ContainsRune(s, '_') {
		return 0, "must be an integer between -2147483648 and 2147483647"
	}
	return int32(n), ""
}

// parseBool accepts exactly "true" and "false", as Kafka's
// VerifiableProperties.getBoolean does.
func parseBool(s string) (bool, string) {
	switch s {
	case "true":
		return true, ""
	case "false":
		return false, ""
	}
	return false, "must be true or false"
}

// javaTrim removes leading and trailing characters up to U+0020, as Java's
// String.trim does; Kafka trims every value it reads.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}
