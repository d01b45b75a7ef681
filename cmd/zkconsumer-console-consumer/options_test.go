package main

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/connector"
)

func TestParseKeyValueArgsSplitsLikeKafka111(t *testing.T) {
	// Kafka 1.1.1's CommandLineUtils.parseKeyValueArgs uses Java's
	// String.split("="), which drops trailing empty strings.
	for _, tc := range []struct {
		arg     string
		want    map[string]string
		invalid bool
	}{
		{arg: "a=b", want: map[string]string{"a": "b"}},
		{arg: "a", want: map[string]string{"a": ""}},
		{arg: "a=", want: map[string]string{"a": ""}},
		{arg: "a==", want: map[string]string{"a": ""}},
		{arg: "=b", want: map[string]string{"": "b"}},
		{arg: "", want: map[string]string{"": ""}},
		{arg: "=", want: map[string]string{}},
		{arg: "a=b=", want: map[string]string{"a": "b"}},
		{arg: "key.separator=|", want: map[string]string{"key.separator": "|"}},
		{arg: "a=b=c", invalid: true},
		{arg: "a==b", invalid: true},
	} {
		got, err := parseKeyValueArgs([]string{tc.arg})
		if tc.invalid {
			require.EqualError(t, err, "Invalid command line properties: "+tc.arg, "arg %q", tc.arg)
			continue
		}
		require.NoError(t, err, "arg %q", tc.arg)
		require.Equal(t, tc.want, got, "arg %q", tc.arg)
	}
}

func TestRandomGroupIDLooksLikeKafkas(t *testing.T) {
	re := regexp.MustCompile(`^console-consumer-(0|[1-9][0-9]{0,4})$`)
	for range 1000 {
		g := randomGroupID()
		require.Regexp(t, re, g)
	}
}

func TestParseOptions(t *testing.T) {
	parse := func(args ...string) (*options, error) {
		return parseOptions(newFlagSet(io.Discard), args, io.Discard)
	}
	o, err := parse("--zookeeper", "zk:2181/kafka", "--topic", "orders")
	require.NoError(t, err)
	require.False(t, o.groupPassed)
	require.Regexp(t, `^console-consumer-\d+$`, o.groupID)
	require.Equal(t, map[string]string{
		"group.id":          o.groupID,
		"zookeeper.connect": "zk:2181/kafka",
		"auto.offset.reset": "largest",
		recycleKey:          "true",
	}, o.props)
	require.Equal(t, -1, o.maxMessages)

	o, err = parse("--zookeeper", "zk", "--whitelist", "a|b", "--from-beginning", "--timeout-ms", "0",
		"--consumer-property", "group.id=g", "--group", "g", "--max-messages", "3")
	require.NoError(t, err)
	require.True(t, o.groupPassed)
	require.Equal(t, "smallest", o.props["auto.offset.reset"])
	require.Equal(t, "0", o.props["consumer.timeout.ms"])
	require.Equal(t, 3, o.maxMessages)

	// --zookeeper and --timeout-ms win over the properties.
	o, err = parse("--zookeeper", "zk", "--topic", "t", "--timeout-ms", "5",
		"--consumer-property", "zookeeper.connect=other", "--consumer-property", "consumer.timeout.ms=7",
		"--consumer-property", "auto.offset.reset=smallest", "--from-beginning")
	require.NoError(t, err)
	require.Equal(t, "zk", o.props["zookeeper.connect"])
	require.Equal(t, "5", o.props["consumer.timeout.ms"])
	require.Equal(t, "smallest", o.props["auto.offset.reset"])
}

// The console consumer recycles messages unless a property says
// otherwise, in both modes.
func TestConsoleRecyclesMessagesUnlessTold(t *testing.T) {
	parse := func(args ...string) *options {
		o, err := parseOptions(newFlagSet(io.Discard), args, io.Discard)
		require.NoError(t, err)
		return o
	}
	for _, mode := range [][]string{{"--zookeeper", "zk"}, {"--bootstrap-server", "b:9092"}} {
		o := parse(append(mode, "--topic", "t")...)
		require.Equal(t, "true", o.props[recycleKey], mode)
		cfg, _, err := connector.ConfigFromProperties(o.props)
		require.NoError(t, err)
		require.True(t, cfg.RecycleMessages, mode)

		o = parse(append(mode, "--topic", "t", "--consumer-property", recycleKey+"=false")...)
		cfg, _, err = connector.ConfigFromProperties(o.props)
		require.NoError(t, err)
		require.False(t, cfg.RecycleMessages, mode)
	}
}

// runQuick runs the command with arguments that fail before it needs a
// cluster.
func runQuick(t *testing.T, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code := run(ctx, args, &stdout, &stderr)
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

func TestBadFlagsGiveClearErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		want  string
		usage bool
	}{
		{name: "no zookeeper", args: []string{"--topic", "t"}, want: `Missing required argument "[bootstrap-server]"`, usage: true},
		{name: "no arguments", want: "The console consumer is a tool that reads data from Kafka and outputs it to standard output.", usage: true},
		{name: "topic and whitelist", args: []string{"--zookeeper", "zk", "--topic", "t", "--whitelist", "t.*"},
			want: "Exactly one of whitelist/blacklist/topic is required.", usage: true},
		{name: "no topic", args: []string{"--zookeeper", "zk"},
			want: "Exactly one of whitelist/blacklist/topic is required.", usage: true},
		{name: "unknown flag", args: []string{"--zookeeper", "zk", "--topic", "t", "--bootstrap", "b:9092"},
			want: "flag provided but not defined: -bootstrap", usage: true},
		{name: "not a number", args: []string{"--zookeeper", "zk", "--topic", "t", "--max-messages", "ten"},
			want: `invalid value "ten" for flag -max-messages`, usage: true},
		{name: "positional", args: []string{"--zookeeper", "zk", "--topic", "t", "extra"},
			want: `unexpected argument "extra"`, usage: true},
		{name: "consumer property with two =", args: []string{"--zookeeper", "zk", "--topic", "t", "--consumer-property", "a=b=c"},
			want: "Invalid command line properties: a=b=c"},
		{name: "formatter property with two =", args: []string{"--zookeeper", "zk", "--topic", "t", "--property", "key.separator=a=b"},
			want: "Invalid command line properties: key.separator=a=b"},
		{name: "consumer property not a number", args: []string{"--zookeeper", "zk", "--topic", "t", "--consumer-property", "auto.commit.interval.ms=often"},
			want: `invalid auto.commit.interval.ms "often"`},
		{name: "consumer property bad value", args: []string{"--zookeeper", "zk", "--topic", "t", "--consumer-property", "auto.offset.reset=earliest"},
			want: `invalid auto.offset.reset "earliest"`},
		{name: "group ids disagree", args: []string{"--zookeeper", "zk", "--topic", "t", "--group", "a", "--consumer-property", "group.id=b"},
			want: "The group ids provided in different places (directly using '--group', via '--consumer-property', or via '--consumer.config') do not match. Detected group ids: 'a', 'b'", usage: true},
		{name: "from-beginning and largest", args: []string{"--zookeeper", "zk", "--topic", "t", "--from-beginning", "--consumer-property", "auto.offset.reset=largest"},
			want: "Can't simultaneously specify --from-beginning and 'auto.offset.reset=largest', please remove one option"},
		{name: "missing config file", args: []string{"--zookeeper", "zk", "--topic", "t", "--consumer.config", "/does/not/exist.properties"},
			want: "/does/not/exist.properties"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runQuick(t, tc.args...)
			require.Equal(t, 1, r.code, "stderr:\n%s", r.stderr)
			require.Empty(t, r.stdout)
			require.Contains(t, r.stderr, tc.want)
			require.NotContains(t, r.stderr, "Processed a total", "nothing was consumed")
			if tc.usage {
				require.Contains(t, r.stderr, "\n--zookeeper <host:port", "usage printed")
			} else {
				require.NotContains(t, r.stderr, "\n--zookeeper <host:port", "no usage for this error")
			}
		})
	}
}

func TestHelpExitsZero(t *testing.T) {
	for _, arg := range []string{"-h", "--help"} {
		r := runQuick(t, arg)
		require.Equal(t, 0, r.code, arg)
		require.Contains(t, r.stdout, "The console consumer is a tool that reads data from Kafka", arg)
		require.Contains(t, r.stdout, "\n--zookeeper <host:port", arg)
		require.Empty(t, r.stderr, arg)
	}
}

func TestFormatterLikeDefaultMessageFormatter(t *testing.T) {
	ts := time.UnixMilli(1_700_000_000_123)
	msg := &connector.Message{Topic: "t", Partition: 2, Offset: 7, Key: []byte("k"), Value: []byte("v"), TimestampType: connector.CreateTime, Timestamp: ts}
	for _, tc := range []struct {
		props []string
		msg   *connector.Message
		want  string
	}{
		{want: "v\n"},
		{props: []string{"print.key=true"}, want: "k\tv\n"},
		{props: []string{"print.key= TRUE "}, want: "k\tv\n"},
		{props: []string{"print.key=yes"}, want: "v\n"},
		{props: []string{"print.timestamp=true"}, want: "CreateTime:1700000000123\tv\n"},
		{props: []string{"print.timestamp=true", "print.key=true", "key.separator=|"}, want: "CreateTime:1700000000123|k|v\n"},
		{props: []string{"print.key=true", "print.value=false"}, want: "k\n"},
		{props: []string{"print.timestamp=true", "print.value=false"}, want: "CreateTime:1700000000123\n"},
		{props: []string{"print.value=false"}, want: ""},
		{props: []string{`key.separator=\t`, "print.key=true"}, want: `k\tv` + "\n"}, // literal, as in Kafka
		{props: []string{"line.separator=;", "print.key=true"}, want: "k\tv;"},
		{props: []string{"print.partition=true", "print.offset=true", "print.timestamp=true"}, want: "CreateTime:1700000000123\tPartition:2\tOffset:7\tv\n"},
		{props: []string{"print.key=true"}, msg: &connector.Message{}, want: "null\tnull\n"},
		{props: []string{"print.timestamp=true"}, msg: &connector.Message{Value: []byte{}}, want: "NO_TIMESTAMP\t\n"},
		{props: []string{"no.such.property=1"}, want: "v\n"}, // ignored, as in Kafka
		{props: []string{"print.timestamp=true"}, msg: &connector.Message{Value: []byte("v"), TimestampType: connector.LogAppendTime, Timestamp: time.UnixMilli(1700000000999)}, want: "LogAppendTime:1700000000999\tv\n"},
	} {
		props, err := parseKeyValueArgs(tc.props)
		require.NoError(t, err)
		m := tc.msg
		if m == nil {
			m = msg
		}
		f, err := newFormatter(props)
		require.NoError(t, err)
		got, err := f.format(nil, m)
		require.NoError(t, err)
		require.Equal(t, tc.want, string(got), "props %q", tc.props)
	}
}
