package connector_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/connector"
)

// validConfig returns the defaults plus the two required keys.
func validConfig() connector.Config {
	c := connector.DefaultConfig()
	c.GroupID = "grp"
	c.ZooKeeperConnect = "127.0.0.1:2181"
	return c
}

// configErrors flattens a joined error into its ConfigErrors.
func configErrors(t *testing.T, err error) []*connector.ConfigError {
	t.Helper()
	require.Error(t, err)
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	out := make([]*connector.ConfigError, 0, len(errs))
	for _, e := range errs {
		var ce *connector.ConfigError
		require.ErrorAs(t, e, &ce)
		require.ErrorIs(t, e, connector.ErrInvalidConfig)
		out = append(out, ce)
	}
	return out
}

func errorKeys(t *testing.T, err error) []string {
	t.Helper()
	var keys []string
	for _, ce := range configErrors(t, err) {
		keys = append(keys, ce.Key)
	}
	return keys
}

// TestDefaultsMatchKafka lists every key of Kafka 1.1.1's ConsumerConfig (and
// ZKConfig) with its default, plus the zkconsumer extensions.
func TestDefaultsMatchKafka(t *testing.T) {
	c := validConfig()
	require.NoError(t, c.Validate())
	want := map[string]string{
		"group.id":                          "grp",            // required
		"zookeeper.connect":                 "127.0.0.1:2181", // required
		"client.id":                         "grp",            // = group.id
		"socket.timeout.ms":                 "30000",
		"socket.receive.buffer.bytes":       "-1",
		"fetch.message.max.bytes":           "1048576",
		"fetch.max.bytes":                   "52428800",
		"num.consumer.fetchers":             "1",
		"auto.commit.enable":                "true",
		"auto.commit.interval.ms":           "60000",
		"queued.max.message.chunks":         "2",
		"rebalance.max.retries":             "4",
		"rebalance.backoff.ms":              "2000", // = zookeeper.sync.time.ms
		"fetch.min.bytes":                   "1",
		"fetch.wait.max.ms":                 "100",
		"refresh.leader.backoff.ms":         "200",
		"auto.offset.reset":                 "largest",
		"consumer.timeout.ms":               "-1",
		"exclude.internal.topics":           "true",
		"partition.assignment.strategy":     "range",
		"offsets.storage":                   "zookeeper",
		"dual.commit.enabled":               "false", // = offsets.storage == "kafka"
		"offsets.channel.backoff.ms":        "1000",
		"offsets.channel.socket.timeout.ms": "10000",
		"offsets.commit.max.retries":        "5",
		"zookeeper.session.timeout.ms":      "6000",
		"zookeeper.connection.timeout.ms":   "6000", // = zookeeper.session.timeout.ms
		"zookeeper.sync.time.ms":            "2000",
		// zkconsumer extensions.
		"zkconsumer.roundrobin.hash.format": "dash",
		"zkconsumer.isolation.level":        "read_uncommitted",
		"zkconsumer.group.coordination":     "zookeeper",
		"zkconsumer.rebalance.protocol":     "cooperative",
		"check.crcs":                        "true",
		"zkconsumer.recycle.messages":       "false",
		// consumer.id is absent: it is generated when unset; the keys of
		// zkconsumer.group.coordination=kafka are left out.
	}
	assert.Equal(t, want, c.Properties())

	// The same defaults, field by field.
	assert.Equal(t, connector.Config{
		GroupID:                     "grp",
		ZooKeeperConnect:            "127.0.0.1:2181",
		ClientID:                    "grp",
		SocketTimeout:               30 * time.Second,
		SocketReceiveBufferBytes:    -1,
		FetchMessageMaxBytes:        1048576,
		FetchMaxBytes:               52428800,
		NumConsumerFetchers:         1,
		AutoCommitEnable:            true,
		AutoCommitInterval:          time.Minute,
		QueuedMaxMessageChunks:      2,
		RebalanceMaxRetries:         4,
		RebalanceBackoff:            2 * time.Second,
		FetchMinBytes:               1,
		FetchWaitMax:                100 * time.Millisecond,
		RefreshLeaderBackoff:        200 * time.Millisecond,
		AutoOffsetReset:             connector.AutoOffsetResetLargest,
		ConsumerTimeout:             -time.Millisecond,
		ExcludeInternalTopics:       true,
		PartitionAssignmentStrategy: []connector.AssignmentStrategy{connector.StrategyRange},
		RebalanceProtocol:           connector.RebalanceCooperative,
		RoundRobinHashFormat:        connector.RoundRobinHashDash,
		OffsetsStorage:              connector.OffsetsStorageZooKeeper,
		DualCommitEnabled:           connector.DualCommitOff,
		OffsetsChannelBackoff:       time.Second,
		OffsetsChannelSocketTimeout: 10 * time.Second,
		OffsetsCommitMaxRetries:     5,
		ZooKeeperSessionTimeout:     6 * time.Second,
		ZooKeeperConnectionTimeout:  6 * time.Second,
		ZooKeeperSyncTime:           2 * time.Second,
		IsolationLevel:              connector.IsolationReadUncommitted,
		GroupCoordination:           connector.CoordinationZooKeeper,
		SessionTimeout:              45 * time.Second,
		HeartbeatInterval:           3 * time.Second,
		MaxPollInterval:             5 * time.Minute,
		MetadataMaxAge:              5 * time.Minute,
		GroupProtocol:               connector.GroupProtocolClassic,
		CheckCRCs:                   true,
	}, c)
}

func TestDefaultConfigLeavesRequiredAndDerivedUnset(t *testing.T) {
	c := connector.DefaultConfig()
	assert.Empty(t, c.GroupID)
	assert.Empty(t, c.ZooKeeperConnect)
	assert.Empty(t, c.ConsumerID)
	assert.Empty(t, c.ClientID)
	assert.Equal(t, 2*time.Second, c.RebalanceBackoff)
	assert.Equal(t, connector.DualCommitDefault, c.DualCommitEnabled)
	assert.Zero(t, c.ZooKeeperConnectionTimeout)
	assert.Nil(t, c.Logger)

	// The two required keys are reported, nothing else.
	assert.ElementsMatch(t, []string{"group.id", "zookeeper.connect"}, errorKeys(t, c.Validate()))
}

func TestValidateFillsDerivedDefaults(t *testing.T) {
	c := validConfig()
	c.GroupID = "orders"
	c.ZooKeeperSyncTime = 3 * time.Second
	c.ZooKeeperSessionTimeout = 9 * time.Second
	c.OffsetsStorage = connector.OffsetsStorageKafka
	require.NoError(t, c.Validate())
	assert.Equal(t, "orders", c.ClientID)
	assert.Equal(t, 2*time.Second, c.RebalanceBackoff, "only the properties loader makes it follow zookeeper.sync.time.ms")
	assert.Equal(t, 9*time.Second, c.ZooKeeperConnectionTimeout)
	assert.Equal(t, connector.DualCommitOn, c.DualCommitEnabled, "dual.commit.enabled defaults to true with kafka storage")
}

func TestValidateKeepsExplicitValues(t *testing.T) {
	c := validConfig()
	c.ClientID = "reader-1"
	c.RebalanceBackoff = time.Millisecond
	c.ZooKeeperConnectionTimeout = 30 * time.Second
	c.OffsetsStorage = connector.OffsetsStorageKafka
	c.DualCommitEnabled = connector.DualCommitOff
	require.NoError(t, c.Validate())
	assert.Equal(t, "reader-1", c.ClientID)
	assert.Equal(t, time.Millisecond, c.RebalanceBackoff)
	assert.Equal(t, 30*time.Second, c.ZooKeeperConnectionTimeout)
	assert.Equal(t, connector.DualCommitOff, c.DualCommitEnabled)
}

func TestValidateIsIdempotent(t *testing.T) {
	c := validConfig()
	require.NoError(t, c.Validate())
	once := c
	require.NoError(t, c.Validate())
	assert.Equal(t, once, c)
}

func TestValidateAcceptsEdgeValues(t *testing.T) {
	tests := map[string]func(c *connector.Config){
		"chroot":                       func(c *connector.Config) { c.ZooKeeperConnect = "zk1:2181,zk2:2182/kafka/prod" },
		"root chroot":                  func(c *connector.Config) { c.ZooKeeperConnect = "zk1:2181/" },
		"default port":                 func(c *connector.Config) { c.ZooKeeperConnect = "zk1,zk2" },
		"IPv6":                         func(c *connector.Config) { c.ZooKeeperConnect = "[::1]:2181,[fe80::1]/k" },
		"group id characters":          func(c *connector.Config) { c.GroupID = "A-z_0.9" },
		"generated-style consumer id":  func(c *connector.Config) { c.ConsumerID = "host.example.com-1530000000000-1a2b3c4d" },
		"consumer timeout zero":        func(c *connector.Config) { c.ConsumerTimeout = 0 },
		"consumer timeout positive":    func(c *connector.Config) { c.ConsumerTimeout = 5 * time.Second },
		"socket timeout = fetch wait":  func(c *connector.Config) { c.SocketTimeout, c.FetchWaitMax = time.Second, time.Second },
		"fetch wait zero":              func(c *connector.Config) { c.FetchWaitMax = 0 },
		"fixed receive buffer":         func(c *connector.Config) { c.SocketReceiveBufferBytes = 65536 },
		"fetch min bytes zero":         func(c *connector.Config) { c.FetchMinBytes = 0 },
		"no commit retries":            func(c *connector.Config) { c.OffsetsCommitMaxRetries = 0 },
		"auto-commit off, no interval": func(c *connector.Config) { c.AutoCommitEnable, c.AutoCommitInterval = false, 0 },
		"roundrobin bracket": func(c *connector.Config) {
			c.PartitionAssignmentStrategy = []connector.AssignmentStrategy{connector.StrategyRoundRobin}
			c.RoundRobinHashFormat = connector.RoundRobinHashBracket
		},
		"smallest":                     func(c *connector.Config) { c.AutoOffsetReset = connector.AutoOffsetResetSmallest },
		"read_committed":               func(c *connector.Config) { c.IsolationLevel = connector.IsolationReadCommitted },
		"sync time zero":               func(c *connector.Config) { c.ZooKeeperSyncTime = 0 },
		"zero backoffs":                func(c *connector.Config) { c.RefreshLeaderBackoff, c.OffsetsChannelBackoff = 0, 0 },
		"kafka storage":                func(c *connector.Config) { c.OffsetsStorage = connector.OffsetsStorageKafka },
		"explicit dual commit with zk": func(c *connector.Config) { c.DualCommitEnabled = connector.DualCommitOn },
		"largest fetch sizes": func(c *connector.Config) {
			c.FetchMessageMaxBytes, c.FetchMaxBytes, c.FetchMinBytes = 1<<31-1, 1<<31-1, 1<<31-1
		},
		"client id differs from group":  func(c *connector.Config) { c.ClientID = "x.y-z_1" },
		"single queued chunk and retry": func(c *connector.Config) { c.QueuedMaxMessageChunks, c.RebalanceMaxRetries = 1, 1 },
	}
	for name, mutate := range tests {
		t.Run(name, func(t *testing.T) {
			c := validConfig()
			mutate(&c)
			assert.NoError(t, c.Validate())
		})
	}
}

func TestValidateRejects(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(c *connector.Config)
		key    string
		reason string // a substring of the reason
	}{
		{"group missing", func(c *connector.Config) { c.GroupID = "" }, "group.id", "must be set"},
		{"group chars", func(c *connector.Config) { c.GroupID = "my group" }, "group.id", "ASCII alphanumerics"},
		{"group slash", func(c *connector.Config) { c.GroupID = "a/b" }, "group.id", "ASCII alphanumerics"},
		{"group non-ASCII", func(c *connector.Config) { c.GroupID = "grüppe" }, "group.id", "ASCII alphanumerics"},
		{"group dot", func(c *connector.Config) { c.GroupID = "." }, "group.id", `".."`},
		{"group dotdot", func(c *connector.Config) { c.GroupID = ".." }, "group.id", `".."`},
		{"client chars", func(c *connector.Config) { c.ClientID = "client:1" }, "client.id", "ASCII alphanumerics"},
		{"consumer id slash", func(c *connector.Config) { c.ConsumerID = "a/b" }, "consumer.id", "znode"},
		{"consumer id control", func(c *connector.Config) { c.ConsumerID = "a\x00b" }, "consumer.id", "znode"},
		{"consumer id dotdot", func(c *connector.Config) { c.ConsumerID = ".." }, "consumer.id", "znode"},
		{"zk missing", func(c *connector.Config) { c.ZooKeeperConnect = "" }, "zookeeper.connect", "required"},
		{"zk only chroot", func(c *connector.Config) { c.ZooKeeperConnect = "/kafka" }, "zookeeper.connect", "no servers"},
		{"zk empty server", func(c *connector.Config) { c.ZooKeeperConnect = "zk1:2181,,zk2:2181" }, "zookeeper.connect", "empty server"},
		{"zk trailing comma", func(c *connector.Config) { c.ZooKeeperConnect = "zk1:2181," }, "zookeeper.connect", "empty server"},
		{"zk space", func(c *connector.Config) { c.ZooKeeperConnect = "zk1:2181, zk2:2181" }, "zookeeper.connect", "white space"},
		{"zk bad port", func(c *connector.Config) { c.ZooKeeperConnect = "zk1:http" }, "zookeeper.connect", "invalid port"},
		{"zk port range", func(c *connector.Config) { c.ZooKeeperConnect = "zk1:65536" }, "zookeeper.connect", "invalid port"},
		{"zk empty port", func(c *connector.Config) { c.ZooKeeperConnect = "zk1:" }, "zookeeper.connect", "empty port"},
		{"zk empty host", func(c *connector.Config) { c.ZooKeeperConnect = ":2181" }, "zookeeper.connect", "empty host"},
		{"zk bare IPv6", func(c *connector.Config) { c.ZooKeeperConnect = "::1:2181" }, "zookeeper.connect", "brackets"},
		{"zk open bracket", func(c *connector.Config) { c.ZooKeeperConnect = "[::1:2181" }, "zookeeper.connect", "unterminated"},
		{"zk junk after bracket", func(c *connector.Config) { c.ZooKeeperConnect = "[::1]2181" }, "zookeeper.connect", "junk"},
		{"zk chroot trailing slash", func(c *connector.Config) { c.ZooKeeperConnect = "zk1:2181/kafka/" }, "zookeeper.connect", "ends with '/'"},
		{"zk chroot double slash", func(c *connector.Config) { c.ZooKeeperConnect = "zk1:2181/a//b" }, "zookeeper.connect", "znode path"},
		{"zk chroot dot", func(c *connector.Config) { c.ZooKeeperConnect = "zk1:2181/a/./b" }, "zookeeper.connect", "znode path"},
		{"socket timeout zero", func(c *connector.Config) { c.SocketTimeout, c.FetchWaitMax = 0, 0 }, "socket.timeout.ms", "must be positive"},
		{"socket timeout below fetch wait", func(c *connector.Config) { c.SocketTimeout = 50 * time.Millisecond }, "socket.timeout.ms", "at least fetch.wait.max.ms (100)"},
		{"fetch wait negative", func(c *connector.Config) { c.FetchWaitMax = -1 * time.Millisecond }, "fetch.wait.max.ms", "must not be negative"},
		{"fetch message max zero", func(c *connector.Config) { c.FetchMessageMaxBytes = 0 }, "fetch.message.max.bytes", "must be positive"},
		{"fetch max zero", func(c *connector.Config) { c.FetchMaxBytes = 0 }, "fetch.max.bytes", "must be positive"},
		{"fetch min negative", func(c *connector.Config) { c.FetchMinBytes = -1 }, "fetch.min.bytes", "must not be negative"},
		{"fetchers zero", func(c *connector.Config) { c.NumConsumerFetchers = 0 }, "num.consumer.fetchers", "at least 1"},
		{"queued chunks zero", func(c *connector.Config) { c.QueuedMaxMessageChunks = 0 }, "queued.max.message.chunks", "at least 1"},
		{"refresh leader negative", func(c *connector.Config) { c.RefreshLeaderBackoff = -time.Millisecond }, "refresh.leader.backoff.ms", "must not be negative"},
		{"auto commit interval zero", func(c *connector.Config) { c.AutoCommitInterval = 0 }, "auto.commit.interval.ms", "auto.commit.enable"},
		{"storage", func(c *connector.Config) { c.OffsetsStorage = 5 }, "offsets.storage", "must be one of zookeeper, kafka"},
		{"dual commit", func(c *connector.Config) { c.DualCommitEnabled = 5 }, "dual.commit.enabled", "must be one of true, false"},
		{"offsets channel backoff", func(c *connector.Config) { c.OffsetsChannelBackoff = -time.Millisecond }, "offsets.channel.backoff.ms", "must not be negative"},
		{"offsets channel timeout", func(c *connector.Config) { c.OffsetsChannelSocketTimeout = 0 }, "offsets.channel.socket.timeout.ms", "must be positive"},
		{"commit retries", func(c *connector.Config) { c.OffsetsCommitMaxRetries = -1 }, "offsets.commit.max.retries", "must not be negative"},
		{"rebalance retries", func(c *connector.Config) { c.RebalanceMaxRetries = 0 }, "rebalance.max.retries", "at least 1"},
		{"rebalance backoff", func(c *connector.Config) { c.RebalanceBackoff = -time.Millisecond }, "rebalance.backoff.ms", "must not be negative"},
		{"sync time", func(c *connector.Config) { c.ZooKeeperSyncTime = -time.Millisecond }, "zookeeper.sync.time.ms", "must not be negative"},
		{"strategy", func(c *connector.Config) {
			c.PartitionAssignmentStrategy = []connector.AssignmentStrategy{connector.StrategyCooperativeSticky}
		}, "partition.assignment.strategy", "must be one of range, roundrobin, sticky"},
		{"strategy out of range", func(c *connector.Config) { c.PartitionAssignmentStrategy = []connector.AssignmentStrategy{9} }, "partition.assignment.strategy", "must be one of range, roundrobin"},
		{"hash format", func(c *connector.Config) { c.RoundRobinHashFormat = 2 }, "zkconsumer.roundrobin.hash.format", "must be one of dash, bracket"},
		{"rebalance protocol", func(c *connector.Config) { c.RebalanceProtocol = 2 }, "zkconsumer.rebalance.protocol", "must be one of cooperative, eager"},
		{"offset reset", func(c *connector.Config) { c.AutoOffsetReset = 2 }, "auto.offset.reset", "must be one of smallest, largest, earliest, latest"},
		{"isolation", func(c *connector.Config) { c.IsolationLevel = 2 }, "zkconsumer.isolation.level", "must be one of read_uncommitted, read_committed"},
		{"fetch message max above int32", func(c *connector.Config) { c.FetchMessageMaxBytes = 1 << 31 }, "fetch.message.max.bytes", "must be at most 2147483647"},
		{"fetch max above int32", func(c *connector.Config) { c.FetchMaxBytes = 1 << 31 }, "fetch.max.bytes", "must be at most 2147483647"},
		{"fetch min above int32", func(c *connector.Config) { c.FetchMinBytes = 1 << 31 }, "fetch.min.bytes", "must be at most 2147483647"},
		{"endpoint identification", func(c *connector.Config) { c.Security.SSLEndpointIdentificationAlgorithm = 2 }, "ssl.endpoint.identification.algorithm", "must be one of https"},
		{"zookeeper endpoint identification", func(c *connector.Config) { c.Security.ZooKeeperSSLEndpointIdentificationEnable = 2 }, "zookeeper.ssl.endpoint.identification.enable", "must be one of true, false"},
		{"session timeout", func(c *connector.Config) { c.ZooKeeperSessionTimeout = 0 }, "zookeeper.session.timeout.ms", "must be positive"},
		{"connection timeout", func(c *connector.Config) { c.ZooKeeperConnectionTimeout = -time.Millisecond }, "zookeeper.connection.timeout.ms", "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			tt.mutate(&c)
			errs := configErrors(t, c.Validate())
			require.Len(t, errs, 1, "want exactly one error, got %v", errs)
			assert.Equal(t, tt.key, errs[0].Key)
			assert.Contains(t, errs[0].Reason, tt.reason)
			msg := errs[0].Error()
			assert.True(t, strings.HasPrefix(msg, "connector: invalid "+tt.key+" "), msg)
		})
	}
}

func TestConfigErrorMessage(t *testing.T) {
	c := validConfig()
	c.AutoOffsetReset = 7
	assert.EqualError(t, c.Validate(),
		`connector: invalid auto.offset.reset "OffsetReset(7)": must be one of smallest, largest, earliest, latest`)

	c = validConfig()
	c.SocketTimeout = 1500 * time.Microsecond
	assert.EqualError(t, c.Validate(),
		`connector: invalid socket.timeout.ms "1.5ms": must be at least fetch.wait.max.ms (100) to prevent unnecessary socket timeouts`)
}

func TestValidateReportsEveryProblem(t *testing.T) {
	c := connector.DefaultConfig()
	c.GroupID = "bad group"
	c.AutoOffsetReset = 7
	c.PartitionAssignmentStrategy = []connector.AssignmentStrategy{connector.StrategyRange, connector.StrategySticky}
	c.OffsetsStorage = 7
	c.QueuedMaxMessageChunks = 0
	c.SocketTimeout = 10 * time.Millisecond
	err := c.Validate()
	assert.ElementsMatch(t, []string{
		"group.id", "zookeeper.connect", "auto.offset.reset", "partition.assignment.strategy",
		"offsets.storage", "queued.max.message.chunks", "socket.timeout.ms",
	}, errorKeys(t, err))
	assert.ErrorIs(t, err, connector.ErrInvalidConfig)
	// An invalid group.id is not copied into client.id and reported twice.
	assert.Empty(t, c.ClientID)
	assert.Equal(t, connector.DualCommitDefault, c.DualCommitEnabled, "dual.commit.enabled cannot follow an invalid offsets.storage")
}

func TestValidateDoesNotReportDerivedFieldsTwice(t *testing.T) {
	c := validConfig()
	c.ZooKeeperSyncTime = -time.Second
	c.ZooKeeperSessionTimeout = -time.Second
	assert.ElementsMatch(t, []string{"zookeeper.sync.time.ms", "zookeeper.session.timeout.ms"}, errorKeys(t, c.Validate()))
}

func ExampleDefaultConfig() {
	cfg := connector.DefaultConfig()
	cfg.GroupID = "orders"
	cfg.ZooKeeperConnect = "zk1:2181,zk2:2181/kafka"
	cfg.AutoOffsetReset = connector.AutoOffsetResetSmallest
	if err := cfg.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.ClientID, cfg.RebalanceBackoff, cfg.DualCommitEnabled)
	// Output: orders 2s false
}

func ExampleConfig_Validate() {
	cfg := connector.DefaultConfig()
	cfg.GroupID = "orders"
	cfg.ZooKeeperConnect = "zk1:2181"
	cfg.PartitionAssignmentStrategy = []connector.AssignmentStrategy{connector.StrategyCooperativeSticky}
	cfg.FetchMinBytes = -1
	err := cfg.Validate()
	fmt.Println(err)
	fmt.Println(errors.Is(err, connector.ErrInvalidConfig))
	// Output:
	// connector: invalid fetch.min.bytes "-1": must not be negative
	// connector: invalid partition.assignment.strategy "cooperative-sticky": must be one of range, roundrobin, sticky
	// true
}
