package chaos

import (
	"fmt"
	"slices"

	"github.com/zkconsumer/zkconsumer/connector"
	"github.com/zkconsumer/zkconsumer/internal/strategyname"
)

// Topology is the shape of a run: how the members are coordinated, where
// they commit offsets, which assignor they use, and so which faults apply.
// Every topology but TopologyKafkaConsumer runs a ZooKeeper ensemble
// (Config.ZooKeeperServers) and three Kafka 3.9 brokers in ZooKeeper mode;
// TopologyKafkaConsumer runs three Kafka 4 nodes in KRaft mode, each a
// broker and a controller, and no ZooKeeper.
type Topology string

// The topologies of make chaos.
const (
	// TopologyEnsemble: members coordinated through ZooKeeper, all servers
	// of the ensemble in zookeeper.connect (each through a proxy of its
	// own), the range assignor, offsets in ZooKeeper; half the members
	// subscribe to the main topic, the others with a whitelist. Member
	// partitions from ZooKeeper and from the brokers, ensemble faults and
	// overlapping faults.
	TopologyEnsemble Topology = "ensemble"
	// TopologyRoundRobin: as TopologyEnsemble, but with
	// partition.assignment.strategy=roundrobin, offsets.storage=kafka and
	// dual.commit.enabled=false. Every member subscribes with the same
	// whitelist (roundrobin needs identical subscriptions).
	TopologyRoundRobin Topology = "roundrobin"
	// TopologyKafka: members coordinated by Kafka's group coordinator
	// (zkconsumer.group.coordination=kafka; offsets in Kafka), static
	// members (group.instance.id=chaos-<slot>), the range assignor.
	// Coordinator pauses and kills, static members replaced while they
	// run, member partitions from the brokers.
	TopologyKafka Topology = "kafka"
	// TopologySticky: as TopologyEnsemble (coordination through ZooKeeper,
	// the whole ensemble in zookeeper.connect, offsets in ZooKeeper, half
	// the members with the whitelist, so that subscriptions differ), but
	// with partition.assignment.strategy=sticky: the members agree on the
	// previous assignment through /consumers/<group>/sticky_assignment,
	// and the owner check follows that node (stickyExpectation).
	TopologySticky Topology = "sticky"
	// TopologyKafkaCooperative: as TopologyKafka, but with
	// partition.assignment.strategy=cooperative-sticky (KIP-429): a
	// rebalance stops only the partitions that move, the others keep
	// flowing through it.
	TopologyKafkaCooperative Topology = "kafka-cooperative"
	// TopologyKafkaConsumer: members coordinated by Kafka with KIP-848's
	// consumer group protocol (group.protocol=consumer; offsets in Kafka),
	// on a KRaft cluster of three Kafka 4 nodes, each a broker and a
	// controller (kraftBrokerProperties: the broker's session timeout is
	// the members', min.insync.replicas 2). The broker assigns
	// (group.remote.assignor left to its default); dynamic members, those
	// of odd slots subscribed with the whitelist (sent as the broker's
	// RE2/J regex), the others to the main topic by name. Members killed, frozen past the session timeout, leaving,
	// cut off the brokers; coordinator and broker pauses and kills;
	// partitions added.
	TopologyKafkaConsumer Topology = "kafka-consumer"
)

// Topologies lists every topology in the order make chaos runs them.
var Topologies = []Topology{TopologyEnsemble, TopologyRoundRobin, TopologyKafka, TopologySticky, TopologyKafkaCooperative, TopologyKafkaConsumer}

// ParseTopology parses a topology name.
func ParseTopology(s string) (Topology, error) {
	t := Topology(s)
	if !slices.Contains(Topologies, t) {
		return "", fmt.Errorf("chaos: unknown topology %q (known: %v)", s, Topologies)
	}
	return t, nil
}

func (t Topology) valid() bool { return slices.Contains(Topologies, t) }

// kafkaMode reports whether the members are coordinated by Kafka.
func (t Topology) kafkaMode() bool {
	return t == TopologyKafka || t == TopologyKafkaCooperative || t == TopologyKafkaConsumer
}

// kraft reports whether the topology runs on a KRaft cluster of Kafka 4
// nodes (no ZooKeeper).
func (t Topology) kraft() bool { return t == TopologyKafkaConsumer }

// groupProtocol is the members' group.protocol: "consumer" (KIP-848) for
// TopologyKafkaConsumer, "" (the default, classic) otherwise.
func (t Topology) groupProtocol() string {
	if t == TopologyKafkaConsumer {
		return connector.GroupProtocolConsumer.String()
	}
	return ""
}

// offsetsStorage is where the members commit: "zookeeper" or "kafka".
func (t Topology) offsetsStorage() string {
	if t == TopologyEnsemble || t == TopologySticky {
		return storeZooKeeper
	}
	return storeKafka
}

// assignment is the members' partition.assignment.strategy.
func (t Topology) assignment() string {
	switch t {
	case TopologyRoundRobin:
		return strategyname.RoundRobin
	case TopologySticky:
		return strategyname.Sticky
	case TopologyKafkaCooperative:
		return strategyname.CooperativeSticky
	}
	return strategyname.Range
}

// static reports whether the members are static (group.instance.id).
func (t Topology) static() bool { return t == TopologyKafka || t == TopologyKafkaCooperative }

// wildcard reports whether member slot subscribes with a whitelist rather
// than to the main topic: every second slot does, and every slot with
// roundrobin, and none with the consumer group protocol (which refuses
// topic filters).
func (t Topology) wildcard(slot int) bool {
	return t == TopologyRoundRobin || slot%2 == 1
}

// kinds are the fault kinds of the topology's full run.
func (t Topology) kinds() []FaultKind {
	if t == TopologyKafkaConsumer {
		return []FaultKind{
			MemberKill, MemberStop, MemberLeave, MemberBrokerCutShort, MemberBrokerCutLong,
			OverlapStopTwo, BrokerKill, BrokerPause, CoordinatorPause, CoordinatorKill,
			LeaderMove, AddPartitions,
		}
	}
	if t.kafkaMode() {
		return []FaultKind{
			MemberKill, MemberStop, MemberLeave, MemberBrokerCutShort, MemberBrokerCutLong,
			OverlapStopTwo, OverlapBrokerPauseRebalance,
			BrokerKill, BrokerPause, CoordinatorPause, CoordinatorKill, StaticReplace,
			LeaderMove, AddPartitions, NewTopic,
		}
	}
	var out []FaultKind
	for _, k := range AllKinds {
		switch k {
		case CoordinatorPause, CoordinatorKill, StaticReplace:
			if t.offsetsStorage() == storeZooKeeper {
				continue // the group has no coordinator
			}
		}
		if !k.kafkaModeOnly() {
			out = append(out, k)
		}
	}
	return out
}
