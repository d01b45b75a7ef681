package fetch

import (
	"fmt"

	"github.com/IBM/sarama"
)

// fetchVersion is the newest Fetch version allowed by v, the configured cap
// (the same table as sarama's own consumer). negotiateFetch lowers it
// further, per connection, to what the broker advertises, as sarama does
// for the Metadata and ListOffsets requests it sends: with the default
// configuration Kafka 0.10.2 gets Fetch v3, 1.1 v7, 2.7 and newer v12
// (TestNegotiatedVersions, make test-matrix).
//
//   - v12 (2.7+): flexible encoding; the newest sarama speaks. v13+ name
//     topics by id, which ZooKeeper-era tooling does not know.
//   - v11 (2.3+): rack id (unused: no follower fetching).
//   - v9/v10 (2.1+): current leader epoch, which fences a stale leader;
//     zstd.
//   - v7 (1.1+): fetch sessions, which we opt out of (epoch -1).
//   - v4/v5 (0.11+): isolation level, aborted transactions, record batches.
//   - v3 (0.10.1+): request-level max bytes; what Kafka 1.1.1's consumer
//     sends.
//   - v2 (0.10.0): message format v1 (timestamps).
func fetchVersion(v sarama.KafkaVersion) int16 {
	switch {
	case v.IsAtLeast(sarama.V2_7_0_0):
		return 12
	case v.IsAtLeast(sarama.V2_3_0_0):
		return 11
	case v.IsAtLeast(sarama.V2_1_0_0):
		return 10
	case v.IsAtLeast(sarama.V2_0_0_0):
		return 8
	case v.IsAtLeast(sarama.V1_1_0_0):
		return 7
	case v.IsAtLeast(sarama.V1_0_0_0):
		return 6
	case v.IsAtLeast(sarama.V0_11_0_0):
		return 5
	case v.IsAtLeast(sarama.V0_10_1_0):
		return 3
	case v.IsAtLeast(sarama.V0_10_0_0):
		return 2
	case v.IsAtLeast(sarama.V0_9_0_0):
		return 1
	}
	return 0
}

// negotiateFetch returns the Fetch version to use on b's connection: the
// newest that both capVersion allows and the broker supports (ApiVersions,
// Kafka 0.10+). A broker too old to answer ApiVersions gets capVersion,
// which the configured sarama Version then has to match.
func negotiateFetch(b *sarama.Broker, capVersion int16) (int16, error) {
	resp, err := b.ApiVersions(&sarama.ApiVersionsRequest{})
	if err != nil {
		return 0, fmt.Errorf("api versions: %w", err)
	}
	if resp.ErrorCode != 0 {
		// Kafka 0.10.0 and 0.10.1 know ApiVersions v0 only and answer it.
		return capVersion, nil
	}
	for _, k := range resp.ApiKeys {
		if k.ApiKey == apiKeyFetch {
			if k.MaxVersion < 0 || k.MinVersion > capVersion {
				return 0, fmt.Errorf("broker supports fetch v%d to v%d, we speak up to v%d", k.MinVersion, k.MaxVersion, capVersion)
			}
			return min(capVersion, k.MaxVersion), nil
		}
	}
	return 0, fmt.Errorf("broker does not support fetch requests: %w", sarama.ErrUnsupportedVersion)
}
