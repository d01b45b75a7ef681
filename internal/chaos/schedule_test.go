package chaos

import (
	"reflect"
	"testing"
	"time"
)

func TestScheduleIsDeterministic(t *testing.T) {
	cfg := DefaultConfig()
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

func TestScheduleCoversEveryKind(t *testing.T) {
	cfg := DefaultConfig()
	s := NewSchedule(cfg)
	if len(s) != cfg.Faults {
		t.Fatalf("%d faults, want %d", len(s), cfg.Faults)
	}
	count := map[FaultKind]int{}
	var last time.Duration
	for i, f := range s {
		count[f.Kind]++
		if f.ID != i+1 || f.At < last || f.At > cfg.Duration {
			t.Fatalf("fault %d: %+v (previous at %v)", i, f, last)
		}
		last = f.At
		if f.Kind.memberFault() && (f.Member < 0 || f.Member >= cfg.Members) {
			t.Fatalf("fault %+v targets no member", f)
		}
		if f.Kind == MemberStop && f.Hold <= cfg.SessionTimeout {
			t.Fatalf("SIGSTOP of %v does not outlast the %v session", f.Hold, cfg.SessionTimeout)
		}
	}
	for _, k := range AllKinds {
		if count[k] == 0 {
			t.Errorf("no %s in %v", k, count)
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
}

func TestScheduleWithoutWildcardMembersCreatesNoTopic(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Members = 1
	for _, f := range NewSchedule(cfg) {
		if f.Kind == NewTopic {
			t.Fatal("a topic nobody consumes would count as lost")
		}
	}
}
