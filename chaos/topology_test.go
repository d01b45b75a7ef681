package chaos

import (
	"slices"
	"testing"
	"time"

	"github.com/zkconsumer/zkconsumer/connector"
)

// The consumer-protocol topology: every member subscribes to the main
// topic by name (the protocol refuses filters), members are dynamic, and
// its faults need neither ZooKeeper, nor a whitelist, nor static members.
func TestKafkaConsumerTopologyFaults(t *testing.T) {
	topo := TopologyKafkaConsumer
	if !topo.kafkaMode() || !topo.kraft() || topo.static() || topo.offsetsStorage() != storeKafka {
		t.Fatalf("kafka mode %v, kraft %v, static %v, offsets in %s", topo.kafkaMode(), topo.kraft(), topo.static(), topo.offsetsStorage())
	}
	if topo.groupProtocol() != connector.GroupProtocolConsumer.String() {
		t.Fatalf("group.protocol %q", topo.groupProtocol())
	}
	for slot := range 5 {
		if topo.wildcard(slot) != (slot%2 == 1) {
			t.Fatalf("slot %d: whitelist %v (the odd slots subscribe with the broker's regex)", slot, topo.wildcard(slot))
		}
	}
	for _, k := range topo.kinds() {
		if k.zooKeeperFault() || k.needsZooKeeperMembers() || k == StaticReplace || k == NewTopic {
			t.Errorf("%s in the consumer-protocol topology", k)
		}
	}
	for _, k := range []FaultKind{MemberKill, MemberStop, MemberLeave, CoordinatorKill, CoordinatorPause, AddPartitions} {
		if !slices.Contains(topo.kinds(), k) {
			t.Errorf("no %s in the consumer-protocol topology", k)
		}
	}
	for _, other := range Topologies {
		if other != topo && (other.kraft() || other.groupProtocol() != "") {
			t.Errorf("%s: kraft %v, group.protocol %q", other, other.kraft(), other.groupProtocol())
		}
	}
}

// A member frozen in the consumer-protocol topology stays frozen past the
// broker's session timeout, which is the run's.
func TestKafkaConsumerScheduleOutlastsTheBrokerSession(t *testing.T) {
	cfg := DefaultConfig(TopologyKafkaConsumer)
	props := clusterOptions(cfg).BrokerProperties
	if props["group.consumer.session.timeout.ms"] != "6000" {
		t.Fatalf("broker session %s ms, want the run's 6000", props["group.consumer.session.timeout.ms"])
	}
	stops := 0
	for _, f := range NewSchedule(cfg) {
		if f.Kind == MemberStop || f.Kind == OverlapStopTwo {
			stops++
			if f.Hold <= cfg.SessionTimeout {
				t.Fatalf("%+v does not outlast the broker's session", f)
			}
		}
	}
	if stops == 0 {
		t.Fatal("no member frozen")
	}
}

// clusterOptions: ZooKeeper topologies keep their ensemble and Kafka 3.9;
// the KRaft topology gets three Kafka 4 nodes, every one a controller, with
// min.insync.replicas 2 and the run's session timeout as the broker's
// minimum and default for consumer-protocol groups (KIP-848), and a
// heartbeat interval well inside it.
func TestClusterOptions(t *testing.T) {
	zk := clusterOptions(DefaultConfig(TopologyKafka))
	if zk.KRaft || zk.Brokers != 3 || zk.ZooKeeperServers != 3 || zk.BrokerProperties["min.insync.replicas"] != "2" {
		t.Fatalf("ZooKeeper-mode options %+v", zk)
	}
	if _, ok := zk.BrokerProperties["group.consumer.session.timeout.ms"]; ok {
		t.Fatal("consumer-protocol settings on a Kafka 3.9 broker")
	}
	cfg := DefaultConfig(TopologyKafkaConsumer)
	cfg.SessionTimeout = 4 * time.Second
	kr := clusterOptions(cfg)
	if !kr.KRaft || kr.Brokers != 3 || kr.Controllers != 3 || kr.ZooKeeperServers != 0 {
		t.Fatalf("KRaft options %+v", kr)
	}
	want := map[string]string{
		"min.insync.replicas":                      "2",
		"offsets.topic.segment.bytes":              "1073741824",
		"group.consumer.min.session.timeout.ms":    "4000",
		"group.consumer.session.timeout.ms":        "4000",
		"group.consumer.max.session.timeout.ms":    "60000",
		"group.consumer.min.heartbeat.interval.ms": "666",
		"group.consumer.heartbeat.interval.ms":     "666",
	}
	for k, v := range want {
		if kr.BrokerProperties[k] != v {
			t.Errorf("%s = %q, want %q", k, kr.BrokerProperties[k], v)
		}
	}
}
