package connector_test

import (
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
	c.GroupProtocol = "CONSUMER"
	c.GroupRemoteAssignor = "range"
	require.NoError(t, c.Validate())
	assert.Equal(t, connector.GroupProtocolConsumer, c.GroupProtocol)

	for _, tc := range []struct {
		name   string
		mutate func(*connector.Config)
		key    string
	}{
		{"unknown protocol", func(c *connector.Config) { c.GroupProtocol = "streams" }, "group.protocol"},
		{"unknown assignor", func(c *connector.Config) {
			c.GroupProtocol = connector.GroupProtocolConsumer
			c.GroupRemoteAssignor = "sticky"
		}, "group.remote.assignor"},
		{"assignor without the consumer protocol", func(c *connector.Config) { c.GroupRemoteAssignor = "uniform" }, "group.remote.assignor"},
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
	assert.Equal(t, "uniform", cfg.GroupRemoteAssignor)
	assert.Equal(t, "consumer", cfg.Properties()["group.protocol"])

	// In ZooKeeper mode the keys mean nothing: a warning, not an error.
	zk := connector.DefaultConfig()
	zk.GroupID = "g"
	zk.ZooKeeperConnect = "zk:2181"
	zk.GroupProtocol = connector.GroupProtocolConsumer
	require.NoError(t, zk.Validate())
	assert.Contains(t, zk.ModeWarnings(), "connector: property group.protocol only applies with zkconsumer.group.coordination=kafka and is ignored")
}
