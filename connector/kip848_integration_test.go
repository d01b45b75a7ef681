package connector

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

// consumerProtocolConfig is kafkaConfig with group.protocol=consumer.
func consumerProtocolConfig(c *testcluster.Cluster, group string) Config {
	cfg := kafkaConfig(c, group)
	cfg.GroupProtocol = GroupProtocolConsumer
	return cfg
}

// consumerGroupMember is a member of a consumer-protocol group as
// ConsumerGroupDescribe shows it.
type consumerGroupMember struct {
	id, clientID       string
	epoch              int32
	assigned, targeted map[string][]int32
}

// describeConsumerGroup returns a consumer-protocol group's state and
// members (ConsumerGroupDescribe, KIP-848).
func describeConsumerGroup(t *testing.T, c *testcluster.Cluster, group string) (string, []consumerGroupMember) {
	t.Helper()
	client, err := sarama.NewClient(c.BrokerAddrs(), c.ClientConfig())
	require.NoError(t, err)
	defer client.Close()
	b, err := client.Coordinator(group)
	require.NoError(t, err)
	resp, err := b.ConsumerGroupDescribe(&sarama.ConsumerGroupDescribeRequest{GroupIDs: []string{group}})
	require.NoError(t, err)
	require.Len(t, resp.Groups, 1)
	g := resp.Groups[0]
	if g.ErrorCode != sarama.ErrNoError {
		return g.ErrorCode.Error(), nil
	}
	names := func(a sarama.ConsumerGroupAssignment) map[string][]int32 {
		out := map[string][]int32{}
		for _, tp := range a.TopicPartitions {
			ps := slices.Clone(tp.Partitions)
			slices.Sort(ps)
			out[tp.TopicName] = ps
		}
		return out
	}
	var out []consumerGroupMember
	for _, m := range g.Members {
		out = append(out, consumerGroupMember{id: m.MemberID, clientID: m.ClientID, epoch: m.MemberEpoch,
			assigned: names(m.Assignment), targeted: names(m.TargetAssignment)})
	}
	slices.SortFunc(out, func(a, b consumerGroupMember) int { return strings.Compare(a.id, b.id) })
	return g.GroupState, out
}

// waitConsumerGroup waits until the consumer-protocol group is stable with
// members members, each owning its target, that together own each of
// topic's partitions exactly once.
func waitConsumerGroup(t *testing.T, c *testcluster.Cluster, group, topic string, partitions int32, members int) []consumerGroupMember {
	t.Helper()
	var last []consumerGroupMember
	var lastState string
	require.Eventually(t, func() bool {
		state, ms := describeConsumerGroup(t, c, group)
		last, lastState = ms, state
		if state != "Stable" || len(ms) != members {
			return false
		}
		seen := map[int32]int{}
		for _, m := range ms {
			if !mapsEqual(m.assigned, m.targeted) {
				return false
			}
			for _, p := range m.assigned[topic] {
				seen[p]++
			}
		}
		for p := range partitions {
			if seen[p] != 1 {
				return false
			}
		}
		return len(seen) == int(partitions)
	}, 2*time.Minute, 200*time.Millisecond, "group %s never settled with %d members over %d partitions (last: %s %+v)", group, members, partitions, lastState, last)
	return last
}

// topicEnds returns each partition's end offset.
func topicEnds(t *testing.T, c *testcluster.Cluster, topic string) map[int32]int64 {
	t.Helper()
	ends, err := testcluster.TopicEnds(c.BrokerAddrs(), topic)
	require.NoError(t, err)
	out := map[int32]int64{}
	for p, e := range ends {
		out[int32(p)] = e
	}
	return out
}

func mapsEqual(a, b map[string][]int32) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// TestConsumerProtocolConsumesAndCommits: one member with
// group.protocol=consumer on Kafka 4.x joins a consumer-protocol group
// (the broker lists it, with this member owning every partition), reads
// every message, commits with OffsetCommit v9 as it goes (the broker
// refuses a consumer-protocol member's classic commits), and on Shutdown
// commits the end of every partition and leaves the group (epoch -1:
// the group is empty at once). A second member of the same group then
// resumes from those commits and reads only what came after.
func TestConsumerProtocolConsumesAndCommits(t *testing.T) {
	c := testcluster.SharedKRaft(t)
	topic := newTopic(t, c, 4, 200)
	group := testcluster.UniqueName("g-kip848")
	ctx := testCtx(t, 3*time.Minute)
	a := newConnector(t, consumerProtocolConfig(c, group))
	streams, err := a.CreateMessageStreams(ctx, map[string]int{topic: 2})
	require.NoError(t, err)
	col := newCollector()
	for i, s := range streams[topic] {
		col.read(ctx, "a"+string(rune('0'+i)), s)
	}
	col.waitAll(t, 0, 200, time.Minute)
	ms := waitConsumerGroup(t, c, group, topic, 4, 1)
	require.Equal(t, []int32{0, 1, 2, 3}, ms[0].assigned[topic])
	require.Positive(t, ms[0].epoch)

	// Automatic commits reach the coordinator while the member runs.
	ends := topicEnds(t, c, topic)
	require.Eventually(t, func() bool {
		got := kafkaCommitted(t, c, group, topic, 4)
		for p, end := range ends {
			if got[p] != end {
				return false
			}
		}
		return true
	}, 30*time.Second, 100*time.Millisecond, "automatic commits reach the coordinator")

	_, err = c.Produce(ctx, topic, 40, testcluster.ProduceOptions{Partition: -1, FirstSeq: 200})
	require.NoError(t, err)
	col.waitAll(t, 200, 40, time.Minute)
	start := time.Now()
	shutdown(t, a)
	require.Eventually(t, func() bool {
		state, ms := describeConsumerGroup(t, c, group)
		return state == "Empty" && len(ms) == 0
	}, 10*time.Second, 100*time.Millisecond, "Shutdown leaves the group at once")
	t.Logf("left the group %v after Shutdown began", time.Since(start))
	ends = topicEnds(t, c, topic)
	require.Equal(t, ends, kafkaCommitted(t, c, group, topic, 4), "Shutdown commits what was consumed")

	_, err = c.Produce(ctx, topic, 20, testcluster.ProduceOptions{Partition: -1, FirstSeq: 240})
	require.NoError(t, err)
	b := newConnector(t, consumerProtocolConfig(c, group))
	sb, err := b.CreateMessageStreams(ctx, map[string]int{topic: 1})
	require.NoError(t, err)
	colB := newCollector()
	colB.read(ctx, "b", sb[topic][0])
	rs := colB.waitAll(t, 240, 20, time.Minute)
	for _, r := range rs {
		require.GreaterOrEqual(t, r.Seq, 240, "the second member resumes from the first's commits")
	}
	shutdown(t, b)
}
