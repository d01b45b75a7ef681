package connector_test

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/connector"
)

func kafkaModeConfig() connector.Config {
	c := connector.DefaultConfig()
	c.GroupID = "grp"
	c.GroupCoordination = connector.CoordinationKafka
	c.BootstrapServers = "b1:9092, b2:9093"
	return c
}

// TestKafkaModeNeedsNoZooKeeper: with zkconsumer.group.coordination=kafka,
// bootstrap.servers replaces zookeeper.connect; the Java consumer's names
// for auto.offset.reset are accepted (in ZooKeeper mode too:
// TestJavaOffsetResetNamesInBothModes).
func TestKafkaModeNeedsNoZooKeeper(t *testing.T) {
	c := kafkaModeConfig()
	require.NoError(t, c.AutoOffsetReset.UnmarshalText([]byte("earliest")))
	require.NoError(t, c.Validate())
	assert.Equal(t, connector.CoordinationKafka, c.GroupCoordination)
	assert.Equal(t, connector.AutoOffsetResetSmallest, c.AutoOffsetReset)
	assert.Empty(t, c.ModeWarnings())
}

// TestCoordinationRequiredServers: giving neither zookeeper.connect nor
// bootstrap.servers, or the one the mode does not use, is a clear error.
func TestCoordinationRequiredServers(t *testing.T) {
	neither := connector.DefaultConfig()
	neither.GroupID = "g"
	errs := configErrorsOf(t, neither.Validate())
	require.Len(t, errs, 1)
	assert.Equal(t, "zookeeper.connect", errs[0].Key)
	assert.Contains(t, errs[0].Reason, "bootstrap.servers")
	assert.Contains(t, errs[0].Reason, "zkconsumer.group.coordination=kafka")

	onlyBootstrap := neither
	onlyBootstrap.BootstrapServers = "b:9092"
	errs = configErrorsOf(t, onlyBootstrap.Validate())
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Reason, "set zkconsumer.group.coordination=kafka")

	kafkaNoServers := kafkaModeConfig()
	kafkaNoServers.BootstrapServers = ""
	kafkaNoServers.ZooKeeperConnect = "zk:2181"
	assert.Equal(t, []string{"bootstrap.servers"}, errorKeys(t, kafkaNoServers.Validate()))
}

func configErrorsOf(t *testing.T, err error) []*connector.ConfigError { return configErrors(t, err) }

func TestKafkaModeValidation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*connector.Config)
		key    string
	}{
		{"unknown mode", func(c *connector.Config) { c.GroupCoordination = 7 }, "zkconsumer.group.coordination"},
		{"no port", func(c *connector.Config) { c.BootstrapServers = "b1" }, "bootstrap.servers"},
		{"bad port", func(c *connector.Config) { c.BootstrapServers = "b1:99999" }, "bootstrap.servers"},
		{"heartbeat", func(c *connector.Config) { c.HeartbeatInterval = c.SessionTimeout }, "heartbeat.interval.ms"},
		{"session", func(c *connector.Config) { c.SessionTimeout = 0 }, "session.timeout.ms"},
		{"max poll", func(c *connector.Config) { c.MaxPollInterval = -time.Second }, "max.poll.interval.ms"},
		{"metadata", func(c *connector.Config) { c.MetadataMaxAge = 0 }, "metadata.max.age.ms"},
		{"instance", func(c *connector.Config) { c.GroupInstanceID = "a/b" }, "group.instance.id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := kafkaModeConfig()
			tc.mutate(&c)
			assert.Contains(t, errorKeys(t, c.Validate()), tc.key)
		})
	}
}

// TestOtherModeKeysWarn: keys of the other mode are warnings, not errors,
// so that one properties file serves a group moving off ZooKeeper.
func TestOtherModeKeysWarn(t *testing.T) {
	c, warnings, err := connector.ConfigFromProperties(map[string]string{
		"group.id":                      "g",
		"zkconsumer.group.coordination": "kafka",
		"bootstrap.servers":             "b:9092",
		"zookeeper.connect":             "zk:2181",
		"zookeeper.session.timeout.ms":  "6000",
		"offsets.storage":               "kafka",
		"dual.commit.enabled":           "true",
		"session.timeout.ms":            "10000",
	})
	require.NoError(t, err)
	require.NoError(t, c.Validate())
	require.Len(t, warnings, 4)
	for i, key := range []string{"dual.commit.enabled", "offsets.storage", "zookeeper.connect", "zookeeper.session.timeout.ms"} {
		assert.Contains(t, warnings[i], "property "+key+" is ignored with zkconsumer.group.coordination=kafka")
	}
	assert.Contains(t, warnings[3], "did you mean session.timeout.ms?")
	assert.Equal(t, 10*time.Second, c.SessionTimeout)

	zk := validConfig()
	zk.GroupInstanceID = "i-1"
	zk.SessionTimeout = 10 * time.Second
	w := zk.ModeWarnings()
	require.Len(t, w, 2)
	assert.Contains(t, w[0], "session.timeout.ms only applies with zkconsumer.group.coordination=kafka")
	assert.Contains(t, w[1], "group.instance.id only applies")
	assert.Empty(t, validConfig().ModeWarnings(), "defaults never warn")
}

// TestKafkaModePropertiesRoundTrip: Properties leaves out the keys the mode
// ignores, and reads back as the same Config without warnings.
func TestKafkaModePropertiesRoundTrip(t *testing.T) {
	c := kafkaModeConfig()
	c.SessionTimeout = 10 * time.Second
	c.GroupInstanceID = "inst-1"
	require.NoError(t, c.Validate())
	props := c.Properties()
	for _, key := range []string{"zookeeper.connect", "zookeeper.session.timeout.ms", "offsets.storage", "dual.commit.enabled", "rebalance.max.retries"} {
		assert.NotContains(t, props, key)
	}
	assert.Equal(t, "inst-1", props["group.instance.id"])
	out, warnings, err := connector.ConfigFromProperties(props)
	require.NoError(t, err)
	assert.Empty(t, warnings)
	require.NoError(t, out.Validate())
	assert.Equal(t, c.Properties(), out.Properties())
}

// TestJavaOffsetResetNamesInBothModes: "earliest" and "latest" (the Java
// consumer's names) mean smallest and largest in both coordination modes,
// as Java maps them, and read from properties alike.
func TestJavaOffsetResetNamesInBothModes(t *testing.T) {
	zk := connector.DefaultConfig()
	zk.GroupID = "grp"
	zk.ZooKeeperConnect = "zk1:2181"
	for name, base := range map[string]connector.Config{"zookeeper": zk, "kafka": kafkaModeConfig()} {
		for value, want := range map[string]connector.OffsetReset{
			"earliest": connector.AutoOffsetResetSmallest, "latest": connector.AutoOffsetResetLargest,
			"smallest": connector.AutoOffsetResetSmallest, "largest": connector.AutoOffsetResetLargest,
		} {
			c := base
			require.NoError(t, c.AutoOffsetReset.UnmarshalText([]byte(value)))
			require.NoError(t, c.Validate(), "%s mode, %s", name, value)
			assert.Equal(t, want, c.AutoOffsetReset, "%s mode, %s", name, value)

			props := c.Properties()
			props["auto.offset.reset"] = value
			fromProps, _, err := connector.ConfigFromProperties(props)
			require.NoError(t, err, "%s mode, %s", name, value)
			require.NoError(t, fromProps.Validate())
			assert.Equal(t, want, fromProps.AutoOffsetReset, "%s mode, %s from properties", name, value)
		}
	}
}

// lockedWriter is a bytes.Buffer safe for concurrent writes.
type lockedWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestNilLoggerLogsThroughSlogDefault: with Config.Logger nil, every
// record of the connector goes to slog.Default() (the warnings about keys
// the mode ignores and the rest alike, with the group and consumer id);
// with a Logger, they go to it and nothing reaches slog.Default().
func TestNilLoggerLogsThroughSlogDefault(t *testing.T) {
	var global lockedWriter
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&global, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	cfg := kafkaModeConfig()
	cfg.ZooKeeperSessionTimeout = 30 * time.Second
	open := func(cfg connector.Config) {
		conn, err := connector.New(t.Context(), cfg)
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		require.NoError(t, conn.Shutdown(ctx))
	}

	open(cfg)
	out := global.String()
	assert.Contains(t, out, "level=WARN")
	assert.Contains(t, out, "zookeeper.session.timeout.ms is ignored")
	assert.Contains(t, out, "level=INFO msg=\"using Kafka's group coordinator\"", "not only the warnings")
	assert.Contains(t, out, "group="+cfg.GroupID)

	var own lockedWriter
	cfg.Logger = slog.New(slog.NewTextHandler(&own, nil))
	before := global.String()
	open(cfg)
	assert.Contains(t, own.String(), "zookeeper.session.timeout.ms is ignored")
	assert.Contains(t, own.String(), "using Kafka's group coordinator")
	assert.Equal(t, before, global.String(), "nothing to slog.Default() with a Logger")
}

// TestStickyIsZooKeeperModeOnly: partition.assignment.strategy=sticky is
// accepted in ZooKeeper mode, from properties too, and refused in Kafka
// mode with a clear reason.
func TestStickyIsZooKeeperModeOnly(t *testing.T) {
	c := validConfig()
	c.PartitionAssignmentStrategy = []connector.AssignmentStrategy{connector.StrategySticky}
	require.NoError(t, c.Validate())
	props := c.Properties()
	assert.Equal(t, "sticky", props["partition.assignment.strategy"])
	back, _, err := connector.ConfigFromProperties(props)
	require.NoError(t, err)
	assert.Equal(t, []connector.AssignmentStrategy{connector.StrategySticky}, back.PartitionAssignmentStrategy)

	k := kafkaModeConfig()
	k.PartitionAssignmentStrategy = []connector.AssignmentStrategy{connector.StrategySticky}
	err = k.Validate()
	require.ErrorIs(t, err, connector.ErrInvalidConfig)
	assert.EqualError(t, err, `connector: invalid partition.assignment.strategy "sticky": is zkconsumer's ZooKeeper-mode strategy; with zkconsumer.group.coordination=kafka use range, roundrobin or cooperative-sticky`)
}

// TestKafkaModeAssignorLists: in Kafka mode partition.assignment.strategy
// is a list, as in Java, of range, roundrobin and cooperative-sticky or
// the class names of Java's assignors (written comma-separated in
// properties); ZooKeeper mode refuses cooperative-sticky and lists.
func TestKafkaModeAssignorLists(t *testing.T) {
	kafkaProps := func(value string) map[string]string {
		return map[string]string{"group.id": "g", "zkconsumer.group.coordination": "kafka", "bootstrap.servers": "b:9092",
			"partition.assignment.strategy": value}
	}
	for value, want := range map[string][]connector.AssignmentStrategy{
		"cooperative-sticky":       {connector.StrategyCooperativeSticky},
		"range,cooperative-sticky": {connector.StrategyRange, connector.StrategyCooperativeSticky},
		" range , roundrobin ":     {connector.StrategyRange, connector.StrategyRoundRobin},
		"org.apache.kafka.clients.consumer.CooperativeStickyAssignor": {connector.StrategyCooperativeSticky},
		"org.apache.kafka.clients.consumer.RangeAssignor,org.apache.kafka.clients.consumer.CooperativeStickyAssignor": {
			connector.StrategyRange, connector.StrategyCooperativeSticky},
	} {
		k, _, err := connector.ConfigFromProperties(kafkaProps(value))
		require.NoError(t, err, value)
		require.Equal(t, want, k.PartitionAssignmentStrategy, value)
		require.NoError(t, k.Validate(), value)
	}
	for value, reason := range map[string]string{
		"range,range":            "lists range twice",
		"range,":                 "must list range, roundrobin, sticky or cooperative-sticky",
		"cooperative":            `"cooperative" is not one of range, roundrobin, sticky, cooperative-sticky`,
		"range,sticky":           "is zkconsumer's ZooKeeper-mode strategy",
		"org.example.MyAssignor": `"org.example.MyAssignor" is not one of`,
	} {
		_, _, err := connector.ConfigFromProperties(kafkaProps(value))
		require.ErrorIs(t, err, connector.ErrInvalidConfig, value)
		require.ErrorContains(t, err, reason, value)
	}
	for _, value := range [][]connector.AssignmentStrategy{
		{connector.StrategyRange, connector.StrategyRange},
		{connector.StrategySticky},
		{},
	} {
		k := kafkaModeConfig()
		k.PartitionAssignmentStrategy = value
		require.ErrorIs(t, k.Validate(), connector.ErrInvalidConfig, "%v", value)
	}
	for _, value := range [][]connector.AssignmentStrategy{
		{connector.StrategyCooperativeSticky},
		{connector.StrategyRange, connector.StrategyRoundRobin},
		{},
	} {
		c := validConfig()
		c.PartitionAssignmentStrategy = value
		require.ErrorContains(t, c.Validate(), "must be one of range, roundrobin, sticky", "%v", value)
	}
}
