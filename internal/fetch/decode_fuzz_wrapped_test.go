package fetch

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"runtime"
	"testing"

	"github.com/IBM/sarama"
)

// FuzzDecodeWrapped reaches the decoder's record parsing with checksums
// that match: the fuzzed bytes are the records of one or two record
// batches (format v2) or the messages of a message set (v0/v1), which it
// compresses with a codec (or, with flagRaw, takes as the compressed
// payload itself) and wraps in entries whose lengths and CRCs are right.
// Counts and last offset deltas are the fuzzer's, or (flagHonest) those of
// the records. Then, for every input:
//
//   - delivered offsets increase strictly, lie at or above the fetch
//     offset and within their entry's declared range;
//   - the partition never moves backwards, never past a record it did not
//     deliver (a batch decoded whole delivers exactly its count from its
//     base on), and not at all past an entry that failed;
//   - fetching again from where the partition was left (the block from
//     the entry that holds that offset, as a broker would send it)
//     delivers no offset twice;
//   - what the decoder allocates is bounded by a constant times the input
//     plus the decoding limit.
func FuzzDecodeWrapped(f *testing.F) {
	recs := rawRecords(seq(4), func(i int) []byte { return []byte{'v', byte('0' + i)} })
	withHeaders := appendBatch(nil, func() *sarama.RecordBatch {
		b := batch(0, 0, 1)
		b.Records[1].Headers = []*sarama.RecordHeader{{Key: []byte("h"), Value: []byte("x")}}
		return b
	}())[recordBatchOverhead:]
	set := func(version int8, first int64) []byte {
		return appendMessageSet(nil, &sarama.MessageSet{Messages: []*sarama.MessageBlock{
			{Offset: first, Msg: &sarama.Message{Version: version, Key: []byte("k"), Value: []byte("a"), Timestamp: t0}},
			{Offset: first + 1, Msg: &sarama.Message{Version: version, Value: []byte("b"), Timestamp: t0}},
		}})
	}
	for codec := range uint8(5) {
		for _, mode := range []uint8{modeV2, modeV1, modeV0} {
			data := recs
			switch {
			case mode == modeV1 && codec != codecNone:
				data = set(1, 0) // relative offsets
			case mode == modeV1:
				data = set(1, 100)
			case mode == modeV0:
				data = set(0, 99) // absolute offsets, up to the wrapper's
			}
			f.Add(data, mode, codec, uint32(100), int16(3), int16(4), int16(0), uint8(0), uint8(flagHonest|flagCRC))
			f.Add(data, mode, codec, uint32(100), int16(3), int16(4), int16(2), uint8(5), uint8(flagHonest|flagCRC|flagSecond))
		}
	}
	f.Add(withHeaders, modeV2, uint8(0), uint32(7), int16(1), int16(2), int16(0), uint8(0), uint8(flagHonest|flagCRC))
	f.Add(recs, modeV2, uint8(codecZstd), uint32(7), int16(3), int16(5), int16(0), uint8(0), uint8(flagCRC))
	f.Add(recs, modeV2, uint8(codecNone), uint32(7), int16(2), int16(4), int16(0), uint8(0), uint8(flagCRC))
	f.Add(recs, modeV2, uint8(codecSnappy), uint32(7), int16(3), int16(4), int16(0), uint8(0), uint8(flagRaw))
	f.Fuzz(func(t *testing.T, data []byte, mode, codec uint8, base uint32, lastDelta, count, fetchDelta int16, gap, flags uint8) {
		codec %= 5
		in := wrapInput{data: data, mode: mode % 3, codec: int8(codec), base: int64(base), lastDelta: int32(lastDelta),
			count: int32(count), gap: int64(gap), flags: flags}
		records, hwm := in.build()
		fetchOffset := max(0, in.base+int64(fetchDelta))
		opts := decodeOpts{checkCRCs: flags&flagCRC != 0, readCommitted: flags&flagCommitted != 0, maxDecoded: fuzzMaxDecoded}
		var seen []int64
		for round := 0; round < 4; round++ {
			blk := &respBlock{records: fromOffset(records, fetchOffset), hwm: hwm,
				aborted: txnList(abortedTxn{producerID: 1, firstOffset: 0})}
			var d decoded
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			d = decodeRecords("t", 0, fetchOffset, 1<<20, opts, blk)
			runtime.ReadMemStats(&after)
			if n, bound := after.TotalAlloc-before.TotalAlloc, 64*uint64(len(records))+3*fuzzMaxDecoded+8<<20; n > bound {
				t.Fatalf("allocated %d bytes for %d bytes of records (bound %d)", n, len(records), bound)
			}
			checkDecoded(t, in, blk, fetchOffset, d)
			for _, m := range d.msgs {
				if len(seen) > 0 && m.Offset <= seen[len(seen)-1] {
					t.Fatalf("offset %d delivered after %d", m.Offset, seen[len(seen)-1])
				}
				seen = append(seen, m.Offset)
			}
			if d.next == fetchOffset || d.corrupt != nil || d.overLimit != nil || d.truncated || d.oversize {
				break
			}
			fetchOffset = d.next
		}
	})
}

// The decoding limit of the fuzz target: small, so that it is reached.
const fuzzMaxDecoded = 1 << 20

// Modes and flags of FuzzDecodeWrapped.
const (
	modeV2 uint8 = iota
	modeV1
	modeV0
)

const (
	flagCRC       = 1 << 0 // check.crcs
	flagHonest    = 1 << 1 // count and last offset delta from the records
	flagRaw       = 1 << 2 // the data is the compressed payload
	flagSecond    = 1 << 3 // the records are split in two batches
	flagCommitted = 1 << 4 // read_committed
	flagTxn       = 1 << 5 // transactional batches of producer 1 (aborted from offset 0)
	flagControl   = 1 << 6 // control batches
)

// wrapInput is one input of FuzzDecodeWrapped.
type wrapInput struct {
	data      []byte
	mode      uint8
	codec     int8
	base      int64
	lastDelta int32
	count     int32
	gap       int64
	flags     uint8
	entries   []wrapEntry // as built
}

// wrapEntry is an entry build made: its base and last offset, and, for a
// batch decoded whole, the records it holds.
type wrapEntry struct {
	base, last int64
	count      int32
	control    bool
	txn        bool
	legacy     bool
}

// build returns the records of the input and a high watermark past them.
func (in *wrapInput) build() (records []byte, hwm int64) {
	if in.mode == modeV2 {
		parts := [][]byte{in.data}
		if in.flags&flagSecond != 0 {
			cut := len(in.data) / 2
			if n, ends, ok := parseRecords(in.data); ok && n > 1 {
				cut = ends[n/2-1]
			}
			parts = [][]byte{in.data[:cut], in.data[cut:]}
		}
		base := in.base
		for _, p := range parts {
			count, lastDelta := in.count, in.lastDelta
			if in.flags&flagHonest != 0 {
				if n, _, ok := parseRecords(p); ok {
					count, lastDelta = int32(n), max(0, int32(n)-1)
					if ds := recordDeltas(p); len(ds) > 0 {
						lastDelta = int32(max(int64(lastDelta), ds[len(ds)-1]))
					}
				}
			}
			payload := p
			if in.flags&flagRaw == 0 {
				payload = compressCodec(in.codec, p)
			}
			attrs := int16(in.codec)
			if in.flags&flagTxn != 0 {
				attrs |= attrTransactional
			}
			if in.flags&flagControl != 0 {
				attrs |= attrControl
			}
			b := rawBatch(base, attrs, lastDelta, count, payload)
			if in.flags&(flagTxn|flagControl) != 0 {
				binary.BigEndian.PutUint64(b[batchProducerAt:], 1)
				fixCRC(b)
			}
			records = append(records, b...)
			in.entries = append(in.entries, wrapEntry{base: base, last: base + int64(lastDelta), count: count,
				control: in.flags&flagControl != 0, txn: in.flags&flagTxn != 0})
			base += int64(lastDelta) + 1 + in.gap
		}
		return records, base + 1
	}
	magic := int8(1)
	if in.mode == modeV0 {
		magic = 0
	}
	inner := fixMessageCRCs(in.data)
	if in.codec == codecNone {
		// The data is the message set itself, its offsets the fuzzer's.
		var last int64
		for rest := inner; ; {
			e, st, _ := splitEntry(rest)
			if st != entryOK {
				break
			}
			last = max(last, e.base)
			rest = rest[len(e.data):]
		}
		return inner, last + 1
	}
	payload := inner
	if in.flags&flagRaw == 0 {
		payload = compressCodec(in.codec, inner)
	}
	records = rawMessage(in.base, magic, byte(in.codec), nil, payload)
	in.entries = append(in.entries, wrapEntry{base: in.base, last: in.base, legacy: true})
	return records, in.base + 1
}

// compressCodec compresses data with codec (a Kafka codec id).
func compressCodec(codec int8, data []byte) []byte {
	return compress(sarama.CompressionCodec(codec), data)
}

// fixMessageCRCs returns a copy of a message set whose messages' CRC-32s
// match them, as far as it parses.
func fixMessageCRCs(set []byte) []byte {
	out := append([]byte(nil), set...)
	for at := 0; ; {
		e, st, _ := splitEntry(out[at:])
		if st != entryOK {
			return out
		}
		if e.magic < 2 {
			binary.BigEndian.PutUint32(e.data[msgCRCAt:], crc32.ChecksumIEEE(e.data[msgMagicAt:]))
		}
		at += len(e.data)
	}
}

// parseRecords splits the records of a batch as the format says, without
// looking inside them: how many there are and where each ends.
func parseRecords(b []byte) (n int, ends []int, ok bool) {
	for i := 0; i < len(b); {
		length, j := binary.Varint(b[i:])
		if j <= 0 || length < 0 || length > int64(len(b)-i-j) {
			return n, ends, false
		}
		i += j + int(length)
		ends = append(ends, i)
		n++
	}
	return n, ends, true
}

// recordDeltas returns the offset deltas of records, as far as they parse.
func recordDeltas(b []byte) []int64 {
	var out []int64
	for i := 0; i < len(b); {
		length, j := binary.Varint(b[i:])
		if j <= 0 || length < 0 || length > int64(len(b)-i-j) {
			return out
		}
		rec := b[i+j : i+j+int(length)]
		i += j + int(length)
		k := 1
		if _, n := binary.Varint(rec[min(k, len(rec)):]); n > 0 {
			k += n
			if d, n := binary.Varint(rec[min(k, len(rec)):]); n > 0 {
				out = append(out, d)
				continue
			}
		}
		return out
	}
	return out
}

// fromOffset returns records from the entry that holds offset on, as a
// broker would send them for a fetch at offset.
func fromOffset(records []byte, offset int64) []byte {
	at := 0
	for {
		e, st, _ := splitEntry(records[at:])
		if st != entryOK || e.last() >= offset {
			return records[at:]
		}
		at += len(e.data)
	}
}

// checkDecoded checks one decodeRecords result against the input.
func checkDecoded(t *testing.T, in wrapInput, blk *respBlock, fetchOffset int64, d decoded) {
	t.Helper()
	if d.next < fetchOffset {
		t.Fatalf("next %d below the fetch offset %d", d.next, fetchOffset)
	}
	failed := d.corrupt != nil || d.overLimit != nil
	if failed && !errors.Is(d.corrupt, errCorrupt) && d.overLimit == nil {
		t.Fatalf("corrupt %v does not wrap errCorrupt", d.corrupt)
	}
	prev := fetchOffset - 1
	for _, m := range d.msgs {
		if m.Offset <= prev || m.Offset >= d.next {
			t.Fatalf("message offset %d after %d, next %d", m.Offset, prev, d.next)
		}
		prev = m.Offset
		inRange := len(in.entries) == 0 // a plain message set: its own offsets
		for _, e := range in.entries {
			inRange = inRange || (m.Offset <= e.last && (e.legacy || m.Offset >= e.base))
		}
		if !inRange {
			t.Fatalf("message offset %d outside every entry %+v", m.Offset, in.entries)
		}
	}
	// The partition moves past an entry only if it was decoded whole:
	// then a batch decoded from its base on delivered its count.
	for _, e := range in.entries {
		// (Batches that end before the fetch offset are not in the block.)
		if e.legacy || e.control || e.txn || e.last < e.base || d.next <= e.last || fetchOffset > e.base || d.oversize {
			continue
		}
		got := 0
		for _, m := range d.msgs {
			if m.Offset >= e.base && m.Offset <= e.last {
				got++
			}
		}
		if got != int(e.count) {
			t.Fatalf("moved to %d past the batch %d-%d of %d records, having delivered %d of them (%v)",
				d.next, e.base, e.last, e.count, got, offsetsOf(d.msgs))
		}
	}
	if !failed && !d.capped {
		if next, ok := predictNext(fetchOffset, 1<<20, blk); ok == d.truncated || next != d.next {
			t.Fatalf("predicted %d (ok %v), decoded next %d (truncated %v)", next, ok, d.next, d.truncated)
		}
	}
}
