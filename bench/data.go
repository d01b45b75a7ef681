package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

// shape is one topic layout the benchmark reads.
type shape struct {
	name       string
	label      string
	size       int // value bytes
	partitions int32
	messages   int // before scaling
	codec      sarama.CompressionCodec
}

var allShapes = []shape{
	{"p1", "100 B x 1 partition", 100, 1, 1_000_000, sarama.CompressionNone},
	{"p12", "100 B x 12 partitions", 100, 12, 1_000_000, sarama.CompressionNone},
	{"1k", "1 KiB x 4 partitions", 1024, 4, 400_000, sarama.CompressionNone},
	{"10k", "10 KiB x 4 partitions", 10240, 4, 40_000, sarama.CompressionNone},
	{"lz4", "1 KiB x 4 partitions, lz4", 1024, 4, 400_000, sarama.CompressionLZ4},
	{"zstd", "1 KiB x 4 partitions, zstd", 1024, 4, 400_000, sarama.CompressionZSTD},
}

func shapeNames() string {
	var names []string
	for _, s := range allShapes {
		names = append(names, s.name)
	}
	return strings.Join(names, ",")
}

func selectShapes(list string) ([]shape, error) {
	var out []shape
	for name := range strings.SplitSeq(list, ",") {
		found := false
		for _, s := range allShapes {
			if s.name == strings.TrimSpace(name) {
				out = append(out, s)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown shape %q (known: %s)", name, shapeNames())
		}
	}
	return out, nil
}

// clusterEnv names the cluster.
type clusterEnv struct {
	zk      string
	brokers []string
}

// dataset is a filled topic.
type dataset struct {
	shape
	topic string
	ends  []int64 // end offset of each partition; all start at 0
	total int64
}

func saramaConfig(clientID string) *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.ClientID = clientID
	cfg.Version = sarama.V3_9_0_0
	return cfg
}

// prepare returns the topic of s, creating and filling it unless a
// complete one is there from an earlier run.
func prepare(ctx context.Context, env clusterEnv, s shape, scale float64) (*dataset, error) {
	n := max(int(float64(s.messages)*scale), int(s.partitions))
	base := fmt.Sprintf("zkbench-%s-n%d-v1", s.name, n)
	var topic string
	// The first complete topic of base, base-2, base-3, ... is reused; an
	// incomplete one is left over from an interrupted fill.
	for i := 1; ; i++ {
		topic = base
		if i > 1 {
			topic = fmt.Sprintf("%s-%d", base, i)
		}
		ends, err := testcluster.TopicEnds(env.brokers, topic)
		if err == nil && sum(ends) == int64(n) {
			return &dataset{shape: s, topic: topic, ends: ends, total: int64(n)}, nil
		}
		if errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
			break
		}
		if err != nil && i > 20 {
			return nil, err
		}
	}
	d := &dataset{shape: s, topic: topic}
	admin, err := sarama.NewClusterAdmin(env.brokers, saramaConfig("zkbench-admin"))
	if err != nil {
		return nil, err
	}
	err = admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: s.partitions, ReplicationFactor: 1}, false)
	_ = admin.Close()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := fill(ctx, env, topic, s, n); err != nil {
		return nil, err
	}
	ends, err := testcluster.TopicEnds(env.brokers, topic)
	if err != nil {
		return nil, err
	}
	if sum(ends) != int64(n) {
		return nil, fmt.Errorf("topic %s holds %d messages, want %d", topic, sum(ends), n)
	}
	fmt.Printf("filled %s: %d messages in %v\n", topic, n, time.Since(start).Round(time.Millisecond))
	d.ends, d.total = ends, int64(n)
	return d, nil
}

func sum(xs []int64) int64 {
	var s int64
	for _, x := range xs {
		s += x
	}
	return s
}

// value returns the value of message seq: "seq=<seq>;" then, for an
// uncompressed shape, dots (as testcluster.MessageValue); for a compressed
// one, random hex digits, so that it compresses about 2:1 rather than
// almost to nothing.
func value(rng *rand.Rand, seq, size int, compressed bool) []byte {
	v := make([]byte, 0, size)
	v = append(v, "seq="...)
	v = strconv.AppendInt(v, int64(seq), 10)
	v = append(v, ';')
	const hex = "0123456789abcdef"
	for len(v) < size {
		if compressed {
			v = append(v, hex[rng.IntN(16)])
		} else {
			v = append(v, '.')
		}
	}
	return v[:size]
}

// fill writes n messages of shape s to topic (testcluster.FillTopic),
// compressed with the shape's codec.
func fill(ctx context.Context, env clusterEnv, topic string, s shape, n int) error {
	rng := rand.New(rand.NewPCG(1, 2))
	compressed := s.codec != sarama.CompressionNone
	return testcluster.FillTopic(ctx, env.brokers, topic, s.partitions, n, s.codec,
		func(i int) []byte { return value(rng, i, s.size, compressed) })
}
