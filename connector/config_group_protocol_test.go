package connector_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/connector"
)

// TestGroupProtocolConfig: group.protocol is classic by default, accepts
// consumer (any case, as Java does), and refuses anything else;
// group.remote.assignor takes Kafka's two server-side assignors, only with
// the consumer protocol; both are read from properties under Java's keys.
func TestGroupProtocolConfig(t *testing.T) {
	c := kafkaModeConfig()
	require.NoError(t, c.Validate())
	assert.Equal(t, connector.GroupProtocolClassic, c.GroupProtocol)

	c = kafkaModeConfig()
	require.NoError(t, c.GroupProtocol.UnmarshalText([]byte("CONSUMER")), "any case, as Java reads it")
	c.GroupRemoteAssignor = connector.RemoteAssignorRange
	require.NoError(t, c.Validate())
	assert.Equal(t, connector.GroupProtocolConsumer, c.GroupProtocol)

	for _, tc := range []struct {
		name   string
		mutate func(*connector.Config)
		key    string
	}{
		{"unknown protocol", func(c *connector.Config) { c.GroupProtocol = 9 }, "group.protocol"},
		{"unknown assignor", func(c *connector.Config) {
			c.GroupProtocol = connector.GroupProtocolConsumer
			c.GroupRemoteAssignor = 9
		}, "group.remote.assignor"},
		{"assignor without the consumer protocol", func(c *connector.Config) { c.GroupRemoteAssignor = connector.RemoteAssignorUniform }, "group.remote.assignor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := kafkaModeConfig()
			tc.mutate(&c)
			assert.Equal(t, []string{tc.key}, errorKeys(t, c.Validate()))
		})
	}

	cfg, _, err := connector.ConfigFromProperties(map[string]string{
		"group.id": "g", "zkconsumer.group.coordination": "kafka", "bootstrap.servers": "b:9092",
		"group.protocol": "consumer", "group.remote.assignor": "uniform",
	})
	require.NoError(t, err)
	assert.Equal(t, connector.GroupProtocolConsumer, cfg.GroupProtocol)
	assert.Equal(t, connector.RemoteAssignorUniform, cfg.GroupRemoteAssignor)
	assert.Equal(t, "consumer", cfg.Properties()["group.protocol"])

	// In ZooKeeper mode the keys mean nothing: a warning, not an error.
	zk := connector.DefaultConfig()
	zk.GroupID = "g"
	zk.ZooKeeperConnect = "zk:2181"
	zk.GroupProtocol = connector.GroupProtocolConsumer
	require.NoError(t, zk.Validate())
	assert.Contains(t, zk.ModeWarnings(), "connector: property group.protocol only applies with zkconsumer.group.coordination=kafka and is ignored")
}

// TestConsumerProtocolTopicFilterRefusals: with group.protocol=consumer the
// broker evaluates a whitelist itself, with RE2/J; what it cannot be given
// with Java's meaning is refused by CreateMessageStreamsByFilter, before
// any connection, with a ConfigError (key group.protocol) that names the
// construct and says that the broker reads the regex with RE2/J: the
// java.util.regex constructs RE2/J lacks or reads differently, a
// blacklist, and, with exclude.internal.topics (the default), a whitelist
// that matches an internal topic.
func TestConsumerProtocolTopicFilterRefusals(t *testing.T) {
	for _, tc := range []struct {
		filter   connector.TopicFilter
		exclude  bool
		contains []string
	}{
		{connector.Whitelist(`orders(?=-eu)`), true, []string{`look-ahead "(?="`, "at index 6"}},
		{connector.Whitelist(`orders(?<!x)`), true, []string{`look-behind "(?<!"`}},
		{connector.Whitelist(`(a)\1`), true, []string{`back-reference "\1"`}},
		{connector.Whitelist(`a*+`), true, []string{"possessive quantifier"}},
		{connector.Whitelist(`(?>a|ab)c`), true, []string{`atomic group "(?>"`}},
		{connector.Whitelist(`[a-z&&[^aeiou]].*`), true, []string{`class intersection "&&"`}},
		{connector.Blacklist(`internal-.*`), true, []string{"a blacklist", "look-ahead"}},
		{connector.Blacklist(`internal-.*`), false, []string{"a blacklist"}},
		{connector.Whitelist(`.*`), true, []string{"internal topic __consumer_offsets", "exclude.internal.topics=false"}},
	} {
		t.Run(strings.Join(tc.contains, ","), func(t *testing.T) {
			cfg := kafkaModeConfig()
			cfg.GroupProtocol = connector.GroupProtocolConsumer
			cfg.ExcludeInternalTopics = tc.exclude
			conn, err := connector.New(t.Context(), cfg)
			require.NoError(t, err)
			defer func() { require.NoError(t, conn.Shutdown(context.Background())) }()
			_, err = conn.CreateMessageStreamsByFilter(context.Background(), tc.filter, 1)
			var ce *connector.ConfigError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, "group.protocol", ce.Key)
			for _, s := range append(tc.contains, "RE2/J", "group.protocol=classic") {
				require.Contains(t, ce.Reason, s)
			}
			t.Log(err)
		})
	}
}
