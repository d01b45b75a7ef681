package connector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

// The consume benchmarks read one topic from the beginning to its end with
// three clients, side by side in one run:
//
//   - connector: this library's public API (New, CreateMessageStreams, one
//     goroutine ranging over each stream's Messages), with DefaultConfig:
//     fetch.message.max.bytes 1 MiB, queued.max.message.chunks 2;
//   - sarama: a plain sarama consumer (sarama.NewConfig, Version 3.9), one
//     ConsumePartition per partition drained by its own goroutine;
//   - kcat: `kcat -C -b <broker> -t <topic> -o beginning -c <N> -e -q`, the
//     Debian package (librdkafka), output to /dev/null, started as a
//     process.
//
// Every op is a full read, timed from creating the client (or starting the
// process) to the last message, so each figure includes the client's start
// (the connector's ZooKeeper registration and first rebalance, kcat's
// process start). Values are counted as they arrive; MB/s is value bytes
// (10^6) per second. Topics are filled once per cluster and reused by later
// runs against the same cluster (scripts/bench.sh runs several rounds);
// each test process reads a topic twice, untimed, before measuring.
//
// BenchmarkConsumeConnectorVariants reads the 100-byte topic with other
// connector settings, and BenchmarkStalledConsumerHeap shows the memory
// bound. ZKCONSUMER_BENCH_SCALE (default 1) scales the message counts;
// ZKCONSUMER_BENCH_WARMUP=0 skips the warm-up read.

// benchCase is one topic the consume benchmarks read.
type benchCase struct {
	name       string // sub-benchmark name
	size       int    // value bytes
	partitions int32
	messages   int // before scaling
}

var benchCases = []benchCase{
	{"size=100B/parts=4", 100, 4, 2_000_000},
	{"size=1KiB/parts=4", 1024, 4, 400_000},
	{"size=100B/parts=1", 100, 1, 1_000_000},
}

// benchTopic is a filled topic: its name and where each partition ends.
type benchTopic struct {
	name  string
	size  int
	ends  []int64 // high water mark by partition; every partition starts at 0
	total int
}

var benchTopics struct {
	mu   sync.Mutex
	byID map[string]*benchTopic
}

func benchScale() float64 {
	if s := os.Getenv("ZKCONSUMER_BENCH_SCALE"); s != "" {
		if f, err := strconv.ParseFloat(s, 64); err == nil && f > 0 {
			return f
		}
	}
	return 1
}

// benchData returns the filled topic of bc, creating and filling it the
// first time on this cluster.
func benchData(b *testing.B, c *testcluster.Cluster, bc benchCase) *benchTopic {
	b.Helper()
	n := max(int(float64(bc.messages)*benchScale()), int(bc.partitions))
	key := fmt.Sprintf("zkc-bench-v%d-p%d-n%d", bc.size, bc.partitions, n)
	name := key
	benchTopics.mu.Lock()
	defer benchTopics.mu.Unlock()
	if t := benchTopics.byID[key]; t != nil {
		return t
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	ends, err := testcluster.TopicEnds(c.BrokerAddrs(), name)
	if err != nil || sum(ends) != int64(n) {
		if !errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
			// Left over from an interrupted fill: use a fresh topic.
			name = testcluster.UniqueName(name)
		}
		start := time.Now()
		if err := c.CreateTopic(ctx, name, bc.partitions, 1); err != nil {
			b.Fatal(err)
		}
		if err := testcluster.FillTopic(ctx, c.BrokerAddrs(), name, bc.partitions, n, sarama.CompressionNone,
			func(i int) []byte { return testcluster.MessageValue(i, bc.size) }); err != nil {
			b.Fatal(err)
		}
		if ends, err = testcluster.TopicEnds(c.BrokerAddrs(), name); err != nil {
			b.Fatal(err)
		}
		if sum(ends) != int64(n) {
			b.Fatalf("topic %s holds %d messages, want %d", name, sum(ends), n)
		}
		b.Logf("filled %s: %d messages of %d bytes in %v", name, n, bc.size, time.Since(start).Round(time.Millisecond))
	}
	t := &benchTopic{name: name, size: bc.size, ends: ends, total: n}
	// Untimed reads first, with sarama and with the connector, so that no
	// client pays for the broker's JIT warm-up, for pages still being
	// written back after the fill, or for growing this process's heap
	// (ZKCONSUMER_BENCH_WARMUP=0 skips them, for profiles of one client).
	if os.Getenv("ZKCONSUMER_BENCH_WARMUP") != "0" {
		if err := readSarama(ctx, c, t, newProgress(t)); err != nil {
			b.Fatalf("warm-up read of %s: %v", name, err)
		}
		if err := readConnector(ctx, c, t, len(t.ends), newProgress(t)); err != nil {
			b.Fatalf("warm-up read of %s: %v", name, err)
		}
	}
	if benchTopics.byID == nil {
		benchTopics.byID = map[string]*benchTopic{}
	}
	benchTopics.byID[key] = t
	return t
}

func sum(xs []int64) int64 {
	var s int64
	for _, x := range xs {
		s += x
	}
	return s
}

// BenchmarkConsume reads each bench topic with the connector, sarama and
// kcat in turn. See the comment at the top of this file.
func BenchmarkConsume(b *testing.B) {
	c := testcluster.Shared(b)
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			t := benchData(b, c, bc)
			b.Run("client=connector", func(b *testing.B) {
				benchRead(b, t, func(ctx context.Context, p *progress) error {
					return readConnector(ctx, c, t, int(bc.partitions), p)
				})
			})
			b.Run("client=sarama", func(b *testing.B) {
				benchRead(b, t, func(ctx context.Context, p *progress) error {
					return readSarama(ctx, c, t, p)
				})
			})
			b.Run("client=kcat", func(b *testing.B) { benchKcat(b, c, t) })
		})
	}
}

// BenchmarkConsumeConnectorVariants reads the 100-byte, 4-partition topic
// with the connector set up differently from BenchmarkConsume: all four
// partitions in one stream; two fetchers per broker
// (num.consumer.fetchers=2, two partitions each); the operating system's
// socket receive buffer (socket.receive.buffer.bytes=-1) instead of
// Kafka's 64 KiB; and both.
func BenchmarkConsumeConnectorVariants(b *testing.B) {
	c := testcluster.Shared(b)
	t := benchData(b, c, benchCases[0])
	variants := []struct {
		name    string
		streams int
		tune    func(*Config)
	}{
		{"streams=1", 1, func(*Config) {}},
		{"fetchers=2", 4, func(cfg *Config) { cfg.NumConsumerFetchers = 2 }},
		{"rcvbuf=os", 4, func(cfg *Config) { cfg.SocketReceiveBufferBytes = -1 }},
		{"fetchers=2,rcvbuf=os", 4, func(cfg *Config) { cfg.NumConsumerFetchers = 2; cfg.SocketReceiveBufferBytes = -1 }},
	}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			benchRead(b, t, func(ctx context.Context, p *progress) error {
				cfg := benchConfig(c)
				v.tune(&cfg)
				return readConnectorWith(ctx, cfg, t, v.streams, p)
			})
		})
	}
}

// BenchmarkStalledConsumerHeap shows the connector's memory bound: it
// joins with four streams on the 100-byte topic and reads nothing, so the
// fetchers fill every stream's queue and block. It reports the peak heap
// in use and the live heap (after a GC) once every queue is full, for the
// default queued.max.message.chunks and a larger one.
func BenchmarkStalledConsumerHeap(b *testing.B) {
	c := testcluster.Shared(b)
	t := benchData(b, c, benchCases[0])
	for _, chunks := range []int{2, 8} {
		b.Run(fmt.Sprintf("queued.max.message.chunks=%d", chunks), func(b *testing.B) {
			var (
				mem  heapPeak
				live uint64
			)
			for b.Loop() {
				runtime.GC()
				stopMem := mem.sample()
				cfg := benchConfig(c)
				cfg.QueuedMaxMessageChunks = chunks
				conn, err := New(b.Context(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				byTopic, err := conn.CreateMessageStreams(context.Background(), map[string]int{t.name: len(t.ends)})
				if err != nil {
					b.Fatal(err)
				}
				full := func() bool {
					for _, s := range byTopic[t.name] {
						if streamcore.QueueOf(s).Len() < streamcore.QueueOf(s).Cap() {
							return false
						}
					}
					return true
				}
				deadline := time.Now().Add(time.Minute)
				for !full() {
					if time.Now().After(deadline) {
						b.Fatal("the stream queues never filled")
					}
					time.Sleep(10 * time.Millisecond)
				}
				time.Sleep(500 * time.Millisecond) // the fetcher blocks with one more chunk
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				live = max(live, ms.HeapAlloc)
				stopMem()
				sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				err = conn.Shutdown(sctx)
				cancel()
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(mem.inuse)/1e6, "peak-heap-MB")
			b.ReportMetric(float64(live)/1e6, "live-full-MB")
		})
	}
}

// progress is what the readers of one op report. Each reader goroutine
// counts locally and publishes once, when its partitions are done.
type progress struct {
	ends      []int64
	remaining atomic.Int32 // partitions not read to their end
	done      chan struct{}
	firstOnce sync.Once
	first     time.Time

	mu     sync.Mutex
	counts []int64 // messages by partition
	bytes  int64   // value bytes
}

func newProgress(t *benchTopic) *progress {
	p := &progress{ends: t.ends, done: make(chan struct{}), counts: make([]int64, len(t.ends))}
	p.remaining.Store(int32(len(t.ends)))
	return p
}

func (p *progress) started() { p.firstOnce.Do(func() { p.first = time.Now() }) }

// partitionDone notes that a partition has reached its end.
func (p *progress) partitionDone() {
	if p.remaining.Add(-1) == 0 {
		close(p.done)
	}
}

// publish adds one reader's counts.
func (p *progress) publish(counts []int64, bytes int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, n := range counts {
		p.counts[i] += n
	}
	p.bytes += bytes
}

// reader is the per-goroutine state of a reader: it sees messages, by
// partition and offset.
type reader struct {
	p      *progress
	counts []int64
	bytes  int64
}

func (p *progress) newReader() *reader { return &reader{p: p, counts: make([]int64, len(p.ends))} }

func (r *reader) see(partition int32, offset int64, value []byte) {
	if r.counts[partition] == 0 {
		r.p.started()
	}
	r.counts[partition]++
	r.bytes += int64(len(value))
	if offset == r.p.ends[partition]-1 {
		r.p.partitionDone()
	}
}

func (r *reader) publish() { r.p.publish(r.counts, r.bytes) }

// benchRead times b.N full reads of t by read, which must return once
// p.done is closed (every partition read to its end) and every reader has
// published, and reports throughput and the heap's peak.
func benchRead(b *testing.B, t *benchTopic, read func(context.Context, *progress) error) {
	var (
		elapsed, toFirst time.Duration
		cpu              time.Duration
		mem              heapPeak
		msgs, bytes      int64
	)
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		p := newProgress(t)
		stopMem := mem.sample()
		cpu0 := processCPU()
		b.StartTimer()
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		err := read(ctx, p)
		cancel()
		elapsed += time.Since(start)
		b.StopTimer()
		cpu += processCPU() - cpu0
		stopMem()
		if err != nil {
			b.Fatal(err)
		}
		for i, n := range p.counts {
			if n != p.ends[i] {
				b.Fatalf("partition %d: read %d messages, want %d", i, n, p.ends[i])
			}
			msgs += n
		}
		bytes += p.bytes
		toFirst += p.first.Sub(start)
		b.StartTimer()
	}
	reportThroughput(b, msgs, bytes, elapsed)
	b.ReportMetric(float64(toFirst.Milliseconds())/float64(b.N), "first-msg-ms")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(mem.inuse)/1e6, "peak-heap-MB")
	b.ReportMetric(float64(mem.live)/1e6, "peak-live-MB")
}

func reportThroughput(b *testing.B, msgs, bytes int64, elapsed time.Duration) {
	b.ReportMetric(float64(msgs)/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(float64(bytes)/1e6/elapsed.Seconds(), "MB/s")
}

// benchConfig is DefaultConfig in a fresh group that starts at the
// beginning of the topic.
func benchConfig(c *testcluster.Cluster) Config {
	cfg := DefaultConfig()
	cfg.ZooKeeperConnect = c.ZKConnect()
	cfg.GroupID = testcluster.UniqueName("bench")
	cfg.AutoOffsetReset = AutoOffsetResetSmallest
	return cfg
}

// readConnector reads t through the public API with default settings, one
// goroutine per stream.
func readConnector(ctx context.Context, c *testcluster.Cluster, t *benchTopic, streams int, p *progress) error {
	return readConnectorWith(ctx, benchConfig(c), t, streams, p)
}

// readConnectorWith is readConnector with cfg.
func readConnectorWith(ctx context.Context, cfg Config, t *benchTopic, streams int, p *progress) error {
	conn, err := New(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = conn.Shutdown(sctx)
	}()
	byTopic, err := conn.CreateMessageStreams(ctx, map[string]int{t.name: streams})
	if err != nil {
		return err
	}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	var errMu sync.Mutex
	var readErr error
	for _, s := range byTopic[t.name] {
		wg.Go(func() {
			r := p.newReader()
			defer r.publish()
			for {
				msg, err := s.Next(rctx)
				if err != nil {
					if errors.Is(err, ErrShutdown) || rctx.Err() != nil {
						break
					}
					errMu.Lock()
					readErr = errors.Join(readErr, err)
					errMu.Unlock()
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

// readSarama reads t with sarama's partition consumers, one goroutine per
// partition.
func readSarama(ctx context.Context, c *testcluster.Cluster, t *benchTopic, p *progress) error {
	cfg := sarama.NewConfig()
	cfg.ClientID = "zkconsumer-bench-sarama"
	cfg.Version = sarama.V3_9_0_0
	consumer, err := sarama.NewConsumer(c.BrokerAddrs(), cfg)
	if err != nil {
		return err
	}
	defer consumer.Close()
	var wg sync.WaitGroup
	errs := make([]error, len(t.ends))
	for i := range t.ends {
		pc, err := consumer.ConsumePartition(t.name, int32(i), sarama.OffsetOldest)
		if err != nil {
			return err
		}
		wg.Go(func() {
			defer pc.Close()
			r := p.newReader()
			defer r.publish()
			end := t.ends[i] - 1
			for {
				select {
				case msg := <-pc.Messages():
					r.see(msg.Partition, msg.Offset, msg.Value)
					if msg.Offset == end {
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

// benchKcat times kcat reading t, output to /dev/null:
//
//	kcat -C -b <broker> -t <topic> -o beginning -c <messages> -e -q
//
// -c makes kcat exit at the last message, as the Go readers do; -e alone
// would add one empty fetch that the broker holds for librdkafka's
// fetch.wait.max.ms (500 ms), and stays only as a guard: with either exit
// every message of the (immutable) topic has been read.
func benchKcat(b *testing.B, c *testcluster.Cluster, t *benchTopic) {
	bin, err := exec.LookPath("kcat")
	if err != nil {
		b.Skip("kcat not installed (apt-get install -y kcat)")
	}
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer devNull.Close()
	var (
		elapsed, cpu time.Duration
		rss          int64
		msgs, nbytes int64
	)
	for b.Loop() {
		var stderr bytes.Buffer
		cmd := exec.Command(bin, "-C", "-b", c.BrokerAddrs()[0], "-t", t.name, "-o", "beginning",
			"-c", strconv.Itoa(t.total), "-e", "-q")
		cmd.Stdout, cmd.Stderr = devNull, &stderr
		start := time.Now()
		err := cmd.Start()
		var hwm int64
		if err == nil {
			stop := testcluster.WatchPeakRSS(cmd.Process.Pid, &hwm)
			err = cmd.Wait()
			stop()
		}
		elapsed += time.Since(start)
		b.StopTimer()
		if err != nil || stderr.Len() > 0 {
			b.Fatalf("%s: %v\n%s", cmd, err, stderr.String())
		}
		msgs += int64(t.total)
		nbytes += int64(t.total) * int64(t.size)
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		rss = max(rss, hwm)
		b.StartTimer()
	}
	reportThroughput(b, msgs, nbytes, elapsed)
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(rss)/1e6, "peak-rss-MB")
}

// processCPU is the CPU time (user and system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heapPeak records the largest heap seen while sampling: in-use spans
// (runtime.MemStats.HeapInuse) and the live heap after a GC.
type heapPeak struct {
	inuse, live uint64
}

// sample samples the heap every 2ms until the returned function is called.
func (h *heapPeak) sample() (stop func()) {
	samples := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/gc/heap/live:bytes"},
	}
	read := func() {
		metrics.Read(samples)
		h.inuse = max(h.inuse, samples[0].Value.Uint64()+samples[1].Value.Uint64())
		h.live = max(h.live, samples[2].Value.Uint64())
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			read()
			select {
			case <-quit:
				read()
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(quit); <-done }
}
