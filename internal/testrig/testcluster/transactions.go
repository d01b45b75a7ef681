package testcluster

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/IBM/sarama"
)

// ProduceTxn writes n keyed messages ("key-<seq>", MessageValue of 100
// bytes, sequence numbers from firstSeq) to one partition of topic in one
// transaction, then commits or aborts it, and returns where the messages
// landed. It waits until the transaction's marker is in the log (brokers
// write it after the transaction ends), so the marker directly follows the
// messages and the log end is past it.
func (c *Cluster) ProduceTxn(ctx context.Context, topic string, partition int32, firstSeq, n int, commit bool) (Produced, error) {
	cfg := c.ClientConfig()
	cfg.Producer.Idempotent = true
	cfg.Producer.Transaction.ID = UniqueName("zkconsumer-testcluster-txn")
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Net.MaxOpenRequests = 1
	p, err := sarama.NewSyncProducer(c.brokerAddrs, cfg)
	if err != nil {
		return Produced{}, fmt.Errorf("testcluster: transactional producer: %w", err)
	}
	defer p.Close()
	if err := p.BeginTxn(); err != nil {
		return Produced{}, fmt.Errorf("testcluster: begin transaction: %w", err)
	}
	msgs := make([]*sarama.ProducerMessage, n)
	for i := range msgs {
		seq := firstSeq + i
		msgs[i] = &sarama.ProducerMessage{Topic: topic, Partition: partition,
			Key:   sarama.StringEncoder("key-" + strconv.Itoa(seq)),
			Value: sarama.ByteEncoder(MessageValue(seq, 100))}
	}
	if err := p.SendMessages(msgs); err != nil {
		_ = p.AbortTxn()
		return Produced{}, fmt.Errorf("testcluster: produce to %s: %w", topic, err)
	}
	if commit {
		err = p.CommitTxn()
	} else {
		err = p.AbortTxn()
	}
	if err != nil {
		return Produced{}, fmt.Errorf("testcluster: end transaction: %w", err)
	}
	out := Produced{Offsets: map[int32][]int64{}, Seqs: map[int32][]int{}}
	for i, m := range msgs {
		out.Offsets[partition] = append(out.Offsets[partition], m.Offset)
		out.Seqs[partition] = append(out.Seqs[partition], firstSeq+i)
	}
	if n == 0 {
		return out, nil
	}
	marker := msgs[n-1].Offset + 1
	for {
		end, err := c.LogEnd(topic, partition)
		if err != nil {
			return out, err
		}
		if end > marker {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return out, fmt.Errorf("testcluster: no transaction marker at %d of %s-%d: %w", marker, topic, partition, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// LogEnd returns the log end offset of a partition.
func (c *Cluster) LogEnd(topic string, partition int32) (int64, error) {
	client, err := sarama.NewClient(c.brokerAddrs, c.ClientConfig())
	if err != nil {
		return 0, fmt.Errorf("testcluster: client: %w", err)
	}
	defer client.Close()
	end, err := client.GetOffset(topic, partition, sarama.OffsetNewest)
	if err != nil {
		return 0, fmt.Errorf("testcluster: log end of %s-%d: %w", topic, partition, err)
	}
	return end, nil
}
