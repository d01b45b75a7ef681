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
	for name, cluster := range map[string]func(testing.TB) *testcluster.Cluster{"kafka39": testcluster.Shared, "kraft4": testcluster.SharedKRaft} {
		t.Run(name, func(t *testing.T) {
			c := cluster(t)
			ctx := testwait.Context(t, 3*time.Minute)
			topic, group := testcluster.UniqueName("cc-boot"), testcluster.UniqueName("cc-boot-g")
			require.NoError(t, c.CreateTopic(ctx, topic, 2, 1))
			_, err := c.Produce(ctx, topic, 20, testcluster.ProduceOptions{Partition: -1})
			require.NoError(t, err)
			bootstrap := strings.Join(c.BrokerAddrs(), ",")
			// --timeout-ms bounds each wait for a message, the first
			// included, which waits for the first fetch after the join (3 s
			// was missed once at load average 49).
			args := []string{"--bootstrap-server", bootstrap, "--topic", topic, "--group", group, "--timeout-ms", "10000",
				"--consumer-property", "session.timeout.ms=6000", "--consumer-property", "heartbeat.interval.ms=500"}

			r := runOurs(ctx, append(args, "--from-beginning")...)
			require.Equal(t, 0, r.code, r.stderr)
			require.Len(t, r.lines(), 20, r.stderr)

			_, err = c.Produce(ctx, topic, 5, testcluster.ProduceOptions{Partition: -1, FirstSeq: 20})
			require.NoError(t, err)
			r = runOurs(ctx, args...)
			require.Equal(t, 0, r.code, r.stderr)
			require.Len(t, r.lines(), 5, "resumes from its commits in Kafka: %s", r.stderr)

			_, err = c.Produce(ctx, topic, 3, testcluster.ProduceOptions{Partition: -1, FirstSeq: 25})
			require.NoError(t, err)
			java := testcluster.JavaConsoleConsume
			if c.KRaft() {
				java = testcluster.JavaConsoleConsume4
			}
			recs, err := java(ctx, c.BrokerAddrs()[0], topic, group, 5*time.Second, "--consumer-property", "auto.offset.reset=earliest")
			require.NoError(t, err)
			require.Len(t, recs, 3, "Kafka's Java consumer continues from our offsets")
		})
	}
}
