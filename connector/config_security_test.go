package connector_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/connector"
)

// TestConfigHidesSecrets: no secret shows in %v of a Config, in its
// validation errors or in the properties loader's errors.
func TestConfigHidesSecrets(t *testing.T) {
	props := map[string]string{
		"group.id":                "g",
		"zookeeper.connect":       "127.0.0.1:2181",
		"security.protocol":       "SASL_SSL",
		"sasl.mechanism":          "SCRAM-SHA-512",
		"sasl.jaas.config":        `org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="secret-1"`, // no ';'
		"ssl.truststore.password": "secret-2",
		"ssl.keystore.password":   "secret-3",
		"ssl.key.password":        "secret-4",
		"zookeeper.auth":          "bob:secret-5",
		"zookeeper.set.acl":       "maybe-secret-6",
	}
	cfg, warnings, err := connector.ConfigFromProperties(props)
	require.Empty(t, warnings)
	require.ErrorContains(t, err, "zookeeper.set.acl")
	cfg.Security.SASLPassword = "secret-7"
	for _, out := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprintf("%v", &cfg)} {
		require.NotContains(t, out, "secret-", "%s", out)
	}
	err = cfg.Validate()
	require.Error(t, err)
	require.NotContains(t, err.Error(), "secret-")
	var ce *connector.ConfigError
	require.True(t, errors.As(err, &ce))
	require.ErrorIs(t, err, connector.ErrInvalidConfig)
	require.True(t, strings.Contains(err.Error(), "sasl.username"), "%v", err)
}

// TestSecurityProperties: the security keys round-trip through
// Properties, and librdkafka's names are accepted.
func TestSecurityProperties(t *testing.T) {
	cfg, warnings, err := connector.ConfigFromProperties(map[string]string{
		"group.id":                   "g",
		"zookeeper.connect":          "127.0.0.1:2181",
		"security.protocol":          "SSL",
		"ssl.ca.location":            "/etc/ca.pem",
		"ssl.certificate.location":   "/etc/c.pem",
		"ssl.key.location":           "/etc/c.key",
		"zookeeper.clientCnxnSocket": "org.apache.zookeeper.ClientCnxnSocketNetty",
	})
	require.NoError(t, err)
	require.Empty(t, warnings)
	require.NoError(t, cfg.Validate())
	require.Equal(t, "/etc/ca.pem", cfg.Security.SSLTruststoreLocation)
	back, _, err := connector.ConfigFromProperties(cfg.Properties())
	require.NoError(t, err)
	require.NoError(t, back.Validate())
	require.Equal(t, cfg.Security.String(), back.Security.String())
}
