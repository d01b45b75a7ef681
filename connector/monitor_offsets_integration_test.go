package connector

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/javastr"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestKafkaToolsReadKafkaStoredOffsets: offsets zkconsumer stores in
// Kafka, with offsets.storage=kafka in ZooKeeper mode and in Kafka mode,
// are where and in the form that monitors of Kafka-stored offsets read
// them, as Kafka 3.9's own tools show: kafka-consumer-groups.sh --list
// lists the group and --describe gives each partition's committed offset
// and its lag (what kafka_exporter reads with ListGroups and OffsetFetch),
// and the group's partition of __consumer_offsets holds an offset-commit
// record of each committed offset, decoded by Kafka's
// OffsetsMessageFormatter (the records Burrow's Kafka module reads).
func TestKafkaToolsReadKafkaStoredOffsets(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	for _, mode := range []string{"zookeeper-offsets.storage=kafka", "kafka"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel() // its own topic and group
			// Three JVM tools run one after the other: at load average
			// 21 they took more than five minutes.
			ctx := testwait.Context(t, 10*time.Minute)
			topic := newTopic(t, c, 2, 100)
			group := testcluster.UniqueName("g-monitor")
			var cfg Config
			if mode == "kafka" {
				cfg = kafkaConfig(c, group)
			} else {
				cfg = testConfig(c, group)
				cfg.OffsetsStorage = OffsetsStorageKafka
			}
			cfg.AutoCommitEnable = false
			consumeAndCommit(t, ctx, newConnector(t, cfg), topic, 60)
			committed := kafkaCommitted(t, c, group, topic, 2)
			require.Equal(t, int64(60), committed[0]+committed[1], "committed offsets %v", committed)

			list, err := kafka39GroupTool(ctx, c, "--list")
			require.NoError(t, err)
			require.Contains(t, strings.Fields(list), group, "kafka-consumer-groups.sh --list")

			out, err := kafka39GroupTool(ctx, c, "--describe", "--group", group)
			require.NoError(t, err)
			t.Logf("kafka-consumer-groups.sh --describe:\n%s", out)
			rows := describeRows(out, topic)
			require.Len(t, rows, 2, "a row per partition in:\n%s", out)
			for p, row := range rows {
				require.Equal(t, strconv.FormatInt(committed[p], 10), row["CURRENT-OFFSET"], "current offset of partition %d", p)
				end, err := strconv.ParseInt(row["LOG-END-OFFSET"], 10, 64)
				require.NoError(t, err)
				require.Equal(t, strconv.FormatInt(end-committed[p], 10), row["LAG"], "lag of partition %d", p)
			}

			records := offsetCommitRecords(t, ctx, c, group, topic)
			for p := range int32(2) {
				require.Equal(t, committed[p], records[p], "the last offset-commit record of partition %d in __consumer_offsets (all: %v)", p, records)
			}
		})
	}
}

// kafka39GroupTool runs Kafka 3.9's kafka-consumer-groups.sh against c.
func kafka39GroupTool(ctx context.Context, c *testcluster.Cluster, args ...string) (string, error) {
	return testcluster.RunTool(ctx, "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
		append([]string{"--bootstrap-server", strings.Join(c.BrokerAddrs(), ","), "--timeout", "60000"}, args...)...)
}

// describeRows returns the rows of topic in a --describe table, by
// partition, each a map from column header to value.
func describeRows(out, topic string) map[int32]map[string]string {
	rows := map[int32]map[string]string{}
	var header []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && f[0] == "GROUP" {
			header = f
			continue
		}
		if header == nil || len(f) < len(header) {
			continue
		}
		row := map[string]string{}
		for i, h := range header {
			row[h] = f[i]
		}
		if row["TOPIC"] != topic {
			continue
		}
		p, err := strconv.ParseInt(row["PARTITION"], 10, 32)
		if err != nil {
			continue
		}
		rows[int32(p)] = row
	}
	return rows
}

// offsetCommitRecords reads the partition of __consumer_offsets that holds
// group's commits with Kafka 3.9's console consumer and
// OffsetsMessageFormatter, and returns the offset of the last commit
// record of each partition of topic.
func offsetCommitRecords(t *testing.T, ctx context.Context, c *testcluster.Cluster, group, topic string) map[int32]int64 {
	t.Helper()
	client, err := sarama.NewClient(c.BrokerAddrs(), c.ClientConfig())
	require.NoError(t, err)
	parts, err := client.Partitions("__consumer_offsets")
	require.NoError(t, client.Close())
	require.NoError(t, err)
	// Kafka's GroupMetadataManager.partitionFor: Utils.abs(hashCode) % count,
	// where Utils.abs is Math.abs with Integer.MIN_VALUE mapped to 0 (not
	// n & 0x7fffffff: the two differ for every negative hash, and the test
	// then read another group's partition whenever its random name hashed
	// negative).
	h := javastr.Hash(group)
	switch {
	case h == math.MinInt32:
		h = 0
	case h < 0:
		h = -h
	}
	partition := h % int32(len(parts))
	out, err := testcluster.RunTool(ctx, "org.apache.kafka.tools.consumer.ConsoleConsumer",
		"--bootstrap-server", strings.Join(c.BrokerAddrs(), ","),
		"--topic", "__consumer_offsets", "--partition", strconv.Itoa(int(partition)), "--offset", "earliest",
		"--formatter", "org.apache.kafka.tools.consumer.OffsetsMessageFormatter",
		// It stops once no record came for this long: the whole partition
		// has been read by then (60 s cost a minute of every run).
		"--timeout-ms", "20000")
	require.NoError(t, err)
	type record struct {
		Key struct {
			Data struct {
				Group     string `json:"group"`
				Topic     string `json:"topic"`
				Partition int32  `json:"partition"`
			} `json:"data"`
		} `json:"key"`
		Value json.RawMessage `json:"value"`
	}
	type value struct {
		Data struct {
			Offset *int64 `json:"offset"`
		} `json:"data"`
	}
	// Kafka 3.9 prints the records without a newline between them (the
	// formatter writes none), so they are read as a stream of JSON values.
	last := map[int32]int64{}
	dec := json.NewDecoder(strings.NewReader(out))
	for {
		var r record
		if err := dec.Decode(&r); err == io.EOF {
			break
		} else {
			require.NoError(t, err, "OffsetsMessageFormatter's output:\n%s", out)
		}
		if r.Key.Data.Group != group || r.Key.Data.Topic != topic {
			continue
		}
		var v value
		require.NoError(t, json.Unmarshal(r.Value, &v), "value %s", r.Value)
		require.NotNil(t, v.Data.Offset, "no offset in %s", r.Value)
		last[r.Key.Data.Partition] = *v.Data.Offset
	}
	if len(last) == 0 {
		t.Logf("__consumer_offsets partition %d, as OffsetsMessageFormatter prints it:\n%s", partition, out)
	}
	return last
}
