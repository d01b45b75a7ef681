package fetch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/IBM/sarama"
)

// FuzzDecodeRecords feeds arbitrary partition data to the decoder: it must
// never panic, must reach what predictNext says unless it finds corruption
// or its decoding limit, must never move a partition backwards, and must
// deliver messages in increasing offset order at or above the fetch
// offset. Its inputs rarely get past a checksum: FuzzDecodeWrapped makes
// them match.
func FuzzDecodeRecords(f *testing.F) {
	seeds := [][]byte{
		blockOf(batch(10, 0, 1, 2), batch(13, 0, 1)).records,
		blockOf(controlBatch(50, 9, true)).records,
		blockOf(&sarama.RecordBatch{Version: 2, FirstOffset: 9, PartialTrailingRecord: true}).records,
		legacyBlock(&sarama.MessageSet{Messages: []*sarama.MessageBlock{
			{Offset: 5, Msg: &sarama.Message{Key: []byte("a"), Value: []byte("five")}},
			{Offset: 6, Msg: &sarama.Message{Version: 1, Value: []byte("six")}},
		}}).records,
		partialBlock().records,
	}
	for _, codec := range []sarama.CompressionCodec{sarama.CompressionGZIP, sarama.CompressionSnappy, sarama.CompressionLZ4, sarama.CompressionZSTD} {
		b := batch(20, 0, 1, 2)
		b.Codec = codec
		seeds = append(seeds, blockOf(b).records)
	}
	for _, s := range seeds {
		f.Add(s, int64(0), int32(1<<20), false)
		f.Add(s, int64(11), int32(100), true)
	}
	f.Fuzz(func(t *testing.T, records []byte, fetchOffset int64, fetchSize int32, readCommitted bool) {
		if fetchOffset < 0 || fetchSize <= 0 {
			return
		}
		blk := &respBlock{topic: "t", records: records, aborted: txnList(abortedTxn{producerID: 9, firstOffset: 0}), hwm: math.MaxInt64}
		for _, check := range []bool{true, false} {
			d := decodeRecords("t", 0, fetchOffset, fetchSize, decodeOpts{readCommitted: readCommitted, checkCRCs: check}, blk)
			if d.next < fetchOffset {
				t.Fatalf("next %d below the fetch offset %d", d.next, fetchOffset)
			}
			prev := fetchOffset - 1
			for _, m := range d.msgs {
				if m.Offset <= prev || m.Offset >= d.next {
					t.Fatalf("message offset %d after %d, next %d", m.Offset, prev, d.next)
				}
				prev = m.Offset
			}
			if d.corrupt != nil {
				if !errors.Is(d.corrupt, errCorrupt) {
					t.Fatalf("corrupt %v does not wrap errCorrupt", d.corrupt)
				}
				continue
			}
			if d.capped || d.overLimit != nil {
				continue
			}
			next, ok := predictNext(fetchOffset, fetchSize, blk)
			if ok == d.truncated || next != d.next {
				t.Fatalf("predicted %d (ok %v), decoded next %d (truncated %v)", next, ok, d.next, d.truncated)
			}
		}
	})
}

// TestDecodeCorruptBatch: a batch whose checksum does not match ends the
// block: the batches before it are delivered and the partition moves to
// it; fetched first, it is reported. With checksums off it is delivered.
func TestDecodeCorruptBatch(t *testing.T) {
	good, bad, after := batch(10, 0, 1), batch(12, 0, 1), batch(14, 0)
	blk := blockOf(good, bad, after)
	i := bytes.Index(blk.records, []byte("v13"))
	blk.records[i] = 'V'
	d := decodeBlock("t", 0, 10, 1<<20, false, blk)
	if want := []int64{10, 11}; !equalOffsets(offsetsOf(d.msgs), want) || d.next != 12 || d.corrupt == nil {
		t.Fatalf("offsets %v next %d corrupt %v; want %v, 12 and an error", offsetsOf(d.msgs), d.next, d.corrupt, want)
	}
	// Fetched at 12, the broker starts with the bad batch.
	blk.records = blk.records[len(appendBatch(nil, good)):]
	d = decodeBlock("t", 0, 12, 1<<20, false, blk)
	if d.msgs != nil || d.next != 12 || !errors.Is(d.corrupt, errCorrupt) {
		t.Fatalf("at the bad batch: %+v", d)
	}
	d = decodeRecords("t", 0, 12, 1<<20, decodeOpts{}, blk)
	if want := []int64{12, 13, 14}; !equalOffsets(offsetsOf(d.msgs), want) || d.corrupt != nil || string(d.msgs[1].Value) != "V13" {
		t.Fatalf("check.crcs=false: %+v", d)
	}

	// A compressed batch whose payload does not decompress, checksum
	// right: corrupt all the same.
	z := batch(20, 0, 1)
	z.Codec = sarama.CompressionZSTD
	zb := blockOf(z)
	zb.records[recordBatchOverhead+2] ^= 0xff
	binary.BigEndian.PutUint32(zb.records[batchCRCAt:], crcOf(zb.records[batchAttrsAt:]))
	if d := decodeBlock("t", 0, 20, 1<<20, false, zb); d.corrupt == nil || d.msgs != nil || d.next != 20 {
		t.Fatalf("undecompressable batch: %+v", d)
	}

	// A length that cannot be right.
	junk := append(binary.BigEndian.AppendUint64(nil, 30), 0, 0, 0, 3, 0, 0, 0, 0, 2)
	if d := decodeBlock("t", 0, 30, 1<<20, false, &respBlock{records: junk, hwm: 100}); d.corrupt == nil || d.truncated {
		t.Fatalf("bad length: %+v", d)
	}
}

func crcOf(b []byte) uint32 {
	return crc32Castagnoli(b)
}

// TestDecodeLegacyCodecs: message sets compressed with each codec Kafka
// allowed before format v2, with relative (v1) offsets.
func TestDecodeLegacyCodecs(t *testing.T) {
	for _, codec := range []sarama.CompressionCodec{sarama.CompressionGZIP, sarama.CompressionSnappy, sarama.CompressionLZ4} {
		inner := &sarama.MessageSet{}
		for o := range int64(3) {
			inner.Messages = append(inner.Messages, &sarama.MessageBlock{Offset: o, Msg: &sarama.Message{Version: 1, Value: []byte{byte('a' + o)}, Timestamp: t0}})
		}
		set := &sarama.MessageSet{Messages: []*sarama.MessageBlock{{Offset: 42, Msg: &sarama.Message{Version: 1, Codec: codec, Set: inner, Timestamp: t0}}}}
		d := decodeBlock("t", 0, 41, 1<<20, false, legacyBlock(set))
		if want := []int64{41, 42}; !equalOffsets(offsetsOf(d.msgs), want) || d.next != 43 || string(d.msgs[1].Value) != "c" || d.corrupt != nil {
			t.Errorf("%v: %+v", codec, d)
		}
		if d.aliased {
			t.Errorf("%v: decompressed messages reported as aliasing the response", codec)
		}
	}
}

// BenchmarkDecodeCompressed decodes a batch of 500 1 KiB records, half of
// each random hex digits (about 2:1), compressed with each codec.
func BenchmarkDecodeCompressed(b *testing.B) {
	for _, codec := range []sarama.CompressionCodec{sarama.CompressionLZ4, sarama.CompressionZSTD, sarama.CompressionSnappy, sarama.CompressionGZIP} {
		rb := &sarama.RecordBatch{Version: 2, FirstTimestamp: t0, ProducerID: -1, Codec: codec}
		seed := uint32(1)
		for i := range 500 {
			v := make([]byte, 1024)
			for j := range v {
				seed = seed*1664525 + 1013904223
				v[j] = "0123456789abcdef"[seed>>28]
			}
			rb.Records = append(rb.Records, &sarama.Record{OffsetDelta: int64(i), Value: v})
		}
		rb.LastOffsetDelta = 499
		blk := blockOf(rb)
		b.Run(codec.String(), func(b *testing.B) {
			b.SetBytes(500 * 1024)
			b.ReportAllocs()
			for b.Loop() {
				if d := decodeBlock("t", 0, 0, 1<<20, false, blk); len(d.msgs) != 500 {
					b.Fatal(d.corrupt)
				}
			}
		})
	}
}

// FuzzParseFetchResponse feeds arbitrary bytes to the fetch response
// parser at every version, in pieces and at once, as the answer to a
// request for topics t0 and t1 of 4 partitions each: it must not panic,
// must parse the pieces as it parses the whole, a block's records must lie
// inside the buffer, what it verified must be record batches whose
// checksums match, and what it found of the entry headers must be what
// the decoder's own scan finds.
func FuzzParseFetchResponse(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 2, 't', '0', 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0}, int16(0))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 't', '0', 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 3, 1, 2, 0, 0, 0}, int16(12))
	good := rawBatch(0, 0, 1, 2, rawRecords(seq(2), func(int) []byte { return []byte("v") }))
	for _, v := range []int16{4, 11, 12} {
		f.Add(encodeResponse(v, [][]testPartition{{{aborted: 1, records: append(bytes.Clone(good), good[:30]...)}, {records: nil}}}), v)
	}
	f.Fuzz(func(t *testing.T, body []byte, version int16) {
		if version < 0 || version > 12 {
			return
		}
		w := &wireConn{version: version, checkCRCs: true}
		reqs := expectTopics(w, 1<<20, 4, 4)
		whole, wholeErr := w.parse(bytes.Clone(body))
		// The checksums verified as a response is read, in any pieces,
		// are those of record batches that match them.
		buf := make([]byte, len(body))
		p := w.startParse(buf)
		piece := 1 + len(body)%13
		for filled := 0; filled < len(body); {
			n := min(piece, len(body)-filled)
			copy(buf[filled:], body[filled:filled+n])
			filled += n
			p.advance(filled)
		}
		resp, err := p.finish()
		if (err == nil) != (wholeErr == nil) {
			t.Fatalf("in pieces: %v; at once: %v", err, wholeErr)
		}
		if err != nil {
			return
		}
		if len(resp.blocks) != len(reqs) {
			t.Fatalf("%d blocks for %d partitions", len(resp.blocks), len(reqs))
		}
		checkVerified(t, resp)
		for i, b := range resp.blocks {
			if b.topic != reqs[i].ps.tp.Topic || b.partition != reqs[i].ps.tp.Partition {
				t.Fatalf("block %d is %s-%d", i, b.topic, b.partition)
			}
			if len(b.records) > len(body) || len(b.aborted)%abortedTxnSize != 0 {
				t.Fatalf("records of %d bytes, aborted list of %d, in a body of %d", len(b.records), len(b.aborted), len(body))
			}
			if wb := whole.blocks[i]; b.missing != wb.missing || !bytes.Equal(b.records, wb.records) || !bytes.Equal(b.aborted, wb.aborted) ||
				b.verified != wb.verified || !sameScan(b.scan, wb.scan) {
				t.Fatalf("block %d in pieces %+v, at once %+v", i, b, wb)
			}
			if s := scan(&b, 0, 1<<20); b.scanned && !sameScan(b.scan, s) {
				t.Fatalf("block %d: parsed scan %+v, scan %+v", i, b.scan, s)
			}
			_ = decodeRecords(b.topic, b.partition, 0, 1<<20, decodeOpts{checkCRCs: true, readCommitted: true}, &b)
		}
	})
}
