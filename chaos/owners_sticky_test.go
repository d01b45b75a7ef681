package chaos

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zkconsumer/zkconsumer/internal/strategyname"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

const stickyNodePath = "/consumers/g/sticky_assignment"

// stickyTree is a sticky group: a static member "a" and a wildcard member
// "b", two streams each, t with 4 partitions, u (only b consumes it) with
// 2. The group's sticky_assignment node holds a balanced assignment the
// assignor keeps as it is, and which differs from the one it computes from
// nothing (t-0..t-3 to a-0, a-1, b-0, b-1 in order); the owner nodes
// follow the node.
func stickyTree() fakeZK {
	return fakeZK{
		"/consumers/g/ids/a":    `{"version":1,"subscription":{"t":2},"pattern":"static","timestamp":"1","assignment_strategy":"sticky"}`,
		"/consumers/g/ids/b":    `{"version":1,"subscription":{"[tu]":2},"pattern":"white_list","timestamp":"1","assignment_strategy":"sticky"}`,
		"/brokers/topics/t":     `{"version":1,"partitions":{"0":[0],"1":[0],"2":[0],"3":[0]}}`,
		"/brokers/topics/u":     `{"version":1,"partitions":{"0":[0],"1":[0]}}`,
		"/brokers/topics/other": `{"version":1,"partitions":{"0":[0]}}`,
		stickyNodePath: `{"version":1,"ids_cversion":2,"fingerprint":"f",` +
			`"assignment":{"t":{"a-0":[3],"a-1":[2],"b-0":[0],"b-1":[1]},"u":{"b-0":[1],"b-1":[0]}}}`,
		"/consumers/g/owners/t/0": "b-0",
		"/consumers/g/owners/t/1": "b-1",
		"/consumers/g/owners/t/2": "a-1",
		"/consumers/g/owners/t/3": "a-0",
		"/consumers/g/owners/u/0": "b-1",
		"/consumers/g/owners/u/1": "b-0",
	}
}

var stickyLive = map[string]string{"m0.1": "a", "m1.1": "b"}

// The expected owners of a sticky group are computed from its
// sticky_assignment node: owners that follow the node agree, owners as the
// assignor would place them without the node do not.
func TestReadOwnersFollowsTheStickyNode(t *testing.T) {
	check := readOwners(context.Background(), stickyTree(), "g", strategyname.Sticky, stickyLive)
	if !check.Converged || len(check.Expected) != 6 {
		t.Fatalf("expected %v, mismatches: %v", check.Expected, check.Mismatches)
	}

	z := stickyTree()
	for p, th := range []string{"a-0", "a-1", "b-0", "b-1"} {
		z["/consumers/g/owners/t/"+strconv.Itoa(p)] = th
	}
	check = readOwners(context.Background(), z, "g", strategyname.Sticky, stickyLive)
	if check.Converged || !slices.Contains(check.Mismatches, "t-0 is owned by a-0; the assignor gives it to b-0") {
		t.Fatalf("owners placed without the node: mismatches %v", check.Mismatches)
	}
}

// A sticky group without its node, or with one it cannot decode, has not
// agreed on anything.
func TestReadOwnersNeedsTheStickyNode(t *testing.T) {
	for name, value := range map[string]string{"missing": "", "undecodable": `{"version":2}`} {
		t.Run(name, func(t *testing.T) {
			z := stickyTree()
			if value == "" {
				delete(z, stickyNodePath)
			} else {
				z[stickyNodePath] = value
			}
			check := readOwners(context.Background(), z, "g", strategyname.Sticky, stickyLive)
			if check.Converged || !slices.ContainsFunc(check.Mismatches, func(m string) bool { return strings.Contains(m, stickyNodePath) }) {
				t.Fatalf("mismatches %v", check.Mismatches)
			}
		})
	}
}

// A member c joins: owner nodes that match what the assignor computes
// from the node for the new group still do not agree while the node holds
// the old group's assignment; they agree once it holds the new one.
func TestReadOwnersRefusesAStaleStickyNode(t *testing.T) {
	z := stickyTree()
	z["/consumers/g/ids/c"] = `{"version":1,"subscription":{"t":1},"pattern":"static","timestamp":"1","assignment_strategy":"sticky"}`
	live := map[string]string{"m0.1": "a", "m1.1": "b", "m2.1": "c"}
	check := readOwners(context.Background(), z, "g", strategyname.Sticky, live)
	var want []string
	node := map[string]string{}
	for tp, th := range check.Expected {
		z["/consumers/g/owners/"+strings.Replace(tp, "-", "/", 1)] = th
	}
	for _, tp := range []string{"t-0", "t-1", "t-2", "t-3", "u-0", "u-1"} {
		node[tp] = z["/consumers/g/owners/"+strings.Replace(tp, "-", "/", 1)]
	}
	old := map[string]string{"t-0": "b-0", "t-1": "b-1", "t-2": "a-1", "t-3": "a-0", "u-0": "b-1", "u-1": "b-0"}
	for _, tp := range slices.Sorted(maps.Keys(old)) {
		if old[tp] != check.Expected[tp] {
			want = append(want, stickyNodePath+" assigns "+tp+" to "+old[tp]+"; computed from it, the assignor gives it to "+check.Expected[tp])
		}
	}
	if len(want) == 0 {
		t.Fatalf("the assignor gives c nothing: %v", check.Expected)
	}
	check = readOwners(context.Background(), z, "g", strategyname.Sticky, live)
	if check.Converged || strings.Join(check.Mismatches, "\n") != strings.Join(want, "\n") {
		t.Fatalf("mismatches\n%s\nwant\n%s", strings.Join(check.Mismatches, "\n"), strings.Join(want, "\n"))
	}

	byTopic := map[string]map[string][]int32{}
	for tp, th := range node {
		topic, p, _ := strings.Cut(tp, "-")
		n, err := strconv.Atoi(p)
		if err != nil {
			t.Fatal(err)
		}
		if byTopic[topic] == nil {
			byTopic[topic] = map[string][]int32{}
		}
		byTopic[topic][th] = append(byTopic[topic][th], int32(n))
	}
	z[stickyNodePath] = encodeTestStickyNode(t, byTopic)
	check = readOwners(context.Background(), z, "g", strategyname.Sticky, live)
	if !check.Converged {
		t.Fatalf("the node holds the new assignment: mismatches %v", check.Mismatches)
	}
}

// The invariants hold whatever the assignor computes: an owner thread that
// does not consume the partition's topic, and a thread owning two or more
// partitions than another consuming the same topic, are mismatches.
func TestStickyInvariants(t *testing.T) {
	a0, a1 := zkutil.ConsumerThreadID{ConsumerID: "a", Thread: 0}, zkutil.ConsumerThreadID{ConsumerID: "a", Thread: 1}
	tp := func(topic string, p int32) zkutil.TopicPartition {
		return zkutil.TopicPartition{Topic: topic, Partition: p}
	}
	expected := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{tp("t", 0): a0, tp("t", 1): a0, tp("t", 2): a0, tp("u", 0): a1}
	view := groupView{
		expected:        expected,
		threadsForTopic: map[string][]zkutil.ConsumerThreadID{"t": {a0, a1}},
	}
	node := &stickyNode{path: stickyNodePath, found: true, owners: expected}
	actual := map[zkutil.TopicPartition]string{}
	for tp, th := range expected {
		actual[tp] = th.String()
	}
	got := node.mismatches(view, actual)
	want := []string{
		"u-0 is owned by a-1, not a thread of a registered member consuming u",
		"unbalanced: a-0 owns 3 partitions, a-1 (which consumes t) owns 0; t-0 could move",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("mismatches\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func encodeTestStickyNode(t *testing.T, byTopic map[string]map[string][]int32) string {
	t.Helper()
	b, err := json.Marshal(stickyRecord{Version: 1, Assignment: byTopic})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
