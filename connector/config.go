package connector

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
)

// ErrInvalidConfig is matched by every error that Validate and the
// properties loader report, so callers can test errors.Is(err,
// ErrInvalidConfig) on the joined result.
var ErrInvalidConfig = errors.New("connector: invalid configuration")

// ConfigError reports one invalid configuration value. Validate and the
// properties loader return several of them joined with errors.Join; use
// errors.As to inspect the first, or errors.Is with ErrInvalidConfig.
type ConfigError struct {
	// Key is the Kafka property name, for example "auto.offset.reset".
	Key string
	// Value is the offending value as it would be written in a properties
	// file (durations in milliseconds).
	Value string
	// Reason says what is wrong and, for enumerations, lists the allowed
	// values.
	Reason string
}

// Error formats the error as
// `connector: invalid <key> "<value>": <reason>`.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("connector: invalid %s %q: %s", e.Key, e.Value, e.Reason)
}

// Unwrap returns ErrInvalidConfig.
func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }

// Config configures a ConsumerConnector. It has one field for every key of
// Kafka 1.1.1's kafka.consumer.ConsumerConfig, plus a few zkconsumer
// extensions whose keys start with "zkconsumer.".
//
// Start from DefaultConfig, set GroupID and ZooKeeperConnect (or
// GroupCoordination CoordinationKafka and BootstrapServers), and call
// Validate (the connector's constructor does). A few fields default to the
// value of another field; they are left zero by DefaultConfig and filled in
// by Validate, so that changing the field they follow changes them too. As
// a consequence the literal zero cannot be requested for those fields;
// their docs say so.
//
// The options with a fixed set of values (AutoOffsetReset,
// GroupCoordination, PartitionAssignmentStrategy, OffsetsStorage, ...)
// have types of their own with a constant per value, so that a misspelt
// value does not compile; their zero value is Kafka's default, so a Config
// whose option fields are left zero behaves as DefaultConfig's. Their
// UnmarshalText methods read Kafka's spellings, as properties files
// (ConfigFromProperties) write them.
//
// Durations are expressed in milliseconds in properties files; their
// Kafka keys end in ".ms". Sub-millisecond parts are dropped when a Config
// is turned back into properties.
type Config struct {
	// GroupID names the consumer group: group.id, required. It must be
	// non-empty and consist of ASCII letters, digits, '.', '_' and '-', and
	// may not be "." or ".." (it is a znode name under /consumers).
	GroupID string

	// ZooKeeperConnect is the ZooKeeper connection string:
	// zookeeper.connect, required with GroupCoordination "zookeeper" (the
	// default) and ignored with "kafka". It has the form
	// "host1:port1,host2:port2/chroot"; the port defaults to 2181 and the
	// chroot is optional.
	ZooKeeperConnect string

	// GroupCoordination chooses who coordinates the group:
	// zkconsumer.group.coordination, a zkconsumer extension, default
	// CoordinationZooKeeper (the zero value), "zookeeper" in properties.
	// CoordinationZooKeeper is Kafka's Scala consumer's way (members
	// register in ZooKeeper and claim partitions there); CoordinationKafka
	// ("kafka") joins the group through the brokers' group coordinator, as
	// Kafka's Java consumer does, so that zkconsumer members and Java
	// consumers can share one group and no ZooKeeper is needed (Kafka 4.x).
	// The streams, the iterator and the rest of the API are the same.
	//
	// Some keys mean something in one mode only: zookeeper.*,
	// offsets.storage, dual.commit.enabled, offsets.channel.*,
	// rebalance.max.retries, rebalance.backoff.ms and
	// zkconsumer.roundrobin.hash.format with "zookeeper"; bootstrap.servers,
	// session.timeout.ms, heartbeat.interval.ms, max.poll.interval.ms,
	// group.instance.id and metadata.max.age.ms with "kafka". Given in the
	// other mode they are ignored with a warning (ModeWarnings;
	// ConfigFromProperties returns it, New logs it on Logger), not an
	// error, so that one file serves both modes while a group moves off
	// ZooKeeper.
	GroupCoordination Coordination

	// BootstrapServers lists some of the cluster's brokers,
	// "host1:port1,host2:port2": bootstrap.servers, required with
	// GroupCoordination "kafka", ignored with "zookeeper". The group
	// coordinator, the partition leaders and the other brokers are found
	// through them.
	BootstrapServers string

	// SessionTimeout is how long the group coordinator waits for a
	// heartbeat before it removes this member and gives its partitions to
	// others: session.timeout.ms, default 45000 (Kafka 3.0+), "kafka" mode
	// only. The broker allows [group.min.session.timeout.ms,
	// group.max.session.timeout.ms] (6 s to 30 min by default). Messages are
	// handed out only while a lease of three quarters of
	// min(SessionTimeout, MaxPollInterval), renewed by every successful
	// heartbeat, holds, so a member frozen or cut off past it delivers
	// nothing more of partitions that may be moving to others.
	SessionTimeout time.Duration

	// HeartbeatInterval is the period of heartbeats to the group
	// coordinator: heartbeat.interval.ms, default 3000, "kafka" mode only.
	// It must be lower than SessionTimeout; Kafka advises a third of it at
	// most. The member heartbeats more often when it is longer than a
	// quarter of min(SessionTimeout, MaxPollInterval), so that a member
	// whose heartbeats succeed never stops handing out messages for want of
	// a lease.
	HeartbeatInterval time.Duration

	// MaxPollInterval is max.poll.interval.ms, default 300000 (5 min),
	// "kafka" mode only. It is sent as the group's rebalance timeout: how
	// long the coordinator waits for members to rejoin, so it bounds how
	// long this member may take to stop, commit and run the rebalance
	// listener when a rebalance starts; the commit on revoke is retried
	// within it, as in Java, while the coordinator moves or cannot be
	// reached (see ConsumerConnector.Shutdown for the commit on close). It
	// also protects the group from a
	// stalled application, as in Java's consumer: when a stream's reader
	// holds messages up for MaxPollInterval (it is not blocked in Next,
	// messages wait for it, and it consumes nothing), the member commits
	// what was consumed, leaves the group (its partitions go to the other
	// members at once) and reports ErrMaxPollIntervalExceeded on Errors; it
	// joins again once every stalled stream is read again. A reader
	// blocked in Next is never stalled, however long no message comes.
	MaxPollInterval time.Duration

	// GroupInstanceID makes this member a static member (KIP-345):
	// group.instance.id, default unset, "kafka" mode only, brokers 2.3+. A
	// static member that restarts within SessionTimeout gets its
	// partitions back without a rebalance, and Shutdown does not leave the
	// group (the coordinator removes the member after SessionTimeout), as
	// in Java. Two live members with the same id fence each other: the
	// older gets a fatal error (ErrGroupFatal) on Errors, and hands
	// out nothing more from the moment it learns it (its next heartbeat or
	// commit). The coordinator gives the partitions to the newer one at
	// once, without waiting for the older's session to time out, so a
	// member started with a static id hands out no message until three
	// quarters of min(SessionTimeout, MaxPollInterval) after it joined,
	// when the older instance's lease has surely ended: a restart costs
	// that pause (4.5 s with a 6 s session, 33.75 s with the defaults),
	// not a rebalance. This assumes every instance of one id runs with
	// the same SessionTimeout and MaxPollInterval. Same characters as
	// GroupID.
	GroupInstanceID string

	// MetadataMaxAge is how often, in "kafka" mode, the member checks the
	// cluster's metadata for partitions added to its topics (every member
	// checks its own subscription's, the leader also those of every topic
	// of the group) and topics its wildcard now matches, and rejoins when
	// they changed: metadata.max.age.ms, default 300000 (5 min).
	MetadataMaxAge time.Duration

	// GroupProtocol is group.protocol, "kafka" mode only:
	// GroupProtocolClassic (the zero value and the default, "classic";
	// JoinGroup, SyncGroup, Heartbeat, with the assignment computed by the
	// group's leader) or GroupProtocolConsumer ("consumer": KIP-848's
	// ConsumerGroupHeartbeat, Kafka 4.0 or later: the broker computes the
	// assignment and moves partitions one by one, and a member keeps the
	// partitions that stay its own). See GroupProtocolConsumer for what
	// each setting means with it.
	GroupProtocol GroupProtocol
	// GroupRemoteAssignor is group.remote.assignor, with
	// GroupProtocolConsumer only: the broker-side assignor,
	// RemoteAssignorUniform ("uniform") or RemoteAssignorRange ("range");
	// default RemoteAssignorDefault (the zero value, unset: the broker's
	// group.consumer.assignors, uniform first).
	GroupRemoteAssignor RemoteAssignor

	// ConsumerID fixes the variable part of this member's id:
	// consumer.id, default unset. The member registers as
	// /consumers/<group>/ids/<group>_<ConsumerID>, and its thread ids and
	// owner values start with that name. When empty, "<host>-<millis>-<uuid8>"
	// is generated in its place, as Kafka does. Kafka recommends setting it
	// only for tests. It must be usable in a znode name (no '/', no control
	// characters, not "." or "..").
	ConsumerID string

	// ClientID is sent with every request to the brokers: client.id,
	// default GroupID. Empty means "use GroupID", so an empty client id
	// cannot be requested. Same characters as GroupID.
	ClientID string

	// SocketTimeout is the network timeout for fetch requests:
	// socket.timeout.ms, default 30000 (30s). It must be positive and at
	// least FetchWaitMax, as Kafka requires.
	SocketTimeout time.Duration

	// SocketReceiveBufferBytes is the TCP receive buffer of the fetch
	// connections: socket.receive.buffer.bytes. The default, -1 (zero
	// too), sets nothing and keeps the operating system's default, which
	// on Linux is receive-buffer autotuning, as librdkafka and the Go
	// clients do. This is the one default that differs from Kafka 1.1.1's
	// (65536): a fixed size turns autotuning off, and on a fast network a
	// 64 KiB buffer limits a consumer (BENCHMARKS.md, "Settings that change
	// throughput"). A positive size is set before connecting, so that the
	// TCP window scale fits it.
	SocketReceiveBufferBytes int

	// FetchMessageMaxBytes is the number of bytes fetched per partition in
	// one request: fetch.message.max.bytes, default 1048576 (1 MiB). It
	// must be positive, at most 2147483647, and at least the largest
	// message the brokers accept, or a large message stops its partition.
	FetchMessageMaxBytes int

	// FetchMaxBytes is fetch.max.bytes, default 52428800 (50 MiB). Kafka's
	// old consumer parses it but never uses it; it is kept so existing
	// properties files load without warnings. It must be positive and at
	// most 2147483647.
	FetchMaxBytes int

	// NumConsumerFetchers is the number of fetchers per broker: the
	// partitions led by one broker are spread over this many fetch loops
	// (Kafka's fetcher threads): num.consumer.fetchers, default 1. At least 1.
	NumConsumerFetchers int

	// AutoCommitEnable commits consumed offsets periodically, before every
	// rebalance and at shutdown: auto.commit.enable, default true.
	AutoCommitEnable bool

	// AutoCommitInterval is the period of automatic commits:
	// auto.commit.interval.ms, default 60000 (1m). It must be positive when
	// AutoCommitEnable is set.
	AutoCommitInterval time.Duration

	// QueuedMaxMessageChunks is the capacity, in fetched chunks, of each
	// stream's queue: queued.max.message.chunks, default 2. Each chunk holds
	// up to FetchMessageMaxBytes. At least 1.
	QueuedMaxMessageChunks int

	// RebalanceMaxRetries is the number of rebalance attempts before giving
	// up: rebalance.max.retries, default 4. At least 1. Kafka's FAQ advises
	// RebalanceMaxRetries × RebalanceBackoff > ZooKeeperSessionTimeout.
	RebalanceMaxRetries int

	// RebalanceBackoff is the pause between rebalance attempts (and between
	// reads of an unreadable committed offset): rebalance.backoff.ms,
	// default 2000. As in Kafka, the default follows zookeeper.sync.time.ms
	// when properties are read: ConfigFromProperties sets it to
	// ZooKeeperSyncTime when only that key is given. Zero means no pause,
	// as in Kafka. It must not be negative.
	RebalanceBackoff time.Duration

	// FetchMinBytes is the minimum amount of data a broker returns for a
	// fetch, waiting up to FetchWaitMax for it: fetch.min.bytes, default 1.
	// It must not be negative nor exceed 2147483647.
	FetchMinBytes int

	// FetchWaitMax is how long a broker may hold a fetch request that does
	// not yet have FetchMinBytes: fetch.wait.max.ms, default 100. It must
	// not be negative nor exceed SocketTimeout.
	FetchWaitMax time.Duration

	// RefreshLeaderBackoff is the pause before looking for a partition's
	// new leader, and the fetchers' backoff after an empty or failed fetch:
	// refresh.leader.backoff.ms, default 200. In "kafka" mode it is also
	// the backoff of the group membership's retries (Java's
	// retry.backoff.ms), where zero means one millisecond. It must not be
	// negative.
	RefreshLeaderBackoff time.Duration

	// AutoOffsetReset says where to start when a partition has no committed
	// offset or its offset is out of range: auto.offset.reset, default
	// AutoOffsetResetLargest (the zero value). In properties it is
	// "largest" or "smallest", or the Java consumer's names for them,
	// "latest" and "earliest" (smallest=earliest, largest=latest, as Java
	// maps them), in either coordination mode. (The Scala consumer refused
	// "earliest" and "latest"; the console consumer's --zookeeper mode
	// still does, as Kafka 1.1.1's did.)
	AutoOffsetReset OffsetReset

	// ConsumerTimeout is how long a stream's iterator waits for a message
	// before reporting a timeout: consumer.timeout.ms, default -1. A
	// negative value waits forever; zero reports a timeout at once when no
	// message is buffered.
	ConsumerTimeout time.Duration

	// ExcludeInternalTopics keeps internal topics such as __consumer_offsets
	// out of wildcard subscriptions: exclude.internal.topics, default true.
	ExcludeInternalTopics bool

	// PartitionAssignmentStrategy chooses the assignor:
	// partition.assignment.strategy, default [StrategyRange] ("range");
	// nil means the default, and Validate fills it in. In ZooKeeper mode
	// it holds one of StrategyRange, StrategyRoundRobin or StrategySticky,
	// and every member of a group must use the same one. In Kafka mode it
	// is, as in Java's consumer, a list in order of preference of
	// StrategyRange, StrategyRoundRobin and StrategyCooperativeSticky,
	// written comma-separated in properties (where the class names of
	// Java's assignors are accepted too); the coordinator picks one that
	// every member lists. With StrategyCooperativeSticky alone the
	// member runs Kafka's cooperative protocol: during a rebalance it keeps
	// delivering the partitions it keeps, gives up (commits, tells the
	// listener about) only those that move, and the listener's
	// BeforeStartingFetchers is told only about the partitions it gains,
	// as with RebalanceCooperative in ZooKeeper mode (see
	// RebalanceListener). A list with an eager
	// assignor too ("range,cooperative-sticky", Java 3.x's default) keeps
	// the member eager whichever assignor is picked, as in Java: the first
	// step of Kafka's rolling upgrade to the cooperative protocol. In ZooKeeper mode a member
	// records its strategy in its registration (a field Kafka's Scala
	// consumer ignores) and stays out of a group whose members run one it
	// cannot share the group with, reporting a *StrategyError
	// (wrapped in ErrRebalanceFailed) on Errors and in Assignment().Err:
	// sticky members share a group with sticky members only, and step out
	// for Scala members; otherwise the member that registered first wins.
	PartitionAssignmentStrategy []AssignmentStrategy

	// RebalanceProtocol chooses how a member hands partitions over in
	// ZooKeeper mode: zkconsumer.rebalance.protocol, a zkconsumer
	// extension, default RebalanceCooperative (the zero value,
	// "cooperative"). With RebalanceCooperative a member
	// keeps delivering the partitions it keeps during a rebalance, and the
	// RebalanceListener is told only about the partitions that move:
	// BeforeReleasingPartitions about those it gives up (not called when
	// it gives up none), BeforeStartingFetchers about those it gains (not
	// called when it gains none). RebalanceEager ("eager") is Kafka's Scala
	// consumer's behaviour: every rebalance stops the member, which
	// releases every partition it owns and then starts every partition of
	// its new assignment (the listener is told both, this member's own
	// partitions only, as under either protocol). Members of either
	// protocol, and Scala members, share a group.
	RebalanceProtocol RebalanceProtocol

	// RoundRobinHashFormat selects how the roundrobin assignor renders a
	// partition before hashing it: zkconsumer.roundrobin.hash.format, a
	// zkconsumer extension, default RoundRobinHashDash (the zero value,
	// "dash"). RoundRobinHashDash ("t-p")
	// agrees with Scala consumers 1.0.0–1.1.1, RoundRobinHashBracket
	// ("bracket", "[t,p]") with 0.8.2–0.11.0.x. A group mixing the two fights over
	// partitions forever, so pick the one your Scala members use.
	RoundRobinHashFormat RoundRobinHashFormat

	// OffsetsStorage says where offsets are committed and fetched from:
	// offsets.storage, default OffsetsStorageZooKeeper (the zero value,
	// "zookeeper"), or OffsetsStorageKafka ("kafka"; any case in
	// properties, as Kafka reads it).
	OffsetsStorage OffsetsStorage

	// DualCommitEnabled also writes offsets to ZooKeeper when OffsetsStorage
	// is OffsetsStorageKafka, and reads the larger of both:
	// dual.commit.enabled, default on with OffsetsStorageKafka and off
	// otherwise. The zero value, DualCommitDefault, means "follow
	// OffsetsStorage"; Validate replaces it with DualCommitOn or
	// DualCommitOff ("true" and "false" in properties).
	DualCommitEnabled DualCommit

	// OffsetsChannelBackoff is the pause before reconnecting to the offset
	// coordinator or retrying an offset commit or fetch:
	// offsets.channel.backoff.ms, default 1000. It must not be negative.
	OffsetsChannelBackoff time.Duration

	// OffsetsChannelSocketTimeout is the network timeout of requests to the
	// offset coordinator and of the coordinator lookup:
	// offsets.channel.socket.timeout.ms, default 10000. It must be positive.
	OffsetsChannelSocketTimeout time.Duration

	// OffsetsCommitMaxRetries is the number of extra attempts of a failed
	// commit: offsets.commit.max.retries, default 5. Attempts are
	// OffsetsChannelBackoff apart and end early when the commit's context
	// does. They apply to the periodic auto-commit, as in Kafka 0.9+, and
	// to the application's explicit commits (CommitOffsets and
	// CommitOffsetsMap make 1+OffsetsCommitMaxRetries attempts, where
	// Kafka 1.1.1's commitOffsets() makes one). The commits at rebalance
	// and at Shutdown make one attempt, as in Kafka. A commit refused
	// because this member no longer owns the partitions (ErrOwnershipLost,
	// in Kafka mode ErrCommitFenced) is never retried. It must not be
	// negative.
	OffsetsCommitMaxRetries int

	// ZooKeeperSessionTimeout is the requested ZooKeeper session timeout:
	// zookeeper.session.timeout.ms, default 6000. It must be positive. The
	// server may negotiate it into [2, 20] × its tickTime.
	ZooKeeperSessionTimeout time.Duration

	// ZooKeeperConnectionTimeout is how long to wait for the first
	// ZooKeeper connection: zookeeper.connection.timeout.ms, default
	// ZooKeeperSessionTimeout. Zero means "follow ZooKeeperSessionTimeout"
	// (Kafka's own zero fails every connection attempt at once, so nothing
	// useful is lost). It must not be negative.
	ZooKeeperConnectionTimeout time.Duration

	// ZooKeeperSyncTime is zookeeper.sync.time.ms, default 2000. Like Kafka's
	// consumer, zkconsumer uses it only as the default of rebalance.backoff.ms
	// in properties (see RebalanceBackoff); setting the field afterwards
	// does not change RebalanceBackoff. It must not be negative.
	ZooKeeperSyncTime time.Duration

	// IsolationLevel selects which transactional messages are delivered:
	// zkconsumer.isolation.level, a zkconsumer extension, default
	// IsolationReadUncommitted (the zero value, "read_uncommitted", the
	// Scala consumer's only behaviour), or IsolationReadCommitted
	// ("read_committed"), which needs brokers that support fetch v4 (Kafka
	// 0.11+).
	IsolationLevel IsolationLevel

	// CheckCRCs verifies the checksum of every record batch and message
	// fetched: check.crcs, the Java consumer's key (the Scala consumer
	// always checked), default true. A checksum that does not match stops
	// the partition with ErrCorruptMessage. False saves the
	// CRC-32C pass over every fetched byte, as librdkafka does by default.
	CheckCRCs bool

	// RecycleMessages lets the connector reuse the memory of the messages
	// it hands out (the fetch responses they alias, the buffers compressed
	// batches are decompressed into, the Message structs themselves), as
	// librdkafka does once an application destroys a message:
	// zkconsumer.recycle.messages, a zkconsumer extension, default false.
	// A Message, its Key, Value and Headers are then valid only until the
	// next call to Next on its stream: Clone one to keep it, and give
	// CommitMessages and MarkConsumed clones, not messages already
	// recycled. It suits a loop
	// that is done with each message before asking for the next. False
	// keeps every Kafka client's contract: a message stays valid for as
	// long as the application keeps it.
	RecycleMessages bool

	// Logger receives the connector's log records. It has no Kafka key.
	// Nil logs through slog.Default(), as it is when New is called; to
	// discard the records, set slog.New(slog.DiscardHandler).
	Logger *slog.Logger

	// Metrics, if set, receives the connector's measurements (see
	// Metrics; github.com/zkconsumer/zkconsumer/plugin/prometheus adapts
	// them to Prometheus). One Metrics serves one connector. It has no
	// Kafka key. Nil, the default, measures nothing and costs nothing.
	Metrics Metrics

	// Security holds the TLS and SASL settings of the broker connections
	// and the ZooKeeper credentials, ACL and TLS settings, under the keys
	// of Kafka's Java clients (security.protocol, ssl.*, sasl.*,
	// zookeeper.set.acl, zookeeper.ssl.*) and librdkafka's aliases; see
	// SecurityConfig. The zero value is PLAINTEXT without authentication,
	// Kafka's default. Its secrets never appear in String or %v output.
	Security SecurityConfig
}

// DefaultConfig returns a Config holding Kafka 1.1.1's defaults for every
// key but socket.receive.buffer.bytes (-1, the operating system's
// default, instead of 65536), and Kafka 3.9's Java consumer defaults for the keys of
// GroupCoordination "kafka". GroupID and ZooKeeperConnect (or
// BootstrapServers) are left empty: they are required.
// Fields whose default follows another field (ClientID,
// DualCommitEnabled, ZooKeeperConnectionTimeout) are left unset and filled
// in by Validate. The option types' fields hold their zero values, which
// are the defaults. Each field's doc names its default.
func DefaultConfig() Config {
	// Each key's default is declared beside its key, in properties.
	var c Config
	for _, p := range properties {
		p.setDefault(&c)
	}
	return c
}

// Validate fills in the defaults that follow other fields (ClientID,
// DualCommitEnabled, ZooKeeperConnectionTimeout, and
// PartitionAssignmentStrategy when nil), and checks every
// field with Kafka 1.1.1's rules plus a few stricter ones that catch values
// Kafka accepts but then fails on at run time (documented on each field).
//
// It reports every problem at once: the result joins one *ConfigError per
// invalid key with errors.Join. Calling it again on a valid Config changes
// nothing.
func (c *Config) Validate() error {
	var v validator

	// Required names.
	groupOK := v.check(keyGroupID, c.GroupID, validGroupName(c.GroupID),
		"must be set, contain only ASCII alphanumerics, '.', '_' and '-', and not be \".\" or \"..\"")
	c.validateCoordination(&v)
	if c.ConsumerID != "" {
		v.check(keyConsumerID, c.ConsumerID, validZnodeName(c.ConsumerID),
			"must be usable as a znode name: no '/', no control characters, not \".\" or \"..\"")
	}
	if c.ClientID == "" && groupOK {
		c.ClientID = c.GroupID
	}
	if c.ClientID != "" {
		v.check(keyClientID, c.ClientID, validChars(c.ClientID),
			"must contain only ASCII alphanumerics, '.', '_' and '-'")
	}

	// Network and fetch sizes.
	v.check(keySocketTimeout, ms(c.SocketTimeout), c.SocketTimeout > 0, "must be positive")
	fetchWaitOK := v.check(keyFetchWaitMax, ms(c.FetchWaitMax), c.FetchWaitMax >= 0, "must not be negative")
	if fetchWaitOK && c.SocketTimeout > 0 && c.SocketTimeout < c.FetchWaitMax {
		v.fail(keySocketTimeout, ms(c.SocketTimeout),
			"must be at least fetch.wait.max.ms ("+ms(c.FetchWaitMax)+") to prevent unnecessary socket timeouts")
	}
	const maxInt32 = 1<<31 - 1
	if v.check(keyFetchMessageMaxBytes, itoa(c.FetchMessageMaxBytes), c.FetchMessageMaxBytes > 0, "must be positive") {
		v.check(keyFetchMessageMaxBytes, itoa(c.FetchMessageMaxBytes), c.FetchMessageMaxBytes <= maxInt32, "must be at most 2147483647")
	}
	if v.check(keyFetchMaxBytes, itoa(c.FetchMaxBytes), c.FetchMaxBytes > 0, "must be positive") {
		v.check(keyFetchMaxBytes, itoa(c.FetchMaxBytes), c.FetchMaxBytes <= maxInt32, "must be at most 2147483647")
	}
	if v.check(keyFetchMinBytes, itoa(c.FetchMinBytes), c.FetchMinBytes >= 0, "must not be negative") {
		v.check(keyFetchMinBytes, itoa(c.FetchMinBytes), c.FetchMinBytes <= maxInt32, "must be at most 2147483647")
	}
	v.check(keyNumConsumerFetchers, itoa(c.NumConsumerFetchers), c.NumConsumerFetchers >= 1, "must be at least 1")
	v.check(keyQueuedMaxMessageChunks, itoa(c.QueuedMaxMessageChunks), c.QueuedMaxMessageChunks >= 1, "must be at least 1")
	v.check(keyRefreshLeaderBackoff, ms(c.RefreshLeaderBackoff), c.RefreshLeaderBackoff >= 0, "must not be negative")

	// Commits.
	if c.AutoCommitEnable {
		v.check(keyAutoCommitInterval, ms(c.AutoCommitInterval), c.AutoCommitInterval > 0,
			"must be positive when auto.commit.enable is true")
	}
	storageOK := offsetsStorageEnum.check(&v, uint8(c.OffsetsStorage))
	if c.DualCommitEnabled == DualCommitDefault && storageOK {
		c.DualCommitEnabled = DualCommitOff
		if c.OffsetsStorage == OffsetsStorageKafka {
			c.DualCommitEnabled = DualCommitOn
		}
	}
	dualCommitEnum.check(&v, uint8(c.DualCommitEnabled))
	v.check(keyOffsetsChannelBackoff, ms(c.OffsetsChannelBackoff), c.OffsetsChannelBackoff >= 0, "must not be negative")
	v.check(keyOffsetsChannelSocketTimeout, ms(c.OffsetsChannelSocketTimeout), c.OffsetsChannelSocketTimeout > 0, "must be positive")
	v.check(keyOffsetsCommitMaxRetries, itoa(c.OffsetsCommitMaxRetries), c.OffsetsCommitMaxRetries >= 0, "must not be negative")

	// Rebalance.
	v.check(keyRebalanceMaxRetries, itoa(c.RebalanceMaxRetries), c.RebalanceMaxRetries >= 1, "must be at least 1")
	v.check(keyZooKeeperSyncTime, ms(c.ZooKeeperSyncTime), c.ZooKeeperSyncTime >= 0, "must not be negative")
	v.check(keyRebalanceBackoff, ms(c.RebalanceBackoff), c.RebalanceBackoff >= 0, "must not be negative")
	if c.PartitionAssignmentStrategy == nil {
		c.PartitionAssignmentStrategy = []AssignmentStrategy{StrategyRange}
	}
	if reason := c.checkStrategies(); reason != "" {
		v.fail(keyPartitionAssignmentStrategy, formatStrategies(c.PartitionAssignmentStrategy), reason)
	}
	rebalanceProtocolEnum.check(&v, uint8(c.RebalanceProtocol))
	hashFormatEnum.check(&v, uint8(c.RoundRobinHashFormat))

	// Consumption.
	offsetResetEnum.check(&v, uint8(c.AutoOffsetReset))
	isolationEnum.check(&v, uint8(c.IsolationLevel))

	// ZooKeeper session.
	sessionOK := v.check(keyZooKeeperSessionTimeout, ms(c.ZooKeeperSessionTimeout), c.ZooKeeperSessionTimeout > 0, "must be positive")
	if c.ZooKeeperConnectionTimeout == 0 && sessionOK {
		c.ZooKeeperConnectionTimeout = c.ZooKeeperSessionTimeout
	}
	v.check(keyZooKeeperConnectionTimeout, ms(c.ZooKeeperConnectionTimeout), c.ZooKeeperConnectionTimeout >= 0, "must not be negative")

	// Security.
	v.security(c.Security)

	return errors.Join(v.errs...)
}

// validator collects ConfigErrors.
type validator struct {
	errs []error
}

func (v *validator) fail(key, value, reason string) {
	v.errs = append(v.errs, &ConfigError{Key: key, Value: value, Reason: reason})
}

// check records an error unless ok, and returns ok.
func (v *validator) check(key, value string, ok bool, reason string) bool {
	if !ok {
		v.fail(key, value, reason)
	}
	return ok
}

// validChars reports whether s consists only of the characters Kafka allows
// in group and client ids: ASCII letters, digits, '.', '_' and '-'. The empty
// string passes, as it does in Kafka.
func validChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// validGroupName is validChars plus the conditions a group id needs to be a
// znode name, which Kafka does not check.
func validGroupName(s string) bool {
	return s != "" && s != "." && s != ".." && validChars(s)
}

// validZnodeName reports whether s can be one path element of a znode.
func validZnodeName(s string) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	for _, r := range s {
		if r == '/' || r < 0x20 || (0x7f <= r && r <= 0x9f) || r == 0xfffd {
			return false
		}
	}
	return true
}

// checkZooKeeperConnect returns why s is not a usable ZooKeeper connection
// string, or "" if it is.
func checkZooKeeperConnect(s string) string {
	const form = "; must look like host1:port1,host2:port2/chroot"
	if s == "" {
		return "required" + form
	}
	servers, chroot := s, ""
	if i := strings.IndexByte(s, '/'); i >= 0 {
		servers, chroot = s[:i], s[i:]
	}
	if servers == "" {
		return "no servers before the chroot" + form
	}
	for _, server := range strings.Split(servers, ",") {
		if reason := checkZooKeeperServer(server); reason != "" {
			return reason + form
		}
	}
	if chroot != "/" && chroot != "" {
		if strings.HasSuffix(chroot, "/") {
			return "chroot " + strconv.Quote(chroot) + " ends with '/'" + form
		}
		for _, elem := range strings.Split(chroot[1:], "/") {
			if elem == "" || elem == "." || elem == ".." || !validZnodeName(elem) {
				return "chroot " + strconv.Quote(chroot) + " is not a valid znode path" + form
			}
		}
	}
	return ""
}

// checkZooKeeperServer checks one "host[:port]" entry of a connection string;
// IPv6 literals need brackets.
func checkZooKeeperServer(server string) string {
	if server == "" {
		return "empty server in the list"
	}
	if strings.ContainsAny(server, " \t\r\n") {
		return "server " + strconv.Quote(server) + " contains white space"
	}
	host, port := server, ""
	if strings.HasPrefix(server, "[") {
		end := strings.IndexByte(server, ']')
		if end < 0 {
			return "server " + strconv.Quote(server) + " has an unterminated IPv6 literal"
		}
		host, port = server[1:end], server[end+1:]
		if port != "" {
			if port[0] != ':' {
				return "server " + strconv.Quote(server) + " has junk after the IPv6 literal"
			}
			port = port[1:]
			if port == "" {
				return "server " + strconv.Quote(server) + " has an empty port"
			}
		}
	} else if i := strings.LastIndexByte(server, ':'); i >= 0 {
		host, port = server[:i], server[i+1:]
		if strings.IndexByte(host, ':') >= 0 {
			return "server " + strconv.Quote(server) + " has too many ':' (IPv6 literals need brackets)"
		}
		if port == "" {
			return "server " + strconv.Quote(server) + " has an empty port"
		}
	}
	if host == "" {
		return "server " + strconv.Quote(server) + " has an empty host"
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || port[0] == '+' {
			return "server " + strconv.Quote(server) + " has an invalid port"
		}
	}
	return ""
}

// ms renders a duration as a properties value: whole milliseconds, or Go's
// notation when it is not a whole number of milliseconds.
func ms(d time.Duration) string {
	if d%time.Millisecond != 0 {
		return d.String()
	}
	return strconv.FormatInt(d.Milliseconds(), 10)
}

// itoa renders an integer field as a properties value.
func itoa(n int) string {
	return strconv.FormatInt(int64(n), 10)
}
