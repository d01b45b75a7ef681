package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestBootstrapServerRunsKafkaCoordinated: with --bootstrap-server and no
// --zookeeper, as Kafka's new consumer, the console consumer is a member of
// a group coordinated by Kafka, on Kafka 3.9 and on Kafka 4.x in KRaft
// mode: it reads the topic, commits to Kafka, resumes there on the next
// run, and Kafka's own Java console consumer continues from its offsets.
func TestBootstrapServerRunsKafkaCoordinated(t *testing.T) {
	t.Parallel()
	for name, cluster := range map[string]func(testing.TB) *testcluster.Cluster{"kafka39": testcluster.Shared, "kraft4": testcluster.SharedKRaft} {
		t.Run(name, func(t *testing.T) {
			// Two shared clusters, a topic and a group of its own each.
			t.Parallel()
			c := cluster(t)
			ctx := testwait.Context(t, 3*time.Minute)
			topic, group := testcluster.UniqueName("cc-boot"), testcluster.UniqueName("cc-boot-g")
			require.NoError(t, c.CreateTopic(ctx, topic, 2, 1))
			_, err := c.Produce(ctx, topic, 20, testcluster.ProduceOptions{Partition: -1})
			require.NoError(t, err)
			bootstrap := strings.Join(c.BrokerAddrs(), ",")
			// Each run ends at --max-messages, as soon as it has printed
			// what it is to print, and commits it on the way out;
			// --timeout-ms only bounds a wait for a message that does not
			// come, the first included, which waits for the first fetch
			// after the join (3 s was missed once at load average 49).
			args := []string{"--bootstrap-server", bootstrap, "--topic", topic, "--group", group, "--timeout-ms", "30000",
				"--consumer-property", "session.timeout.ms=6000", "--consumer-property", "heartbeat.interval.ms=500"}

			r := runOurs(ctx, append(args, "--from-beginning", "--max-messages", "20")...)
			require.Equal(t, 0, r.code, r.stderr)
			require.Equal(t, seqLines(0, 20), sortedCopy(r.lines()), r.stderr)

			// The messages produced since, and only those: round-robin puts
			// some in each partition, and a partition is read in offset
			// order, so a partition that started anywhere but at its
			// committed offset would print an older message among them.
			more, err := c.Produce(ctx, topic, 5, testcluster.ProduceOptions{Partition: -1, FirstSeq: 20})
			require.NoError(t, err)
			require.Len(t, more.Seqs, 2, "new messages in both partitions")
			r = runOurs(ctx, append(args, "--max-messages", "5")...)
			require.Equal(t, 0, r.code, r.stderr)
			require.Equal(t, seqLines(20, 5), sortedCopy(r.lines()), "resumes from its commits in Kafka: %s", r.stderr)

			more, err = c.Produce(ctx, topic, 3, testcluster.ProduceOptions{Partition: -1, FirstSeq: 25})
			require.NoError(t, err)
			require.Len(t, more.Seqs, 2, "new messages in both partitions")
			java := testcluster.JavaConsoleConsume
			if c.KRaft() {
				java = testcluster.JavaConsoleConsume4
			}
			// The same proof for Kafka's consumer: it stops after the three
			// new messages, which are the ones it prints.
			recs, err := java(ctx, c.BrokerAddrs()[0], topic, group, 5*time.Second,
				"--consumer-property", "auto.offset.reset=earliest", "--max-messages", "3")
			require.NoError(t, err)
			var values []string
			for _, rec := range recs {
				values = append(values, rec.Value)
			}
			require.Equal(t, seqLines(25, 3), sortedCopy(values), "Kafka's Java consumer continues from our offsets")
		})
	}
}

// seqLines returns the values testcluster.Produce writes for sequence
// numbers first..first+n-1, sorted as strings.
func seqLines(first, n int) []string {
	out := make([]string, 0, n)
	for i := first; i < first+n; i++ {
		out = append(out, string(testcluster.MessageValue(i, 0)))
	}
	return sortedCopy(out)
}
