package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkconsumer/zkconsumer/connector"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

// result is one measured read.
type result struct {
	Client  string  `json:"client"`
	Variant string  `json:"variant,omitempty"`
	Shape   string  `json:"shape,omitempty"`
	Round   int     `json:"round,omitempty"`
	Msgs    int64   `json:"msgs"`
	Bytes   int64   `json:"bytes"`   // value bytes
	Seconds float64 `json:"seconds"` // the read, as the client measures it
	// CloseSeconds is the time from the last message until the client was
	// closed (Shutdown, Close), not part of Seconds.
	CloseSeconds float64 `json:"close_s,omitempty"`
	CPU          float64 `json:"cpu_s"` // the process's user+system time
	// FirstMs is the start-up: the time from starting the client to its
	// first message (in-process clients), or to the first byte of output
	// of a read of one message (kcat with -u, console).
	FirstMs float64 `json:"first_ms,omitempty"`
	// Steady is msgs/s at steady state, start-up taken out: the messages
	// after the first over the time after the start-up (for kcat and
	// console, less the whole wall time of the read of one message, its
	// exit included).
	Steady float64 `json:"steady_rate,omitempty"`
	// SteadyCPU is CPU less the start-up's: for kcat and console, less
	// the CPU of the read of one message.
	SteadyCPU float64 `json:"steady_cpu_s,omitempty"`
	RSSMB     float64 `json:"rss_mb,omitempty"`
	// MinFlt is the process's minor page faults (rusage), start-up
	// included: each is a page of fresh memory the kernel zeroed.
	MinFlt int64 `json:"minflt,omitempty"`
	// Rate is msgs/s: Msgs/Seconds, or the rate a tool reports itself.
	Rate float64 `json:"rate"`
}

// progress counts what the readers of one read have seen.
type progress struct {
	ends      []int64
	remaining atomic.Int32
	done      chan struct{}
	firstOnce sync.Once
	first     time.Time
	end       time.Time // when the last message was seen; set before done is closed
	msgs      atomic.Int64
	bytes     atomic.Int64
}

func newProgress(ends []int64) *progress {
	p := &progress{ends: ends, done: make(chan struct{})}
	n := 0
	for _, e := range ends {
		if e > 0 {
			n++
		}
	}
	p.remaining.Store(int32(n))
	if n == 0 {
		p.end = time.Now()
		close(p.done)
	}
	return p
}

// reader is one goroutine's counts, published once.
type reader struct {
	p           *progress
	msgs, bytes int64
}

func (r *reader) see(partition int32, offset int64, value []byte) {
	if r.msgs == 0 {
		r.p.firstOnce.Do(func() { r.p.first = time.Now() })
	}
	r.msgs++
	r.bytes += int64(len(value))
	if offset == r.p.ends[partition]-1 {
		if r.p.remaining.Add(-1) == 0 {
			r.p.end = time.Now()
			close(r.p.done)
		}
	}
}

func (r *reader) publish() {
	r.p.msgs.Add(r.msgs)
	r.p.bytes.Add(r.bytes)
}

// runChild reads topic once with one Go client and measures it.
func runChild(ctx context.Context, client, variant, topic, endList string) (*result, error) {
	var ends []int64
	for s := range strings.SplitSeq(endList, ",") {
		e, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("bad -ends: %w", err)
		}
		ends = append(ends, e)
	}
	env := clusterEnv{zk: os.Getenv("ZOOKEEPER_CONNECT"), brokers: strings.Split(os.Getenv("KAFKA_BROKERS"), ",")}
	p := newProgress(ends)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cpu0 := processCPU()
	start := time.Now()
	var err error
	switch client {
	case "connector":
		err = readConnector(ctx, env, variant, topic, p)
	case "sarama":
		err = readSarama(ctx, env, topic, p)
	case "franz":
		err = readFranz(ctx, env, topic, p)
	default:
		return nil, fmt.Errorf("unknown client %q", client)
	}
	closed := time.Now()
	cpu := processCPU() - cpu0
	// The read ends at the last message; closing the client (which the
	// readers do before returning) is reported apart.
	elapsed, closing := closed.Sub(start), time.Duration(0)
	select {
	case <-p.done:
		elapsed, closing = p.end.Sub(start), closed.Sub(p.end)
	default:
	}
	if err != nil {
		return nil, err
	}
	if got := p.msgs.Load(); got != sum(ends) {
		return nil, fmt.Errorf("%s read %d messages, want %d", client, got, sum(ends))
	}
	return &result{Client: client, Variant: variant, Msgs: p.msgs.Load(), Bytes: p.bytes.Load(),
		Seconds: elapsed.Seconds(), CloseSeconds: closing.Seconds(), CPU: cpu.Seconds(), FirstMs: float64(p.first.Sub(start).Microseconds()) / 1000,
		RSSMB: float64(selfHWM()) / 1e6, Rate: float64(p.msgs.Load()) / elapsed.Seconds()}, nil
}

// setSteady computes Steady and SteadyCPU, taking out a start-up of
// startSeconds and startCPU. A read too short to leave any time after its
// start-up gets no steady figures.
func (r *result) setSteady(startSeconds, startCPU float64) {
	rest := r.Seconds - startSeconds
	if r.Msgs < 2 || rest <= 0 {
		return
	}
	r.Steady = float64(r.Msgs-1) / rest
	r.SteadyCPU = max(r.CPU-startCPU, 0)
}

// connectorVariants are the connector settings -variant can name; the
// empty one is DefaultConfig.
var connectorVariants = map[string]func(*connector.Config){
	"":          func(*connector.Config) {},
	"rcvbuf=os": func(c *connector.Config) { c.SocketReceiveBufferBytes = -1 },
	// Kafka 1.1.1's default, the connector's before it used the OS default.
	"rcvbuf=64k": func(c *connector.Config) { c.SocketReceiveBufferBytes = 64 << 10 },
	// ConsumerPerformance's default socket buffer.
	"rcvbuf=2m":  func(c *connector.Config) { c.SocketReceiveBufferBytes = 2 << 20 },
	"nocrc":      func(c *connector.Config) { c.CheckCRCs = false },
	"fetchers=2": func(c *connector.Config) { c.NumConsumerFetchers = 2 },
	// Defaults, in a child run with GODEBUG=madvdontneed=0 (see childEnv).
	"madvfree":          func(*connector.Config) {},
	"gogc=400":          func(*connector.Config) {},
	"madvfree+gogc=400": func(*connector.Config) {},
	// librdkafka's defaults for the two settings where they differ from
	// Kafka's: the OS receive buffer and no CRC check.
	"rcvbuf=os+nocrc": func(c *connector.Config) { c.SocketReceiveBufferBytes = -1; c.CheckCRCs = false },
	// Recycled messages (the connector's zkconsumer.recycle.messages): a
	// message is valid until the next one. The readers only look at a
	// message before asking for the next.
	// The readers only look at a message before asking for the next.
	"recycle": func(c *connector.Config) { setConfigBool(c, "RecycleMessages") },
}

// setConfigBool sets the connector setting name to true; it panics if the
// connector has no such setting (caught by readConnector).
func setConfigBool(c *connector.Config, name string) {
	f := reflect.ValueOf(c).Elem().FieldByName(name)
	if !f.IsValid() || f.Kind() != reflect.Bool {
		panic(fmt.Sprintf("connector.Config has no %s", name))
	}
	f.SetBool(true)
}

// readConnector reads the topic through zkconsumer's public API:
// DefaultConfig in a fresh group from the beginning, one stream per
// partition, each drained by its own goroutine.
func readConnector(ctx context.Context, env clusterEnv, variant, topic string, p *progress) error {
	tune, ok := connectorVariants[variant]
	if !ok {
		return fmt.Errorf("unknown connector variant %q", variant)
	}
	cfg := connector.DefaultConfig()
	cfg.ZooKeeperConnect = env.zk
	cfg.GroupID = fmt.Sprintf("zkbench-%d", time.Now().UnixNano())
	cfg.AutoOffsetReset = connector.AutoOffsetResetSmallest
	cfg.AutoCommitEnable = false
	if err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("variant %q: %v", variant, r)
			}
		}()
		tune(&cfg)
		return nil
	}(); err != nil {
		return err
	}
	conn, err := connector.New(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = conn.Shutdown(sctx)
	}()
	byTopic, err := conn.CreateMessageStreams(ctx, map[string]int{topic: len(p.ends)})
	if err != nil {
		return err
	}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	var (
		wg      sync.WaitGroup
		errMu   sync.Mutex
		readErr error
	)
	for _, s := range byTopic[topic] {
		wg.Go(func() {
			r := &reader{p: p}
			defer r.publish()
			for {
				msg, err := s.Next(rctx)
				if err != nil {
					if errors.Is(err, connector.ErrShutdown) || rctx.Err() != nil {
						break
					}
					if rctx.Err() == nil {
						errMu.Lock()
						readErr = errors.Join(readErr, err)
						errMu.Unlock()
					}
					continue
				}
				r.see(msg.Partition, msg.Offset, msg.Value)
			}
		})
	}
	select {
	case <-p.done:
	case <-ctx.Done():
	}
	stop()
	wg.Wait()
	return errors.Join(readErr, ctx.Err())
}

// readSarama reads the topic with sarama's partition consumers
// (sarama.NewConfig, Version 3.9), one goroutine per partition.
func readSarama(ctx context.Context, env clusterEnv, topic string, p *progress) error {
	consumer, err := sarama.NewConsumer(env.brokers, saramaConfig("zkbench-sarama"))
	if err != nil {
		return err
	}
	defer consumer.Close()
	var wg sync.WaitGroup
	errs := make([]error, len(p.ends))
	for i, end := range p.ends {
		if end == 0 {
			continue
		}
		pc, err := consumer.ConsumePartition(topic, int32(i), sarama.OffsetOldest)
		if err != nil {
			return err
		}
		wg.Go(func() {
			defer pc.AsyncClose()
			r := &reader{p: p}
			defer r.publish()
			for {
				select {
				case msg := <-pc.Messages():
					r.see(msg.Partition, msg.Offset, msg.Value)
					if msg.Offset == end-1 {
						return
					}
				case err := <-pc.Errors():
					errs[i] = errors.Join(errs[i], err)
				case <-ctx.Done():
					errs[i] = errors.Join(errs[i], ctx.Err())
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// readFranz reads the topic with franz-go's kgo client, consuming the
// partitions directly (no group), with kgo's defaults.
func readFranz(ctx context.Context, env clusterEnv, topic string, p *progress) error {
	offsets := map[int32]kgo.Offset{}
	for i := range p.ends {
		offsets[int32(i)] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.brokers...), kgo.ClientID("zkbench-franz"),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}))
	if err != nil {
		return err
	}
	defer cl.Close()
	r := &reader{p: p}
	defer r.publish()
	for {
		select {
		case <-p.done:
			return nil
		default:
		}
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var errs []error
		fs.EachError(func(t string, part int32, err error) {
			errs = append(errs, fmt.Errorf("%s/%d: %w", t, part, err))
		})
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
		fs.EachRecord(func(rec *kgo.Record) { r.see(rec.Partition, rec.Offset, rec.Value) })
	}
}

// processCPU is the CPU time (user and system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// selfHWM is this process's peak resident set size (VmHWM), in bytes.
func selfHWM() int64 {
	return testcluster.PeakRSS("/proc/self/status")
}

// minorFaults returns the minor page faults of an exited process.
func minorFaults(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Minflt
	}
	return 0
}
