package testcluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"
)

var nameSeq atomic.Int64

// UniqueName returns a topic or group name no other test of this run uses:
// prefix, the time and a sequence number, in Kafka's legal alphabet.
func UniqueName(prefix string) string {
	clean := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return '_'
	}, prefix)
	return fmt.Sprintf("%s-%d-%d", clean, time.Now().UnixMilli()%1e8, nameSeq.Add(1))
}

// SaramaConfig is the client configuration the harness uses.
func SaramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.ClientID = "zkconsumer-testcluster"
	cfg.Version = sarama.V3_9_0_0
	cfg.Net.DialTimeout = 10 * time.Second
	cfg.Metadata.Retry.Max = 10
	cfg.Metadata.Retry.Backoff = 200 * time.Millisecond
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Retry.Max = 10
	cfg.Producer.Retry.Backoff = 200 * time.Millisecond
	// A busy 2-core machine makes a fresh controller slow: admin requests
	// get far more than sarama's 3 s default.
	cfg.Admin.Timeout = 30 * time.Second
	return cfg
}

// ClientConfig is SaramaConfig for this cluster: with the newest protocol
// version sarama knows (sarama.MaxVersion) for a KRaft cluster of Kafka
// 4.x, whose brokers no longer serve some of the oldest request versions
// (KIP-896). Sarama still clamps every request to the versions the broker
// announces in its ApiVersions answer.
func (c *Cluster) ClientConfig() *sarama.Config {
	cfg := SaramaConfig()
	if c.kraft {
		cfg.Version = sarama.MaxVersion
	}
	return cfg
}

// CreateTopic creates a topic and waits until every partition has a leader.
func (c *Cluster) CreateTopic(ctx context.Context, topic string, partitions int32, replicationFactor int16) error {
	return c.CreateTopicWithConfig(ctx, topic, partitions, replicationFactor, nil)
}

// CreateTopicWithConfig is CreateTopic with topic-level configuration
// entries (e.g. message.format.version).
//
// On a busy machine a broker in ZooKeeper mode can answer UNKNOWN_SERVER_ERROR
// (its own ZooKeeper request timed out), NOT_CONTROLLER (the controller
// moved) or fail the connection; those are retried until ctx ends, and a
// topic that exists by then (made by an earlier attempt) counts as made.
func (c *Cluster) CreateTopicWithConfig(ctx context.Context, topic string, partitions int32, replicationFactor int16, configs map[string]string) error {
	detail := &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: replicationFactor}
	if len(configs) > 0 {
		detail.ConfigEntries = map[string]*string{}
		for k, v := range configs {
			detail.ConfigEntries[k] = &v
		}
	}
	for attempt := 0; ; attempt++ {
		err := c.createTopicOnce(topic, detail)
		// REQUEST_TIMED_OUT: the controller accepted the topic but did
		// not finish within the request's timeout; waitLeaders tells
		// whether it did.
		if err == nil || errors.Is(err, sarama.ErrTopicAlreadyExists) || errors.Is(err, sarama.ErrRequestTimedOut) {
			return c.waitLeaders(ctx, topic, partitions)
		}
		if !retriableAdminError(err) {
			return fmt.Errorf("testcluster: create topic %s: %w", topic, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testcluster: create topic %s: %w (after %d attempts; last: %w)", topic, ctx.Err(), attempt+1, err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (c *Cluster) createTopicOnce(topic string, detail *sarama.TopicDetail) error {
	admin, err := sarama.NewClusterAdmin(c.brokerAddrs, c.ClientConfig())
	if err != nil {
		return fmt.Errorf("testcluster: admin client: %w", err)
	}
	defer admin.Close()
	return admin.CreateTopic(topic, detail, false)
}

// retriableAdminError reports the failures of an admin request that a busy
// cluster gives and a later attempt may not: a broker's own ZooKeeper
// timeout (UNKNOWN_SERVER_ERROR), a controller that moved, brokers not yet
// up, and failed connections.
func retriableAdminError(err error) bool {
	var kerr sarama.KError
	var cerr sarama.ConfigurationError
	if errors.As(err, &cerr) {
		return false
	}
	if errors.As(err, &kerr) {
		switch kerr {
		case sarama.ErrUnknown, sarama.ErrNotController, sarama.ErrBrokerNotAvailable, sarama.ErrLeaderNotAvailable:
			return true
		}
		return false
	}
	return true // connection failures, an admin client that could not connect
}

// AlterTopicConfig replaces a topic's configuration entries with configs
// (AlterConfigs, Kafka 0.11+). In ZooKeeper mode the brokers apply them a
// moment later, when ZooKeeper notifies them.
func (c *Cluster) AlterTopicConfig(topic string, configs map[string]string) error {
	admin, err := sarama.NewClusterAdmin(c.brokerAddrs, c.ClientConfig())
	if err != nil {
		return fmt.Errorf("testcluster: admin client: %w", err)
	}
	defer admin.Close()
	entries := map[string]*string{}
	for k, v := range configs {
		entries[k] = &v
	}
	if err := admin.AlterConfig(sarama.TopicResource, topic, entries, false); err != nil {
		return fmt.Errorf("testcluster: alter the configuration of %s: %w", topic, err)
	}
	return nil
}

// AddPartitions raises a topic's partition count to total.
func (c *Cluster) AddPartitions(ctx context.Context, topic string, total int32) error {
	admin, err := sarama.NewClusterAdmin(c.brokerAddrs, c.ClientConfig())
	if err != nil {
		return fmt.Errorf("testcluster: admin client: %w", err)
	}
	defer admin.Close()
	if err := admin.CreatePartitions(topic, total, nil, false); err != nil {
		return fmt.Errorf("testcluster: add partitions to %s: %w", topic, err)
	}
	return c.waitLeaders(ctx, topic, total)
}

// DeleteRecords deletes the records of a partition below offset.
func (c *Cluster) DeleteRecords(topic string, partition int32, before int64) error {
	admin, err := sarama.NewClusterAdmin(c.brokerAddrs, c.ClientConfig())
	if err != nil {
		return fmt.Errorf("testcluster: admin client: %w", err)
	}
	defer admin.Close()
	return admin.DeleteRecords(topic, map[int32]int64{partition: before})
}

func (c *Cluster) waitLeaders(ctx context.Context, topic string, partitions int32) error {
	client, err := sarama.NewClient(c.brokerAddrs, c.ClientConfig())
	if err != nil {
		return fmt.Errorf("testcluster: client: %w", err)
	}
	defer client.Close()
	for {
		err := client.RefreshMetadata(topic)
		if err == nil {
			ps, perr := client.Partitions(topic)
			ready := perr == nil && int32(len(ps)) >= partitions
			for _, p := range ps {
				if _, lerr := client.Leader(topic, p); lerr != nil {
					ready = false
				}
			}
			if ready {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testcluster: topic %s has no leader for all %d partitions: %w", topic, partitions, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ProduceOptions shapes the messages Produce writes.
type ProduceOptions struct {
	// Partition, if >= 0, receives every message; otherwise messages go
	// round-robin over all partitions.
	Partition int32
	// Compression of the producer's batches.
	Compression sarama.CompressionCodec
	// NotIdempotent turns the producer's idempotence off, as topics in
	// message formats v0 and v1 require (brokers before 0.11 get a plain
	// producer anyway).
	NotIdempotent bool
	// ValueSize pads values to this many bytes (at least the sequence).
	ValueSize int
	// FirstSeq is the sequence number of the first message.
	FirstSeq int
}

// Produced records where each message landed, by sequence number.
type Produced struct {
	// Offsets maps partition to the offsets written, in order.
	Offsets map[int32][]int64
	// Seqs maps partition to the sequence numbers written, in offset order.
	Seqs map[int32][]int
}

// Count is the number of messages written.
func (p Produced) Count() int {
	n := 0
	for _, o := range p.Offsets {
		n += len(o)
	}
	return n
}

// MessageValue is the value Produce writes for seq: "seq=<n>;" padded with
// '.' to size bytes.
func MessageValue(seq, size int) []byte {
	v := []byte("seq=" + strconv.Itoa(seq) + ";")
	for len(v) < size {
		v = append(v, '.')
	}
	return v
}

// ParseSeq recovers the sequence number from a value written by Produce.
func ParseSeq(value []byte) (int, error) {
	s := string(value)
	if !strings.HasPrefix(s, "seq=") {
		return 0, fmt.Errorf("testcluster: value %.20q was not written by Produce", s)
	}
	end := strings.IndexByte(s, ';')
	if end < 0 {
		return 0, fmt.Errorf("testcluster: value %.20q was not written by Produce", s)
	}
	return strconv.Atoi(s[4:end])
}

// Produce writes n keyed messages ("key-<seq>", MessageValue) to topic and
// returns where they landed. Within a partition, sequence numbers ascend.
func (c *Cluster) Produce(ctx context.Context, topic string, n int, opts ProduceOptions) (Produced, error) {
	cfg := c.ClientConfig()
	cfg.Producer.Compression = opts.Compression
	cfg.Producer.Flush.Messages = 500
	cfg.Producer.Flush.Frequency = 5 * time.Millisecond
	// Sarama picks the message format from the configured version.
	cfg.Version = c.BrokerSaramaVersion()
	cfg.Producer.Idempotent = !opts.NotIdempotent && cfg.Version.IsAtLeast(sarama.V0_11_0_0)
	cfg.Net.MaxOpenRequests = 1
	if opts.Partition >= 0 {
		cfg.Producer.Partitioner = sarama.NewManualPartitioner
	} else {
		cfg.Producer.Partitioner = sarama.NewRoundRobinPartitioner
	}
	producer, err := sarama.NewAsyncProducer(c.brokerAddrs, cfg)
	if err != nil {
		return Produced{}, fmt.Errorf("testcluster: producer: %w", err)
	}
	out := Produced{Offsets: map[int32][]int64{}, Seqs: map[int32][]int{}}
	done := make(chan error, 1)
	go func() {
		var errs []error
		for i := 0; i < n; i++ {
			select {
			case m := <-producer.Successes():
				out.Offsets[m.Partition] = append(out.Offsets[m.Partition], m.Offset)
				out.Seqs[m.Partition] = append(out.Seqs[m.Partition], m.Metadata.(int))
			case e := <-producer.Errors():
				errs = append(errs, e.Err)
			case <-ctx.Done():
				done <- ctx.Err()
				return
			}
		}
		done <- errors.Join(errs...)
	}()
	for i := 0; i < n; i++ {
		seq := opts.FirstSeq + i
		msg := &sarama.ProducerMessage{
			Topic:    topic,
			Key:      sarama.StringEncoder("key-" + strconv.Itoa(seq)),
			Value:    sarama.ByteEncoder(MessageValue(seq, opts.ValueSize)),
			Metadata: seq,
		}
		if opts.Partition >= 0 {
			msg.Partition = opts.Partition
		}
		select {
		case producer.Input() <- msg:
		case <-ctx.Done():
		}
	}
	err = <-done
	closeErr := producer.Close()
	if err != nil {
		return out, fmt.Errorf("testcluster: produce to %s: %w", topic, err)
	}
	if closeErr != nil {
		return out, fmt.Errorf("testcluster: produce to %s: %w", topic, closeErr)
	}
	return out, nil
}

// PartitionState is the controller's view of one partition, read from
// <chroot>/brokers/topics/<t>/partitions/<p>/state (in KRaft mode, from the
// metadata).
type PartitionState struct {
	Leader      int   `json:"leader"`
	LeaderEpoch int   `json:"leader_epoch"`
	ISR         []int `json:"isr"`
}

// ReadPartitionState reads a partition's state node from ZooKeeper; in KRaft
// mode it asks the brokers for the partition's metadata.
func (c *Cluster) ReadPartitionState(ctx context.Context, topic string, partition int32) (PartitionState, error) {
	var st PartitionState
	if c.kraft {
		return c.kraftPartitionState(topic, partition)
	}
	conn, err := c.dialZK(ctx)
	if err != nil {
		return st, err
	}
	defer conn.Close()
	path := fmt.Sprintf("%s/brokers/topics/%s/partitions/%d/state", c.chroot, topic, partition)
	data, _, err := conn.Get(path)
	if err != nil {
		return st, fmt.Errorf("testcluster: read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("testcluster: %s: %w", path, err)
	}
	return st, nil
}

// BrokerVersion asks a broker for its supported API versions and returns the
// highest Fetch version, which identifies the broker's release line.
func (c *Cluster) BrokerVersion(ctx context.Context) (maxFetchVersion int16, err error) {
	b := sarama.NewBroker(c.brokerAddrs[0])
	if err := b.Open(c.ClientConfig()); err != nil {
		return 0, err
	}
	defer b.Close()
	resp, err := b.ApiVersions(&sarama.ApiVersionsRequest{Version: 3, ClientSoftwareName: "zkconsumer-testcluster", ClientSoftwareVersion: "0"})
	if err != nil {
		return 0, err
	}
	for _, k := range resp.ApiKeys {
		if k.ApiKey == 1 {
			return k.MaxVersion, nil
		}
	}
	return 0, errors.New("testcluster: broker does not list the Fetch API")
}
