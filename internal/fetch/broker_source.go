package fetch

import (
	"context"
	"slices"
)

// BrokerInfo is one broker the leader finder may ask for metadata, and the
// address the fetchers use for it when it leads partitions.
type BrokerInfo struct {
	// ID is the broker id (broker.id).
	ID int32
	// Addr is "host:port" of the broker's endpoint.
	Addr string
}

// BrokerSource lists the live brokers. The connector reads them from
// ZooKeeper (/brokers/ids), as Kafka's leader finder does; the tests use
// this package's staticBrokers. Brokers is called once per round of the leader finder, from
// its goroutine, and should give up when ctx ends.
type BrokerSource interface {
	Brokers(ctx context.Context) ([]BrokerInfo, error)
}

// staticBrokers is a BrokerSource with a fixed list.
type staticBrokers []BrokerInfo

var _ BrokerSource = staticBrokers(nil)

// Brokers returns a copy of the list.
func (s staticBrokers) Brokers(context.Context) ([]BrokerInfo, error) {
	return slices.Clone(s), nil
}
