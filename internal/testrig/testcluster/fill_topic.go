package testcluster

import (
	"context"
	"errors"
	"time"

	"github.com/IBM/sarama"
)

// FillTopic writes n messages without key to topic on the cluster at
// brokers, message i to partition i % partitions with value(i), in
// producer batches of up to 512 KiB compressed with codec, acknowledged by
// the leader. It is Produce without idempotence, per-message bookkeeping
// and small batches, which matters for the millions of messages of a
// benchmark. value is called in order, from one goroutine.
func FillTopic(ctx context.Context, brokers []string, topic string, partitions int32, n int, codec sarama.CompressionCodec, value func(i int) []byte) error {
	cfg := sarama.NewConfig()
	cfg.ClientID = "zkconsumer-bench-fill"
	cfg.Version = sarama.V3_9_0_0
	cfg.Producer.RequiredAcks = sarama.WaitForLocal
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Compression = codec
	cfg.Producer.Return.Successes = false
	cfg.Producer.Return.Errors = true
	cfg.Producer.Flush.Bytes = 512 << 10
	cfg.Producer.Flush.Frequency = 20 * time.Millisecond
	cfg.Producer.Retry.Max = 10
	cfg.ChannelBufferSize = 4096
	p, err := sarama.NewAsyncProducer(brokers, cfg)
	if err != nil {
		return err
	}
	var errs []error
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for e := range p.Errors() {
			if len(errs) < 10 {
				errs = append(errs, e.Err)
			}
		}
	}()
	for i := 0; i < n && ctx.Err() == nil; i++ {
		msg := &sarama.ProducerMessage{Topic: topic, Partition: int32(i) % partitions, Value: sarama.ByteEncoder(value(i))}
		select {
		case p.Input() <- msg:
		case <-ctx.Done():
		}
	}
	p.AsyncClose()
	<-collected
	return errors.Join(append(errs, ctx.Err())...)
}
