package connector_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/connector"
)

// TestParsePropertiesMalformedUnicode: the parser's syntax errors (its
// own tests are internal/javaprops') reach the caller as a
// *connector.SyntaxError with the line and the reason, matching
// ErrInvalidConfig.
func TestParsePropertiesMalformedUnicode(t *testing.T) {
	tests := map[string]struct{ in, reason string }{
		"in a value": {"a=1\n\n# c\nb=\\u12", `value of b: malformed \uxxxx encoding: too short`},
		"in a key":   {"a=1\r\r# c\r\\u00g1=x", `key: malformed \uxxxx encoding: \u00g1`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			props, err := connector.ParseProperties(strings.NewReader(tt.in))
			assert.Nil(t, props)
			assert.EqualError(t, err, "connector: properties: line 4: "+tt.reason)
			assert.ErrorIs(t, err, connector.ErrInvalidConfig, "a syntax error is a configuration error")
			var syn *connector.SyntaxError
			require.ErrorAs(t, err, &syn)
			assert.Equal(t, &connector.SyntaxError{Line: 4, Reason: tt.reason}, syn)
		})
	}
}

// parseFile reads a properties file with ParseProperties, as an
// application loads one.
func parseFile(t *testing.T, path string) (map[string]string, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return connector.ParseProperties(f)
}

// configFromFile is parseFile then ConfigFromProperties.
func configFromFile(t *testing.T, path string) (connector.Config, []string, error) {
	t.Helper()
	props, err := parseFile(t, path)
	if err != nil {
		return connector.Config{}, nil, err
	}
	return connector.ConfigFromProperties(props)
}

func TestParsePropertiesFileSyntax(t *testing.T) {
	props, err := parseFile(t, filepath.Join("testdata", "syntax.properties"))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"zookeeper.connect":                    "zk1:2181,zk2:2181,zk3:2181/kafka",
		"group.id":                             "orders",
		"client.id":                            "orders-reader",
		"consumer.id":                          "host1-1",
		"auto.offset.reset":                    "smallest",
		"rebalance.max.retries":                "10",
		"external.app.owner":                   "café cafÃ©",
		"external.escaped key:with=separators": "tab\tnewline\nbackslash\\end",
		"external.unicode":                     "grüße 😀 😀",
		"external.empty":                       "",
		"external.trailing":                    "kept   ",
		"external.hash":                        "#not a comment",
		"external.crlf":                        "ab",
		"external.cr":                          "x",
		"external.after.cr":                    "z",
	}, props)

	c, warnings, err := configFromFile(t, filepath.Join("testdata", "syntax.properties"))
	require.NoError(t, err)
	assert.Empty(t, warnings, "keys starting with external are exempt, as in Kafka")
	require.NoError(t, c.Validate())
	assert.Equal(t, "host1-1", c.ConsumerID)
	assert.Equal(t, 10, c.RebalanceMaxRetries)
}

// TestParsePropertiesEncodings: a file in ISO-8859-1, as Java writes it,
// loads (the decoding rules are tested in internal/javaprops); a syntax
// error names the line; input that cannot be read is not a configuration
// error.
func TestParsePropertiesEncodings(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, data, 0o600))
		return p
	}

	props, err := parseFile(t, write("latin1", []byte("name=caf\xe9\n")))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"name": "café"}, props)

	_, err = parseFile(t, write("bad", []byte("a=\\u00\n")))
	require.Error(t, err)
	assert.EqualError(t, err, `connector: properties: line 1: value of a: malformed \uxxxx encoding: too short`)
	assert.ErrorIs(t, err, connector.ErrInvalidConfig)

	// A reader that fails is not a configuration error.
	f, err := os.Open(dir) // a directory: reading it fails
	require.NoError(t, err)
	defer f.Close()
	_, err = connector.ParseProperties(f)
	require.Error(t, err)
	assert.NotErrorIs(t, err, connector.ErrInvalidConfig, "input that cannot be read is not a configuration error")
}

// TestKafkaConsumerPropertiesLoads loads the config/consumer.properties that
// Kafka 0.8 to 0.11.0 shipped for the ZooKeeper-based consumer.
func TestKafkaConsumerPropertiesLoads(t *testing.T) {
	c, warnings, err := configFromFile(t, filepath.Join("testdata", "consumer.properties"))
	require.NoError(t, err)
	assert.Empty(t, warnings)
	require.NoError(t, c.Validate())
	assert.Equal(t, "test-consumer-group", c.GroupID)
	assert.Equal(t, "127.0.0.1:2181", c.ZooKeeperConnect)
	assert.Equal(t, 6*time.Second, c.ZooKeeperConnectionTimeout)
	assert.Equal(t, "test-consumer-group", c.ClientID)
	assert.Equal(t, time.Duration(-1)*time.Millisecond, c.ConsumerTimeout, "consumer.timeout.ms is commented out")
}

// TestJavaConsumerPropertiesWarns loads the config/consumer.properties of
// Kafka 1.0+, written for the Java consumer.
func TestJavaConsumerPropertiesWarns(t *testing.T) {
	c, warnings, err := configFromFile(t, filepath.Join("testdata", "java_consumer.properties"))
	assert.Equal(t, []string{"zookeeper.connect"}, errorKeys(t, err), "validated in the same round")
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "bootstrap.servers")
	assert.Contains(t, warnings[0], "zookeeper.connect")
	assert.Equal(t, []string{"zookeeper.connect"}, errorKeys(t, c.Validate()))
}

func TestConfigFromPropertiesEveryKey(t *testing.T) {
	c, warnings, err := connector.ConfigFromProperties(map[string]string{
		"group.id":                          "g",
		"zookeeper.connect":                 "zk:2181/c",
		"consumer.id":                       "host-1-abcdef12",
		"client.id":                         "cli",
		"socket.timeout.ms":                 "31000",
		"socket.receive.buffer.bytes":       "131072",
		"fetch.message.max.bytes":           "2097152",
		"fetch.max.bytes":                   "1000",
		"num.consumer.fetchers":             "3",
		"auto.commit.enable":                "false",
		"auto.commit.interval.ms":           "5000",
		"queued.max.message.chunks":         "7",
		"rebalance.max.retries":             "9",
		"rebalance.backoff.ms":              "2500",
		"fetch.min.bytes":                   "1024",
		"fetch.wait.max.ms":                 "500",
		"refresh.leader.backoff.ms":         "300",
		"auto.offset.reset":                 "smallest",
		"consumer.timeout.ms":               "1000",
		"exclude.internal.topics":           "false",
		"partition.assignment.strategy":     "roundrobin",
		"offsets.storage":                   "KAFKA",
		"dual.commit.enabled":               "false",
		"offsets.channel.backoff.ms":        "1500",
		"offsets.channel.socket.timeout.ms": "12000",
		"offsets.commit.max.retries":        "2",
		"zookeeper.session.timeout.ms":      "30000",
		"zookeeper.connection.timeout.ms":   "15000",
		"zookeeper.sync.time.ms":            "4000",

		"zkconsumer.roundrobin.hash.format": "bracket",
		"zkconsumer.isolation.level":        "read_committed",
		"zkconsumer.group.coordination":     "zookeeper",
		"zkconsumer.rebalance.protocol":     "eager",
		"check.crcs":                        "false",
		"zkconsumer.recycle.messages":       "true",
	})
	require.NoError(t, err)
	assert.Empty(t, warnings)
	assert.Equal(t, connector.Config{
		GroupID:                     "g",
		ZooKeeperConnect:            "zk:2181/c",
		ConsumerID:                  "host-1-abcdef12",
		ClientID:                    "cli",
		SocketTimeout:               31 * time.Second,
		SocketReceiveBufferBytes:    131072,
		FetchMessageMaxBytes:        2097152,
		FetchMaxBytes:               1000,
		NumConsumerFetchers:         3,
		AutoCommitEnable:            false,
		AutoCommitInterval:          5 * time.Second,
		QueuedMaxMessageChunks:      7,
		RebalanceMaxRetries:         9,
		RebalanceBackoff:            2500 * time.Millisecond,
		FetchMinBytes:               1024,
		FetchWaitMax:                500 * time.Millisecond,
		RefreshLeaderBackoff:        300 * time.Millisecond,
		AutoOffsetReset:             connector.AutoOffsetResetSmallest,
		ConsumerTimeout:             time.Second,
		ExcludeInternalTopics:       false,
		PartitionAssignmentStrategy: []connector.AssignmentStrategy{connector.StrategyRoundRobin},
		RebalanceProtocol:           connector.RebalanceEager,
		RoundRobinHashFormat:        connector.RoundRobinHashBracket,
		OffsetsStorage:              connector.OffsetsStorageKafka, // "KAFKA": any case, as in Kafka
		DualCommitEnabled:           connector.DualCommitOff,
		OffsetsChannelBackoff:       1500 * time.Millisecond,
		OffsetsChannelSocketTimeout: 12 * time.Second,
		OffsetsCommitMaxRetries:     2,
		ZooKeeperSessionTimeout:     30 * time.Second,
		ZooKeeperConnectionTimeout:  15 * time.Second,
		ZooKeeperSyncTime:           4 * time.Second,
		IsolationLevel:              connector.IsolationReadCommitted,
		GroupCoordination:           connector.CoordinationZooKeeper,
		SessionTimeout:              45 * time.Second,
		HeartbeatInterval:           3 * time.Second,
		MaxPollInterval:             5 * time.Minute,
		MetadataMaxAge:              5 * time.Minute,
		GroupProtocol:               connector.GroupProtocolClassic,
		CheckCRCs:                   false,
		RecycleMessages:             true,
	}, c)
	require.NoError(t, c.Validate())
}

func TestConfigFromPropertiesTrimsValues(t *testing.T) {
	c, warnings, err := connector.ConfigFromProperties(map[string]string{
		"group.id":                  "  g \t",
		"zookeeper.connect":         "zk:2181 ",
		"fetch.wait.max.ms":         " 250 ",
		"auto.commit.enable":        "false\r",
		"auto.offset.reset":         "\fsmallest ",
		"queued.max.message.chunks": "+3",
	})
	require.NoError(t, err)
	assert.Empty(t, warnings)
	assert.Equal(t, "g", c.GroupID)
	assert.Equal(t, "zk:2181", c.ZooKeeperConnect)
	assert.Equal(t, 250*time.Millisecond, c.FetchWaitMax)
	assert.False(t, c.AutoCommitEnable)
	assert.Equal(t, connector.AutoOffsetResetSmallest, c.AutoOffsetReset)
	assert.Equal(t, 3, c.QueuedMaxMessageChunks, "Integer.parseInt accepts a plus sign")
	assert.NoError(t, c.Validate())
}

func TestConfigFromPropertiesUnknownKeysWarn(t *testing.T) {
	c, warnings, err := connector.ConfigFromProperties(map[string]string{
		"group.id":           "g",
		"zookeeper.connect":  "zk:2181",
		"enable.auto.commit": "false",
		"zk.connect":         "old:2181",
		"my.own.setting":     "x",
		"external.owner":     "team-a", // Kafka exempts "external*" keys
		"externalThing":      "y",
	})
	require.NoError(t, err)
	require.Len(t, warnings, 3)
	assert.Contains(t, warnings[0], "property enable.auto.commit is not valid")
	assert.Contains(t, warnings[0], "did you mean auto.commit.enable?")
	assert.Contains(t, warnings[1], "property my.own.setting is not valid")
	assert.NotContains(t, warnings[1], "did you mean")
	assert.Contains(t, warnings[2], "property zk.connect is not valid")
	assert.Contains(t, warnings[2], "did you mean zookeeper.connect?")
	for _, w := range warnings {
		assert.True(t, strings.HasPrefix(w, "connector: "), w)
	}
	assert.True(t, c.AutoCommitEnable, "unknown keys are ignored")
	assert.NoError(t, c.Validate())
}

func TestConfigFromPropertiesZeroDerivedValuesWarn(t *testing.T) {
	c, warnings, err := connector.ConfigFromProperties(map[string]string{
		"group.id":                        "g",
		"zookeeper.connect":               "zk:2181",
		"client.id":                       "",
		"consumer.id":                     " ",
		"zookeeper.connection.timeout.ms": "0",
	})
	require.NoError(t, err)
	require.Len(t, warnings, 3)
	for i, key := range []string{"client.id", "consumer.id", "zookeeper.connection.timeout.ms"} {
		assert.Contains(t, warnings[i], "property "+key+"=")
		assert.Contains(t, warnings[i], "treated as unset")
	}
	require.NoError(t, c.Validate())
	assert.Equal(t, "g", c.ClientID)
	assert.Empty(t, c.ConsumerID)
	assert.Equal(t, 6*time.Second, c.ZooKeeperConnectionTimeout)
}

// rebalance.backoff.ms=0 means no pause, as in Kafka, and its default
// follows zookeeper.sync.time.ms when properties are read.
func TestConfigFromPropertiesRebalanceBackoff(t *testing.T) {
	tests := []struct {
		name  string
		props map[string]string
		want  time.Duration
	}{
		{"default", map[string]string{}, 2 * time.Second},
		{"explicit zero", map[string]string{"rebalance.backoff.ms": "0"}, 0},
		{"explicit zero with sync time", map[string]string{"rebalance.backoff.ms": "0", "zookeeper.sync.time.ms": "500"}, 0},
		{"follows sync time", map[string]string{"zookeeper.sync.time.ms": "500"}, 500 * time.Millisecond},
		{"sync time zero", map[string]string{"zookeeper.sync.time.ms": "0"}, 0},
		{"explicit", map[string]string{"rebalance.backoff.ms": "300", "zookeeper.sync.time.ms": "500"}, 300 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.props["group.id"], tt.props["zookeeper.connect"] = "g", "zk:2181"
			c, warnings, err := connector.ConfigFromProperties(tt.props)
			require.NoError(t, err)
			assert.Empty(t, warnings)
			require.NoError(t, c.Validate())
			assert.Equal(t, tt.want, c.RebalanceBackoff)
			back, _, err := connector.ConfigFromProperties(c.Properties())
			require.NoError(t, err)
			assert.Equal(t, tt.want, back.RebalanceBackoff, "round trip")
		})
	}
}

func TestConfigFromPropertiesParseErrors(t *testing.T) {
	tests := []struct {
		key, value, reason string
	}{
		{"socket.timeout.ms", "30s", "must be an integer"},
		{"fetch.message.max.bytes", "1MB", "must be an integer"},
		{"fetch.message.max.bytes", "2147483648", "must be an integer between -2147483648 and 2147483647"},
		{"num.consumer.fetchers", "1.0", "must be an integer"},
		{"queued.max.message.chunks", "", "must be an integer"},
		{"rebalance.max.retries", "0x10", "must be an integer"},
		{"fetch.min.bytes", "1_000", "must be an integer"},
		{"consumer.timeout.ms", "-", "must be an integer"},
		{"auto.commit.enable", "TRUE", "must be true or false"},
		{"auto.commit.enable", "yes", "must be true or false"},
		{"exclude.internal.topics", "1", "must be true or false"},
		{"dual.commit.enabled", "", "must be true or false"},
	}
	for _, tt := range tests {
		t.Run(tt.key+"="+tt.value, func(t *testing.T) {
			_, _, err := connector.ConfigFromProperties(map[string]string{tt.key: tt.value, "group.id": "g", "zookeeper.connect": "zk"})
			errs := configErrors(t, err)
			require.Len(t, errs, 1)
			assert.Equal(t, tt.key, errs[0].Key)
			assert.Equal(t, tt.value, errs[0].Value)
			assert.Contains(t, errs[0].Reason, tt.reason)
			assert.Contains(t, err.Error(), "connector: invalid "+tt.key+" ")
		})
	}
}

func TestConfigFromPropertiesReportsEveryParseError(t *testing.T) {
	c, warnings, err := connector.ConfigFromProperties(map[string]string{
		"group.id":               "g",
		"socket.timeout.ms":      "thirty",
		"auto.commit.enable":     "on",
		"zookeeper.sync.time.ms": "2s",
		"fetch.wait.max.ms":      "250",
		"bootstrap.servers":      "b:9092",
	})
	assert.ElementsMatch(t, []string{"socket.timeout.ms", "auto.commit.enable", "zookeeper.sync.time.ms", "zookeeper.connect"}, errorKeys(t, err),
		"values that do not parse and what Validate finds, in one round")
	assert.Len(t, warnings, 1, "warnings are returned with errors")
	assert.Equal(t, "g", c.GroupID, "values that parse are kept")
	assert.Equal(t, 250*time.Millisecond, c.FetchWaitMax)
}

func TestPropertiesRoundTrip(t *testing.T) {
	validated := validConfig()
	require.NoError(t, validated.Validate())

	custom := validConfig()
	custom.ConsumerID = "h-1-2"
	custom.ClientID = "c"
	custom.AutoCommitEnable = false
	custom.ConsumerTimeout = 0
	custom.RebalanceBackoff = 5 * time.Second
	custom.OffsetsStorage = connector.OffsetsStorageKafka
	custom.DualCommitEnabled = connector.DualCommitOn
	custom.FetchMessageMaxBytes = 1<<31 - 1
	custom.PartitionAssignmentStrategy = []connector.AssignmentStrategy{connector.StrategySticky}
	custom.RebalanceProtocol = connector.RebalanceEager
	custom.AutoOffsetReset = connector.AutoOffsetResetSmallest
	custom.Security.SSLEndpointIdentificationAlgorithm = connector.EndpointIdentificationNone
	custom.Security.ZooKeeperSSLEndpointIdentificationEnable = connector.ZooKeeperEndpointIdentificationOff
	custom.SocketReceiveBufferBytes = 131072
	custom.IsolationLevel = connector.IsolationReadCommitted
	custom.RoundRobinHashFormat = connector.RoundRobinHashBracket

	oddSession := validConfig()
	oddSession.ZooKeeperSessionTimeout = 1000 * time.Millisecond
	require.NoError(t, oddSession.Validate())

	tests := map[string]connector.Config{
		"odd session": oddSession,
		"defaults":    connector.DefaultConfig(),
		"required":    validConfig(),
		"validated":   validated,
		"customized":  custom,
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			out, warnings, err := connector.ConfigFromProperties(in.Properties())
			if name == "defaults" {
				assert.ElementsMatch(t, []string{"group.id", "zookeeper.connect"}, errorKeys(t, err))
			} else {
				require.NoError(t, err)
			}
			assert.Empty(t, warnings)
			assert.Equal(t, in, out)
		})
	}
}

func TestPropertiesOmitsUnsetDerivedFields(t *testing.T) {
	props := validConfig().Properties()
	for _, key := range []string{"consumer.id", "client.id", "dual.commit.enabled",
		"zookeeper.connection.timeout.ms"} {
		assert.NotContains(t, props, key)
	}
	assert.Len(t, props, 31)
}

func TestPropertiesDropsLoggerAndSubMilliseconds(t *testing.T) {
	c := validConfig()
	c.FetchWaitMax = 1500 * time.Microsecond
	props := c.Properties()
	assert.Equal(t, "1", props["fetch.wait.max.ms"])
}

func ExampleConfigFromProperties() {
	cfg, warnings, err := connector.ConfigFromProperties(map[string]string{
		"zookeeper.connect":  "127.0.0.1:2181",
		"group.id":           "test-consumer-group",
		"auto.offset.reset":  "smallest",
		"enable.auto.commit": "false",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, w := range warnings {
		fmt.Println(w)
	}
	if err := cfg.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.GroupID, cfg.AutoOffsetReset, cfg.AutoCommitEnable)
	// Output:
	// connector: property enable.auto.commit is not valid for the ZooKeeper-based consumer and is ignored (did you mean auto.commit.enable?)
	// test-consumer-group smallest true
}

// ConfigFromProperties reports values that do not parse and values that
// Validate refuses in one round, every one of them a *ConfigError matching
// ErrInvalidConfig, and a key whose value did not parse only once.
func TestConfigFromPropertiesValidatesInTheSameRound(t *testing.T) {
	c, _, err := connector.ConfigFromProperties(map[string]string{
		"zookeeper.connect":         "zk:2181",
		"socket.timeout.ms":         "soon",  // does not parse
		"fetch.wait.max.ms":         "-5",    // parses, refused by Validate
		"auto.offset.reset":         "first", // parses, refused by Validate
		"queued.max.message.chunks": "0",     // parses, refused by Validate
	})
	assert.ElementsMatch(t, []string{"socket.timeout.ms", "fetch.wait.max.ms", "auto.offset.reset",
		"queued.max.message.chunks", "group.id"}, errorKeys(t, err))
	for _, e := range configErrors(t, err) {
		assert.ErrorIs(t, e, connector.ErrInvalidConfig)
	}
	assert.ErrorIs(t, err, connector.ErrInvalidConfig)
	assert.Empty(t, c.ClientID, "the returned Config is not validated: derived fields stay unset")
}
