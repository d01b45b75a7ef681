// Package exporters checks that monitoring tools written for Kafka's old
// ZooKeeper consumer read zkconsumer's groups: kafka_exporter's ZooKeeper
// lag, through the library it uses, github.com/krallistic/kazoo-go. It has
// tests only and runs against the real shared cluster (ZOOKEEPER_CONNECT
// and KAFKA_BROKERS, or one this test binary starts).
package exporters

import (
	"testing"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

func TestMain(m *testing.M) { testcluster.Main(m) }
