package fetch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/IBM/sarama"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// The tests of this file feed the decoder records no broker sends: lying
// counts, declared sizes and offsets, with checksums that match. Each
// checks what the decoder allocates for them and where it leaves the
// partition.

// TestHostileCountSizesNothing: a batch's record count sizes nothing
// before its checksum is checked, and never more than its bytes can hold.
// A 1 MB batch whose count was corrupted to a million (so that its CRC no
// longer matches) allocated 144 MB for messages before failing its
// checksum.
func TestHostileCountSizesNothing(t *testing.T) {
	value := bytes.Repeat([]byte{'v'}, 1000)
	records := rawRecords(seq(1000), func(int) []byte { return value })
	good := rawBatch(0, 0, 999, 1000, records)
	bad := bytes.Clone(good)
	binary.BigEndian.PutUint32(bad[batchCountAt:], 1_000_000) // CRC left as it was

	for _, c := range []struct {
		name  string
		block []byte
		check bool
	}{
		{"corrupt count, checksums on", bad, true},
		{"corrupt count, checksums off", bad, false},
		// A good batch first: the slab for it must not be sized on the
		// count of the next one.
		{"good batch then corrupt count", append(rawBatch(0, 0, 0, 1, rawRecords(seq(1), func(int) []byte { return value })),
			withBase(bad, 1)...), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			blk := &respBlock{records: c.block, hwm: 2000}
			var d decoded
			n := allocated(func() { d = decodeRecords("t", 0, 0, 1<<20, decodeOpts{checkCRCs: c.check}, blk) })
			if !errors.Is(d.corrupt, errCorrupt) {
				t.Errorf("corrupt %v, want errCorrupt", d.corrupt)
			}
			if n > mib {
				t.Errorf("allocated %d bytes for a %d-byte batch", n, len(bad))
			}
			t.Logf("allocated %d bytes; %d messages, next %d, %v", n, len(d.msgs), d.next, d.corrupt)
		})
	}
}

// withBase returns a copy of the record batch b with base offset base
// (which no checksum covers).
func withBase(b []byte, base int64) []byte {
	b = bytes.Clone(b)
	binary.BigEndian.PutUint64(b, uint64(base))
	return b
}

// declaredBombs are compressed payloads, a few bytes each, that declare
// (but do not hold) 90 MiB of output, under the 100 MiB the decoder
// allowed per batch before: a snappy block, a snappy block in xerial
// framing, and a zstd frame declaring its content size.
func declaredBombs() map[string]struct {
	codec   int8
	payload []byte
} {
	const size = 90 * mib
	snappyBlock := binary.AppendUvarint(nil, size)
	snappyBlock = append(snappyBlock, 0, 0, 0, 0) // a literal tag, cut
	xerial := append(bytes.Clone(xerialMagic), 0, 0, 0, 1, 0, 0, 0, 1)
	xerial = binary.BigEndian.AppendUint32(xerial, uint32(len(snappyBlock)))
	xerial = append(xerial, snappyBlock...)
	// Frame header: single segment, 8-byte content size; one raw block of
	// 4 bytes.
	zframe := binary.LittleEndian.AppendUint32(nil, zstdFrameMagic)
	zframe = append(zframe, 0xE0)
	zframe = binary.LittleEndian.AppendUint64(zframe, size)
	zframe = append(zframe, 4<<3|1, 0, 0, 'a', 'b', 'c', 'd')
	return map[string]struct {
		codec   int8
		payload []byte
	}{
		"snappy":        {codecSnappy, snappyBlock},
		"snappy xerial": {codecSnappy, xerial},
		"zstd":          {codecZstd, zframe},
	}
}

// TestHostileDeclaredSize: a size a compressed payload declares is checked
// against the decoding limit before anything is allocated on its word. A
// 68-byte batch whose snappy payload declared 1 GiB allocated 1 GiB.
func TestHostileDeclaredSize(t *testing.T) {
	for name, b := range declaredBombs() {
		for _, legacy := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/legacy=%v", name, legacy), func(t *testing.T) {
				var records []byte
				if legacy {
					records = rawMessage(0, 1, byte(b.codec), nil, b.payload)
				} else {
					records = rawBatch(0, int16(b.codec), 0, 1, b.payload)
				}
				blk := &respBlock{records: records, hwm: 1}
				var d decoded
				n := allocated(func() { d = decodeBlock("t", 0, 0, 1<<20, false, blk) })
				if n > mib {
					t.Errorf("a %d-byte entry allocated %d bytes", len(records), n)
				}
				if d.msgs != nil || d.next != 0 || (d.corrupt == nil && d.overLimit == nil) {
					t.Errorf("%+v", d)
				}
				t.Logf("allocated %d bytes: %v", n, errors.Join(d.corrupt, d.overLimit))
			})
		}
	}
}

// TestHostileInflationOfOneBatch: a batch that alone decompresses to more
// than the decoding limit (32 MiB at a 1 MiB fetch size) gives an error
// for its partition, having allocated about the limit, whatever its codec,
// the size it declares or not, or its format. Before, each codec
// decompressed up to 100 MiB and the partition got it.
func TestHostileInflationOfOneBatch(t *testing.T) {
	const size = 40 * mib
	limit := decodeLimitForTest(1 << 20)
	for _, codec := range []sarama.CompressionCodec{sarama.CompressionGZIP, sarama.CompressionSnappy, sarama.CompressionLZ4, sarama.CompressionZSTD} {
		for _, legacy := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/legacy=%v", codec, legacy), func(t *testing.T) {
				payload := inflating(codec, 1, size)
				var records []byte
				if legacy {
					inner := rawMessage(0, 1, 0, nil, make([]byte, size))
					payload = compressLegacy(t, codec, inner)
					records = rawMessage(0, 1, byte(codec), nil, payload)
				} else {
					records = rawBatch(0, int16(codec), 0, 1, payload)
				}
				blk := &respBlock{records: records, hwm: 1}
				var d decoded
				n := allocated(func() { d = decodeBlock("t", 0, 0, 1<<20, false, blk) })
				if d.overLimit == nil || d.msgs != nil || d.next != 0 {
					t.Errorf("want the batch over the limit: %+v", d)
				}
				// Streamed codecs that do not declare their size (gzip's
				// trailer does) grow their buffer by doubling, up to the
				// limit: twice the limit at most. lz4 takes its block
				// buffers from a sync.Pool, which the race detector
				// empties at random: up to one limit more then.
				if n > uint64(3*limit+10*mib) {
					t.Errorf("a %d-byte payload allocated %d bytes, limit %d", len(payload), n, limit)
				}
				t.Logf("%d-byte payload: allocated %d bytes, %v", len(payload), n, d.overLimit)
			})
		}
	}
}

// decodeLimitForTest is the default decoding limit for a fetch size.
func decodeLimitForTest(fetchSize int32) int64 { return 32 * max(int64(fetchSize), 1<<20) }

// compressLegacy compresses a v1 inner message set with codec; nil for an
// empty one.
func compressLegacy(t *testing.T, codec sarama.CompressionCodec, set []byte) []byte {
	t.Helper()
	switch codec {
	case sarama.CompressionSnappy:
		// The xerial framing snappy-java writes, in 32 KiB blocks.
		out := append(bytes.Clone(xerialMagic), 0, 0, 0, 1, 0, 0, 0, 1)
		for len(set) > 0 {
			n := min(len(set), 32<<10)
			blk := s2.EncodeSnappy(nil, set[:n])
			out = binary.BigEndian.AppendUint32(out, uint32(len(blk)))
			out = append(out, blk...)
			set = set[n:]
		}
		return out
	}
	return compress(codec, set)
}

// TestHostileInflationCapped: many legal batches of one partition that
// each inflate to 8 MiB, 20 of them in a few kilobytes: one fetch
// response decodes only what fits in the decoding limit, and the
// partition resumes at the next batch. Fetching from where each call
// leaves the partition delivers every offset once, in order, and no call
// allocates much more than the limit. Before, one call decoded all of
// them (160 MiB).
func TestHostileInflationCapped(t *testing.T) {
	const batches, per = 20, 8
	var records []byte
	for i := range batches {
		payload := inflating(sarama.CompressionZSTD, per, mib)
		records = append(records, rawBatch(int64(i*per), codecZstd, per-1, per, payload)...)
	}
	t.Logf("%d batches of %d MiB in %d bytes", batches, per, len(records))
	limit := decodeLimitForTest(1 << 20)
	next := int64(0)
	calls := 0
	for next < batches*per {
		// The broker starts at the batch holding the fetch offset.
		start := 0
		for start < len(records) && int64(binary.BigEndian.Uint64(records[start:]))+per-1 < next {
			start += 12 + int(binary.BigEndian.Uint32(records[start+batchLengthAt:]))
		}
		blk := &respBlock{records: records[start:], hwm: batches * per}
		var d decoded
		n := allocated(func() { d = decodeBlock("t", 0, next, 1<<20, false, blk) })
		if d.corrupt != nil || d.overLimit != nil {
			t.Fatalf("fetch at %d: %v %v", next, d.corrupt, d.overLimit)
		}
		if want := offsetsFrom(next, len(d.msgs)); !equalOffsets(offsetsOf(d.msgs), want) || len(d.msgs) == 0 {
			t.Fatalf("fetch at %d: offsets %v", next, offsetsOf(d.msgs))
		}
		if d.next != next+int64(len(d.msgs)) {
			t.Fatalf("fetch at %d: %d messages, next %d: offsets skipped or repeated", next, len(d.msgs), d.next)
		}
		// The charged output, and the batch that did not fit decoded
		// into what was left.
		if n > uint64(2*limit+mib) {
			t.Fatalf("fetch at %d allocated %d bytes, limit %d", next, n, limit)
		}
		if d.next < batches*per && !d.capped {
			t.Fatalf("fetch at %d stopped at %d without reaching the limit", next, d.next)
		}
		t.Logf("fetch at %d: %d messages, allocated %d bytes, capped %v", next, len(d.msgs), n, d.capped)
		next = d.next
		calls++
	}
	if calls < 2 {
		t.Fatalf("one fetch decoded %d MiB", batches*per)
	}
}

func offsetsFrom(first int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = first + int64(i)
	}
	return out
}

// TestHostileRecordsAfterCount: records after a batch's declared count
// make it corrupt (Java's consumer: "records still remaining"), compressed
// or not, instead of being dropped while the partition moves past them.
func TestHostileRecordsAfterCount(t *testing.T) {
	recs := rawRecords(seq(3), func(i int) []byte { return []byte{byte('a' + i)} })
	for _, c := range []struct {
		name    string
		attrs   int16
		count   int32
		payload []byte
	}{
		{"uncompressed", 0, 2, recs},
		{"zstd", codecZstd, 2, compress(sarama.CompressionZSTD, recs)},
		{"gzip", codecGzip, 2, compress(sarama.CompressionGZIP, recs)},
		{"count 0", 0, 0, recs},
	} {
		blk := &respBlock{records: rawBatch(10, c.attrs, 2, c.count, c.payload), hwm: 13}
		d := decodeBlock("t", 0, 10, 1<<20, false, blk)
		if !errors.Is(d.corrupt, errCorrupt) || d.msgs != nil || d.next != 10 {
			t.Errorf("%s: offsets %v next %d corrupt %v; want corrupt at 10", c.name, offsetsOf(d.msgs), d.next, d.corrupt)
		}
	}
}

// TestHostileMagic: a negative magic byte is not format v0.
func TestHostileMagic(t *testing.T) {
	for _, magic := range []int8{-1, -128, 3} {
		blk := &respBlock{records: rawMessage(7, magic, 0, nil, []byte("value")), hwm: 8}
		d := decodeBlock("t", 0, 7, 1<<20, false, blk)
		if !errors.Is(d.corrupt, errCorrupt) || d.msgs != nil || d.next != 7 {
			t.Errorf("magic %d: offsets %v next %d corrupt %v; want corrupt at 7", magic, offsetsOf(d.msgs), d.next, d.corrupt)
		}
	}
}

// TestHostileEmptyWrapper: a compressed message (format v0/v1) without a
// value, or whose value holds no message, is corrupt whatever its codec,
// as in Java's consumer ("compressed record set with no inner records").
// Under lz4 and zstd it gave no message and the partition moved past it.
func TestHostileEmptyWrapper(t *testing.T) {
	for _, codec := range []sarama.CompressionCodec{sarama.CompressionGZIP, sarama.CompressionSnappy, sarama.CompressionLZ4, sarama.CompressionZSTD} {
		for name, value := range map[string][]byte{
			"null value":      nil,
			"empty value":     {},
			"empty payload":   compressLegacy(t, codec, nil),
			"empty raw block": emptyCompressed(codec),
		} {
			for _, magic := range []int8{0, 1} {
				blk := &respBlock{records: rawMessage(5, magic, byte(codec), nil, value), hwm: 6}
				d := decodeBlock("t", 0, 5, 1<<20, false, blk)
				if !errors.Is(d.corrupt, errCorrupt) || d.msgs != nil || d.next != 5 {
					t.Errorf("%v, %s, v%d: offsets %v next %d corrupt %v; want corrupt at 5", codec, name, magic, offsetsOf(d.msgs), d.next, d.corrupt)
				}
			}
		}
	}
}

// emptyCompressed is the shortest legal encoding of nothing in codec.
func emptyCompressed(codec sarama.CompressionCodec) []byte {
	switch codec {
	case sarama.CompressionSnappy:
		return snappy.Encode(nil, nil)
	case sarama.CompressionLZ4:
		var buf bytes.Buffer
		w := lz4.NewWriter(&buf)
		_ = w.Close()
		return buf.Bytes()
	case sarama.CompressionZSTD:
		w, _ := zstd.NewWriter(nil)
		return w.EncodeAll(nil, nil)
	}
	return compress(codec, nil)
}

// TestHostileUncoveredHeader: the fields no checksum covers (an entry's
// offset and length) are checked against the fetch: an entry that cannot
// be what the broker sent for it is corrupt, and the partition stays
// where it was; one past the high watermark is not handed out and the
// partition stays too. A cut batch claiming base offset 2^40 moved the partition
// there (then OffsetOutOfRange reset it whole); records past a batch's
// last offset moved the partition past records it never delivered.
// (Entries wholly before the fetch offset are skipped, as Java's consumer
// does: TestEntriesBeforeTheFetchOffsetAreSkipped.)
func TestHostileUncoveredHeader(t *testing.T) {
	one := rawRecords([]int64{0}, func(int) []byte { return []byte("x") })
	cut := rawBatch(1<<40, 0, 0, 1, one)
	binary.BigEndian.PutUint32(cut[batchLengthAt:], 0x7fff0000)
	cutAhead := rawBatch(1<<40, 0, 0, 1, one) // a length a response can hold
	binary.BigEndian.PutUint32(cutAhead[batchLengthAt:], 1<<24)
	far := rawBatch(1<<40, 0, 0, 1, one) // CRC right: it does not cover the base
	three := rawRecords(seq(3), func(int) []byte { return []byte("x") })
	for _, c := range []struct {
		name    string
		records []byte
	}{
		{"cut batch far ahead", cut},
		{"cut batch ahead, past the high watermark", cutAhead},
		{"batch far ahead", far},
		{"records past the last offset delta", rawBatch(10, 0, 1, 3, three)},
		{"negative last offset delta", rawBatch(10, 0, -1, 3, three)},
		{"record before the base", rawBatch(10, 0, 2, 3, rawRecords([]int64{-1, 0, 1}, func(int) []byte { return []byte("x") }))},
		{"overlapping batches", append(rawBatch(10, 0, 2, 3, three), rawBatch(12, 0, 2, 3, three)...)},
	} {
		blk := &respBlock{records: c.records, hwm: 100}
		d := decodeBlock("t", 0, 10, 1<<20, false, blk)
		overlap := c.name == "overlapping batches"
		switch {
		case (c.name == "batch far ahead" || c.name == "cut batch ahead, past the high watermark") && d.corrupt == nil && d.msgs == nil && d.next == 10:
			// Past the high watermark: not handed out, the partition
			// stays (TestEntryPastTheHighWatermarkWaits).
		case !errors.Is(d.corrupt, errCorrupt):
			t.Errorf("%s: not corrupt: offsets %v next %d", c.name, offsetsOf(d.msgs), d.next)
		case overlap && (d.next != 13 || len(d.msgs) != 3):
			t.Errorf("%s: offsets %v next %d, want 10-12 and 13", c.name, offsetsOf(d.msgs), d.next)
		case !overlap && (d.next != 10 || d.msgs != nil):
			t.Errorf("%s: offsets %v next %d, want none and 10", c.name, offsetsOf(d.msgs), d.next)
		}
		if next, _ := predictNext(10, 1<<20, blk); next > 13 {
			t.Errorf("%s: the request sent ahead would ask for %d", c.name, next)
		}
	}
}

// TestEntryPastTheHighWatermarkWaits: an entry that ends at or past the
// high watermark of its response is not handed out and does not move the
// partition, without an error: a leader that just took over can report a
// high watermark older than what it read (the chaos suite met a batch at
// offset 2067 in a response saying 2067; calling it corrupt stopped the
// partition for good). Fetched again with a newer figure, it is delivered.
func TestEntryPastTheHighWatermarkWaits(t *testing.T) {
	three := rawRecords(seq(3), func(int) []byte { return []byte("x") })
	for _, c := range []struct {
		name        string
		base, fetch int64
	}{
		{"at the high watermark", 100, 100},
		{"beyond it", 100, 10},
		{"across it", 98, 98},
	} {
		stale := &respBlock{records: rawBatch(c.base, 0, 2, 3, three), hwm: 100}
		d := decodeBlock("t", 0, c.fetch, 1<<20, false, stale)
		if d.corrupt != nil || d.msgs != nil || d.next != c.fetch {
			t.Errorf("%s: offsets %v next %d corrupt %v; want none, %d, no error", c.name, offsetsOf(d.msgs), d.next, d.corrupt, c.fetch)
		}
		if next, _ := predictNext(c.fetch, 1<<20, stale); next != c.fetch {
			t.Errorf("%s: the request sent ahead would ask for %d", c.name, next)
		}
		fresh := &respBlock{records: stale.records, hwm: c.base + 3}
		d = decodeBlock("t", 0, c.base, 1<<20, false, fresh)
		if d.corrupt != nil || len(d.msgs) != 3 || d.next != c.base+3 {
			t.Errorf("%s, fresh high watermark: offsets %v next %d corrupt %v", c.name, offsetsOf(d.msgs), d.next, d.corrupt)
		}
	}

	// The same for a batch cut by the fetch size after a compacted gap:
	// with a high watermark older than the read it waits (it stopped the
	// partition as corrupt before); with a newer one the partition moves
	// over the gap to it.
	batch := rawBatch(100, 0, 2, 3, three)
	cut := batch[:len(batch)/2]
	stale := &respBlock{records: cut, hwm: 100}
	if d := decodeBlock("t", 0, 10, 1<<20, false, stale); d.corrupt != nil || d.msgs != nil || d.next != 10 {
		t.Errorf("cut batch past a stale high watermark: offsets %v next %d corrupt %v; want none, 10, no error", offsetsOf(d.msgs), d.next, d.corrupt)
	}
	if next, _ := predictNext(10, 1<<20, stale); next != 10 {
		t.Errorf("cut batch past a stale high watermark: the request sent ahead would ask for %d", next)
	}
	fresh := &respBlock{records: cut, hwm: 103}
	if d := decodeBlock("t", 0, 10, 1<<20, false, fresh); d.corrupt != nil || d.next != 100 {
		t.Errorf("cut batch, fresh high watermark: next %d corrupt %v; want 100", d.next, d.corrupt)
	}
}

// TestRollback: an entry that fails after some of its messages were
// handed out takes them back, cleared so that they pin nothing, in the
// slab current when it started and in any slab it started; the messages
// before it stay.
func TestRollback(t *testing.T) {
	b := decodeBudget{limit: 1 << 20, left: 1 << 20}
	b.newSlab(4)
	for i := range 2 {
		b.newMsg().Offset = int64(i)
	}
	m := b.mark()
	b.newMsg().Value = []byte("pinned")
	b.newMsg().Value = []byte("pinned")
	b.newSlab(4)
	b.newMsg().Value = []byte("pinned")
	first := b.cur
	b.rollback(m)
	if b.nmsgs != 2 || len(b.cur) != 2 || len(b.slabs) != 0 || !equalOffsets(offsetsOf(b.messages()), []int64{0, 1}) {
		t.Fatalf("after rollback: %d messages, slab of %d, %d slabs", b.nmsgs, len(b.cur), len(b.slabs))
	}
	for i, msg := range b.cur[:cap(b.cur)][2:] {
		if msg.Value != nil {
			t.Errorf("message %d of the first slab still pins %q", i+2, msg.Value)
		}
	}
	if first[0].Value != nil {
		t.Errorf("the slab started by the failed entry still pins %q", first[0].Value)
	}

	// Through the decoder: the second batch fails at its third record,
	// with room for it reserved in the first batch's slab.
	recs := rawRecords(seq(4), func(i int) []byte { return []byte{byte('a' + i)} })
	bad := bytes.Clone(recs)
	bad[len(bad)-1] = 0x7e // the last record's header count: 63, past its end
	blk := &respBlock{records: append(rawBatch(0, 0, 3, 4, recs), rawBatch(4, 0, 3, 4, bad)...), hwm: 8}
	d := decodeBlock("t", 0, 0, 1<<20, false, blk)
	if !errors.Is(d.corrupt, errCorrupt) || !equalOffsets(offsetsOf(d.msgs), []int64{0, 1, 2, 3}) || d.next != 4 {
		t.Fatalf("offsets %v next %d corrupt %v", offsetsOf(d.msgs), d.next, d.corrupt)
	}
	for i, m := range d.msgs {
		if string(m.Value) != string(rune('a'+i)) {
			t.Errorf("message %d: %q", i, m.Value)
		}
	}
}

// TestEntriesBeforeTheFetchOffsetAreSkipped: entries that end before the
// fetch offset (record batches, messages, compressed message sets) are
// skipped, as Java's consumer skips them, instead of stopping the
// partition as corrupt. The partition never moves back, and nothing at or
// after the fetch offset is skipped. An abort marker before the fetch
// offset still ends its producer's aborted transaction under
// read_committed.
func TestEntriesBeforeTheFetchOffsetAreSkipped(t *testing.T) {
	recs := func(n int) []byte { return rawRecords(seq(n), func(i int) []byte { return []byte{byte('a' + i)} }) }
	legacySet := append(rawMessage(0, 1, 0, nil, []byte("a")), rawMessage(1, 1, 0, nil, []byte("b"))...)
	wrapper := rawMessage(8, 1, byte(codecGzip), nil, compress(sarama.CompressionGZIP, legacySet)) // inner offsets 7, 8
	for _, c := range []struct {
		name    string
		records []byte
		want    []int64
		next    int64
	}{
		{"batch before", rawBatch(0, 0, 2, 3, recs(3)), nil, 10},
		{"batch before, then at", append(rawBatch(5, 0, 2, 3, recs(3)), rawBatch(10, 0, 2, 3, recs(3))...), []int64{10, 11, 12}, 13},
		{"two batches before, then a gap", append(append(rawBatch(2, 0, 2, 3, recs(3)), rawBatch(6, 0, 2, 3, recs(3))...),
			rawBatch(12, 0, 1, 2, recs(2))...), []int64{12, 13}, 14},
		{"message before", rawMessage(9, 1, 0, nil, []byte("x")), nil, 10},
		{"messages before, then at", append(append(rawMessage(8, 1, 0, nil, []byte("x")), rawMessage(9, 1, 0, nil, []byte("y"))...),
			rawMessage(10, 1, 0, nil, []byte("z"))...), []int64{10}, 11},
		{"compressed set before, then at", append(bytes.Clone(wrapper), rawMessage(10, 1, 0, nil, []byte("z"))...), []int64{10}, 11},
	} {
		blk := &respBlock{records: c.records, hwm: 100}
		d := decodeBlock("t", 0, 10, 1<<20, false, blk)
		if d.corrupt != nil || d.overLimit != nil || !equalOffsets(offsetsOf(d.msgs), c.want) || d.next != c.next {
			t.Errorf("%s: offsets %v next %d corrupt %v; want %v and %d", c.name, offsetsOf(d.msgs), d.next, d.corrupt, c.want, c.next)
		}
		if next, ok := predictNext(10, 1<<20, blk); !ok || next != c.next {
			t.Errorf("%s: the request sent ahead would ask for %d (%v), want %d", c.name, next, ok, c.next)
		}
	}

	// read_committed: producer 7 aborts a transaction at offsets 2-3 (its
	// marker at 4, before the fetch offset 5), then writes 5-6 in a new
	// transaction that commits. Its batches at 5-6 are delivered.
	txn := func(base int64, n int) *sarama.RecordBatch {
		b := batch(base, seq(n)...)
		b.IsTransactional, b.ProducerID = true, 7
		return b
	}
	blk := blockOf(txn(2, 2), controlBatch(4, 7, true), txn(5, 2), controlBatch(7, 7, false))
	blk.aborted = txnList(abortedTxn{producerID: 7, firstOffset: 2})
	blk.hwm = 100
	d := decodeBlock("t", 0, 5, 1<<20, true, blk)
	if d.corrupt != nil || !equalOffsets(offsetsOf(d.msgs), []int64{5, 6}) || d.next != 8 {
		t.Errorf("read_committed: offsets %v next %d corrupt %v; want [5 6] and 8", offsetsOf(d.msgs), d.next, d.corrupt)
	}
}
