package connector_test

import (
	"encoding"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/connector"
)

// option is one option type under test: a fresh zero value to parse into,
// its constants with their canonical spellings, the other spellings Kafka
// accepts, and a typo.
type option struct {
	key       string
	fresh     func() textOption
	canonical map[string]any // spelling -> constant
	synonyms  map[string]any // other spellings -> constant
	typo      string
	accepted  string // the list in the refusal's reason
}

type textOption interface {
	encoding.TextMarshaler
	encoding.TextUnmarshaler
	fmt.Stringer
}

func options() []option {
	return []option{
		{
			key:   "auto.offset.reset",
			fresh: func() textOption { return new(connector.OffsetReset) },
			canonical: map[string]any{
				"largest": connector.AutoOffsetResetLargest, "smallest": connector.AutoOffsetResetSmallest,
			},
			synonyms: map[string]any{"latest": connector.AutoOffsetResetLargest, "earliest": connector.AutoOffsetResetSmallest},
			typo:     "earlist",
			accepted: "must be one of smallest, largest, earliest, latest",
		},
		{
			key:       "zkconsumer.group.coordination",
			fresh:     func() textOption { return new(connector.Coordination) },
			canonical: map[string]any{"zookeeper": connector.CoordinationZooKeeper, "kafka": connector.CoordinationKafka},
			synonyms:  map[string]any{"Kafka": connector.CoordinationKafka, "ZOOKEEPER": connector.CoordinationZooKeeper},
			typo:      "kraft",
			accepted:  "must be one of zookeeper, kafka",
		},
		{
			key:       "group.protocol",
			fresh:     func() textOption { return new(connector.GroupProtocol) },
			canonical: map[string]any{"classic": connector.GroupProtocolClassic, "consumer": connector.GroupProtocolConsumer},
			synonyms:  map[string]any{"CONSUMER": connector.GroupProtocolConsumer, "Classic": connector.GroupProtocolClassic},
			typo:      "streams",
			accepted:  "must be one of classic, consumer",
		},
		{
			key:   "group.remote.assignor",
			fresh: func() textOption { return new(connector.RemoteAssignor) },
			canonical: map[string]any{
				"": connector.RemoteAssignorDefault, "uniform": connector.RemoteAssignorUniform, "range": connector.RemoteAssignorRange,
			},
			typo:     "sticky",
			accepted: `must be one of uniform, range, "" (empty)`,
		},
		{
			key:   "zkconsumer.isolation.level",
			fresh: func() textOption { return new(connector.IsolationLevel) },
			canonical: map[string]any{
				"read_uncommitted": connector.IsolationReadUncommitted, "read_committed": connector.IsolationReadCommitted,
			},
			typo:     "read-committed",
			accepted: "must be one of read_uncommitted, read_committed",
		},
		{
			key:       "offsets.storage",
			fresh:     func() textOption { return new(connector.OffsetsStorage) },
			canonical: map[string]any{"zookeeper": connector.OffsetsStorageZooKeeper, "kafka": connector.OffsetsStorageKafka},
			synonyms:  map[string]any{"KAFKA": connector.OffsetsStorageKafka, "ZooKeeper": connector.OffsetsStorageZooKeeper},
			typo:      "zk",
			accepted:  "must be one of zookeeper, kafka",
		},
		{
			key:   "partition.assignment.strategy",
			fresh: func() textOption { return new(connector.AssignmentStrategy) },
			canonical: map[string]any{
				"range": connector.StrategyRange, "roundrobin": connector.StrategyRoundRobin,
				"sticky": connector.StrategySticky, "cooperative-sticky": connector.StrategyCooperativeSticky,
			},
			synonyms: map[string]any{
				"org.apache.kafka.clients.consumer.RangeAssignor":             connector.StrategyRange,
				"org.apache.kafka.clients.consumer.RoundRobinAssignor":        connector.StrategyRoundRobin,
				"org.apache.kafka.clients.consumer.CooperativeStickyAssignor": connector.StrategyCooperativeSticky,
			},
			typo:     "round-robin",
			accepted: "must be one of range, roundrobin, sticky, cooperative-sticky (or the class names of Java's RangeAssignor, RoundRobinAssignor, CooperativeStickyAssignor)",
		},
		{
			key:       "zkconsumer.rebalance.protocol",
			fresh:     func() textOption { return new(connector.RebalanceProtocol) },
			canonical: map[string]any{"cooperative": connector.RebalanceCooperative, "eager": connector.RebalanceEager},
			typo:      "incremental",
			accepted:  "must be one of cooperative, eager",
		},
		{
			key:       "zkconsumer.roundrobin.hash.format",
			fresh:     func() textOption { return new(connector.RoundRobinHashFormat) },
			canonical: map[string]any{"dash": connector.RoundRobinHashDash, "bracket": connector.RoundRobinHashBracket},
			typo:      "colon",
			accepted:  "must be one of dash, bracket",
		},
		{
			key:       "dual.commit.enabled",
			fresh:     func() textOption { return new(connector.DualCommit) },
			canonical: map[string]any{"true": connector.DualCommitOn, "false": connector.DualCommitOff, "": connector.DualCommitDefault},
			typo:      "yes",
			accepted:  `must be one of true, false, "" (empty)`,
		},
		{
			key:   "ssl.endpoint.identification.algorithm",
			fresh: func() textOption { return new(connector.EndpointIdentification) },
			canonical: map[string]any{
				"https": connector.EndpointIdentificationHTTPS, "": connector.EndpointIdentificationNone,
			},
			synonyms: map[string]any{"HTTPS": connector.EndpointIdentificationHTTPS},
			typo:     "http",
			accepted: `must be one of https, "" (empty)`,
		},
		{
			key:   "zookeeper.ssl.endpoint.identification.enable",
			fresh: func() textOption { return new(connector.ZooKeeperEndpointIdentification) },
			canonical: map[string]any{
				"true": connector.ZooKeeperEndpointIdentificationOn, "false": connector.ZooKeeperEndpointIdentificationOff,
			},
			synonyms: map[string]any{"TRUE": connector.ZooKeeperEndpointIdentificationOn, "False": connector.ZooKeeperEndpointIdentificationOff},
			typo:     "off",
			accepted: "must be one of true, false",
		},
	}
}

// deref returns the value p points to.
func deref(p textOption) any {
	switch v := p.(type) {
	case *connector.OffsetReset:
		return *v
	case *connector.Coordination:
		return *v
	case *connector.GroupProtocol:
		return *v
	case *connector.RemoteAssignor:
		return *v
	case *connector.IsolationLevel:
		return *v
	case *connector.OffsetsStorage:
		return *v
	case *connector.AssignmentStrategy:
		return *v
	case *connector.RebalanceProtocol:
		return *v
	case *connector.RoundRobinHashFormat:
		return *v
	case *connector.DualCommit:
		return *v
	case *connector.EndpointIdentification:
		return *v
	case *connector.ZooKeeperEndpointIdentification:
		return *v
	}
	panic(fmt.Sprintf("unknown option type %T", p))
}

// TestOptionTypesRoundTrip: every constant of every option type prints as
// its property's spelling (String and MarshalText agree) and parses back to
// itself; the other spellings Kafka accepts parse to the same constant.
func TestOptionTypesRoundTrip(t *testing.T) {
	for _, o := range options() {
		t.Run(o.key, func(t *testing.T) {
			for text, want := range o.canonical {
				v := o.fresh()
				require.NoError(t, v.UnmarshalText([]byte(text)), text)
				require.Equal(t, want, deref(v), text)
				assert.Equal(t, text, v.String())
				out, err := v.MarshalText()
				require.NoError(t, err)
				assert.Equal(t, text, string(out))
				assert.Equal(t, text, fmt.Sprint(want), "String on the value")
			}
			for text, want := range o.synonyms {
				v := o.fresh()
				require.NoError(t, v.UnmarshalText([]byte(text)), text)
				require.Equal(t, want, deref(v), text)
			}
		})
	}
}

// TestOptionTypesRefuseTypos: a misspelt value is refused by UnmarshalText
// with a *ConfigError that names the key, the value and the accepted
// spellings, and leaves the value as it was; ConfigFromProperties reports
// the same error.
func TestOptionTypesRefuseTypos(t *testing.T) {
	for _, o := range options() {
		t.Run(o.key, func(t *testing.T) {
			v := o.fresh()
			before := deref(v)
			err := v.UnmarshalText([]byte(o.typo))
			var ce *connector.ConfigError
			require.ErrorAs(t, err, &ce)
			require.ErrorIs(t, err, connector.ErrInvalidConfig)
			assert.Equal(t, o.key, ce.Key)
			assert.Equal(t, o.typo, ce.Value)
			assert.Equal(t, o.accepted, ce.Reason)
			assert.Equal(t, before, deref(v), "a refused value changes nothing")

			_, _, err = connector.ConfigFromProperties(map[string]string{
				"group.id": "g", "zookeeper.connect": "zk:2181", o.key: o.typo,
			})
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, o.key, ce.Key)
			assert.Contains(t, err.Error(), fmt.Sprintf("connector: invalid %s %q: ", o.key, o.typo))
		})
	}
}

// TestOptionTypesOutOfRange: a value converted from a number that is none
// of the constants prints as Type(n), cannot be marshalled, and is
// refused by Validate under its key.
func TestOptionTypesOutOfRange(t *testing.T) {
	r := connector.OffsetReset(9)
	assert.Equal(t, "OffsetReset(9)", r.String())
	_, err := r.MarshalText()
	var ce *connector.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "auto.offset.reset", ce.Key)

	c := validConfig()
	c.OffsetsStorage = 9
	c.GroupProtocol = 9
	assert.ElementsMatch(t, []string{"offsets.storage", "group.protocol"}, errorKeys(t, c.Validate()))
	k := kafkaModeConfig()
	k.GroupProtocol = 9
	assert.Equal(t, []string{"group.protocol"}, errorKeys(t, k.Validate()))
}

// TestZeroOptionsAreTheDefaults: a Config whose option fields are left
// zero validates to the same Config as DefaultConfig's, in both modes, and
// writes the same properties.
func TestZeroOptionsAreTheDefaults(t *testing.T) {
	for _, mode := range []connector.Coordination{connector.CoordinationZooKeeper, connector.CoordinationKafka} {
		t.Run(mode.String(), func(t *testing.T) {
			def := validConfig()
			def.GroupCoordination = mode
			def.BootstrapServers = "b:9092"
			zero := def
			// Every field of an option type, and the one slice, at zero.
			zero.AutoOffsetReset = 0
			zero.GroupProtocol = 0
			zero.GroupRemoteAssignor = 0
			zero.IsolationLevel = 0
			zero.OffsetsStorage = 0
			zero.PartitionAssignmentStrategy = nil
			zero.RebalanceProtocol = 0
			zero.RoundRobinHashFormat = 0
			zero.DualCommitEnabled = 0
			zero.Security.SSLEndpointIdentificationAlgorithm = 0
			zero.Security.ZooKeeperSSLEndpointIdentificationEnable = 0
			if mode == connector.CoordinationZooKeeper {
				zero.GroupCoordination = 0
			}
			require.NoError(t, def.Validate())
			require.NoError(t, zero.Validate())
			assert.Equal(t, def, zero)
			assert.Equal(t, def.Properties(), zero.Properties())
		})
	}
	// The zero values are Kafka's defaults, constant by constant.
	assert.Equal(t, connector.AutoOffsetResetLargest, connector.OffsetReset(0))
	assert.Equal(t, connector.CoordinationZooKeeper, connector.Coordination(0))
	assert.Equal(t, connector.GroupProtocolClassic, connector.GroupProtocol(0))
	assert.Equal(t, connector.RemoteAssignorDefault, connector.RemoteAssignor(0))
	assert.Equal(t, connector.IsolationReadUncommitted, connector.IsolationLevel(0))
	assert.Equal(t, connector.OffsetsStorageZooKeeper, connector.OffsetsStorage(0))
	assert.Equal(t, connector.StrategyRange, connector.AssignmentStrategy(0))
	assert.Equal(t, connector.RebalanceCooperative, connector.RebalanceProtocol(0))
	assert.Equal(t, connector.RoundRobinHashDash, connector.RoundRobinHashFormat(0))
	assert.Equal(t, connector.DualCommitDefault, connector.DualCommit(0))
	assert.Equal(t, connector.EndpointIdentificationHTTPS, connector.EndpointIdentification(0))
	assert.Equal(t, connector.ZooKeeperEndpointIdentificationOn, connector.ZooKeeperEndpointIdentification(0))
}

// TestEndpointIdentificationProperties: the two endpoint identification
// keys read as they did when they were optional values: unset is the
// default and is not written back; "" (brokers) and "false" (ZooKeeper)
// turn the check off and are written back; a value Kafka would not take
// is a ConfigError.
func TestEndpointIdentificationProperties(t *testing.T) {
	base := map[string]string{"group.id": "g", "zookeeper.connect": "zk:2181"}
	c, _, err := connector.ConfigFromProperties(base)
	require.NoError(t, err)
	assert.Equal(t, connector.EndpointIdentificationHTTPS, c.Security.SSLEndpointIdentificationAlgorithm)
	assert.Equal(t, connector.ZooKeeperEndpointIdentificationOn, c.Security.ZooKeeperSSLEndpointIdentificationEnable)
	assert.NotContains(t, c.Properties(), "ssl.endpoint.identification.algorithm")
	assert.NotContains(t, c.Properties(), "zookeeper.ssl.endpoint.identification.enable")

	off := map[string]string{"ssl.endpoint.identification.algorithm": "", "zookeeper.ssl.endpoint.identification.enable": "false"}
	for k, v := range base {
		off[k] = v
	}
	c, _, err = connector.ConfigFromProperties(off)
	require.NoError(t, err)
	assert.Equal(t, connector.EndpointIdentificationNone, c.Security.SSLEndpointIdentificationAlgorithm)
	assert.Equal(t, connector.ZooKeeperEndpointIdentificationOff, c.Security.ZooKeeperSSLEndpointIdentificationEnable)
	props := c.Properties()
	assert.Equal(t, "", props["ssl.endpoint.identification.algorithm"])
	assert.Contains(t, props, "ssl.endpoint.identification.algorithm")
	assert.Equal(t, "false", props["zookeeper.ssl.endpoint.identification.enable"])
}

// TestStringLiteralOptionsDoNotCompile: assigning a string to an option
// field, the typo the option types exist to catch, does not compile,
// while the constants do. The programs are built in a module of their
// own, as an application's would be.
func TestStringLiteralOptionsDoNotCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go tool")
	}
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		path := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	}
	write("go.mod", "module typo.example\n\ngo 1.26.0\n\n"+
		"require github.com/zkconsumer/zkconsumer v0.0.0\n\n"+
		"replace github.com/zkconsumer/zkconsumer => "+root+"\n")
	write("go.sum", string(sum))
	program := func(body string) string {
		return "package main\n\nimport \"github.com/zkconsumer/zkconsumer/connector\"\n\n" +
			"func main() {\n\tcfg := connector.DefaultConfig()\n" + body + "\t_ = cfg\n}\n"
	}
	write("constants/main.go", program(`	cfg.AutoOffsetReset = connector.AutoOffsetResetSmallest
	cfg.GroupCoordination = connector.CoordinationKafka
	cfg.PartitionAssignmentStrategy = []connector.AssignmentStrategy{connector.StrategyCooperativeSticky}
	cfg.DualCommitEnabled = connector.DualCommitOff
	cfg.Security.SSLEndpointIdentificationAlgorithm = connector.EndpointIdentificationNone
`))
	typos := []string{
		`cfg.AutoOffsetReset = "earlist"`,
		`cfg.GroupCoordination = "kafka"`,
		`cfg.GroupProtocol = "consumer"`,
		`cfg.GroupRemoteAssignor = "uniform"`,
		`cfg.IsolationLevel = "read_committed"`,
		`cfg.OffsetsStorage = "kafka"`,
		`cfg.PartitionAssignmentStrategy = "range"`,
		`cfg.RebalanceProtocol = "eager"`,
		`cfg.RoundRobinHashFormat = "bracket"`,
		`cfg.DualCommitEnabled = "true"`,
		`cfg.Security.SSLEndpointIdentificationAlgorithm = ""`,
		`cfg.Security.ZooKeeperSSLEndpointIdentificationEnable = "false"`,
	}
	for i, line := range typos {
		write(fmt.Sprintf("typo%d/main.go", i), program("\t"+line+"\n"))
	}
	build := func(pkg string) (string, error) {
		cmd := exec.Command("go", "vet", "./"+pkg)
		cmd.Dir = dir
		// Offline, from the module cache this module's build filled;
		// outside any workspace, as an application's module is.
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off", "GOTOOLCHAIN=local")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := build("constants")
	require.NoError(t, err, "the constants must compile:\n%s", out)
	for i, line := range typos {
		t.Run(line, func(t *testing.T) {
			out, err := build(fmt.Sprintf("typo%d", i))
			require.Error(t, err, "compiled: %s", line)
			require.True(t, strings.Contains(out, "cannot use") && strings.Contains(out, "untyped string constant"),
				"refused, but not for the expected reason:\n%s", out)
		})
	}
}

// TestDocsNameEveryOptionConstant: the configuration pages name every
// constant of every option type, next to the property value it stands
// for (docs/security.md for the security options).
func TestDocsNameEveryOptionConstant(t *testing.T) {
	api, err := os.ReadFile(filepath.Join("..", "internal", "layering", "testdata", "api", "connector.txt"))
	require.NoError(t, err)
	var pages string
	for _, page := range []string{"configuration.md", "security.md"} {
		b, err := os.ReadFile(filepath.Join("..", "docs", page))
		require.NoError(t, err)
		pages += string(b)
	}
	types := map[string]bool{}
	for _, o := range options() {
		types[strings.TrimPrefix(fmt.Sprintf("%T", deref(o.fresh())), "connector.")] = true
	}
	named := 0
	for line := range strings.SplitSeq(string(api), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "const" && types[f[2]] {
			named++
			assert.Contains(t, pages, "`"+f[1]+"`", "docs/configuration.md or docs/security.md does not name %s", f[1])
		}
	}
	assert.Equal(t, 28, named, "constants of the option types")
}

// TestOptionTypesWithFlagAndJSON: the option types work where Go takes
// text values: flag.TextVar and encoding/json.
func TestOptionTypesWithFlagAndJSON(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var reset connector.OffsetReset
	fs.TextVar(&reset, "reset", connector.AutoOffsetResetLargest, "auto.offset.reset")
	require.NoError(t, fs.Parse([]string{"-reset", "earliest"}))
	assert.Equal(t, connector.AutoOffsetResetSmallest, reset)
	require.ErrorContains(t, fs.Parse([]string{"-reset", "earlist"}), "must be one of smallest, largest, earliest, latest")

	type options struct {
		Reset    connector.OffsetReset
		Storage  connector.OffsetsStorage
		Dual     connector.DualCommit
		Strategy []connector.AssignmentStrategy
		Host     connector.EndpointIdentification
	}
	in := options{connector.AutoOffsetResetSmallest, connector.OffsetsStorageKafka, connector.DualCommitDefault,
		[]connector.AssignmentStrategy{connector.StrategyRange, connector.StrategyCooperativeSticky}, connector.EndpointIdentificationNone}
	b, err := json.Marshal(in)
	require.NoError(t, err)
	assert.JSONEq(t, `{"Reset":"smallest","Storage":"kafka","Dual":"","Strategy":["range","cooperative-sticky"],"Host":""}`, string(b))
	var out options
	require.NoError(t, json.Unmarshal(b, &out))
	assert.Equal(t, in, out)
	require.ErrorContains(t, json.Unmarshal([]byte(`{"Storage":"s3"}`), &out), `invalid offsets.storage "s3"`)
}
