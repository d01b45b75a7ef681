package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// These tests run this console consumer and Kafka 1.1.1's own
// kafka.tools.ConsoleConsumer --zookeeper with the same flags on the same
// data, each in a group of its own, and compare what they print.

// compare runs both consumers with args plus a fresh --group each and
// returns their results, failing unless both exit 0.
func compare(t *testing.T, c *testcluster.Cluster, args ...string) (ours, kafka result) {
	t.Helper()
	ctx := testwait.Context(t, 3*time.Minute)
	base := append([]string{"--zookeeper", c.ZKConnect()}, args...)
	ours = runOurs(ctx, append(base, "--group", testcluster.UniqueName("cc-ours"))...)
	require.Equal(t, 0, ours.code, "ours failed:\n%s", ours.stderr)
	kafka = runKafka(t, ctx, append(base, "--group", testcluster.UniqueName("cc-kafka"))...)
	require.Equal(t, 0, kafka.code, "Kafka 1.1.1 failed:\n%s", kafka.stderr)
	return ours, kafka
}

var processedRE = regexp.MustCompile(`Processed a total of (\d+) messages`)

// processed is the count a console consumer reported on stderr.
func processed(t *testing.T, r result) int {
	t.Helper()
	m := processedRE.FindStringSubmatch(r.stderr)
	require.NotNil(t, m, "no count on stderr:\n%s", r.stderr)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return n
}

func TestSamePartitionOutputAsKafka111(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, time.Minute)
	topic := testcluster.UniqueName("cc-one")
	require.NoError(t, c.CreateTopic(ctx, topic, 1, 1))
	_, err := c.Produce(ctx, topic, 40, testcluster.ProduceOptions{Partition: 0})
	require.NoError(t, err)
	produceRaw(t, c, topic, 0, nil, []byte("no key"))
	produceRaw(t, c, topic, 0, []byte("no value"), nil)
	_, err = c.Produce(ctx, topic, 10, testcluster.ProduceOptions{Partition: 0, FirstSeq: 40})
	require.NoError(t, err)
	const n = 52

	ours, kafka := compare(t, c, "--topic", topic, "--from-beginning",
		"--max-messages", strconv.Itoa(n), "--timeout-ms", "30000",
		"--property", "print.key=true", "--property", "print.timestamp=true",
		"--property", "key.separator=|")
	require.Equal(t, kafka.lines(), ours.lines(), "one partition: same lines in the same order")
	require.Len(t, ours.lines(), n)
	require.Equal(t, n, processed(t, ours))
	require.Equal(t, n, processed(t, kafka))

	lines := ours.lines()
	require.Regexp(t, `^CreateTime:\d{13}\|key-0\|seq=0;$`, lines[0])
	require.Regexp(t, `^CreateTime:\d{13}\|null\|no key$`, lines[40])
	require.Regexp(t, `^CreateTime:\d{13}\|no value\|null$`, lines[41])
	require.Regexp(t, `^CreateTime:\d{13}\|key-49\|seq=49;$`, lines[n-1])
	t.Logf("Kafka 1.1.1 and zkconsumer printed the same %d lines, e.g. %q", n, lines[0])
}

func TestSameOutputAsKafka111AcrossPartitions(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, time.Minute)
	topic := testcluster.UniqueName("cc-multi")
	require.NoError(t, c.CreateTopic(ctx, topic, 3, 1))
	produced, err := c.Produce(ctx, topic, 90, testcluster.ProduceOptions{Partition: -1})
	require.NoError(t, err)

	ours, kafka := compare(t, c, "--topic", topic, "--from-beginning",
		"--max-messages", "90", "--timeout-ms", "30000",
		"--property", "print.key=true", "--property", "print.value=false")
	require.Equal(t, sortedCopy(kafka.lines()), sortedCopy(ours.lines()), "same lines, partitions interleaved in any order")
	require.Len(t, ours.lines(), 90)

	// Within a partition, ours keeps the offset order.
	partitionOf := map[int]int32{}
	for p, seqs := range produced.Seqs {
		for _, s := range seqs {
			partitionOf[s] = p
		}
	}
	last := map[int32]int{}
	for _, l := range ours.lines() {
		seq, err := strconv.Atoi(strings.TrimPrefix(l, "key-"))
		require.NoError(t, err, "line %q", l)
		p := partitionOf[seq]
		if prev, ok := last[p]; ok {
			require.Greater(t, seq, prev, "partition %d out of order", p)
		}
		last[p] = seq
	}
}

func TestWhitelistLikeKafka111(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, time.Minute)
	base := testcluster.UniqueName("cc-wl")
	for i, suffix := range []string{"a", "b", "c"} {
		topic := base + "." + suffix
		require.NoError(t, c.CreateTopic(ctx, topic, 2, 1))
		_, err := c.Produce(ctx, topic, 20, testcluster.ProduceOptions{Partition: -1, FirstSeq: 100 * i})
		require.NoError(t, err)
	}
	// A comma is an alternative, as in Kafka's TopicFilter. No backslashes:
	// Kafka 1.1.1 escapes them twice in its registration, and its own
	// rebalance then reads back a regex that matches nothing. An
	// unescaped '.' matches itself too.
	whitelist := base + ".a," + base + ".b"
	ours, kafka := compare(t, c, "--whitelist", whitelist, "--from-beginning",
		"--max-messages", "40", "--timeout-ms", "30000")
	require.Equal(t, sortedCopy(kafka.lines()), sortedCopy(ours.lines()))
	for _, l := range ours.lines() {
		seq, err := testcluster.ParseSeq([]byte(l))
		require.NoError(t, err)
		require.Less(t, seq, 200, "topic .c is not whitelisted")
	}
	// Nothing more arrives: the third topic stays out. --timeout-ms also
	// bounds the wait for the first message, which starts before the first
	// fetch: 8 s leaves a JVM on a loaded machine time for it.
	ours, kafka = compare(t, c, "--whitelist", whitelist, "--from-beginning", "--timeout-ms", "8000")
	require.Len(t, ours.lines(), 40)
	require.Equal(t, sortedCopy(kafka.lines()), sortedCopy(ours.lines()))
}

// notStartingWith is a regex, valid in Java and Go, for every name that
// does not start with prefix, a topic name: blacklisting it admits exactly
// the topics that start with prefix, whatever other tests create on the
// cluster. Alternative i matches names that follow prefix up to i and then
// differ or end; it has no backslashes (see TestWhitelistLikeKafka111): in
// prefix[:i] a '.' matches any character, itself included, and in
// [^c] neither '.' nor a leading '-' is special.
func notStartingWith(prefix string) string {
	alts := make([]string, 0, len(prefix))
	for i := range len(prefix) {
		alts = append(alts, prefix[:i]+`(?:[^`+prefix[i:i+1]+`].*)?`)
	}
	return strings.Join(alts, "|")
}

func TestNotStartingWith(t *testing.T) {
	re := regexp.MustCompile(`^(?:` + notStartingWith("ab.c-") + `)$`)
	require.NotContains(t, notStartingWith("ab.c-"), `\`)
	for _, s := range []string{"x", "a", "ab", "ab.", "abxc-", "ab.c", "b", "ab.cd", "ab.c_"} {
		require.True(t, re.MatchString(s), s)
	}
	for _, s := range []string{"ab.c-", "ab.c-1", "ab.c-xyz"} {
		require.False(t, re.MatchString(s), s)
	}
}

func TestBlacklistLikeKafka111(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, time.Minute)
	prefix := testcluster.UniqueName("cc-bl") + "."
	for i, topic := range []string{prefix + "x", prefix + "y", testcluster.UniqueName("cc-bl-other")} {
		require.NoError(t, c.CreateTopic(ctx, topic, 2, 1))
		_, err := c.Produce(ctx, topic, 15, testcluster.ProduceOptions{Partition: -1, FirstSeq: 100 * i})
		require.NoError(t, err)
	}
	ours, kafka := compare(t, c, "--blacklist", notStartingWith(prefix), "--from-beginning",
		"--max-messages", "30", "--timeout-ms", "30000")
	require.Equal(t, sortedCopy(kafka.lines()), sortedCopy(ours.lines()))
	for _, l := range ours.lines() {
		seq, err := testcluster.ParseSeq([]byte(l))
		require.NoError(t, err)
		require.Less(t, seq, 200, "the other topic is blacklisted")
	}
}

func TestGroupContinuesAfterCommittedOffsetsLikeKafka111(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 3*time.Minute)
	zk := zkSession(t, ctx, c)
	topic := testcluster.UniqueName("cc-reuse")
	require.NoError(t, c.CreateTopic(ctx, topic, 1, 1))
	_, err := c.Produce(ctx, topic, 30, testcluster.ProduceOptions{Partition: 0})
	require.NoError(t, err)
	group := testcluster.UniqueName("cc-reuse")
	args := func(extra ...string) []string {
		return append([]string{"--zookeeper", c.ZKConnect(), "--topic", topic, "--group", group,
			"--max-messages", "10", "--timeout-ms", "30000"}, extra...)
	}
	seqs := func(r result) string {
		var out []string
		for _, l := range r.lines() {
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(l, "seq="), ";"))
		}
		return strings.Join(out, ",")
	}

	// zkconsumer, Kafka 1.1.1 and zkconsumer again take turns in one group;
	// each starts where the previous one committed.
	r := runOurs(ctx, args("--from-beginning")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "0,1,2,3,4,5,6,7,8,9", seqs(r))
	off, ok := committed(t, ctx, zk, group, topic, 0)
	require.True(t, ok)
	require.EqualValues(t, 10, off)

	r = runKafka(t, ctx, args()...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "10,11,12,13,14,15,16,17,18,19", seqs(r))

	r = runOurs(ctx, args()...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "20,21,22,23,24,25,26,27,28,29", seqs(r))
	off, _ = committed(t, ctx, zk, group, topic, 0)
	require.EqualValues(t, 30, off)

	// --from-beginning with a group that has offsets is refused by both.
	want := fmt.Sprintf("Found previous offset information for this group %s. Please use --delete-consumer-offsets to delete previous offsets metadata", group)
	r = runKafka(t, ctx, args("--from-beginning")...)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, want)
	r = runOurs(ctx, args("--from-beginning")...)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, want)
	require.Empty(t, r.stdout)

	// So is auto.offset.reset=smallest given as a property: Kafka 1.1.1
	// checks the flag (checkZk) and the property
	// (checkAndMaybeDeleteOldPath).
	r = runKafka(t, ctx, args("--consumer-property", "auto.offset.reset=smallest")...)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, want)
	r = runOurs(ctx, args("--consumer-property", "auto.offset.reset=smallest")...)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, want)

	// A member that commits nothing restarts with the same flags.
	fresh := testcluster.UniqueName("cc-restart")
	for range 2 {
		r = runOurs(ctx, "--zookeeper", c.ZKConnect(), "--topic", topic, "--group", fresh, "--from-beginning",
			"--consumer-property", "auto.commit.enable=false", "--max-messages", "2", "--timeout-ms", "30000")
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "0,1", seqs(r))
	}

	// --delete-consumer-offsets starts the group afresh.
	r = runOurs(ctx, append(args("--from-beginning", "--delete-consumer-offsets"), "--max-messages", "3")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "0,1,2", seqs(r))
	off, _ = committed(t, ctx, zk, group, topic, 0)
	require.EqualValues(t, 3, off)
}

func TestGeneratedGroupIsDeletedOnExitLikeKafka111(t *testing.T) {
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 3*time.Minute)
	zk := zkSession(t, ctx, c)
	topic := testcluster.UniqueName("cc-random")
	require.NoError(t, c.CreateTopic(ctx, topic, 2, 1))
	_, err := c.Produce(ctx, topic, 10, testcluster.ProduceOptions{Partition: -1})
	require.NoError(t, err)
	generated := func() map[string]bool {
		groups, err := zk.Children(ctx, "/consumers")
		require.NoError(t, err)
		out := map[string]bool{}
		for _, g := range groups {
			if strings.HasPrefix(g, "console-consumer-") {
				out[g] = true
			}
		}
		return out
	}
	before := generated()
	args := []string{"--zookeeper", c.ZKConnect(), "--topic", topic, "--from-beginning", "--max-messages", "10", "--timeout-ms", "30000"}

	kafka := runKafka(t, ctx, args...)
	require.Equal(t, 0, kafka.code, kafka.stderr)
	ours := runOurs(ctx, args...)
	require.Equal(t, 0, ours.code, ours.stderr)
	require.Equal(t, sortedCopy(kafka.lines()), sortedCopy(ours.lines()))
	require.Equal(t, before, generated(), "neither leaves its generated group in ZooKeeper")
}

func TestCommandLineMistakesLikeKafka111(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	zk := []string{"--zookeeper", c.ZKConnect()}
	for _, tc := range []struct {
		name string
		args []string
		want string // on both stderrs; "" when only the exit status matches
	}{
		{name: "topic and whitelist", args: []string{"--topic", "t", "--whitelist", "t.*"},
			want: "Exactly one of whitelist/blacklist/topic is required."},
		{name: "no topic", want: "Exactly one of whitelist/blacklist/topic is required."},
		{name: "two = in a property", args: []string{"--topic", "t", "--consumer-property", "a=b=c"},
			want: "Invalid command line properties: a=b=c"},
		{name: "group ids disagree", args: []string{"--topic", "t", "--group", "a", "--consumer-property", "group.id=b"},
			want: "The group ids provided in different places (directly using '--group', via '--consumer-property', or via '--consumer.config') do not match. Detected group ids: 'a', 'b'"},
		{name: "from-beginning and largest", args: []string{"--topic", "t", "--from-beginning", "--consumer-property", "auto.offset.reset=largest"},
			want: "Can't simultaneously specify --from-beginning and 'auto.offset.reset=largest', please remove one option"},
		{name: "new consumer's reset value", args: []string{"--topic", "t", "--consumer-property", "auto.offset.reset=earliest"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // a table of JVM starts, each case on its own
			ctx := testwait.Context(t, 3*time.Minute)
			args := append(append([]string{}, zk...), tc.args...)
			kafka := runKafka(t, ctx, args...)
			ours := runOurs(ctx, args...)
			require.Equal(t, 1, kafka.code, "Kafka:\n%s", kafka.stderr)
			require.Equal(t, 1, ours.code, "ours:\n%s", ours.stderr)
			require.Empty(t, kafka.stdout)
			require.Empty(t, ours.stdout)
			require.Contains(t, kafka.stderr, tc.want)
			require.Contains(t, ours.stderr, tc.want)
		})
	}
}

func TestTopicIsARegexLikeKafka111(t *testing.T) {
	t.Parallel()
	// Kafka's old console consumer subscribes to --topic as a whitelist.
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, time.Minute)
	base := testcluster.UniqueName("cc-topicre")
	for i, topic := range []string{base + "-x1", base + "-x2"} {
		require.NoError(t, c.CreateTopic(ctx, topic, 1, 1))
		_, err := c.Produce(ctx, topic, 5, testcluster.ProduceOptions{Partition: 0, FirstSeq: 100 * i})
		require.NoError(t, err)
	}
	ours, kafka := compare(t, c, "--topic", base+"-x.", "--from-beginning", "--max-messages", "10", "--timeout-ms", "30000")
	require.Len(t, ours.lines(), 10)
	require.Equal(t, sortedCopy(kafka.lines()), sortedCopy(ours.lines()))
}
