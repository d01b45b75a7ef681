package chaos

import (
	"strings"
	"testing"
)

func tps(parts ...int32) map[topicPartition]bool {
	out := map[topicPartition]bool{}
	for _, p := range parts {
		out[topicPartition{"chaos.main", p}] = true
	}
	return out
}

func TestSlotOfClientID(t *testing.T) {
	for slot := range 12 {
		if got, ok := slotOfClientID(memberClientID(slot)); !ok || got != slot {
			t.Fatalf("slot %d: %d, %v", slot, got, ok)
		}
	}
	for _, id := range []string{"", "chaos-member-", "chaos-member--1", "chaos-member-x", "zkconsumer-testcluster"} {
		if _, ok := slotOfClientID(id); ok {
			t.Errorf("%q taken for a slot's client id", id)
		}
	}
}

// The coordinator's view agrees with the running members: no mismatch.
func TestBrokerOwnersAgree(t *testing.T) {
	g := brokerGroup{State: "Stable", Members: []brokerMember{
		{ID: "a", ClientID: memberClientID(0), Assigned: tps(0, 1), Target: tps(0, 1)},
		{ID: "b", ClientID: memberClientID(1), Assigned: tps(2), Target: tps(2)},
	}}
	running := []slotAssignment{
		{Slot: 0, Key: "m0.3", Parts: tps(0, 1), OK: true},
		{Slot: 1, Key: "m1.1", Parts: tps(2), OK: true},
	}
	if ms := brokerOwnerMismatches(g, running); len(ms) != 0 {
		t.Fatalf("mismatches %q", ms)
	}
}

// Every way the coordinator's view can differ from the running members is
// reported.
func TestBrokerOwnersMismatches(t *testing.T) {
	if ms := brokerOwnerMismatches(brokerGroup{Err: "GROUP_ID_NOT_FOUND"}, nil); len(ms) != 1 || !strings.Contains(ms[0], "not describe a consumer-protocol group") {
		t.Fatalf("a classic group: %q", ms)
	}
	g := brokerGroup{State: "Reconciling", Members: []brokerMember{
		{ID: "a", ClientID: memberClientID(0), Assigned: tps(0), Target: tps(0, 1)}, // not converged
		{ID: "b", ClientID: memberClientID(1), Assigned: tps(2), Target: tps(2)},    // reports otherwise
		{ID: "c", ClientID: memberClientID(1), Assigned: tps(), Target: tps()},      // a second of slot 1
		{ID: "d", ClientID: memberClientID(4), Assigned: tps(3), Target: tps(3)},    // no member runs
		{ID: "e", ClientID: "someone-else", Assigned: tps(), Target: tps()},         // no slot's
		{ID: "f", ClientID: memberClientID(5), Assigned: tps(4), Target: tps(4)},    // reported nothing
	}}
	running := []slotAssignment{
		{Slot: 0, Key: "m0.1", Parts: tps(0), OK: true},
		{Slot: 1, Key: "m1.2", Parts: tps(2, 5), OK: true},
		{Slot: 2, Key: "m2.1", Parts: tps(), OK: true}, // not in the group
		{Slot: 5, Key: "m5.1"},
	}
	ms := brokerOwnerMismatches(g, running)
	for _, want := range []string{
		"group is Reconciling, not Stable",
		"member a (slot 0) owns [chaos.main-0], its target is [chaos.main-0 chaos.main-1]",
		"two members of slot 1: b and c",
		"running member m1.2 reports",
		"running member m2.1 is not in the coordinator's group",
		"member d of slot 4, which runs no member",
		`client id "someone-else"`,
		"running member m5.1 reported no assignment",
	} {
		found := false
		for _, m := range ms {
			found = found || strings.Contains(m, want)
		}
		if !found {
			t.Errorf("no mismatch %q in %q", want, ms)
		}
	}
}
