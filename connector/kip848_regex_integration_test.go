package connector

import (
	"bufio"
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/internal/topicfilter"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// javaRegexMember is testdata/RegexConsumer.java: a Kafka 4.x Java
// consumer subscribed with a SubscriptionPattern (the broker's regex).
type javaRegexMember struct {
	*javaMember
}

// startJavaRegexMember starts RegexConsumer.java in group with regex, the
// RE2/J regex the broker evaluates.
func startJavaRegexMember(t *testing.T, c *testcluster.Cluster, group, regex string) *javaRegexMember {
	t.Helper()
	root, err := testcluster.RepoRoot()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cmd, err := testcluster.ClientProgram(ctx, "4", filepath.Join(root, "connector", "testdata", "RegexConsumer.java"),
		strings.Join(c.BrokerAddrs(), ","), group, "java-"+group, regex)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	return &javaRegexMember{runJavaMember(t, cmd, cancel)}
}

// topicRecord is one record a member read: its topic and sequence number.
type topicRecord struct {
	topic string
	seq   int
}

// records parses the complete record lines printed so far.
func (j *javaRegexMember) records(t *testing.T) []topicRecord {
	text := j.out.String()
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = text[:i+1]
	} else {
		return nil
	}
	var out []topicRecord
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 5 || f[0] != "R" {
			continue // "assigned ...", "closed"
		}
		seq, err := strconv.Atoi(f[4])
		require.NoError(t, err, "line %q", sc.Text())
		out = append(out, topicRecord{f[1], seq})
	}
	return out
}

// stop ends the Java consumer with SIGTERM, on which it commits and
// leaves the group, and waits for it.
func (j *javaRegexMember) stop(t *testing.T) {
	t.Helper()
	_ = syscall.Kill(-j.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-j.waited:
	case <-time.After(time.Minute):
		t.Fatal("the Java consumer did not stop on SIGTERM")
	}
}

// TestConsumerProtocolTopicRegexWithJava shares one consumer-protocol group
// (Kafka 4.4, KRaft) between a zkconsumer member subscribed with
// CreateMessageStreamsByFilter and a Java 4.4 consumer subscribed with
// SubscriptionPattern to the regex zkconsumer sends (the whitelist's
// RE2/J translation): the broker evaluates the regex for both, shows it as
// each member's subscription, and spreads the partitions of the matching
// topics over the two; a matching topic created after both joined is
// assigned too; every message of the matching topics is read exactly once
// across the two members (hand-overs are orderly: commit, then give up),
// and no message of the topics the whitelist does not match is read.
func TestConsumerProtocolTopicRegexWithJava(t *testing.T) {
	t.Parallel()
	c := testcluster.SharedKRaft(t)
	ctx := testwait.Context(t, 5*time.Minute)
	prefix := testcluster.UniqueName("rx")
	in, also, out, late := prefix+"-in-a", prefix+"-also", prefix+"-out", prefix+"-in-late"
	// Kafka's whitelist syntax: ',' means '|'; the whole name must match.
	whitelist := prefix + "-in-.*, " + prefix + "-also"
	for topic, parts := range map[string]int32{in: 3, also: 2, out: 2} {
		require.NoError(t, c.CreateTopic(ctx, topic, parts, 1))
	}
	produce := func(topic string, n, first int) {
		t.Helper()
		_, err := c.Produce(ctx, topic, n, testcluster.ProduceOptions{Partition: -1, FirstSeq: first})
		require.NoError(t, err)
	}
	// Sequence numbers by topic: in 0-59, also 100-139, late 200-219, out 900-939.
	produce(in, 30, 0)
	produce(also, 20, 100)
	produce(out, 20, 900)

	f, err := topicfilter.New(zkutil.PatternWhitelist, whitelist)
	require.NoError(t, err)
	regex, err := f.BrokerRegex(true)
	require.NoError(t, err)
	t.Logf("whitelist %q is sent as %q", whitelist, regex)

	group := testcluster.UniqueName("g-kip848-rx")
	col := newCollector()
	a := newConnector(t, consumerProtocolConfig(c, group))
	streams, err := a.CreateMessageStreamsByFilter(ctx, Whitelist(whitelist), 2)
	require.NoError(t, err)
	for _, s := range streams {
		col.read(ctx, "zk", s)
	}
	j := startJavaRegexMember(t, c, group, regex)

	// settled waits until both members own their targets, each some
	// partitions, which together are every partition of want once.
	settled := func(want map[string]int32) []consumerGroupMember {
		t.Helper()
		var last []consumerGroupMember
		var lastState string
		require.Eventually(t, func() bool {
			state, ms := describeConsumerGroup(t, c, group)
			last, lastState = ms, state
			if state != "Stable" || len(ms) != 2 {
				return false
			}
			owned := map[string][]int32{}
			for _, m := range ms {
				if !mapsEqual(m.assigned, m.targeted) || len(m.assigned) == 0 {
					return false
				}
				for topic, ps := range m.assigned {
					owned[topic] = append(owned[topic], ps...)
				}
			}
			if len(owned) != len(want) {
				return false
			}
			for topic, n := range want {
				ps := owned[topic]
				slices.Sort(ps)
				if len(ps) != int(n) || len(slices.Compact(ps)) != int(n) {
					return false
				}
			}
			return true
		}, 2*time.Minute, 200*time.Millisecond, "group %s never settled over %v (last: %s %+v)", group, want, lastState, last)
		return last
	}
	ms := settled(map[string]int32{in: 3, also: 2})
	t.Logf("members: %+v", ms)

	// The broker holds each member's regex as its subscription.
	client, err := sarama.NewClient(c.BrokerAddrs(), c.ClientConfig())
	require.NoError(t, err)
	defer client.Close()
	coord, err := client.Coordinator(group)
	require.NoError(t, err)
	resp, err := coord.ConsumerGroupDescribe(&sarama.ConsumerGroupDescribeRequest{GroupIDs: []string{group}})
	require.NoError(t, err)
	require.Len(t, resp.Groups, 1)
	for _, m := range resp.Groups[0].Members {
		require.NotNil(t, m.SubscribedTopicRegex, "member %s", m.ClientID)
		require.Equal(t, regex, *m.SubscribedTopicRegex, "member %s", m.ClientID)
	}

	// A matching topic created now is assigned too.
	require.NoError(t, c.CreateTopic(ctx, late, 2, 1))
	produce(late, 20, 200)
	ms = settled(map[string]int32{in: 3, also: 2, late: 2})
	t.Logf("members after %s was created: %+v", late, ms)
	produce(in, 30, 30)
	produce(also, 20, 120)
	produce(out, 20, 920)

	wanted := map[int]bool{}
	for _, r := range [][2]int{{0, 60}, {100, 140}, {200, 220}} {
		for seq := r[0]; seq < r[1]; seq++ {
			wanted[seq] = true
		}
	}
	read := func() (map[int]int, map[string]bool) {
		seen, readers := map[int]int{}, map[string]bool{}
		for _, r := range col.snapshot() {
			seen[r.Seq]++
			readers["zk"] = true
		}
		for _, r := range j.records(t) {
			seen[r.seq]++
			readers["java"] = true
			require.NotEqual(t, out, r.topic, "Java read a topic the regex does not match (seq %d)", r.seq)
		}
		return seen, readers
	}
	var seen map[int]int
	var readers map[string]bool
	require.Eventually(t, func() bool {
		seen, readers = read()
		for seq := range wanted {
			if seen[seq] == 0 {
				return false
			}
		}
		return true
	}, 2*time.Minute, 100*time.Millisecond, "messages of the matching topics never read")
	time.Sleep(2 * time.Second) // let a duplicate or a stray record show
	seen, readers = read()
	require.True(t, readers["zk"] && readers["java"], "both members read: %v", readers)
	for _, seq := range slices.Sorted(maps.Keys(seen)) {
		require.True(t, wanted[seq], "message %d of a topic the whitelist does not match was read", seq)
		require.Equal(t, 1, seen[seq], "message %d read %d times", seq, seen[seq])
	}
	j.stop(t)
	shutdown(t, a)
}

// TestConsumerProtocolTopicRegexInternalTopics: the broker does not skip
// internal topics when it evaluates a regex. With
// exclude.internal.topics=false a whitelist naming __consumer_offsets is
// sent, and the broker assigns that topic's partitions to the member;
// with exclude.internal.topics=true (the default) the same whitelist is
// refused before joining, since nothing could keep the broker from
// assigning them.
func TestConsumerProtocolTopicRegexInternalTopics(t *testing.T) {
	t.Parallel()
	c := testcluster.SharedKRaft(t)
	ctx := testwait.Context(t, 2*time.Minute)
	group := testcluster.UniqueName("g-kip848-rx-internal")
	cfg := consumerProtocolConfig(c, group)
	refused := newConnector(t, cfg)
	_, err := refused.CreateMessageStreamsByFilter(ctx, Whitelist("__consumer_offsets"), 1)
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	require.Contains(t, ce.Reason, "internal topic __consumer_offsets")

	cfg.ExcludeInternalTopics = false
	a := newConnector(t, cfg)
	_, err = a.CreateMessageStreamsByFilter(ctx, Whitelist("__consumer_offsets"), 1)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(ownedOf(a, "__consumer_offsets")) > 0 }, time.Minute, 100*time.Millisecond,
		"the broker assigns the internal topic a regex matches")
	_, ms := describeConsumerGroup(t, c, group)
	require.Len(t, ms, 1)
	require.NotEmpty(t, ms[0].assigned["__consumer_offsets"])
	shutdown(t, a)
}
