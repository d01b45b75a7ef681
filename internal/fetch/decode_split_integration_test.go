package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

// chunks decodes a whole block, chunk by chunk, as the fetcher does.
func chunks(t *testing.T, fetchOffset int64, opts decodeOpts, blk *respBlock) []decoded {
	t.Helper()
	bd := newBlockDecoder("t", 0, fetchOffset, 1<<20, opts, blk, &pools{})
	defer bd.close()
	var out []decoded
	for bd.more() {
		d := bd.chunk()
		out = append(out, d)
		if !d.capped {
			break
		}
		if len(out) > 10_000 {
			t.Fatal("no end")
		}
	}
	return out
}

// TestLargeBatchSplitAcrossChunks: a legal batch that decodes to more than
// the decoding limit (32 MiB at a 1 MiB fetch size) is delivered whole, its
// records spread over chunks that each stay within the limit; before, it
// stopped its partition with ErrDecodedTooLarge. The cases are a 1 MiB
// zstd batch of small records (about 20:1, 20 MiB of records, 60 MiB with
// their messages), the same uncompressed (a batch of a million 7-byte
// records), and a batch whose payload alone is past the limit (48 MiB in
// 48 records), which is decompressed as a stream.
func TestLargeBatchSplitAcrossChunks(t *testing.T) {
	t.Parallel()
	limit := decodeLimitForTest(1 << 20)
	small := func(n int) []byte {
		return rawRecords(seq(n), func(i int) []byte { return fmt.Appendf(nil, "value-%08d-%020d", i, i%97) })
	}
	const nSmall = 400_000
	zrecs := compress(sarama.CompressionZSTD, small(nSmall))
	big := rawRecords(seq(48), func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i%26)}, mib) })
	for _, c := range []struct {
		name    string
		records []byte
		n       int
		value   func(i int) []byte
	}{
		{"zstd, small records", rawBatch(0, codecZstd, nSmall-1, nSmall, zrecs), nSmall,
			func(i int) []byte { return fmt.Appendf(nil, "value-%08d-%020d", i, i%97) }},
		{"uncompressed, 7-byte records", rawBatch(0, 0, 999_999, 1_000_000, rawRecords(seq(1_000_000), func(int) []byte { return []byte{} })),
			1_000_000, func(int) []byte { return []byte{} }},
		{"gzip, payload past the limit", rawBatch(0, codecGzip, 47, 48, compress(sarama.CompressionGZIP, big)), 48,
			func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i%26)}, mib) }},
		{"zstd, payload past the limit", rawBatch(0, codecZstd, 47, 48, compress(sarama.CompressionZSTD, big)), 48,
			func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i%26)}, mib) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			blk := &respBlock{records: c.records, hwm: int64(c.n)}
			// Before: one call, a batch over the limit.
			if first := decodeBlock("t", 0, 0, 1<<20, false, blk); first.overLimit != nil || first.corrupt != nil {
				t.Fatalf("first chunk: %v %v", first.overLimit, first.corrupt)
			}
			next, seen := int64(0), 0
			ds := chunks(t, 0, decodeOpts{checkCRCs: true}, blk)
			for k, d := range ds {
				if d.corrupt != nil || d.overLimit != nil {
					t.Fatalf("chunk %d: %v %v", k, d.corrupt, d.overLimit)
				}
				if len(d.msgs) == 0 {
					t.Fatalf("chunk %d is empty", k)
				}
				// Each chunk continues where the one before left the
				// partition, and ends where its successor starts.
				if d.msgs[0].Offset != next || d.next != d.msgs[len(d.msgs)-1].Offset+1 {
					t.Fatalf("chunk %d: offsets %d to %d, next %d, after %d", k, d.msgs[0].Offset, d.msgs[len(d.msgs)-1].Offset, d.next, next)
				}
				if cost := int64(len(d.msgs)) * msgCost; cost > limit {
					t.Fatalf("chunk %d: %d messages, %d bytes, limit %d", k, len(d.msgs), cost, limit)
				}
				for _, m := range d.msgs {
					if m.Offset != int64(seen) || !bytes.Equal(m.Value, c.value(seen)) {
						t.Fatalf("message %d: offset %d, %d-byte value", seen, m.Offset, len(m.Value))
					}
					seen++
				}
				next = d.next
				if k < len(ds)-1 != d.capped {
					t.Fatalf("chunk %d of %d: capped %v", k, len(ds), d.capped)
				}
			}
			if seen != c.n || next != int64(c.n) {
				t.Fatalf("%d messages, next %d, want %d", seen, next, c.n)
			}
			t.Logf("%d records of %d bytes in %d chunks", c.n, len(c.records), len(ds))
		})
	}
}

// TestCappedBlockContinues: when the next batch does not fit in what is
// left of a chunk, the next chunk starts with it, from the same response:
// the whole block is delivered in one go, so that the partition ends
// where the request sent ahead expected (predictNext). Before, decoding
// stopped there and the partition was fetched again, and the response to
// the request already sent ahead for it went to waste.
func TestCappedBlockContinues(t *testing.T) {
	const batches, per = 20, 8
	var records []byte
	for i := range batches {
		records = append(records, rawBatch(int64(i*per), codecZstd, per-1, per, inflating(sarama.CompressionZSTD, per, mib))...)
	}
	blk := &respBlock{records: records, hwm: batches * per}
	ds := chunks(t, 0, decodeOpts{checkCRCs: true}, blk)
	var got []int64
	for _, d := range ds {
		got = append(got, offsetsOf(d.msgs)...)
	}
	predicted, _ := predictNext(0, 1<<20, blk)
	last := ds[len(ds)-1]
	if !equalOffsets(got, offsetsFrom(0, batches*per)) || last.next != predicted || last.capped || len(ds) < 2 {
		t.Fatalf("%d chunks, offsets %v, next %d (predicted %d)", len(ds), got, last.next, predicted)
	}
	t.Logf("%d batches of %d MiB in %d chunks", batches, per, len(ds))
}

// TestSplitBatchCorruptTail: a batch spread over chunks whose later part
// is malformed delivers the chunks before the bad part; the chunk holding
// it takes its messages of the batch back and the partition stays at the
// first record of that chunk (the next fetch finds the bad record first
// and reports it), as Java's consumer returns the records of a batch
// before a corrupt one.
func TestSplitBatchCorruptTail(t *testing.T) {
	const n = 400_000
	recs := rawRecords(seq(n), func(int) []byte { return []byte{} })
	recs[len(recs)-1] = 0x7e // the last record's header count: 63, past its end
	blk := &respBlock{records: rawBatch(0, 0, n-1, n, recs), hwm: n}
	ds := chunks(t, 0, decodeOpts{}, blk)
	last := ds[len(ds)-1]
	if len(ds) < 2 || !errors.Is(last.corrupt, errCorrupt) || len(last.msgs) != 0 || last.next != ds[len(ds)-2].next {
		t.Fatalf("%d chunks; last: %d messages, next %d, corrupt %v", len(ds), len(last.msgs), last.next, last.corrupt)
	}
	// Fetched again from there: the bad record comes first.
	again := chunks(t, last.next, decodeOpts{}, blk)
	if d := again[0]; !errors.Is(d.corrupt, errCorrupt) || len(d.msgs) != 0 || d.next != last.next {
		t.Fatalf("fetched again at %d: %d messages, next %d, %v", last.next, len(d.msgs), d.next, d.corrupt)
	}
}

// TestOneRecordPastTheLimit: a single record that alone needs more than
// the decoding limit still stops its partition (ErrDecodedTooLarge), after
// the records before it in its batch: there is no smaller piece to
// deliver it in. (A zstd frame whose window is past the limit stops the
// partition at the start of its batch: TestMemoryBoundFetcherPath.)
func TestOneRecordPastTheLimit(t *testing.T) {
	recs := rawRecords(seq(3), func(i int) []byte {
		if i == 2 {
			return make([]byte, 5*mib)
		}
		return []byte("x")
	})
	blk := &respBlock{records: rawBatch(0, codecGzip, 2, 3, compress(sarama.CompressionGZIP, recs)), hwm: 3}
	ds := chunks(t, 0, decodeOpts{maxDecoded: 4 * mib}, blk)
	if len(ds) != 2 || !equalOffsets(offsetsOf(ds[0].msgs), []int64{0, 1}) || ds[1].overLimit == nil || ds[1].next != 2 || len(ds[1].msgs) != 0 {
		for _, d := range ds {
			t.Logf("offsets %v next %d over %v", offsetsOf(d.msgs), d.next, d.overLimit)
		}
		t.Fatal("want [0 1], then the record at 2 over the limit")
	}
}

// decodedValues copies what the messages of d hold.
func decodedValues(msgs []*streamcore.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Value)
	}
	return out
}

// TestIntegrationCappedResponseIsNotRefetched reads, from a real broker,
// 40 zstd batches of 4 records of 1 MiB that the broker sends in one
// response of a few kilobytes, with MaxDecodedBytes at 8 MiB: the response
// is decoded in chunks until all of it has been delivered, so every
// message comes from that first response. Before, decoding stopped at
// the limit, the partition was fetched again from there for every couple
// of batches, and each time the request already sent ahead (asking past
// the whole response) was wasted: about 40 requests with data instead of
// 1.
func TestIntegrationCappedResponseIsNotRefetched(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topic, produced := inflatingTopic(ctx, t, c)
	var withData, requests atomic.Int32
	cfg := testConfig(t)
	cfg.MaxDecodedBytes = 8 * mib
	cfg.OnFetch = func(e FetchEvent) {
		requests.Add(1)
		if e.Bytes > 4096 {
			withData.Add(1)
		}
	}
	m := newManager(t, cfg, clusterBrokers(c))
	s := newStream(t, 2)
	p := streamcore.NewPartitionTopicInfo(topic, 0, streamcore.QueueOf(s), 0, 0, 1<<20)
	if err := m.StartConnections(ctx, []*streamcore.PartitionTopicInfo{p}); err != nil {
		t.Fatal(err)
	}
	var got []*streamcore.Message
	for len(got) < produced.Count() {
		msg, err := s.Next(ctx)
		if err != nil {
			t.Fatalf("after %d messages: %v", len(got), err)
		}
		got = append(got, &streamcore.Message{Topic: msg.Topic, Partition: msg.Partition, Offset: msg.Offset,
			Key: bytes.Clone(msg.Key), Value: bytes.Clone(msg.Value[:20])})
	}
	n, all := withData.Load(), requests.Load()
	m.StopConnections()
	checkExactlyOnce(t, got, produced)
	t.Logf("%d requests, %d of them with data, for %d messages", all, n, len(got))
	if n > 2 {
		t.Errorf("%d fetch responses carried data, want the one that held them all (2 at most)", n)
	}
}
