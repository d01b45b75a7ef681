package main

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// These tests run both console consumers with the flags Kafka 1.1.1 has
// beyond the basic ones, several flags per run to keep the JVM starts few,
// and compare stdout byte for byte, exit statuses and Kafka's messages on
// stderr.

const deprecation = "Using the ConsoleConsumer with old consumer is deprecated and will be removed in a future major release. Consider using the new consumer by passing [bootstrap-server] instead of [zookeeper]."

func be64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
func be16(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }
func f64(v float64) []byte { return be64(math.Float64bits(v)) }
func f32(v float32) []byte { return be32(math.Float32bits(v)) }

// compareRun runs both consumers with args plus a fresh --group each and
// returns their results, whatever their exit status.
func compareRun(t *testing.T, c *testcluster.Cluster, args ...string) (ours, kafka result) {
	t.Helper()
	ctx := testwait.Context(t, 3*time.Minute)
	base := append([]string{"--zookeeper", c.ZKConnect()}, args...)
	ours = runOurs(ctx, append(base, "--group", testcluster.UniqueName("cc-ours"))...)
	kafka = runKafka(t, ctx, append(base, "--group", testcluster.UniqueName("cc-kafka"))...)
	return ours, kafka
}

// longDoubleTopic makes a topic of Long keys and Double values, with some
// that those deserializers cannot read.
func longDoubleTopic(t *testing.T, c *testcluster.Cluster) (topic string, n int) {
	t.Helper()
	ctx := testwait.Context(t, time.Minute)
	topic = testcluster.UniqueName("cc-longdouble")
	require.NoError(t, c.CreateTopic(ctx, topic, 1, 1))
	kvs := []keyValue{
		{be64(42), f64(3.25)},
		{be64(math.MaxUint64), f64(1e10)},
		{be64(math.MaxInt64), f64(math.NaN())},
		{nil, f64(0.001)},               // the key is read as "null": 4 bytes
		{[]byte{1, 2, 3, 4}, f64(-0.0)}, // a key of 4 bytes
		{be64(7), []byte{1, 2, 3, 4}},   // a value of 4 bytes: key printed, then the error
		{be64(8), nil},                  // the value is read as "null"
		{be64(9), f64(123456789)},
		{be64(10), f64(1e-4)},
		{be64(11), f64(1234567)},
		{be64(12), f64(math.Inf(-1))},
		{be64(13), f64(math.Nextafter(0.3, 1))}, // 0.30000000000000004
		{be64(14), f64(-2.5e-300)},
		{be64(15), f64(1e7)},
	}
	produceAll(t, c, topic, 0, kvs)
	return topic, len(kvs)
}

func TestDeserializersSkipTimeoutAndSystestEventsLikeKafka111(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic, n := longDoubleTopic(t, c)

	// LoggingMessageFormatter prints as DefaultMessageFormatter does, with
	// the deserializers; --skip-message-on-error reports the messages they
	// cannot read and goes on, leaving what was printed before the error;
	// the run ends by --timeout-ms, with Kafka's message; systest events
	// add shutdown_complete at the very end. --timeout-ms also bounds the
	// wait for the first message, which starts before the first fetch: 6 s
	// leaves a JVM on a loaded machine time for it.
	ours, kafka := compareRun(t, c, "--topic", topic, "--from-beginning", "--timeout-ms", "6000",
		"--formatter", "kafka.tools.LoggingMessageFormatter",
		"--key-deserializer", "org.apache.kafka.common.serialization.LongDeserializer",
		"--property", "value.deserializer=org.apache.kafka.common.serialization.DoubleDeserializer",
		"--property", "print.key=true", "--property", "print.timestamp=true",
		"--skip-message-on-error", "--enable-systest-events")
	require.Equal(t, 0, kafka.code, kafka.stderr)
	require.Equal(t, 0, ours.code, ours.stderr)
	require.Equal(t, kafka.stdout, ours.stdout)
	require.True(t, strings.HasSuffix(ours.stdout, "\nshutdown_complete\n"))
	require.Contains(t, ours.stdout, "\t42\t3.25\n")
	require.Contains(t, ours.stdout, "\t7\tCreateTime:", "the partial line stays, as in Kafka")
	require.Equal(t, n, processed(t, kafka))
	require.Equal(t, n, processed(t, ours))
	for _, r := range []result{ours, kafka} {
		require.Contains(t, r.stderr, deprecation)
		require.Equal(t, 4, strings.Count(r.stderr, "ERROR Error processing message, skipping this message: "), r.stderr)
		require.Contains(t, r.stderr, "Size of data received by LongDeserializer is not 8")
		require.Contains(t, r.stderr, "Size of data received by Deserializer is not 8")
		require.Contains(t, r.stderr, "ERROR Error processing message, terminating consumer process:  (kafka.tools.ConsoleConsumer$)\nkafka.consumer.ConsumerTimeoutException")
	}

	// Without --skip-message-on-error, the first such message ends the
	// program with status 1, after the count.
	ours, kafka = compareRun(t, c, "--topic", topic, "--from-beginning", "--timeout-ms", "30000",
		"--key-deserializer", "org.apache.kafka.common.serialization.LongDeserializer",
		"--property", "print.key=true")
	require.Equal(t, 1, kafka.code, kafka.stderr)
	require.Equal(t, 1, ours.code, ours.stderr)
	require.Equal(t, kafka.stdout, ours.stdout)
	require.Equal(t, 4, processed(t, kafka))
	require.Equal(t, 4, processed(t, ours))
	for _, r := range []result{ours, kafka} {
		i := strings.Index(r.stderr, "Processed a total of 4 messages")
		j := strings.Index(r.stderr, "ERROR Unknown error when running consumer: ")
		require.True(t, i >= 0 && j > i, "the error comes after the count:\n%s", r.stderr)
	}
}

func TestChecksumAndNoOpFormattersAndCSVMetricsLikeKafka111(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic, n := longDoubleTopic(t, c)

	ours, kafka := compareRun(t, c, "--topic", topic, "--from-beginning", "--max-messages", "14", "--timeout-ms", "30000",
		"--formatter", "kafka.tools.ChecksumMessageFormatter", "--property", "topic=ck",
		// Checksums need no deserializers; Kafka does not even load them.
		"--property", "key.deserializer=no.such.Class")
	require.Equal(t, 0, kafka.code, kafka.stderr)
	require.Equal(t, 0, ours.code, ours.stderr)
	require.Equal(t, kafka.stdout, ours.stdout)
	require.Len(t, ours.lines(), n)
	require.Regexp(t, `^ck:checksum:\d+$`, ours.lines()[0])

	// NoOpMessageFormatter prints nothing. The CSV reporter writes a file
	// per metric every 5 s, with Yammer's columns.
	oursDir, kafkaDir := filepath.Join(t.TempDir(), "ours"), filepath.Join(t.TempDir(), "kafka")
	ctx := testwait.Context(t, 2*time.Minute)
	args := []string{"--zookeeper", c.ZKConnect(), "--topic", topic, "--from-beginning", "--timeout-ms", "6000",
		"--formatter", "kafka.tools.NoOpMessageFormatter", "--csv-reporter-enabled"}
	ours = runOurs(ctx, append(args, "--metrics-dir", oursDir)...)
	kafka = runKafka(t, ctx, append(args, "--metrics-dir", kafkaDir)...)
	require.Equal(t, 0, kafka.code, kafka.stderr)
	require.Equal(t, 0, ours.code, ours.stderr)
	require.Empty(t, kafka.stdout)
	require.Empty(t, ours.stdout)
	require.Equal(t, n, processed(t, ours))
	// Kafka writes some of its files only: Yammer names each file after
	// the metric alone, and the first name that two metrics share stops
	// that report. Of the metrics both have, each file Kafka wrote has the
	// same columns in ours.
	compared := 0
	for _, name := range []string{"OwnedPartitionsCount", "RebalanceRateAndTime", "BytesPerSec", "MessagesPerSec",
		"ConsumerLag", "MaxLag", "MinFetchRate", "KafkaCommitsPerSec", "ZooKeeperCommitsPerSec",
		"FetchRequestRateAndTimeMs", "FetchResponseSize"} {
		k, err := os.ReadFile(filepath.Join(kafkaDir, name+".csv"))
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		if name == "ConsumerLag" {
			name = "ConsumerLag." + topic + ".0" // one file per partition
		}
		o, err := os.ReadFile(filepath.Join(oursDir, name+".csv"))
		require.NoError(t, err, "Kafka wrote %s", name)
		kl, ol := splitLines(string(k)), splitLines(string(o))
		require.Equal(t, kl[0], ol[0], "%s: same columns", name)
		require.Regexp(t, `^5,`, ol[1], "%s: a line after 5 s", name)
		if name == "OwnedPartitionsCount" {
			// The topic's one partition or none: a consumer owns none
			// before its first rebalance ends or after it has stopped,
			// and on a busy machine Kafka's JVM was still joining at 5 s
			// (or wrote its first line only after its consumer stopped)
			// while ours owned the partition.
			require.Regexp(t, `^5,[01]$`, ol[1], "%s: ours", name)
			require.Regexp(t, `^\d+,[01]$`, kl[1], "%s: Kafka's", name)
		}
		compared++
	}
	require.NotZero(t, compared)
	for _, name := range []string{"MessagesPerSec.csv", "BytesPerSec.csv", "OwnedPartitionsCount.csv", "RebalanceRateAndTime.csv",
		"FetchRequestRateAndTimeMs.csv", "ConsumerLag." + topic + ".0.csv", "MaxLag.csv", "MinFetchRate.csv"} {
		_, err := os.Stat(filepath.Join(oursDir, name))
		require.NoError(t, err)
	}
}

func TestMoreDeserializersAndIsolationLevelLikeKafka111(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, time.Minute)
	ints := testcluster.UniqueName("cc-intfloat")
	require.NoError(t, c.CreateTopic(ctx, ints, 1, 1))
	produceAll(t, c, ints, 0, []keyValue{
		{be32(1), f32(1.5)}, {be32(math.MaxUint32 - 6), f32(1e-5)}, {be32(math.MaxInt32), f32(math.MaxFloat32)},
		{be32(0), f32(0.1)}, {be32(5), f32(16777216)}, {be32(6), f32(1e7)}, {be32(7), f32(0.001)},
	})
	// --isolation-level: Kafka's old consumer ignores it; on data without
	// transactions both levels print the same.
	ours, kafka := compareRun(t, c, "--topic", ints, "--from-beginning", "--max-messages", "7", "--timeout-ms", "30000",
		"--key-deserializer", "org.apache.kafka.common.serialization.IntegerDeserializer",
		"--value-deserializer", "org.apache.kafka.common.serialization.FloatDeserializer",
		"--property", "print.key=true", "--isolation-level", "read_committed")
	require.Equal(t, 0, kafka.code, kafka.stderr)
	require.Equal(t, 0, ours.code, ours.stderr)
	require.Equal(t, kafka.stdout, ours.stdout)
	require.Contains(t, ours.stdout, "-7\t1.0E-5\n")

	texts := testcluster.UniqueName("cc-shortstring")
	require.NoError(t, c.CreateTopic(ctx, texts, 1, 1))
	produceAll(t, c, texts, 0, []keyValue{
		{be16(math.MaxUint16 - 1), []byte("héllo \\ wörld")},
		{be16(300), []byte{0xE2, 0x82, 'x'}},     // a truncated sequence
		{be16(1), []byte{0xED, 0xA0, 0x80}},      // a surrogate
		{be16(2), []byte{'a', 0xF0, 0x9F, 0x98}}, // truncated at the end
		{be16(3), []byte{0xC0, 0xAF, 0xFF, 0x80}},
		{be16(4), nil},
	})
	ours, kafka = compareRun(t, c, "--topic", texts, "--from-beginning", "--max-messages", "6", "--timeout-ms", "30000",
		"--key-deserializer", "org.apache.kafka.common.serialization.ShortDeserializer",
		"--value-deserializer", "org.apache.kafka.common.serialization.StringDeserializer",
		"--property", "print.key=true", "--isolation-level", "read_uncommitted")
	require.Equal(t, 0, kafka.code, kafka.stderr)
	require.Equal(t, 0, ours.code, ours.stderr)
	require.Equal(t, kafka.stdout, ours.stdout)
	require.Contains(t, ours.stdout, "-2\théllo \\ wörld\n")

	ours, kafka = compareRun(t, c, "--topic", texts, "--from-beginning", "--max-messages", "6", "--timeout-ms", "30000",
		"--property", "key.deserializer=org.apache.kafka.common.serialization.ByteBufferDeserializer",
		"--property", "value.deserializer=org.apache.kafka.common.serialization.BytesDeserializer",
		"--property", "print.key=true")
	require.Equal(t, 0, kafka.code, kafka.stderr)
	require.Equal(t, 0, ours.code, ours.stderr)
	require.Equal(t, kafka.stdout, ours.stdout)
	require.Contains(t, ours.stdout, "java.nio.HeapByteBuffer[pos=0 lim=2 cap=2]\th\\xC3\\xA9llo \\x5C w\\xC3\\xB6rld\n")
}

func TestKafkasRefusalsLikeKafka111(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	zk := c.ZKConnect()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{name: "bootstrap-server with zookeeper", args: []string{"--zookeeper", zk, "--topic", "t", "--bootstrap-server", "127.0.0.1:1"},
			want: "Option [bootstrap-server] is not valid with [zookeeper]."},
		{name: "new-consumer with zookeeper", args: []string{"--zookeeper", zk, "--topic", "t", "--new-consumer"},
			want: "Option [new-consumer] is not valid with [zookeeper]."},
		{name: "partition", args: []string{"--zookeeper", zk, "--topic", "t", "--partition", "0"},
			want: "Partition-offset based consumption is supported in the new consumer only."},
		{name: "offset", args: []string{"--zookeeper", zk, "--topic", "t", "--offset", "earliest"},
			want: "Partition-offset based consumption is supported in the new consumer only."},
		{name: "unknown formatter", args: []string{"--zookeeper", zk, "--topic", "t", "--formatter", "com.example.Fmt"},
			want: "java.lang.ClassNotFoundException: com.example.Fmt"},
		{name: "unknown deserializer", args: []string{"--zookeeper", zk, "--topic", "t", "--value-deserializer", "com.example.Des"},
			want: "java.lang.ClassNotFoundException: com.example.Des"},
		{name: "invalid regex", args: []string{"--zookeeper", zk, "--whitelist", "(unclosed"},
			want: "(unclosed is an invalid regex."},
		{name: "no arguments", want: "The console consumer is a tool that reads data from Kafka and outputs it to standard output."},
		{name: "new consumer without bootstrap-server", args: []string{"--topic", "t"},
			want: `Missing required argument "[bootstrap-server]"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // a table of JVM starts, each case on its own
			ctx := testwait.Context(t, 3*time.Minute)
			kafka := runKafka(t, ctx, tc.args...)
			ours := runOurs(ctx, tc.args...)
			require.Equal(t, 1, kafka.code, "Kafka:\n%s", kafka.stderr)
			require.Equal(t, 1, ours.code, "ours:\n%s", ours.stderr)
			require.Empty(t, kafka.stdout)
			require.Empty(t, ours.stdout)
			require.Contains(t, kafka.stderr, tc.want)
			require.Contains(t, ours.stderr, tc.want)
		})
	}
}
