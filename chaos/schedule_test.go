package chaos

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestScheduleIsDeterministic(t *testing.T) {
	cfg := DefaultConfig(TopologyEnsemble)
	cfg.Seed = 42
	a, b := NewSchedule(cfg), NewSchedule(cfg)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed gave two schedules")
	}
	cfg.Seed = 43
	if reflect.DeepEqual(a, NewSchedule(cfg)) {
		t.Fatal("two seeds gave the same schedule")
	}
}

// Every topology's full schedule has at least 100 faults and every kind
// of the topology, with targets and holds that fit the kind.
func TestScheduleCoversEveryKindOfEachTopology(t *testing.T) {
	for _, topo := range Topologies {
		t.Run(string(topo), func(t *testing.T) {
			cfg := DefaultConfig(topo)
			s := NewSchedule(cfg)
			if len(s) != cfg.Faults || cfg.Faults < 100 {
				t.Fatalf("%d faults, want %d (at least 100)", len(s), cfg.Faults)
			}
			count := map[FaultKind]int{}
			var last time.Duration
			session := cfg.SessionTimeout
			for i, f := range s {
				count[f.Kind]++
				if f.ID != i+1 || f.At < last || f.At > cfg.Duration {
					t.Fatalf("fault %d: %+v (previous at %v)", i, f, last)
				}
				last = f.At
				if f.Kind.memberFault() && (f.Member < 0 || f.Member >= cfg.Members) {
					t.Fatalf("fault %+v targets no member", f)
				}
				switch f.Kind {
				case MemberStop, MemberZKCutLong, MemberBrokerCutLong, ZKFollowerIsolate, ZKQuorumLoss, ZKPauseLong:
					if f.Hold <= session {
						t.Fatalf("%s of %v does not outlast the %v session", f.Kind, f.Hold, session)
					}
				case MemberZKCutShort, MemberBrokerCutShort:
					if f.Hold >= session {
						t.Fatalf("%s of %v is not shorter than the %v session", f.Kind, f.Hold, session)
					}
				case OverlapStopTwo:
					if f.Member2 == f.Member || f.Member2 < 0 || f.Member2 >= cfg.Members || f.Hold <= session {
						t.Fatalf("%+v: two distinct members, longer than the session", f)
					}
				}
			}
			for _, k := range topo.kinds() {
				if count[k] == 0 {
					t.Errorf("no %s in %v", k, count)
				}
			}
			for k := range count {
				if !slices.Contains(topo.kinds(), k) {
					t.Errorf("%s is not a fault of %s", k, topo)
				}
			}
		})
	}
}

func TestKafkaTopologyHasNoZooKeeperMemberFaults(t *testing.T) {
	for _, k := range TopologyKafka.kinds() {
		if k.needsZooKeeperMembers() || k.zooKeeperFault() {
			t.Errorf("%s in the Kafka-mode topology", k)
		}
	}
	for _, k := range TopologyEnsemble.kinds() {
		if k == StaticReplace || k == CoordinatorKill {
			t.Errorf("%s in the ensemble topology", k)
		}
	}
}

func TestShortScheduleHasOneOfEachKind(t *testing.T) {
	cfg := ShortConfig()
	s := NewSchedule(cfg)
	seen := map[FaultKind]bool{}
	for _, f := range s {
		if seen[f.Kind] {
			t.Errorf("%s twice", f.Kind)
		}
		seen[f.Kind] = true
	}
	if len(s) != len(cfg.Kinds) {
		t.Fatalf("%d faults for %d kinds", len(s), len(cfg.Kinds))
	}
	if !seen[MemberZKCutExpiry] || !seen[MemberBrokerCutShort] {
		t.Fatalf("the short run must cut a member off: %v", seen)
	}
}

func TestScheduleWithoutWildcardMembersCreatesNoTopic(t *testing.T) {
	cfg := DefaultConfig(TopologyEnsemble)
	cfg.Members = 1
	for _, f := range NewSchedule(cfg) {
		if f.Kind == NewTopic || f.Kind == OverlapStopTwo {
			t.Fatalf("%s with one static member", f.Kind)
		}
	}
}

func TestScheduleOnOneServerHasNoEnsembleFaults(t *testing.T) {
	cfg := DefaultConfig(TopologyEnsemble)
	cfg.ZooKeeperServers = 1
	for _, f := range NewSchedule(cfg) {
		if f.Kind.ensembleFault() {
			t.Fatalf("%s on one ZooKeeper server", f.Kind)
		}
	}
}
