package testcluster

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/IBM/sarama"
)

// Broker releases Options.BrokerVersion accepts besides the default 3.9.
// Their jars are fetched only for the broker matrix (make test-matrix:
// testinfra/fetch-jars.sh --matrix), except 1.1.1's, which .cache/kafka111
// already holds.
const (
	// BrokerVersion0102 is Kafka 0.10.2.2: message formats v0 and v1 only
	// (no record batches, no idempotence, no zstd).
	BrokerVersion0102 = "0.10.2.2"
	// BrokerVersion111 is Kafka 1.1.1, the last release with the Scala
	// consumer: message formats v0 to v2, no zstd.
	BrokerVersion111 = "1.1.1"
	// BrokerVersion282 is Kafka 2.8.2: zstd (2.1+), KIP-455 reassignments
	// and KIP-460 elections through the admin protocol.
	BrokerVersion282 = "2.8.2"
	// BrokerVersion39 is the Kafka 3.9 of .cache/kafka39, the default.
	BrokerVersion39 = "3.9"
)

// BrokerVersions lists every release Options.BrokerVersion accepts, oldest
// first.
var BrokerVersions = []string{BrokerVersion0102, BrokerVersion111, BrokerVersion282, BrokerVersion39}

// ErrUnknownBrokerVersion is returned by Start for an Options.BrokerVersion
// not in BrokerVersions.
var ErrUnknownBrokerVersion = fmt.Errorf("testcluster: unknown broker version (known: %v)", BrokerVersions)

// brokerRelease is how to run one Kafka release as a ZooKeeper-mode broker.
type brokerRelease struct {
	version string
	// cache is the directory under .cache/ whose lib/ holds its jars.
	cache string
	// saramaVersion is the newest protocol the release speaks, for
	// clients that choose message formats from the configured version
	// rather than from the broker's ApiVersions answer (sarama's producer).
	saramaVersion sarama.KafkaVersion
	// props are server.properties entries the release needs.
	props map[string]string
}

func releaseFor(version string) (brokerRelease, error) {
	switch version {
	case "", BrokerVersion39:
		return brokerRelease{version: BrokerVersion39, cache: "kafka39", saramaVersion: sarama.V3_9_0_0}, nil
	case BrokerVersion282:
		return brokerRelease{version: version, cache: "kafka-broker-2.8.2", saramaVersion: sarama.V2_8_0_0}, nil
	case BrokerVersion111:
		// The tools' classpath is a complete broker's: kafka_2.12's
		// core jar with ZooKeeper 3.5.9 and jaxb-api for Java 17.
		return brokerRelease{version: version, cache: "kafka111", saramaVersion: sarama.V1_1_0_0}, nil
	case BrokerVersion0102:
		return brokerRelease{version: version, cache: "kafka-broker-0.10.2.2", saramaVersion: sarama.V0_10_2_0}, nil
	}
	return brokerRelease{}, fmt.Errorf("%w: %q", ErrUnknownBrokerVersion, version)
}

// classpath is the broker's -cp argument.
func (r brokerRelease) classpath() (string, error) {
	lib, err := libDir(r.cache)
	if err != nil {
		return "", err
	}
	return filepath.Join(lib, "*"), nil
}

// BrokerRelease is the Kafka release of the cluster's brokers (one of
// BrokerVersions); BrokerVersion39 for a cluster built from the
// environment.
func (c *Cluster) BrokerRelease() string {
	r, err := releaseFor(c.opts.BrokerVersion)
	if err != nil {
		return c.opts.BrokerVersion
	}
	return r.version
}

// BrokerSaramaVersion is the sarama.KafkaVersion of the cluster's broker
// release: what a sarama producer must be configured with, since it picks
// its message format from the configured version (record batches from
// 0.11), not from what the broker announces.
func (c *Cluster) BrokerSaramaVersion() sarama.KafkaVersion {
	if c.kraft {
		return sarama.MaxVersion
	}
	r, err := releaseFor(c.opts.BrokerVersion)
	if err != nil {
		return sarama.V3_9_0_0
	}
	return r.saramaVersion
}

// BrokerAtLeast reports whether the cluster's broker release is version or
// newer; version is one of BrokerVersions.
func (c *Cluster) BrokerAtLeast(version string) bool {
	return slices.Index(BrokerVersions, c.BrokerRelease()) >= slices.Index(BrokerVersions, version)
}

// addReleaseProperties adapts the broker properties of addBroker to an
// older release's.
func addReleaseProperties(version string, props map[string]string) {
	r, err := releaseFor(version)
	if err != nil {
		return
	}
	for k, v := range r.props {
		props[k] = v
	}
}

// EnvMatrixBrokers narrows the broker matrix (make test-matrix
// MATRIX_BROKERS=...) to some releases: a comma-separated list of
// BrokerVersions.
const EnvMatrixBrokers = "ZKCONSUMER_MATRIX_BROKERS"

// MatrixBrokerVersions is the releases the broker matrix runs: those named
// by EnvMatrixBrokers, or all of BrokerVersions.
func MatrixBrokerVersions() ([]string, error) {
	env := strings.TrimSpace(os.Getenv(EnvMatrixBrokers))
	if env == "" {
		return slices.Clone(BrokerVersions), nil
	}
	var out []string
	for _, v := range strings.Split(env, ",") {
		v = strings.TrimSpace(v)
		if !slices.Contains(BrokerVersions, v) {
			return nil, fmt.Errorf("%w: %s names %q", ErrUnknownBrokerVersion, EnvMatrixBrokers, v)
		}
		out = append(out, v)
	}
	return out, nil
}
