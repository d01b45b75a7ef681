package groups

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

func TestHostOf(t *testing.T) {
	for _, tc := range []struct{ group, id, want string }{
		{"g", "g_host1.example.com-1531000000000-5f3a9c2e", "host1.example.com"},
		{"g", "g_my-host-1531000000000-ab", "my-host"},
		{"g_x", "g_x_h-1531000000000-0123abcd", "h"},
		{"g", "g_configured", ""},                // consumer.id set
		{"g", "other_h-1531000000000-ab", ""},    // not this group's prefix
		{"g", "g_h-153-ab", ""},                  // not a timestamp
		{"g", "g_h-1531000000000-XYZ", ""},       // not hex
		{"g", "g_-1531000000000-ab", ""},         // no host
		{"g", "g_h-1531000000000-123456789", ""}, // too long for the prefix
	} {
		require.Equal(t, tc.want, hostOf(tc.group, tc.id), "%s in %s", tc.id, tc.group)
	}
}

func TestStreamsString(t *testing.T) {
	m := Member{Registration: zkutil.Registration{Subscription: map[string]int{"b": 1, "a": 3}, Pattern: zkutil.PatternStatic}}
	require.Equal(t, "a:3,b:1", m.StreamsString())
	m.Err = errors.New("bad")
	require.Equal(t, "-", m.StreamsString())
}

func TestParsePartitionNode(t *testing.T) {
	for name, want := range map[string]bool{"0": true, "17": true, "-1": false, "01": false, "x": false, "": false, "2147483648": false, "+1": false} {
		_, ok := parsePartitionNode(name)
		require.Equal(t, want, ok, name)
	}
}

// TestPrintOffsetsLayout: Kafka 1.1.1's layout, columns widened to the
// longest topic and consumer id, lines ending in a space, idle members
// last with one row per subscribed topic.
func TestPrintOffsetsLayout(t *testing.T) {
	d := &Description{
		Group: "g",
		Rows: []PartitionRow{
			{TopicPartition: TopicPartition{Topic: "orders", Partition: 0}, Current: 5, HasCurrent: true, LogEnd: 9, HasLogEnd: true, Owner: "g_h-1531000000000-0123abcd"},
			{TopicPartition: TopicPartition{Topic: "orders", Partition: 1}, Current: -1, HasCurrent: true, LogEnd: 9, HasLogEnd: true},
			{TopicPartition: TopicPartition{Topic: "orders", Partition: 2}},
		},
		Members: []Member{
			{ID: "g_h-1531000000000-0123abcd"},
			{ID: "g_idle", Registration: zkutil.Registration{Subscription: map[string]int{"orders": 1, "payments": 1}}},
		},
		Owned: map[string]int{"g_h-1531000000000-0123abcd": 1},
	}
	var buf bytes.Buffer
	require.NoError(t, PrintOffsets(&buf, d))
	want := "\n" +
		"TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID                \n" +
		"orders          0          5               9               4               g_h-1531000000000-0123abcd \n" +
		"orders          1          -1              9               -               -                          \n" +
		"orders          2          -               -               -               -                          \n" +
		"-               -          -               -               -               g_idle                     \n" +
		"-               -          -               -               -               g_idle                     \n"
	require.Equal(t, want, buf.String())
}

func TestPrintStateAndMembers(t *testing.T) {
	reg := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	d := &Description{
		Group: "g", State: StateStable,
		Rows:    []PartitionRow{{TopicPartition: TopicPartition{Topic: "t"}, Owner: "g_a"}, {TopicPartition: TopicPartition{Topic: "t", Partition: 1}, Owner: "gone"}},
		Members: []Member{{ID: "g_a", Host: "h", Registered: reg, Registration: zkutil.Registration{Subscription: map[string]int{"t": 2}, Pattern: zkutil.PatternStatic}}},
		Owned:   map[string]int{"g_a": 1},
	}
	var buf bytes.Buffer
	require.NoError(t, PrintState(&buf, d))
	require.Equal(t, "\nGROUP  STATE   #MEMBERS  #PARTITIONS  #OWNED\ng      Stable  1         2            1\n", buf.String())
	buf.Reset()
	require.NoError(t, PrintMembers(&buf, d))
	require.Equal(t, "\nCONSUMER-ID  HOST  #PARTITIONS  STREAMS  PATTERN  REGISTERED\ng_a          h     1            t:2      static   2026-01-02T03:04:05Z\n", buf.String())
}

func TestBadNodesError(t *testing.T) {
	require.NoError(t, badNodes(nil))
	e1 := &zkutil.DecodeError{Path: "/a", Err: errors.New("x")}
	err := badNodes([]error{e1})
	var bad *BadNodesError
	require.ErrorAs(t, err, &bad)
	var de *zkutil.DecodeError
	require.ErrorAs(t, err, &de)
	require.Contains(t, err.Error(), "/a")
}

// FuzzHostOf: any consumer id yields a host that is part of it, or "".
func FuzzHostOf(f *testing.F) {
	f.Add("g", "g_h-1531000000000-0123abcd")
	f.Add("g", "g_configured")
	f.Add("", "_-0000000000-0")
	f.Fuzz(func(t *testing.T, group, id string) {
		h := hostOf(group, id)
		if h != "" && !bytes.Contains([]byte(id), []byte(h)) {
			t.Fatalf("host %q not in %q", h, id)
		}
	})
}

func TestGroupState(t *testing.T) {
	static := func(id string, topics ...string) Member {
		sub := map[string]int{}
		for _, tp := range topics {
			sub[tp] = 1
		}
		return Member{ID: id, Registration: zkutil.Registration{Subscription: sub, Pattern: zkutil.PatternStatic}}
	}
	row := func(topic string, p int32, owner string) PartitionRow {
		return PartitionRow{TopicPartition: TopicPartition{Topic: topic, Partition: p}, Owner: owner}
	}
	wild := Member{ID: "w", Registration: zkutil.Registration{Subscription: map[string]int{"t.*": 1}, Pattern: zkutil.PatternWhitelist}}
	for _, tc := range []struct {
		name    string
		members []Member
		rows    []PartitionRow
		want    string
	}{
		{"no members", nil, []PartitionRow{row("a", 0, "")}, StateEmpty},
		{"all owned", []Member{static("m", "a")}, []PartitionRow{row("a", 0, "m"), row("a", 1, "m")}, StateStable},
		{"one unowned", []Member{static("m", "a")}, []PartitionRow{row("a", 0, "m"), row("a", 1, "")}, StateRebalancing},
		{"owned by a gone member", []Member{static("m", "a")}, []PartitionRow{row("a", 0, "m"), row("a", 1, "gone")}, StateRebalancing},
		{"stale topic no one subscribes to", []Member{static("m", "a")}, []PartitionRow{row("a", 0, "m"), row("old", 0, "")}, StateStable},
		{"wildcard owns what it matched", []Member{wild}, []PartitionRow{row("t1", 0, "w"), row("t1", 1, ""), row("x", 0, "")}, StateRebalancing},
		{"wildcard stable", []Member{wild}, []PartitionRow{row("t1", 0, "w"), row("x", 0, "")}, StateStable},
	} {
		d := &Description{Members: tc.members, Rows: tc.rows}
		require.Equal(t, tc.want, groupState(d), tc.name)
	}
}
