package chaos

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

// topicPartition names one partition.
type topicPartition struct {
	Topic     string
	Partition int32
}

func (tp topicPartition) String() string { return tp.Topic + "-" + strconv.Itoa(int(tp.Partition)) }

// producer writes sequence-numbered messages with acks=all, spread evenly
// over every partition of every topic, and records each acknowledgement
// (topic, partition, offset, sequence number) in acked.jsonl.
type producer struct {
	client sarama.Client
	ap     sarama.AsyncProducer
	size   int
	log    *slog.Logger

	ackFile *os.File
	ackBuf  *bufio.Writer
	wg      sync.WaitGroup

	mu        sync.Mutex
	targets   []topicPartition
	acked     map[topicPartition][]int64
	nAcked    int
	nFailed   int
	firstErrs []string
	sent      int
}

func newProducer(addrs []string, cfg *sarama.Config, ackPath string, size int, log *slog.Logger) (*producer, error) {
	cfg.ClientID = "chaos-producer"
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Return.Successes = true
	cfg.Producer.Return.Errors = true
	cfg.Producer.Retry.Max = 60
	cfg.Producer.Retry.Backoff = 300 * time.Millisecond
	cfg.Producer.Flush.Frequency = 10 * time.Millisecond
	cfg.Producer.Flush.Messages = 200
	cfg.Producer.Timeout = 10 * time.Second
	client, err := sarama.NewClient(addrs, cfg)
	if err != nil {
		return nil, fmt.Errorf("chaos: producer client: %w", err)
	}
	ap, err := sarama.NewAsyncProducerFromClient(client)
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("chaos: producer: %w", err)
	}
	f, err := os.Create(ackPath)
	if err != nil {
		ap.Close()
		client.Close()
		return nil, err
	}
	p := &producer{
		client: client, ap: ap, size: size, log: log,
		ackFile: f, ackBuf: bufio.NewWriterSize(f, 256<<10),
		acked: map[topicPartition][]int64{},
	}
	p.wg.Go(p.collectSuccesses)
	p.wg.Go(p.collectErrors)
	return p, nil
}

// setTopic makes the producer write to partitions 0..partitions-1 of topic
// from now on.
func (p *producer) setTopic(topic string, partitions int) error {
	if err := p.client.RefreshMetadata(topic); err != nil {
		return fmt.Errorf("chaos: producer metadata of %s: %w", topic, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	known := 0
	for _, tp := range p.targets {
		if tp.Topic == topic {
			known++
		}
	}
	for i := known; i < partitions; i++ {
		p.targets = append(p.targets, topicPartition{topic, int32(i)})
	}
	return nil
}

// run sends total messages, paced evenly up to a deadline that may move
// (the fault phase runs late when faults take longer than planned), and
// returns when all are handed to the producer or ctx ends.
func (p *producer) run(ctx context.Context, total int, deadline func() time.Time) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	last := time.Now()
	carry := 0.0 // fractions of a message owed from earlier ticks
	for p.sentCount() < total {
		now := time.Now()
		left := total - p.sentCount()
		if remaining := deadline().Sub(now); remaining > 0 {
			carry += float64(left) * min(1, float64(now.Sub(last))/float64(remaining))
		} else {
			carry = float64(left)
		}
		last = now
		for ; carry >= 1 && p.sentCount() < total; carry-- {
			p.mu.Lock()
			seq := p.sent
			tp := p.targets[seq%len(p.targets)]
			p.sent++
			p.mu.Unlock()
			msg := &sarama.ProducerMessage{
				Topic: tp.Topic, Partition: tp.Partition,
				Value:    sarama.ByteEncoder(testcluster.MessageValue(seq, p.size)),
				Metadata: seq,
			}
			select {
			case p.ap.Input() <- msg:
			case <-ctx.Done():
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (p *producer) sentCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sent
}

func (p *producer) collectSuccesses() {
	var line []byte
	for m := range p.ap.Successes() {
		seq, _ := m.Metadata.(int)
		line = append(line[:0], `{"t":`...)
		line = strconv.AppendQuote(line, m.Topic)
		line = append(line, `,"p":`...)
		line = strconv.AppendInt(line, int64(m.Partition), 10)
		line = append(line, `,"o":`...)
		line = strconv.AppendInt(line, m.Offset, 10)
		line = append(line, `,"s":`...)
		line = strconv.AppendInt(line, int64(seq), 10)
		line = append(line, "}\n"...)
		_, _ = p.ackBuf.Write(line) // only this goroutine writes; errors surface at close
		p.mu.Lock()
		tp := topicPartition{m.Topic, m.Partition}
		p.acked[tp] = append(p.acked[tp], m.Offset)
		p.nAcked++
		p.mu.Unlock()
	}
}

func (p *producer) collectErrors() {
	for e := range p.ap.Errors() {
		p.mu.Lock()
		p.nFailed++
		if len(p.firstErrs) < 5 {
			p.firstErrs = append(p.firstErrs, e.Error())
		}
		n := p.nFailed
		p.mu.Unlock()
		if n <= 5 || n%1000 == 0 {
			p.log.Warn("produce failed (message not acknowledged)", "failed", n, "err", e.Err)
		}
	}
}

// counts returns messages sent, acknowledged and failed so far.
func (p *producer) counts() (sent, acked, failed int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sent, p.nAcked, p.nFailed
}

// close waits for every outstanding acknowledgement, then closes the
// producer and the acknowledgement log.
func (p *producer) close() error {
	p.ap.AsyncClose()
	p.wg.Wait()
	err := errors.Join(p.ackBuf.Flush(), p.ackFile.Close(), p.client.Close())
	if err != nil {
		return fmt.Errorf("chaos: close producer: %w", err)
	}
	return nil
}

// ackedOffsets returns a copy of the acknowledged offsets by partition.
func (p *producer) ackedOffsets() map[topicPartition][]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[topicPartition][]int64, len(p.acked))
	for tp, offs := range p.acked {
		out[tp] = append([]int64(nil), offs...)
	}
	return out
}
