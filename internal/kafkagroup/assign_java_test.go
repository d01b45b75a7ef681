package kafkagroup

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"maps"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/strategyname"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

func subs(topics ...string) memberSubscription { return memberSubscription{Topics: topics} }

func static(instance string, topics ...string) memberSubscription {
	return memberSubscription{Topics: topics, InstanceID: instance}
}

// TestJavaAssignorsTable checks hand-worked cases, among them the examples
// of the javadoc of Java's RangeAssignor and RoundRobinAssignor.
func TestJavaAssignorsTable(t *testing.T) {
	cases := []struct {
		name     string
		strategy string
		counts   map[string]int32
		members  map[string]memberSubscription
		want     groupAssignment
	}{
		{
			name: "range javadoc", strategy: "range",
			counts:  map[string]int32{"t0": 3, "t1": 3},
			members: map[string]memberSubscription{"C0": subs("t0", "t1"), "C1": subs("t0", "t1")},
			want: groupAssignment{
				"C0": {"t0": {0, 1}, "t1": {0, 1}},
				"C1": {"t0": {2}, "t1": {2}},
			},
		},
		{
			name: "roundrobin javadoc, same subscriptions", strategy: "roundrobin",
			counts:  map[string]int32{"t0": 3, "t1": 3},
			members: map[string]memberSubscription{"C0": subs("t0", "t1"), "C1": subs("t0", "t1")},
			want: groupAssignment{
				"C0": {"t0": {0, 2}, "t1": {1}},
				"C1": {"t0": {1}, "t1": {0, 2}},
			},
		},
		{
			name: "roundrobin javadoc, different subscriptions", strategy: "roundrobin",
			counts: map[string]int32{"t0": 1, "t1": 2, "t2": 3},
			members: map[string]memberSubscription{
				"C0": subs("t0"), "C1": subs("t0", "t1"), "C2": subs("t0", "t1", "t2"),
			},
			want: groupAssignment{
				"C0": {"t0": {0}},
				"C1": {"t1": {0}},
				"C2": {"t1": {1}, "t2": {0, 1, 2}},
			},
		},
		{
			name: "range: member ids sort as strings", strategy: "range",
			counts:  map[string]int32{"t": 5},
			members: map[string]memberSubscription{"c-10": subs("t"), "c-2": subs("t"), "c-1": subs("t")},
			want:    groupAssignment{"c-1": {"t": {0, 1}}, "c-10": {"t": {2, 3}}, "c-2": {"t": {4}}},
		},
		{
			name: "range: static members first, by instance id", strategy: "range",
			counts: map[string]int32{"t": 3},
			members: map[string]memberSubscription{
				"a": subs("t"), "z": static("i2", "t"), "y": static("i1", "t"),
			},
			want: groupAssignment{"y": {"t": {0}}, "z": {"t": {1}}, "a": {"t": {2}}},
		},
		{
			name: "range: more members than partitions, missing and empty topics", strategy: "range",
			counts:  map[string]int32{"t": 1, "empty": 0},
			members: map[string]memberSubscription{"a": subs("t", "gone", "empty"), "b": subs("t", "t")},
			want:    groupAssignment{"a": {"t": {0}}, "b": {}},
		},
		{
			name: "roundrobin: topics in Java string order", strategy: "roundrobin",
			// In UTF-8 "t\uff21" sorts first; in UTF-16, Java's order, the
			// emoji's surrogate 0xD83D comes before 0xFF21.
			counts:  map[string]int32{"t\uff21": 1, "t\U0001F600": 1},
			members: map[string]memberSubscription{"a": subs("t\uff21", "t\U0001F600"), "b": subs("t\uff21", "t\U0001F600")},
			want:    groupAssignment{"a": {"t\U0001F600": {0}}, "b": {"t\uff21": {0}}},
		},
		{
			name: "no members", strategy: "roundrobin",
			counts: map[string]int32{"t": 3}, members: map[string]memberSubscription{},
			want: groupAssignment{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := newGroupAssignor(tc.strategy)
			require.NoError(t, err)
			got, err := a.Assign(tc.counts, tc.members)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestJavaAssignorsRefuseInvalidInput(t *testing.T) {
	for _, strategy := range []string{"range", "roundrobin"} {
		a, err := newGroupAssignor(strategy)
		require.NoError(t, err)
		for name, in := range map[string]struct {
			counts  map[string]int32
			members map[string]memberSubscription
		}{
			"empty member":       {members: map[string]memberSubscription{"": subs("t")}},
			"empty topic":        {members: map[string]memberSubscription{"a": subs("")}},
			"negative count":     {counts: map[string]int32{"t": -1}},
			"duplicate instance": {members: map[string]memberSubscription{"a": static("i", "t"), "b": static("i", "t")}},
		} {
			_, err := a.Assign(in.counts, in.members)
			require.ErrorIs(t, err, errInvalidSubscriptions, "%s %s", strategy, name)
		}
	}
	_, err := newGroupAssignor("sticky")
	require.ErrorIs(t, err, strategyname.ErrUnknown)
}

// TestJavaAssignorsCoverEveryPartitionOnce: whatever the input, each
// partition of a subscribed topic goes to exactly one of its subscribers.
func TestJavaAssignorsCoverEveryPartitionOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 500; i++ {
		in := randomJavaGroup(rng)
		for _, a := range []groupAssignor{rangeAssignor{}, roundRobinAssignor{}} {
			got, err := a.Assign(in.counts, in.members)
			require.NoError(t, err)
			owners := map[string]int{}
			for id, topics := range got {
				for topic, parts := range topics {
					require.True(t, slices.Contains(in.members[id].Topics, topic), "%s gave %s to non-subscriber %s", a.Name(), topic, id)
					require.True(t, slices.IsSorted(parts))
					for _, p := range parts {
						owners[fmt.Sprintf("%s/%d", topic, p)]++
					}
				}
			}
			for topic, n := range in.counts {
				subscribed := false
				for _, m := range in.members {
					subscribed = subscribed || slices.Contains(m.Topics, topic)
				}
				for p := range n {
					want := 0
					if subscribed {
						want = 1
					}
					require.Equal(t, want, owners[fmt.Sprintf("%s/%d", topic, p)], "%s: %s/%d", a.Name(), topic, p)
				}
			}
		}
	}
}

type groupInput struct {
	counts  map[string]int32
	members map[string]memberSubscription
	racks   map[string]string // client.rack of a member, for the Java side only
}

// randomJavaGroup draws a group: topics with awkward names (non-ASCII ones
// whose UTF-16 order differs from their UTF-8 order), some missing from
// the metadata or without partitions, dynamic and static members with ids
// shaped like the coordinator's, subscriptions that overlap partly.
func randomJavaGroup(rng *rand.Rand) groupInput {
	pool := []string{"a", "b", "orders", "orders-eu", "t\uff21", "t\U0001F600", "T", "z.z", "_x", "payments"}
	in := groupInput{counts: map[string]int32{}, members: map[string]memberSubscription{}, racks: map[string]string{}}
	for _, topic := range pool {
		switch rng.IntN(6) {
		case 0: // missing from the metadata
		case 1:
			in.counts[topic] = 0
		default:
			in.counts[topic] = int32(1 + rng.IntN(12))
		}
	}
	nMembers := 1 + rng.IntN(6) // a group has at least its leader (Java's roundrobin throws on none)
	for i := 0; i < nMembers; i++ {
		id := fmt.Sprintf("consumer-%d-%08x", rng.IntN(12), rng.Uint32())
		if rng.IntN(5) == 0 {
			id = fmt.Sprintf("zk\u00e9-%d", i)
		}
		var m memberSubscription
		if rng.IntN(3) == 0 {
			m.InstanceID = fmt.Sprintf("inst-%d", rng.IntN(100)*10+i) // unique per member
		}
		for _, topic := range pool {
			if rng.IntN(3) == 0 {
				m.Topics = append(m.Topics, topic)
			}
		}
		if len(m.Topics) > 0 && rng.IntN(4) == 0 {
			m.Topics = append(m.Topics, m.Topics[0]) // a duplicate
		}
		if rng.IntN(3) == 0 {
			in.racks[id] = "rack" + strconv.Itoa(rng.IntN(2))
		}
		in.members[id] = m
	}
	return in
}

// TestJavaAssignorsAgainstKafka runs Kafka 3.9's own RangeAssignor and
// RoundRobinAssignor (kafka-clients from .cache/kafka39, through
// testdata/JavaAssignorOracle.java) on random groups and requires the same
// assignment from rangeAssignor and roundRobinAssignor. Some Java
// members carry a client.rack while partitions have no replica racks: the
// Java range assignor then stays on its non-rack path, the one this package
// implements.
func TestJavaAssignorsAgainstKafka(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	var inputs []groupInput
	var strategies []string
	for i := 0; i < 400; i++ {
		inputs = append(inputs, randomJavaGroup(rng))
		strategies = append(strategies, []string{"range", "roundrobin"}[i%2])
	}
	java := askJavaAssignors(t, strategies, inputs)
	for i, in := range inputs {
		a, err := newGroupAssignor(strategies[i])
		require.NoError(t, err)
		got, err := a.Assign(in.counts, in.members)
		require.NoError(t, err)
		// The oracle lists only members that got partitions.
		for id, topics := range got {
			if len(topics) == 0 {
				delete(got, id)
			}
		}
		require.Equal(t, java[i], got, "case %d (%s): counts %v members %v", i, strategies[i], in.counts, in.members)
	}
}

// askJavaAssignors runs every case through testdata/JavaAssignorOracle.java
// in one JVM.
func askJavaAssignors(t *testing.T, strategies []string, inputs []groupInput) []groupAssignment {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a JVM: skipped by -short")
	}
	java, err := exec.LookPath("java")
	require.NoError(t, err, "this test runs Kafka's Java assignors and needs Java 11 or later")
	lib, err := testcluster.Kafka39Lib()
	require.NoError(t, err, "this test needs Kafka 3.9's jars in .cache/kafka39 (testinfra/fetch-jars.sh)")
	enc := func(s string) string { return hex.EncodeToString([]byte(s)) }
	var in strings.Builder
	for i, g := range inputs {
		in.WriteString(strategies[i])
		var counts []string
		for _, topic := range slices.Sorted(maps.Keys(g.counts)) {
			counts = append(counts, enc(topic)+":"+strconv.Itoa(int(g.counts[topic])))
		}
		in.WriteString(" " + orDash(strings.Join(counts, ",")))
		for _, id := range slices.Sorted(maps.Keys(g.members)) {
			m := g.members[id]
			instance := "-"
			if m.InstanceID != "" {
				instance = enc(m.InstanceID)
			}
			var topics []string
			for _, topic := range m.Topics {
				topics = append(topics, enc(topic))
			}
			fmt.Fprintf(&in, " %s;%s;%s;%s", enc(id), instance, orDash(g.racks[id]), orDash(strings.Join(topics, ",")))
		}
		in.WriteByte('\n')
	}
	return runOracle(t, java, lib, "JavaAssignorOracle.java", in.String(), len(inputs))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// runOracle runs the Java program testdata/program (one of the oracles
// that call Kafka's own assignors) with Kafka's jars in lib, feeding it
// input, and reads the groups' assignments it prints: one line per
// member, "<hex member id> <hex topic>:<partitions>...", each group ended
// by "END".
func runOracle(t *testing.T, java, lib, program, input string, groups int) []groupAssignment {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, java, "-Xshare:auto", "-XX:TieredStopAtLevel=1",
		"-cp", filepath.Join(lib, "*"), "testdata/"+program)
	cmd.Stdin = strings.NewReader(input)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "java: %s", stderr.String())

	var results []groupAssignment
	cur := groupAssignment{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if line == "END" {
			results = append(results, cur)
			cur = groupAssignment{}
			continue
		}
		fields := strings.Fields(line)
		id, err := hex.DecodeString(fields[0])
		require.NoError(t, err, "oracle line %q", line)
		topics := map[string][]int32{}
		for _, f := range fields[1:] {
			topic, list, ok := strings.Cut(f, ":")
			require.True(t, ok, "oracle line %q", line)
			name, err := hex.DecodeString(topic)
			require.NoError(t, err)
			for _, p := range strings.Split(list, ",") {
				n, err := strconv.ParseInt(p, 10, 32)
				require.NoError(t, err)
				topics[string(name)] = append(topics[string(name)], int32(n))
			}
		}
		cur[string(id)] = topics
	}
	require.NoError(t, sc.Err())
	require.Len(t, results, groups, "oracle answers")
	return results
}
