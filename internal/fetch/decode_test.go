package fetch

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/IBM/sarama"
	"github.com/zkconsumer/zkconsumer/internal/streamcore"
)

var t0 = time.UnixMilli(1_700_000_000_000)

// batch returns an uncompressed v2 record batch at first whose records
// have the given offset deltas and values "v<offset>".
func batch(first int64, deltas ...int64) *sarama.RecordBatch {
	b := &sarama.RecordBatch{Version: 2, FirstOffset: first, FirstTimestamp: t0, MaxTimestamp: t0.Add(time.Second), ProducerID: -1}
	for _, d := range deltas {
		b.Records = append(b.Records, &sarama.Record{
			OffsetDelta:    d,
			TimestampDelta: time.Duration(d) * time.Millisecond,
			Key:            fmt.Appendf(nil, "k%d", first+d),
			Value:          fmt.Appendf(nil, "v%d", first+d),
		})
		b.LastOffsetDelta = int32(d)
	}
	return b
}

// controlBatch is a transaction marker of producer pid at offset.
func controlBatch(offset, pid int64, abort bool) *sarama.RecordBatch {
	typ := byte(1)
	if abort {
		typ = 0
	}
	return &sarama.RecordBatch{Version: 2, FirstOffset: offset, Control: true, IsTransactional: true, ProducerID: pid,
		FirstTimestamp: t0, Records: []*sarama.Record{{Key: []byte{0, 0, 0, typ}, Value: []byte{0, 0, 0, 0, 0, 0}}}}
}

func offsetsOf(msgs []*streamcore.Message) []int64 {
	out := make([]int64, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, m.Offset)
	}
	return out
}

func equalOffsets(a, b []int64) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}

func TestDecodeRecordBatches(t *testing.T) {
	b1 := batch(10, 0, 1, 2)
	b1.Records[1].Headers = []*sarama.RecordHeader{{Key: []byte("h1"), Value: []byte("x")}, {Key: []byte("h2")}}
	b2 := batch(13, 0, 1)
	b2.Records[0].Key = nil
	b2.Records[1].Value = nil
	d := decodeBlock("t", 3, 11, 1<<20, false, blockOf(b1, b2))
	if d.truncated || d.oversize {
		t.Fatalf("truncated %v oversize %v", d.truncated, d.oversize)
	}
	if want := []int64{11, 12, 13, 14}; !equalOffsets(offsetsOf(d.msgs), want) {
		t.Fatalf("offsets %v, want %v (10 is below the fetch offset)", offsetsOf(d.msgs), want)
	}
	if d.next != 15 {
		t.Errorf("next %d, want 15", d.next)
	}
	m := d.msgs[0]
	if m.Topic != "t" || m.Partition != 3 || string(m.Key) != "k11" || string(m.Value) != "v11" || !m.Timestamp.Equal(t0.Add(time.Millisecond)) {
		t.Errorf("message %+v", m)
	}
	if len(m.Headers) != 2 || string(m.Headers[0].Key) != "h1" || string(m.Headers[0].Value) != "x" || m.Headers[1].Value != nil {
		t.Errorf("headers %+v", m.Headers)
	}
	if d.msgs[1].Headers != nil || d.msgs[2].Key != nil || d.msgs[3].Value != nil {
		t.Errorf("nil key/value/headers not kept: %+v %+v %+v", d.msgs[1], d.msgs[2], d.msgs[3])
	}
	// Values alias the response buffer: no copy.
	blk := blockOf(b1, b2)
	d = decodeBlock("t", 3, 11, 1<<20, false, blk)
	if v := d.msgs[0].Value; !aliases(blk.records, v) || cap(v) != len(v) {
		t.Error("value was copied, or its capacity reaches past it")
	}
	if !d.aliased {
		t.Error("aliased not reported")
	}
	// The pointer slice is exact.
	if cap(d.msgs) != len(d.msgs) {
		t.Errorf("pointer slice capacity %d for %d messages", cap(d.msgs), len(d.msgs))
	}
}

func TestDecodeLogAppendTimeAndNoTimestamp(t *testing.T) {
	b := batch(0, 0, 1)
	b.LogAppendTime = true
	d := decodeBlock("t", 0, 0, 1<<20, false, blockOf(b))
	if !d.msgs[1].Timestamp.Equal(b.MaxTimestamp) {
		t.Errorf("log-append time %v, want %v", d.msgs[1].Timestamp, b.MaxTimestamp)
	}
	if d.msgs[1].TimestampType != streamcore.LogAppendTime {
		t.Errorf("timestamp type %v, want LogAppendTime", d.msgs[1].TimestampType)
	}
	b = batch(0, 0)
	b.FirstTimestamp = time.Time{}
	d = decodeBlock("t", 0, 0, 1<<20, false, blockOf(b))
	if !d.msgs[0].Timestamp.IsZero() {
		t.Errorf("timestamp %v, want zero", d.msgs[0].Timestamp)
	}
	if d.msgs[0].TimestampType != streamcore.CreateTime {
		t.Errorf("timestamp type %v, want CreateTime", d.msgs[0].TimestampType)
	}
}

func TestDecodeCompactedBatchAdvancesToLastOffset(t *testing.T) {
	b := batch(100, 0, 3) // records 101, 102, 104..107 compacted away
	b.LastOffsetDelta = 7
	d := decodeBlock("t", 0, 101, 1<<20, false, blockOf(b))
	if want := []int64{103}; !equalOffsets(offsetsOf(d.msgs), want) || d.next != 108 {
		t.Errorf("offsets %v next %d, want %v and 108", offsetsOf(d.msgs), d.next, want)
	}
}

func TestDecodeControlBatchesAdvance(t *testing.T) {
	d := decodeBlock("t", 0, 50, 1<<20, false, blockOf(controlBatch(50, 9, false)))
	if len(d.msgs) != 0 || d.next != 51 {
		t.Errorf("msgs %v next %d, want none and 51", offsetsOf(d.msgs), d.next)
	}
	d = decodeBlock("t", 0, 50, 1<<20, true, blockOf(controlBatch(50, 9, true)))
	if len(d.msgs) != 0 || d.next != 51 {
		t.Errorf("read_committed: msgs %v next %d, want none and 51", offsetsOf(d.msgs), d.next)
	}
}

func TestDecodeReadCommitted(t *testing.T) {
	txn := func(first int64, pid int64, deltas ...int64) *sarama.RecordBatch {
		b := batch(first, deltas...)
		b.ProducerID, b.IsTransactional = pid, true
		return b
	}
	plain := batch(26, 0)
	blk := blockOf(
		txn(20, 7, 0, 1),             // aborted
		txn(22, 8, 0),                // committed
		controlBatch(23, 7, true),    // abort of 7
		controlBatch(24, 8, false),   // commit of 8
		txn(25, 7, 0),                // 7's next transaction, not aborted
		plain,                        // not transactional
		txn(27, 9, 0), txn(28, 9, 0), // aborted, spans two batches
		controlBatch(29, 9, true),
	)
	blk.aborted = txnList(abortedTxn{producerID: 9, firstOffset: 27}, abortedTxn{producerID: 7, firstOffset: 20})
	d := decodeBlock("t", 0, 20, 1<<20, true, blk)
	if want := []int64{22, 25, 26}; !equalOffsets(offsetsOf(d.msgs), want) || d.next != 30 {
		t.Errorf("read_committed: offsets %v next %d, want %v and 30", offsetsOf(d.msgs), d.next, want)
	}
	d = decodeBlock("t", 0, 20, 1<<20, false, blk)
	if want := []int64{20, 21, 22, 25, 26, 27, 28}; !equalOffsets(offsetsOf(d.msgs), want) || d.next != 30 {
		t.Errorf("read_uncommitted: offsets %v next %d, want %v and 30", offsetsOf(d.msgs), d.next, want)
	}
}

func TestDecodeMessageSets(t *testing.T) {
	v0 := &sarama.MessageSet{Messages: []*sarama.MessageBlock{
		{Offset: 5, Msg: &sarama.Message{Key: []byte("a"), Value: []byte("five")}},
		{Offset: 6, Msg: &sarama.Message{Value: []byte("six")}},
	}}
	d := decodeBlock("t", 1, 5, 1<<20, false, legacyBlock(v0))
	if want := []int64{5, 6}; !equalOffsets(offsetsOf(d.msgs), want) || d.next != 7 || string(d.msgs[1].Value) != "six" ||
		string(d.msgs[0].Key) != "a" || !d.msgs[0].Timestamp.IsZero() {
		t.Errorf("v0: offsets %v next %d msg %+v", offsetsOf(d.msgs), d.next, d.msgs)
	}

	// A compressed v1 wrapper at offset 105 holding relative offsets 0..2,
	// then one at 108 with log-append time; a v0 wrapper with absolute
	// inner offsets.
	inner := func(version int8, offsets ...int64) *sarama.MessageSet {
		s := &sarama.MessageSet{}
		for _, o := range offsets {
			s.Messages = append(s.Messages, &sarama.MessageBlock{Offset: o, Msg: &sarama.Message{Version: version, Value: fmt.Appendf(nil, "%d", o), Timestamp: t0.Add(time.Duration(o) * time.Millisecond)}})
		}
		return s
	}
	logAppend := t0.Add(time.Hour)
	v1 := &sarama.MessageSet{Messages: []*sarama.MessageBlock{
		{Offset: 105, Msg: &sarama.Message{Version: 1, Codec: sarama.CompressionGZIP, Set: inner(1, 0, 1, 2), Timestamp: t0}},
		{Offset: 108, Msg: &sarama.Message{Version: 1, Codec: sarama.CompressionSnappy, Set: inner(1, 0, 1, 2), LogAppendTime: true, Timestamp: logAppend}},
	}}
	d = decodeBlock("t", 1, 104, 1<<20, false, legacyBlock(v1))
	if want := []int64{104, 105, 106, 107, 108}; !equalOffsets(offsetsOf(d.msgs), want) || d.next != 109 {
		t.Fatalf("v1: offsets %v next %d, want %v and 109", offsetsOf(d.msgs), d.next, want)
	}
	if string(d.msgs[0].Value) != "1" || !d.msgs[0].Timestamp.Equal(t0.Add(time.Millisecond)) || !d.msgs[2].Timestamp.Equal(logAppend) {
		t.Errorf("v1 messages %+v %+v", d.msgs[0], d.msgs[2])
	}
	v0c := &sarama.MessageSet{Messages: []*sarama.MessageBlock{
		{Offset: 12, Msg: &sarama.Message{Codec: sarama.CompressionGZIP, Set: inner(0, 10, 11, 12)}},
	}}
	d = decodeBlock("t", 1, 11, 1<<20, false, legacyBlock(v0c))
	if want := []int64{11, 12}; !equalOffsets(offsetsOf(d.msgs), want) || d.next != 13 {
		t.Errorf("v0 compressed: offsets %v next %d, want %v and 13", offsetsOf(d.msgs), d.next, want)
	}
}

func TestDecodeTruncated(t *testing.T) {
	// Nothing decodable at all.
	d := decodeBlock("t", 0, 7, 1024, false, partialBlock())
	if !d.truncated || d.next != 7 {
		t.Errorf("partial block: truncated %v next %d", d.truncated, d.next)
	}
	// The header of the batch at the fetch offset, not its records.
	d = decodeBlock("t", 0, 7, 1024, false, blockOf(&sarama.RecordBatch{Version: 2, FirstOffset: 7, PartialTrailingRecord: true}))
	if !d.truncated || d.next != 7 || d.msgs != nil {
		t.Errorf("partial batch: %+v", d)
	}
	// Emptied batches before a cut batch: move to the cut batch.
	d = decodeBlock("t", 0, 7, 1024, false, blockOf(&sarama.RecordBatch{Version: 2, FirstOffset: 9, PartialTrailingRecord: true}))
	if d.truncated || d.next != 9 {
		t.Errorf("partial batch after emptied ones: %+v", d)
	}
	// A message set holding only the start of a message.
	d = decodeBlock("t", 0, 7, 1024, false, legacyBlock(&sarama.MessageSet{PartialTrailingMessage: true}))
	if !d.truncated {
		t.Errorf("partial message set: %+v", d)
	}
	// Complete messages then a cut one: the cut one is simply left for
	// the next fetch.
	ms := &sarama.MessageSet{PartialTrailingMessage: true, Messages: []*sarama.MessageBlock{{Offset: 7, Msg: &sarama.Message{Value: []byte("x")}}}}
	d = decodeBlock("t", 0, 7, 1024, false, legacyBlock(ms))
	if d.truncated || d.next != 8 || len(d.msgs) != 1 {
		t.Errorf("complete then partial: %+v", d)
	}
	// An empty block.
	d = decodeBlock("t", 0, 7, 1024, false, &respBlock{})
	if d.truncated || d.oversize || d.next != 7 || d.msgs != nil {
		t.Errorf("empty block: %+v", d)
	}
}

func TestDecodeOversize(t *testing.T) {
	big := batch(3, 0)
	big.Records[0].Value = bytes.Repeat([]byte{'x'}, 2000)
	if d := decodeBlock("t", 0, 3, 1024, false, blockOf(big)); !d.oversize || d.msgs != nil || d.next != 3 {
		t.Errorf("uncompressed record above the fetch size: %+v", d)
	}
	if d := decodeBlock("t", 0, 3, 4096, false, blockOf(big)); d.oversize || len(d.msgs) != 1 {
		t.Errorf("record within the fetch size: %+v", d)
	}
	big.Codec = sarama.CompressionGZIP
	if d := decodeBlock("t", 0, 3, 1024, false, blockOf(big)); d.oversize || len(d.msgs) != 1 {
		t.Errorf("compressed batch sent whole must be delivered: %+v", d)
	}

	// A producer batch larger than the fetch size made of small records
	// is fine; a big record inside it stops delivery there, and the next
	// fetch, starting at it, reports it.
	mixed := batch(10, 0, 1, 2, 3, 4, 5, 6)
	for _, r := range mixed.Records {
		r.Value = bytes.Repeat([]byte{'s'}, 500)
	}
	mixed.Records[4].Value = bytes.Repeat([]byte{'B'}, 2000)
	d := decodeBlock("t", 0, 11, 1024, false, blockOf(mixed))
	if want := []int64{11, 12, 13}; d.oversize || !equalOffsets(offsetsOf(d.msgs), want) || d.next != 14 {
		t.Errorf("small records before a big one: oversize %v offsets %v next %d, want %v and 14", d.oversize, offsetsOf(d.msgs), d.next, want)
	}
	d = decodeBlock("t", 0, 14, 1024, false, blockOf(mixed))
	if !d.oversize || d.next != 14 {
		t.Errorf("at the big record: %+v", d)
	}
	d = decodeBlock("t", 0, 15, 1024, false, blockOf(mixed))
	if want := []int64{15, 16}; d.oversize || !equalOffsets(offsetsOf(d.msgs), want) || d.next != 17 {
		t.Errorf("after the big record: oversize %v offsets %v next %d", d.oversize, offsetsOf(d.msgs), d.next)
	}
	// Past a compacted gap: the big record lies beyond the fetch offset.
	gap := batch(20, 0, 5)
	gap.Records[1].Value = bytes.Repeat([]byte{'B'}, 2000)
	if d := decodeBlock("t", 0, 21, 1024, false, blockOf(gap)); !d.oversize || d.next != 25 {
		t.Errorf("big record after a gap: %+v", d)
	}
	// An aborted batch is skipped whatever its size.
	aborted := batch(30, 0)
	aborted.Records[0].Value = bytes.Repeat([]byte{'B'}, 2000)
	aborted.ProducerID, aborted.IsTransactional = 4, true
	blk := blockOf(aborted)
	blk.aborted = txnList(abortedTxn{producerID: 4, firstOffset: 30})
	if d := decodeBlock("t", 0, 30, 1024, true, blk); d.oversize || d.next != 31 {
		t.Errorf("aborted big record: %+v", d)
	}

	msg := &sarama.MessageSet{Messages: []*sarama.MessageBlock{{Offset: 3, Msg: &sarama.Message{Version: 1, Value: bytes.Repeat([]byte{'x'}, 2000)}}}}
	if d := decodeBlock("t", 0, 3, 1024, false, legacyBlock(msg)); !d.oversize || d.next != 3 {
		t.Errorf("uncompressed message above the fetch size: %+v", d)
	}
}

// TestTooLargeBoundary: a record is too large when a batch holding only
// it is larger than the fetch size: Kafka's DefaultRecord size (a key "k",
// a value "v", no headers, zero deltas: 9 bytes) plus the 61-byte batch
// header.
func TestTooLargeBoundary(t *testing.T) {
	b := batch(0, 0, 1)
	b.Records[0].Key, b.Records[0].Value = []byte("k"), []byte("v")
	b.Records[0].TimestampDelta = 0
	b.Records[1].Key, b.Records[1].Value = nil, make([]byte, 200)
	b.Records[1].TimestampDelta = 0
	blk := blockOf(b)
	// Record 1: body 1+1+1+1+2+200+1 = 207 bytes, whose length varint
	// (414) takes two: 209, so 270 with the batch header.
	if d := decodeBlock("t", 0, 1, 270, false, blk); d.oversize || len(d.msgs) != 1 {
		t.Errorf("fetch size 270: %+v", d)
	}
	if d := decodeBlock("t", 0, 1, 269, false, blk); !d.oversize || d.next != 1 {
		t.Errorf("fetch size 269: %+v", d)
	}
	if d := decodeBlock("t", 0, 0, 70, false, blk); d.oversize || len(d.msgs) != 1 || d.next != 1 {
		t.Errorf("fetch size 70, first record fits exactly: %+v", d)
	}
	if d := decodeBlock("t", 0, 0, 69, false, blk); !d.oversize || d.next != 0 {
		t.Errorf("fetch size 69: %+v", d)
	}
}

func BenchmarkDecodeBlock(b *testing.B) {
	rb := &sarama.RecordBatch{Version: 2, FirstTimestamp: t0, ProducerID: -1}
	val := []byte(strings.Repeat("x", 100))
	for i := range 1000 {
		rb.Records = append(rb.Records, &sarama.Record{OffsetDelta: int64(i), Value: val})
	}
	rb.LastOffsetDelta = 999
	blk := blockOf(rb)
	b.ReportAllocs()
	for b.Loop() {
		decodeBlock("t", 0, 0, 1<<20, false, blk)
	}
}

// BenchmarkDecodeBatches decodes a response-sized block: 100 batches of
// 100 records of 100 bytes (about 1 MiB), checksums on.
func BenchmarkDecodeBatches(b *testing.B) {
	val := []byte(strings.Repeat("x", 100))
	var batches []*sarama.RecordBatch
	for i := range 100 {
		rb := &sarama.RecordBatch{Version: 2, FirstOffset: int64(i * 100), FirstTimestamp: t0, ProducerID: -1, LastOffsetDelta: 99}
		for j := range 100 {
			rb.Records = append(rb.Records, &sarama.Record{OffsetDelta: int64(j), Value: val})
		}
		batches = append(batches, rb)
	}
	blk := blockOf(batches...)
	b.SetBytes(int64(len(blk.records)))
	b.ReportAllocs()
	for b.Loop() {
		if d := decodeBlock("t", 0, 0, 1<<20, false, blk); len(d.msgs) != 10_000 {
			b.Fatal(len(d.msgs), d.corrupt)
		}
	}
}

// TestPredictNext checks the offset the fetcher asks for in the request it
// sends ahead against where decodeBlock then moves the partition: equal,
// also when decodeBlock stops at a message too large for the fetch size.
func TestPredictNext(t *testing.T) {
	big := batch(3, 0)
	big.Records[0].Value = bytes.Repeat([]byte{'x'}, 2000)
	mixed := batch(10, 0, 1, 2, 3, 4, 5, 6)
	mixed.Records[4].Value = bytes.Repeat([]byte{'B'}, 2000)
	compacted := batch(100, 0, 3)
	compacted.LastOffsetDelta = 7
	v1 := &sarama.MessageSet{Messages: []*sarama.MessageBlock{
		{Offset: 105, Msg: &sarama.Message{Version: 1, Codec: sarama.CompressionGZIP, Set: &sarama.MessageSet{Messages: []*sarama.MessageBlock{
			{Offset: 0, Msg: &sarama.Message{Version: 1}}, {Offset: 1, Msg: &sarama.Message{Version: 1}}}}}},
		{Offset: 106, Msg: &sarama.Message{Version: 1, Value: []byte("x")}},
	}}
	cases := []struct {
		name      string
		offset    int64
		block     *respBlock
		want      int64
		truncated bool // decodeBlock reports the block truncated
	}{
		{"batches", 11, blockOf(batch(10, 0, 1, 2), batch(13, 0, 1)), 15, false},
		{"compacted", 101, blockOf(compacted), 108, false},
		{"control", 50, blockOf(controlBatch(50, 9, false)), 51, false},
		{"batch then cut batch", 10, blockOf(batch(10, 0, 1), &sarama.RecordBatch{Version: 2, FirstOffset: 12, PartialTrailingRecord: true}), 12, false},
		{"message sets", 104, legacyBlock(v1), 107, false},
		{"complete then cut message", 7, legacyBlock(&sarama.MessageSet{PartialTrailingMessage: true, Messages: []*sarama.MessageBlock{{Offset: 7, Msg: &sarama.Message{Value: []byte("x")}}}}), 8, false},
		{"empty", 7, &respBlock{}, 7, false},
		{"partial block", 7, partialBlock(), 7, true},
		{"cut batch at the offset", 7, blockOf(&sarama.RecordBatch{Version: 2, FirstOffset: 7, PartialTrailingRecord: true}), 7, true},
		{"cut batch after emptied ones", 7, blockOf(&sarama.RecordBatch{Version: 2, FirstOffset: 9, PartialTrailingRecord: true}), 9, false},
		{"cut message set", 7, legacyBlock(&sarama.MessageSet{PartialTrailingMessage: true}), 7, true},
		{"too large at the offset", 3, blockOf(big), 3, false},
		{"too large inside", 11, blockOf(mixed), 14, false},
	}
	for _, c := range cases {
		got, ok := predictNext(c.offset, 1024, c.block)
		d := decodeBlock("t", 0, c.offset, 1024, false, c.block)
		if ok == d.truncated || ok == c.truncated {
			t.Errorf("%s: ok %v, decodeBlock truncated %v", c.name, ok, d.truncated)
		}
		if got != c.want {
			t.Errorf("%s: predicted %d, want %d", c.name, got, c.want)
		}
		if got != d.next {
			t.Errorf("%s: predicted %d, decodeBlock moves to %d", c.name, got, d.next)
		}
	}
}

// aliases reports whether b lies inside buf.
func aliases(buf, b []byte) bool {
	if len(b) == 0 || len(buf) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(&buf[0]))
	p := uintptr(unsafe.Pointer(&b[0]))
	return p >= start && p < start+uintptr(len(buf))
}
