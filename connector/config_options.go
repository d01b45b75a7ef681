package connector

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The option types of Config. Each is a small integer type, not a string,
// so that a misspelt value (cfg.AutoOffsetReset = "earlist") does not
// compile; properties files still spell the values as Kafka does, through
// each type's UnmarshalText and MarshalText, which ConfigFromProperties
// and Config.Properties use. The zero value of each type is Kafka's
// default, so that a zero field of a Config means the default.

// spelling is one way of writing a value of an option in properties.
type spelling struct {
	text  string
	value uint8
}

// enum describes the spellings of one option type. The first spelling of
// a value is its canonical one (String, MarshalText); the others are
// accepted by UnmarshalText as the same value.
type enum struct {
	key       string // the property the type belongs to
	typeName  string
	spellings []spelling
	fold      bool   // spellings are case-insensitive
	accepted  string // the reason of a refusal, if not the list of spellings
}

// name returns the canonical spelling of v, or false if v is no value of
// the type.
func (e *enum) name(v uint8) (string, bool) {
	for _, s := range e.spellings {
		if s.value == v {
			return s.text, true
		}
	}
	return "", false
}

// String returns the canonical spelling of v, or "Type(v)" for a value
// that is none of the type's constants.
func (e *enum) String(v uint8) string {
	if s, ok := e.name(v); ok {
		return s
	}
	return e.typeName + "(" + strconv.Itoa(int(v)) + ")"
}

// marshal returns the canonical spelling of v, or a *ConfigError for a
// value that is none of the type's constants.
func (e *enum) marshal(v uint8) ([]byte, error) {
	if s, ok := e.name(v); ok {
		return []byte(s), nil
	}
	return nil, &ConfigError{Key: e.key, Value: e.String(v), Reason: e.reason()}
}

// parse reads one spelling; an unknown one is a *ConfigError naming the
// key and the accepted spellings.
func (e *enum) parse(text []byte) (uint8, error) {
	t := string(text)
	for _, s := range e.spellings {
		if t == s.text || (e.fold && strings.EqualFold(t, s.text)) {
			return s.value, nil
		}
	}
	return 0, &ConfigError{Key: e.key, Value: t, Reason: e.reason()}
}

// check records a *ConfigError in v if value is none of the type's
// constants (a conversion from an integer made it), and returns whether
// it is one.
func (e *enum) check(v *validator, value uint8) bool {
	if _, ok := e.name(value); ok {
		return true
	}
	v.fail(e.key, e.String(value), e.reason())
	return false
}

// reason lists the accepted spellings.
func (e *enum) reason() string {
	if e.accepted != "" {
		return e.accepted
	}
	list := make([]string, 0, len(e.spellings))
	for _, s := range e.spellings {
		text := s.text
		if text == "" {
			text = `"" (empty)`
		}
		list = append(list, text)
	}
	return "must be one of " + strings.Join(list, ", ")
}

// OffsetReset is the type of Config.AutoOffsetReset (auto.offset.reset):
// where to start when a partition has no committed offset or its offset is
// out of range. The zero value is AutoOffsetResetLargest, Kafka's default.
type OffsetReset uint8

const (
	// AutoOffsetResetLargest starts from the end of the log: "largest",
	// or the Java consumer's "latest". The zero value and Kafka's default.
	AutoOffsetResetLargest OffsetReset = iota
	// AutoOffsetResetSmallest starts from the oldest offset the broker
	// still has: "smallest", or the Java consumer's "earliest".
	AutoOffsetResetSmallest
)

var offsetResetEnum = enum{key: keyAutoOffsetReset, typeName: "OffsetReset", spellings: []spelling{
	{"smallest", uint8(AutoOffsetResetSmallest)}, {"largest", uint8(AutoOffsetResetLargest)},
	{"earliest", uint8(AutoOffsetResetSmallest)}, {"latest", uint8(AutoOffsetResetLargest)},
}}

// String returns the value as auto.offset.reset spells it: "smallest" or
// "largest".
func (r OffsetReset) String() string { return offsetResetEnum.String(uint8(r)) }

// MarshalText returns String's spelling; a value that is not one of the
// constants is a *ConfigError.
func (r OffsetReset) MarshalText() ([]byte, error) { return offsetResetEnum.marshal(uint8(r)) }

// UnmarshalText reads "smallest" or "largest", or the Java consumer's
// "earliest" and "latest" (smallest=earliest, largest=latest, as Java
// maps them), case-sensitively as Kafka reads them; anything else is a
// *ConfigError naming auto.offset.reset and the accepted values.
func (r *OffsetReset) UnmarshalText(text []byte) error {
	v, err := offsetResetEnum.parse(text)
	if err == nil {
		*r = OffsetReset(v)
	}
	return err
}

// Coordination is the type of Config.GroupCoordination
// (zkconsumer.group.coordination): who coordinates the group. The zero
// value is CoordinationZooKeeper, the default.
type Coordination uint8

const (
	// CoordinationZooKeeper coordinates the group through ZooKeeper, as
	// Kafka's Scala consumer does: "zookeeper", the zero value and the
	// default.
	CoordinationZooKeeper Coordination = iota
	// CoordinationKafka makes the connector a member of a group coordinated
	// by Kafka's brokers (the classic group protocol, as Kafka's Java
	// consumer speaks it, or KIP-848's with GroupProtocolConsumer), found
	// through bootstrap.servers: "kafka". No ZooKeeper is needed, so it
	// works with Kafka 4.x in KRaft mode.
	CoordinationKafka
)

var coordinationEnum = enum{key: keyGroupCoordination, typeName: "Coordination", fold: true, spellings: []spelling{
	{"zookeeper", uint8(CoordinationZooKeeper)}, {"kafka", uint8(CoordinationKafka)},
}}

// String returns "zookeeper" or "kafka".
func (m Coordination) String() string { return coordinationEnum.String(uint8(m)) }

// MarshalText returns String's spelling; a value that is not one of the
// constants is a *ConfigError.
func (m Coordination) MarshalText() ([]byte, error) { return coordinationEnum.marshal(uint8(m)) }

// UnmarshalText reads "zookeeper" or "kafka", in any case; anything else
// is a *ConfigError naming zkconsumer.group.coordination and the accepted
// values.
func (m *Coordination) UnmarshalText(text []byte) error {
	v, err := coordinationEnum.parse(text)
	if err == nil {
		*m = Coordination(v)
	}
	return err
}

// GroupProtocol is the type of Config.GroupProtocol (group.protocol), the
// group protocol of Kafka mode. The zero value is GroupProtocolClassic,
// Kafka's default.
type GroupProtocol uint8

const (
	// GroupProtocolClassic is Kafka's classic group protocol (JoinGroup,
	// SyncGroup, Heartbeat): "classic", the zero value and the default.
	GroupProtocolClassic GroupProtocol = iota
	// GroupProtocolConsumer is KIP-848's consumer group protocol
	// (ConsumerGroupHeartbeat), Kafka 4.0 and later: "consumer". The
	// broker assigns (group.remote.assignor), members converge by giving up
	// revoked partitions first. With it, session.timeout.ms and
	// heartbeat.interval.ms are the broker's (group.consumer.*): the
	// member heartbeats at the interval the broker gives, and takes
	// session.timeout.ms only as what it assumes of the broker's session
	// timeout for its lease (keep it at most the broker's);
	// partition.assignment.strategy is ignored; TLS and SASL work as with
	// the classic protocol. CreateMessageStreamsByFilter takes a
	// whitelist, which the broker evaluates itself, with RE2/J rather than
	// java.util.regex: the member sends the whitelist translated to RE2/J's
	// syntax with the same meaning (ConsumerGroupHeartbeat version 1, Kafka
	// 4.0), and the broker assigns the partitions of every topic it
	// matches, topics created later included. A whitelist that uses a
	// construct RE2/J lacks or reads differently, a blacklist, and (with
	// exclude.internal.topics, the default) a whitelist matching one of
	// Kafka's internal topics are refused with a ConfigError naming what
	// the broker would do with it (see CreateMessageStreamsByFilter).
	GroupProtocolConsumer
)

var groupProtocolEnum = enum{key: keyGroupProtocol, typeName: "GroupProtocol", fold: true, spellings: []spelling{
	{"classic", uint8(GroupProtocolClassic)}, {"consumer", uint8(GroupProtocolConsumer)},
}}

// String returns "classic" or "consumer".
func (p GroupProtocol) String() string { return groupProtocolEnum.String(uint8(p)) }

// MarshalText returns String's spelling; a value that is not one of the
// constants is a *ConfigError.
func (p GroupProtocol) MarshalText() ([]byte, error) { return groupProtocolEnum.marshal(uint8(p)) }

// UnmarshalText reads "classic" or "consumer", in any case, as Java does;
// anything else is a *ConfigError naming group.protocol and the accepted
// values.
func (p *GroupProtocol) UnmarshalText(text []byte) error {
	v, err := groupProtocolEnum.parse(text)
	if err == nil {
		*p = GroupProtocol(v)
	}
	return err
}

// RemoteAssignor is the type of Config.GroupRemoteAssignor
// (group.remote.assignor), the broker-side assignor of
// GroupProtocolConsumer. The zero value, RemoteAssignorDefault, leaves the
// choice to the broker, as Kafka's unset default does.
type RemoteAssignor uint8

const (
	// RemoteAssignorDefault sends no assignor: the broker uses the first
	// of its group.consumer.assignors (uniform by default). It is the zero
	// value and is written as an empty (unset) property.
	RemoteAssignorDefault RemoteAssignor = iota
	// RemoteAssignorUniform is the broker's "uniform" assignor.
	RemoteAssignorUniform
	// RemoteAssignorRange is the broker's "range" assignor.
	RemoteAssignorRange
)

var remoteAssignorEnum = enum{key: keyGroupRemoteAssignor, typeName: "RemoteAssignor", spellings: []spelling{
	{"uniform", uint8(RemoteAssignorUniform)}, {"range", uint8(RemoteAssignorRange)}, {"", uint8(RemoteAssignorDefault)},
}}

// String returns "uniform", "range", or "" for RemoteAssignorDefault.
func (a RemoteAssignor) String() string { return remoteAssignorEnum.String(uint8(a)) }

// MarshalText returns String's spelling; a value that is not one of the
// constants is a *ConfigError.
func (a RemoteAssignor) MarshalText() ([]byte, error) { return remoteAssignorEnum.marshal(uint8(a)) }

// UnmarshalText reads "uniform" or "range", or "" for
// RemoteAssignorDefault; anything else is a *ConfigError naming
// group.remote.assignor and the accepted values.
func (a *RemoteAssignor) UnmarshalText(text []byte) error {
	v, err := remoteAssignorEnum.parse(text)
	if err == nil {
		*a = RemoteAssignor(v)
	}
	return err
}

// IsolationLevel is the type of Config.IsolationLevel
// (zkconsumer.isolation.level): which transactional messages are
// delivered. The zero value is IsolationReadUncommitted, the default.
type IsolationLevel uint8

const (
	// IsolationReadUncommitted delivers every message: "read_uncommitted",
	// the zero value, the default and the only behaviour the Scala
	// consumer has.
	IsolationReadUncommitted IsolationLevel = iota
	// IsolationReadCommitted hides aborted transactional messages and
	// stops at the last stable offset: "read_committed". It needs brokers
	// that support fetch v4 (Kafka 0.11+).
	IsolationReadCommitted
)

var isolationEnum = enum{key: keyIsolationLevel, typeName: "IsolationLevel", spellings: []spelling{
	{"read_uncommitted", uint8(IsolationReadUncommitted)}, {"read_committed", uint8(IsolationReadCommitted)},
}}

// String returns "read_uncommitted" or "read_committed".
func (l IsolationLevel) String() string { return isolationEnum.String(uint8(l)) }

// MarshalText returns String's spelling; a value that is not one of the
// constants is a *ConfigError.
func (l IsolationLevel) MarshalText() ([]byte, error) { return isolationEnum.marshal(uint8(l)) }

// UnmarshalText reads "read_uncommitted" or "read_committed"; anything
// else is a *ConfigError naming zkconsumer.isolation.level and the
// accepted values.
func (l *IsolationLevel) UnmarshalText(text []byte) error {
	v, err := isolationEnum.parse(text)
	if err == nil {
		*l = IsolationLevel(v)
	}
	return err
}

// OffsetsStorage is the type of Config.OffsetsStorage (offsets.storage):
// where offsets are committed. Its values also name the store of a
// CommitEvent and Stats.OffsetStores. The zero value is
// OffsetsStorageZooKeeper, Kafka's default.
type OffsetsStorage uint8

const (
	// OffsetsStorageZooKeeper keeps offsets under
	// /consumers/<group>/offsets: "zookeeper", the zero value and the
	// default (and the second write of dual.commit.enabled).
	OffsetsStorageZooKeeper OffsetsStorage = iota
	// OffsetsStorageKafka commits offsets to the group coordinator
	// (OffsetCommit/OffsetFetch), Kafka 0.8.2+: "kafka". It is where
	// every commit of Kafka mode goes.
	OffsetsStorageKafka
)

var offsetsStorageEnum = enum{key: keyOffsetsStorage, typeName: "OffsetsStorage", fold: true, spellings: []spelling{
	{"zookeeper", uint8(OffsetsStorageZooKeeper)}, {"kafka", uint8(OffsetsStorageKafka)},
}}

// String returns "zookeeper" or "kafka".
func (s OffsetsStorage) String() string { return offsetsStorageEnum.String(uint8(s)) }

// MarshalText returns String's spelling; a value that is not one of the
// constants is a *ConfigError.
func (s OffsetsStorage) MarshalText() ([]byte, error) { return offsetsStorageEnum.marshal(uint8(s)) }

// UnmarshalText reads "zookeeper" or "kafka", in any case, as Kafka does;
// anything else is a *ConfigError naming offsets.storage and the accepted
// values.
func (s *OffsetsStorage) UnmarshalText(text []byte) error {
	v, err := offsetsStorageEnum.parse(text)
	if err == nil {
		*s = OffsetsStorage(v)
	}
	return err
}

// AssignmentStrategy is one assignor of Config.PartitionAssignmentStrategy
// (partition.assignment.strategy). The zero value is StrategyRange, Kafka's
// default.
type AssignmentStrategy uint8

const (
	// StrategyRange is Kafka's RangeAssignor: "range", the zero value and
	// the default.
	StrategyRange AssignmentStrategy = iota
	// StrategyRoundRobin is Kafka's RoundRobinAssignor: "roundrobin".
	StrategyRoundRobin
	// StrategySticky is zkconsumer's sticky assignor (ZooKeeper mode
	// only): "sticky". It is balanced, and moves as few partitions as
	// balance allows when members join or leave, for groups whose members
	// are all zkconsumers running it (see docs/rebalancing.md, "ZooKeeper
	// mode: choosing partition.assignment.strategy").
	StrategySticky
	// StrategyCooperativeSticky is Kafka's CooperativeStickyAssignor
	// (Kafka mode only): "cooperative-sticky". It is balanced and sticky,
	// and the assignor of Kafka's cooperative rebalance protocol (KIP-429),
	// under which a member keeps delivering the partitions it keeps during
	// a rebalance (see Config.PartitionAssignmentStrategy and
	// docs/rebalancing.md, "Kafka mode, classic protocol").
	StrategyCooperativeSticky
)

var strategyEnum = enum{key: keyPartitionAssignmentStrategy, typeName: "AssignmentStrategy",
	accepted: "must be one of range, roundrobin, sticky, cooperative-sticky (or the class names of Java's RangeAssignor, RoundRobinAssignor, CooperativeStickyAssignor)",
	spellings: []spelling{
		{"range", uint8(StrategyRange)}, {"roundrobin", uint8(StrategyRoundRobin)},
		{"sticky", uint8(StrategySticky)}, {"cooperative-sticky", uint8(StrategyCooperativeSticky)},
		{"org.apache.kafka.clients.consumer.RangeAssignor", uint8(StrategyRange)},
		{"org.apache.kafka.clients.consumer.RoundRobinAssignor", uint8(StrategyRoundRobin)},
		{"org.apache.kafka.clients.consumer.CooperativeStickyAssignor", uint8(StrategyCooperativeSticky)},
	}}

// String returns "range", "roundrobin", "sticky" or "cooperative-sticky".
func (s AssignmentStrategy) String() string { return strategyEnum.String(uint8(s)) }

// MarshalText returns String's spelling; a value that is not one of the
// constants is a *ConfigError.
func (s AssignmentStrategy) MarshalText() ([]byte, error) { return strategyEnum.marshal(uint8(s)) }

// UnmarshalText reads one assignor: "range", "roundrobin", "sticky",
// "cooperative-sticky", or the class name of Java's RangeAssignor,
// RoundRobinAssignor or CooperativeStickyAssignor; anything else is a
// *ConfigError naming partition.assignment.strategy and the accepted
// values. (The property itself is a comma-separated list in Kafka mode;
// ConfigFromProperties splits it.)
func (s *AssignmentStrategy) UnmarshalText(text []byte) error {
	v, err := strategyEnum.parse(text)
	if err == nil {
		*s = AssignmentStrategy(v)
	}
	return err
}

// parseStrategies reads partition.assignment.strategy: a comma-separated
// list, in order of preference, of the spellings AssignmentStrategy
// accepts, blanks around them ignored, as Java's consumer takes it. Which
// lists a mode accepts is Validate's business.
func parseStrategies(value string) ([]AssignmentStrategy, error) {
	var out []AssignmentStrategy
	for field := range strings.SplitSeq(value, ",") {
		name := strings.TrimSpace(field)
		if name == "" {
			return nil, &ConfigError{Key: keyPartitionAssignmentStrategy, Value: value,
				Reason: "must list range, roundrobin, sticky or cooperative-sticky (comma-separated, in order of preference)"}
		}
		var s AssignmentStrategy
		if err := s.UnmarshalText([]byte(name)); err != nil {
			return nil, &ConfigError{Key: keyPartitionAssignmentStrategy, Value: value,
				Reason: fmt.Sprintf("%q is not one of range, roundrobin, sticky, cooperative-sticky (or the class names of Java's RangeAssignor, RoundRobinAssignor, CooperativeStickyAssignor)", name)}
		}
		if slices.Contains(out, s) {
			return nil, &ConfigError{Key: keyPartitionAssignmentStrategy, Value: value, Reason: "lists " + s.String() + " twice"}
		}
		out = append(out, s)
	}
	return out, nil
}

// formatStrategies writes partition.assignment.strategy; nil is the
// default, "range".
func formatStrategies(list []AssignmentStrategy) string {
	if len(list) == 0 {
		return StrategyRange.String()
	}
	names := make([]string, len(list))
	for i, s := range list {
		names[i] = s.String()
	}
	return strings.Join(names, ",")
}

// RebalanceProtocol is the type of Config.RebalanceProtocol
// (zkconsumer.rebalance.protocol), named after Kafka's RebalanceProtocol:
// how a member hands partitions over in ZooKeeper mode. The zero value is
// RebalanceCooperative, the default.
type RebalanceProtocol uint8

const (
	// RebalanceCooperative hands partitions over one by one:
	// "cooperative", the zero value and the default. During a rebalance a
	// member keeps delivering the partitions it keeps, commits and
	// releases only those that move away, and only those it gains wait for
	// their previous owner.
	RebalanceCooperative RebalanceProtocol = iota
	// RebalanceEager stops the whole member on every rebalance, as Kafka's
	// Scala consumer does: "eager". Every partition is revoked (committed,
	// and the listener told about all of them) before the new assignment
	// is computed, and fetching starts again once every partition is
	// claimed.
	RebalanceEager
)

var rebalanceProtocolEnum = enum{key: keyRebalanceProtocol, typeName: "RebalanceProtocol", spellings: []spelling{
	{"cooperative", uint8(RebalanceCooperative)}, {"eager", uint8(RebalanceEager)},
}}

// String returns "cooperative" or "eager".
func (p RebalanceProtocol) String() string { return rebalanceProtocolEnum.String(uint8(p)) }

// MarshalText returns String's spelling; a value that is not one of the
// constants is a *ConfigError.
func (p RebalanceProtocol) MarshalText() ([]byte, error) {
	return rebalanceProtocolEnum.marshal(uint8(p))
}

// UnmarshalText reads "cooperative" or "eager"; anything else is a
// *ConfigError naming zkconsumer.rebalance.protocol and the accepted
// values.
func (p *RebalanceProtocol) UnmarshalText(text []byte) error {
	v, err := rebalanceProtocolEnum.parse(text)
	if err == nil {
		*p = RebalanceProtocol(v)
	}
	return err
}

// RoundRobinHashFormat is the type of Config.RoundRobinHashFormat
// (zkconsumer.roundrobin.hash.format): how the roundrobin assignor renders
// a partition before hashing it. The zero value is RoundRobinHashDash, the
// default.
type RoundRobinHashFormat uint8

const (
	// RoundRobinHashDash hashes partitions as "topic-3", as the Scala
	// consumer does from Kafka 1.0.0 (KAFKA-5822) to 1.1.1: "dash", the
	// zero value and the default.
	RoundRobinHashDash RoundRobinHashFormat = iota
	// RoundRobinHashBracket hashes partitions as "[topic,3]", as the Scala
	// consumer does from 0.8.2 to 0.11.0.x: "bracket".
	RoundRobinHashBracket
)

var hashFormatEnum = enum{key: keyRoundRobinHashFormat, typeName: "RoundRobinHashFormat", spellings: []spelling{
	{"dash", uint8(RoundRobinHashDash)}, {"bracket", uint8(RoundRobinHashBracket)},
}}

// String returns "dash" or "bracket".
func (f RoundRobinHashFormat) String() string { return hashFormatEnum.String(uint8(f)) }

// MarshalText returns String's spelling; a value that is not one of the
// constants is a *ConfigError.
func (f RoundRobinHashFormat) MarshalText() ([]byte, error) { return hashFormatEnum.marshal(uint8(f)) }

// UnmarshalText reads "dash" or "bracket"; anything else is a
// *ConfigError naming zkconsumer.roundrobin.hash.format and the accepted
// values.
func (f *RoundRobinHashFormat) UnmarshalText(text []byte) error {
	v, err := hashFormatEnum.parse(text)
	if err == nil {
		*f = RoundRobinHashFormat(v)
	}
	return err
}

// DualCommit is the type of Config.DualCommitEnabled
// (dual.commit.enabled). The zero value, DualCommitDefault, follows
// offsets.storage as Kafka's default does: on with OffsetsStorageKafka,
// off with OffsetsStorageZooKeeper.
type DualCommit uint8

const (
	// DualCommitDefault follows offsets.storage; Validate replaces it with
	// DualCommitOn or DualCommitOff. It is the zero value; its text is
	// empty, and Properties leaves the key out.
	DualCommitDefault DualCommit = iota
	// DualCommitOn also writes offsets to ZooKeeper when offsets.storage
	// is "kafka", and reads the larger of both: "true".
	DualCommitOn
	// DualCommitOff writes offsets to offsets.storage only: "false".
	DualCommitOff
)

var dualCommitEnum = enum{key: keyDualCommitEnabled, typeName: "DualCommit", spellings: []spelling{
	{"true", uint8(DualCommitOn)}, {"false", uint8(DualCommitOff)}, {"", uint8(DualCommitDefault)},
}}

// String returns "true" or "false", or "" for DualCommitDefault.
func (d DualCommit) String() string { return dualCommitEnum.String(uint8(d)) }

// MarshalText returns String's spelling; a value that is not one of the
// constants is a *ConfigError.
func (d DualCommit) MarshalText() ([]byte, error) { return dualCommitEnum.marshal(uint8(d)) }

// UnmarshalText reads exactly "true" or "false", as Kafka does, or "" for
// DualCommitDefault; anything else is a *ConfigError naming
// dual.commit.enabled and the accepted values. (In a properties file an
// empty dual.commit.enabled is refused, as Kafka refuses it: leave the key
// out instead.)
func (d *DualCommit) UnmarshalText(text []byte) error {
	v, err := dualCommitEnum.parse(text)
	if err == nil {
		*d = DualCommit(v)
	}
	return err
}

// on reports whether offsets also go to ZooKeeper with storage.
func (d DualCommit) on(storage OffsetsStorage) bool {
	if d == DualCommitDefault {
		return storage == OffsetsStorageKafka
	}
	return d == DualCommitOn
}

// EndpointIdentification is the type of
// SecurityConfig.SSLEndpointIdentificationAlgorithm
// (ssl.endpoint.identification.algorithm): whether the broker's
// certificate must name the host connected to. The zero value is
// EndpointIdentificationHTTPS, Kafka's default.
type EndpointIdentification uint8

const (
	// EndpointIdentificationHTTPS checks that the broker's certificate is
	// valid for the host name or IP address connected to: "https", the
	// zero value and the default.
	EndpointIdentificationHTTPS EndpointIdentification = iota
	// EndpointIdentificationNone skips that check (the certificate must
	// still be signed by a trusted authority): the empty value.
	EndpointIdentificationNone
)

var endpointIdentificationEnum = enum{key: "ssl.endpoint.identification.algorithm", typeName: "EndpointIdentification", fold: true,
	spellings: []spelling{{"https", uint8(EndpointIdentificationHTTPS)}, {"", uint8(EndpointIdentificationNone)}}}

// String returns "https", or "" for EndpointIdentificationNone.
func (e EndpointIdentification) String() string { return endpointIdentificationEnum.String(uint8(e)) }

// MarshalText returns String's spelling; a value that is not one of the
// constants is a *ConfigError.
func (e EndpointIdentification) MarshalText() ([]byte, error) {
	return endpointIdentificationEnum.marshal(uint8(e))
}

// UnmarshalText reads "https" (in any case) or ""; anything else is a
// *ConfigError naming ssl.endpoint.identification.algorithm and the
// accepted values.
func (e *EndpointIdentification) UnmarshalText(text []byte) error {
	v, err := endpointIdentificationEnum.parse(text)
	if err == nil {
		*e = EndpointIdentification(v)
	}
	return err
}

// ZooKeeperEndpointIdentification is the type of
// SecurityConfig.ZooKeeperSSLEndpointIdentificationEnable
// (zookeeper.ssl.endpoint.identification.enable): whether ZooKeeper's
// certificate must name the host connected to. The zero value is
// ZooKeeperEndpointIdentificationOn, Kafka's default.
type ZooKeeperEndpointIdentification uint8

const (
	// ZooKeeperEndpointIdentificationOn checks that ZooKeeper's
	// certificate names the host connected to: "true", the zero value and
	// the default.
	ZooKeeperEndpointIdentificationOn ZooKeeperEndpointIdentification = iota
	// ZooKeeperEndpointIdentificationOff skips that check: "false".
	ZooKeeperEndpointIdentificationOff
)

var zooKeeperEndpointIdentificationEnum = enum{key: "zookeeper.ssl.endpoint.identification.enable",
	typeName: "ZooKeeperEndpointIdentification", fold: true,
	spellings: []spelling{{"true", uint8(ZooKeeperEndpointIdentificationOn)}, {"false", uint8(ZooKeeperEndpointIdentificationOff)}}}

// String returns "true" or "false".
func (e ZooKeeperEndpointIdentification) String() string {
	return zooKeeperEndpointIdentificationEnum.String(uint8(e))
}

// MarshalText returns String's spelling; a value that is not one of the
// constants is a *ConfigError.
func (e ZooKeeperEndpointIdentification) MarshalText() ([]byte, error) {
	return zooKeeperEndpointIdentificationEnum.marshal(uint8(e))
}

// UnmarshalText reads "true" or "false", in any case; anything else is a
// *ConfigError naming zookeeper.ssl.endpoint.identification.enable and the
// accepted values.
func (e *ZooKeeperEndpointIdentification) UnmarshalText(text []byte) error {
	v, err := zooKeeperEndpointIdentificationEnum.parse(text)
	if err == nil {
		*e = ZooKeeperEndpointIdentification(v)
	}
	return err
}
