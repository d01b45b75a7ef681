package fetch

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/klauspost/compress/zstd"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// memoryBound is the README's bound ("Memory bound") on what the fetch
// path holds, from configuration:
//
//	chunks = streams × (queued.max.message.chunks + 1) + fetchers
//	bound  = (chunks + 3 × fetchers) × R + (chunks + 2 × fetchers) × B + fetchers × 12 MiB
//
// plus fetchers × B with Config.RecycleMessages. R bounds a fetch response
// (responseLimit: about min(partitions of a fetcher × fetch size +
// max(fetch size, 1 MiB + 12 B) + 400 B per partition, 100 MiB), see
// readmeR); B is the decoding limit
// (Config.MaxDecodedBytes, by default 32 × max(fetch size, 1 MiB)). A chunk
// pins one response and its own decoded part (at most B); each fetcher
// also holds the response it is processing, the one it sent ahead and a
// spare buffer (its free list), and while it decodes a batch, up to 2 × B
// more of decompression buffers (a failed whole attempt, or a streamed
// batch's decompressor window) and 12 MiB of pooled scratch and lz4
// blocks. With recycling, its free lists also keep up to B of slabs,
// message lists and payload buffers.
type memoryBound struct {
	streams, queuedChunks, fetchers int
	response, decoded               int64
	recycle                         bool
}

func (b memoryBound) chunks() int64 { return int64(b.streams*(b.queuedChunks+1) + b.fetchers) }

func (b memoryBound) bytes() int64 {
	c, f := b.chunks(), int64(b.fetchers)
	n := (c+3*f)*b.response + (c+2*f)*b.decoded + f*12*mib
	if b.recycle {
		n += f * b.decoded
	}
	return n
}

// heapInUse returns the live heap after a collection.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// probeBlocks are the records of one partition each, the probes of the
// hostile tests and legal records that cost the most to decode, at fetch
// offset 0 and with their high watermark.
func probeBlocks(t *testing.T) map[string]*respBlock {
	t.Helper()
	blocks := map[string]*respBlock{}
	// Minimum-size records (7 bytes: no key, empty value), 150,000 a MiB.
	tiny := rawRecords(seq(150_000), func(int) []byte { return []byte{} })
	blocks["minimum-size records"] = &respBlock{records: rawBatch(0, 0, 149_999, 150_000, tiny), hwm: 150_000}
	// One record of a MiB of empty headers (2 bytes each).
	body := []byte{0, 0, 0, 1, 1}
	body = binary.AppendVarint(body, 500_000)
	body = append(body, bytes.Repeat([]byte{1, 1}, 500_000)...) // key and value null
	hdrs := append(binary.AppendVarint(nil, int64(len(body))), body...)
	blocks["headers"] = &respBlock{records: rawBatch(0, 0, 0, 1, hdrs), hwm: 1}
	// The same in batches of 5,000.
	var small []byte
	tinier := rawRecords(seq(5000), func(int) []byte { return []byte{} })
	for i := range 30 {
		small = append(small, rawBatch(int64(i*5000), 0, 4999, 5000, tinier)...)
	}
	blocks["minimum-size records, 30 batches"] = &respBlock{records: small, hwm: 150_000}
	// Legal batches that inflate: 8 records of 256 KiB of zeros, 2 MiB, in
	// a few hundred bytes each, 20 of them.
	for _, codec := range []sarama.CompressionCodec{sarama.CompressionZSTD, sarama.CompressionLZ4, sarama.CompressionGZIP, sarama.CompressionSnappy} {
		var b []byte
		for i := range 20 {
			b = append(b, rawBatch(int64(i*8), int16(codec), 7, 8, inflating(codec, 8, 256<<10))...)
		}
		blocks["inflating "+codec.String()] = &respBlock{records: b, hwm: 160}
	}
	// Compressed v1 message sets of one 1 MiB message.
	var legacy []byte
	inner := rawMessage(0, 1, 0, nil, make([]byte, mib))
	for i := range 10 {
		legacy = append(legacy, rawMessage(int64(i), 1, codecSnappy, nil, compressLegacy(t, sarama.CompressionSnappy, inner))...)
	}
	blocks["inflating v1 snappy"] = &respBlock{records: legacy, hwm: 10}
	// One batch that alone inflates past the limit, in a single-segment
	// zstd frame: its window (all of its 8 MiB) is past the limit too.
	blocks["one batch past the limit"] = &respBlock{records: rawBatch(0, codecZstd, 7, 8, inflating(sarama.CompressionZSTD, 8, mib)), hwm: 8}
	// The same in a zstd frame with a 1 MiB window, and with lz4 and
	// gzip: streamed, record by record, across chunks.
	eight := rawRecords(seq(8), func(int) []byte { return make([]byte, mib) })
	enc, err := zstd.NewWriter(nil, zstd.WithWindowSize(mib))
	if err != nil {
		t.Fatal(err)
	}
	blocks["one batch past the limit, zstd window 1 MiB"] = &respBlock{records: rawBatch(0, codecZstd, 7, 8, enc.EncodeAll(eight, nil)), hwm: 8}
	blocks["one batch past the limit, lz4"] = &respBlock{records: rawBatch(0, codecLZ4, 7, 8, inflating(sarama.CompressionLZ4, 8, mib)), hwm: 8}
	blocks["one batch past the limit, gzip"] = &respBlock{records: rawBatch(0, codecGzip, 7, 8, inflating(sarama.CompressionGZIP, 8, mib)), hwm: 8}
	// Declared sizes.
	for name, b := range declaredBombs() {
		blocks["declared "+name] = &respBlock{records: rawBatch(0, int16(b.codec), 0, 1, b.payload), hwm: 1}
	}
	// A count past the bytes, with a matching CRC.
	value := bytes.Repeat([]byte{'v'}, 1000)
	lying := rawBatch(0, 0, 999, 1000, rawRecords(seq(1000), func(int) []byte { return value }))
	binary.BigEndian.PutUint32(lying[batchCountAt:], uint32((len(lying)-recordBatchOverhead)/minRecordSize))
	fixCRC(lying)
	blocks["count past the records"] = &respBlock{records: lying, hwm: 1000}
	return blocks
}

// TestMemoryBoundDecoder holds the decoder to its limit on every probe: a
// chunk keeps at most B = MaxDecodedBytes beyond its response, and
// decoding allocates at most 2 × B (the batch that did not fit is decoded
// into what was left) plus scratch and lz4 block buffers, which pools keep
// between collections (12 MiB).
func TestMemoryBoundDecoder(t *testing.T) {
	const limit = 4 * mib
	warmCodecs(t)
	for name, blk := range probeBlocks(t) {
		t.Run(name, func(t *testing.T) {
			base := heapInUse()
			var d decoded
			n := allocated(func() {
				d = decodeRecords("t", 0, 0, 1<<20, decodeOpts{checkCRCs: true, maxDecoded: limit}, blk)
			})
			kept := heapInUse() - base
			runtime.KeepAlive(d)
			t.Logf("%d bytes of records: %d messages, next %d, capped %v, over %v, corrupt %v; allocated %d, kept %d",
				len(blk.records), len(d.msgs), d.next, d.capped, d.overLimit != nil, d.corrupt != nil, n, kept)
			if kept > limit+64<<10 {
				t.Errorf("the chunk keeps %d bytes, limit %d", kept, limit)
			}
			slack := uint64(12 * mib)
			if raceEnabled {
				slack *= 3 // pools drop lz4's 4 MiB blocks at random
			}
			if n > 2*limit+slack {
				t.Errorf("decoding allocated %d bytes, limit %d", n, limit)
			}
			if d.next > 0 && len(d.msgs) == 0 && d.corrupt == nil && d.overLimit == nil {
				t.Errorf("moved to %d without delivering anything", d.next)
			}
		})
	}
}

// warmCodecs decodes a batch of each codec once, so that the decoders'
// shared state is in the heap before it is measured.
func warmCodecs(t *testing.T) {
	t.Helper()
	for _, codec := range []sarama.CompressionCodec{sarama.CompressionGZIP, sarama.CompressionSnappy, sarama.CompressionLZ4, sarama.CompressionZSTD} {
		b := batch(0, 0)
		b.Codec = codec
		if d := decodeBlock("t", 0, 0, 1<<20, false, blockOf(b)); len(d.msgs) != 1 {
			t.Fatalf("%v: %+v", codec, d)
		}
	}
}

// TestMemoryBoundFetcherPath sends one response holding every probe, one
// partition each, through a fetcher (process, deliver, the streams'
// queues of one chunk each), with a decoding limit of 4 MiB. Once the
// fetcher is blocked on the full queues, what the chunks keep is checked
// against the bound: one decoded part per queued chunk and one for the
// chunk the fetcher is blocked on. Then the streams are read: the probes
// that decode deliver every offset once, in order, in as many chunks as
// the limit takes (a batch that decodes to more than the limit is split
// across chunks: before, it stopped its partition); a record that alone
// needs more than the limit (a million headers, a single-segment zstd
// frame whose window is past the limit) stops its partition with
// ErrDecodedTooLarge; payloads that declare 90 MiB in a few bytes, more
// than their bytes can hold, and a count past the records are corrupt.
func TestMemoryBoundFetcherPath(t *testing.T) {
	for _, recycle := range []bool{false, true} {
		t.Run(fmt.Sprintf("recycle=%v", recycle), func(t *testing.T) { testMemoryBoundFetcherPath(t, recycle) })
	}
}

func testMemoryBoundFetcherPath(t *testing.T, recycle bool) {
	const limit = 4 * mib
	warmCodecs(t)
	probes := probeBlocks(t)
	cfg := testConfig(t)
	cfg.MaxDecodedBytes = limit
	cfg.RecycleMessages = recycle
	m, err := NewConsumerFetcherManager(cfg, staticBrokers{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := newRun(ctx, m, nil)
	defer r.cancel(errStopped)
	f := newFetcher(r, fetcherKey{}, "nowhere")
	defer f.cancel(errStopped)

	resp := &fetchResponse{}
	var (
		reqs    []reqPart
		names   []string
		streams []*streamcore.KafkaStream
		total   int
	)
	for name, blk := range probes {
		p := int32(len(names))
		s, _, err := streamcore.NewKafkaStream(1, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		streams = append(streams, s)
		pti := streamcore.NewPartitionTopicInfo("t", p, streamcore.QueueOf(s), 0, 0, 1<<20)
		ps := &partState{tp: zkutil.TopicPartition{Topic: "t", Partition: p}, pti: pti, epoch: -1}
		f.add([]*partState{ps})
		reqs = append(reqs, reqPart{ps: ps, offset: 0})
		names = append(names, name)
		b := *blk
		b.topic, b.partition = "t", p
		resp.blocks = append(resp.blocks, b)
		total += len(b.records)
	}
	base := heapInUse()
	processed := make(chan struct{})
	go func() {
		defer close(processed)
		f.process(resp, reqs)
	}()
	// Blocked: no partition moves any more.
	offsets := func() string {
		var b strings.Builder
		for _, rp := range reqs {
			fmt.Fprint(&b, rp.ps.pti.FetchedOffset(), " ")
		}
		return b.String()
	}
	last, still := offsets(), 0
	testwait.WaitFor(t, time.Minute, func() bool {
		if o := offsets(); o != last {
			last, still = o, 0
		}
		still++
		return still > 30
	}, "the fetcher to block")
	kept := heapInUse() - base
	bound := memoryBound{streams: len(reqs), queuedChunks: 1, fetchers: 1, response: int64(total), decoded: limit, recycle: recycle}
	// One queued chunk per stream, and the one the fetcher is blocked on
	// (with the decompressor of a streamed batch, at most the limit; and
	// the free lists with recycling, at most the limit).
	if max := int64(len(reqs)+3) * limit; kept > max {
		t.Errorf("the queued chunks keep %d bytes, more than %d chunks × %d", kept, len(reqs)+2, limit)
	}
	if kept > bound.bytes() {
		t.Errorf("the queued chunks keep %d bytes, bound %d", kept, bound.bytes())
	}
	t.Logf("%d partitions, %d bytes of records: the queued chunks keep %d bytes (bound %d)", len(reqs), total, kept, bound.bytes())

	type got struct {
		offsets []int64
		chunks  int
		err     error
	}
	results := make([]got, len(reqs))
	var wg sync.WaitGroup
	for i, s := range streams {
		wg.Go(func() {
			g := &results[i]
			for {
				m, err := s.Next(ctx)
				switch {
				case err == nil:
					g.offsets = append(g.offsets, m.Offset)
				case errors.Is(err, streamcore.ErrConsumerTimeout):
					select {
					case <-processed:
						return
					default:
					}
				default:
					g.err = errors.Join(g.err, err)
				}
			}
		})
	}
	<-processed
	wg.Wait()
	for i, rp := range reqs {
		g, name, next := results[i], names[i], rp.ps.pti.FetchedOffset()
		t.Logf("%s: %d messages, next %d, %v", name, len(g.offsets), next, g.err)
		switch {
		case name == "headers" || name == "one batch past the limit":
			if !errors.Is(g.err, ErrDecodedTooLarge) || !errors.Is(g.err, streamcore.ErrMessageTooLarge) || len(g.offsets) != 0 || next != 0 {
				t.Errorf("%s: %d messages, next %d, %v; want ErrDecodedTooLarge at 0", name, len(g.offsets), next, g.err)
			}
		case name == "count past the records" || strings.HasPrefix(name, "declared"):
			if !errors.Is(g.err, streamcore.ErrCorruptMessage) || len(g.offsets) != 0 || next != 0 {
				t.Errorf("%s: %d messages, next %d, %v; want ErrCorruptMessage at 0", name, len(g.offsets), next, g.err)
			}
		default:
			hwm := probes[name].hwm
			if g.err != nil || !equalOffsets(g.offsets, offsetsFrom(0, int(hwm))) || next != hwm {
				t.Errorf("%s: %d messages (want %d), next %d, %v", name, len(g.offsets), hwm, next, g.err)
			}
		}
	}
	runtime.KeepAlive(resp)
}

// TestIntegrationMemoryBoundInflating reads, from a real broker, 40 zstd
// batches of 4 records of 1 MiB that take a few kilobytes each (160 MiB
// in all, in one fetch response), with MaxDecodedBytes at 8 MiB and a
// stream that reads nothing until its queue is full and the fetcher is
// blocked. The live heap then stays under the README's bound, and the
// stream then reads every message once, in order. Before the decoding
// limit, the first chunk held all 160 MiB.
func TestIntegrationMemoryBoundInflating(t *testing.T) {
	for _, recycle := range []bool{false, true} {
		t.Run(fmt.Sprintf("recycle=%v", recycle), func(t *testing.T) { testIntegrationMemoryBoundInflating(t, recycle) })
	}
}

func testIntegrationMemoryBoundInflating(t *testing.T, recycle bool) {
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topic, produced := inflatingTopic(ctx, t, c)
	size := logSize(t, c, topic)
	t.Logf("%d batches of %d MiB take %d bytes on the broker", inflatingBatches, inflatingPer, size)

	warmCodecs(t)
	cfg := testConfig(t)
	cfg.MaxDecodedBytes = 8 * mib
	cfg.RecycleMessages = recycle
	const queued = 2
	bound := memoryBound{streams: 1, queuedChunks: queued, fetchers: 1,
		response: 1<<20 + 1048588, // one partition's fetch size, plus one batch of the broker's message.max.bytes
		decoded:  cfg.MaxDecodedBytes, recycle: recycle}
	base := heapInUse()
	m := newManager(t, cfg, clusterBrokers(c))
	s := newStream(t, queued)
	p := streamcore.NewPartitionTopicInfo(topic, 0, streamcore.QueueOf(s), 0, 0, 1<<20)
	var peak atomic.Int64
	sampleCtx, stopSampling := context.WithCancel(ctx)
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for sampleCtx.Err() == nil {
			metrics.Read(sample)
			if v := int64(sample[0].Value.Uint64()); v > peak.Load() {
				peak.Store(v)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	if err := m.StartConnections(ctx, []*streamcore.PartitionTopicInfo{p}); err != nil {
		t.Fatal(err)
	}
	// Stalled: the fetcher does not move any more (blocked on a full
	// queue, or done).
	last, still := p.FetchedOffset(), 0
	testwait.WaitFor(t, time.Minute, func() bool {
		if off := p.FetchedOffset(); off != last {
			last, still = off, 0
		}
		still++
		return last > 0 && still > 50 // 0.5 s without moving
	}, "the fetcher to stop")
	kept := heapInUse() - base
	stopSampling()
	<-sampled
	t.Logf("stalled at offset %d: live heap +%d bytes, peak %d bytes of heap objects; bound %d (%d chunks)",
		p.FetchedOffset(), kept, peak.Load()-base, bound.bytes(), bound.chunks())
	if kept > bound.bytes() {
		t.Errorf("the stalled consumer keeps %d bytes, more than the bound %d", kept, bound.bytes())
	}
	if streamcore.QueueOf(s).Len() != queued || p.FetchedOffset() >= int64(produced.Count()) {
		t.Errorf("the fetcher stopped at %d with %d chunks queued, not blocked on a full queue", p.FetchedOffset(), streamcore.QueueOf(s).Len())
	}
	// What the chunks alive can hold: three (two queued, one blocked) of
	// at most 8 MiB decoded each, and their responses of a few KiB; with
	// recycling, free lists of at most 8 MiB more.
	max := int64(queued+1)*cfg.MaxDecodedBytes + 4*mib
	if recycle {
		max += cfg.MaxDecodedBytes
	}
	if kept > max {
		t.Errorf("the stalled consumer keeps %d bytes, more than %d chunks of %d", kept, queued+1, cfg.MaxDecodedBytes)
	}

	var got []*streamcore.Message
	for len(got) < produced.Count() {
		msg, err := s.Next(ctx)
		if err != nil {
			t.Fatalf("after %d messages: %v", len(got), err)
		}
		if len(msg.Value) != mib {
			t.Fatalf("message at %d of %d bytes", msg.Offset, len(msg.Value))
		}
		// Keep what checkExactlyOnce reads, not the chunk.
		got = append(got, &streamcore.Message{Topic: msg.Topic, Partition: msg.Partition, Offset: msg.Offset,
			Key: bytes.Clone(msg.Key), Value: bytes.Clone(msg.Value[:20])})
	}
	checkExactlyOnce(t, got, produced)
}

const (
	// inflatingBatches and inflatingPer shape the topic inflatingTopic
	// returns: batches of records of 1 MiB each.
	inflatingBatches, inflatingPer = 40, 4
)

// sharedInflating is the topic inflatingTopic returns, made once per test
// binary.
var sharedInflating struct {
	mu       sync.Mutex
	topic    string
	produced testcluster.Produced
}

// inflatingTopic returns a one-partition topic of inflatingBatches zstd
// batches of inflatingPer records of 1 MiB (produceInflating), and what was
// produced. The tests that read it (TestIntegrationMemoryBoundInflating,
// TestIntegrationCappedResponseIsNotRefetched) only read it, each from
// offset 0 with a manager of its own, so one topic serves them all: the
// producer compresses its 160 MiB once per test binary, not three times.
// The first caller creates it; if that one fails, the next tries again.
func inflatingTopic(ctx context.Context, t *testing.T, c *testcluster.Cluster) (string, testcluster.Produced) {
	t.Helper()
	sharedInflating.mu.Lock()
	defer sharedInflating.mu.Unlock()
	if sharedInflating.topic == "" {
		topic := newTopic(t, c, "fetch-inflating", 1, 1)
		produced := produceInflating(ctx, t, c, topic, inflatingBatches, inflatingPer, mib)
		sharedInflating.topic, sharedInflating.produced = topic, produced
	}
	return sharedInflating.topic, sharedInflating.produced
}

// produceInflating writes n batches of per records of size bytes each
// ('.'-padded sequence numbers, see testcluster.MessageValue) to partition
// 0 of topic, compressed with zstd: a few kilobytes a batch.
func produceInflating(ctx context.Context, t *testing.T, c *testcluster.Cluster, topic string, n, per, size int) testcluster.Produced {
	t.Helper()
	cfg := testcluster.SaramaConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Compression = sarama.CompressionZSTD
	cfg.Producer.MaxMessageBytes = 2 * per * size
	cfg.Producer.Flush.Messages = per
	cfg.Producer.Flush.MaxMessages = per
	cfg.Producer.Flush.Frequency = time.Minute
	cfg.Producer.Return.Successes = true
	p, err := sarama.NewSyncProducer(c.BrokerAddrs(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	out := testcluster.Produced{Offsets: map[int32][]int64{}, Seqs: map[int32][]int{}}
	for b := range n {
		msgs := make([]*sarama.ProducerMessage, per)
		for i := range msgs {
			seq := b*per + i
			msgs[i] = &sarama.ProducerMessage{Topic: topic, Partition: 0, Key: sarama.StringEncoder(fmt.Sprintf("key-%d", seq)),
				Value: sarama.ByteEncoder(testcluster.MessageValue(seq, size))}
		}
		if err := p.SendMessages(msgs); err != nil {
			t.Fatal(err)
		}
		for i, m := range msgs {
			out.Offsets[0] = append(out.Offsets[0], m.Offset)
			out.Seqs[0] = append(out.Seqs[0], b*per+i)
		}
		if ctx.Err() != nil {
			t.Fatal(ctx.Err())
		}
	}
	return out
}

// TestDecodedCosts: what the README says a message and a header cost, on
// 64-bit platforms.
func TestDecodedCosts(t *testing.T) {
	if strconv.IntSize != 64 {
		t.Skip("64-bit sizes")
	}
	if msgCost != 152 || headerCost != 48 {
		t.Errorf("a message costs %d bytes, a header %d; the README says 152 and 48", msgCost, headerCost)
	}
}
