package fetch

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// This file writes record batches and message sets, described with
// sarama's types, in the wire format, so that the decoder's tests can be
// written as before. It is an encoder of its own, not sarama's: the
// roundtrip and mock tests check the decoder against sarama's encoder.

// decodeBlock decodes blk as the fetcher does, checksums checked.
func decodeBlock(topic string, partition int32, fetchOffset int64, fetchSize int32, readCommitted bool, blk *respBlock) decoded {
	return decodeRecords(topic, partition, fetchOffset, fetchSize, decodeOpts{readCommitted: readCommitted, checkCRCs: true}, blk)
}

// blockOf is a partition block holding the batches, in order, with the
// high watermark just past them.
func blockOf(batches ...*sarama.RecordBatch) *respBlock {
	blk := &respBlock{topic: "t", records: []byte{}}
	for _, b := range batches {
		blk.records = appendBatch(blk.records, b)
	}
	return withHWM(blk)
}

// legacyBlock is a partition block holding the message sets, in order,
// with the high watermark just past them.
func legacyBlock(sets ...*sarama.MessageSet) *respBlock {
	blk := &respBlock{topic: "t", records: []byte{}}
	for _, s := range sets {
		blk.records = appendMessageSet(blk.records, s)
	}
	return withHWM(blk)
}

// withHWM sets blk's high watermark one past the last offset its entries
// declare (a cut entry's base counts), as a broker's would be.
func withHWM(blk *respBlock) *respBlock {
	var hwm int64
	for rest := blk.records; ; {
		e, st, _ := splitEntry(rest)
		if st == entryOK {
			hwm = max(hwm, e.last()+1)
			rest = rest[len(e.data):]
			continue
		}
		if st == entryPartial && e.base >= 0 {
			hwm = max(hwm, e.base+1)
		}
		break
	}
	blk.hwm = hwm
	return blk
}

// partialBlock is a block holding only the first bytes of an entry.
func partialBlock() *respBlock {
	return &respBlock{topic: "t", records: binary.BigEndian.AppendUint64(nil, 7), hwm: 8}
}

func millis(t time.Time) int64 {
	if t.IsZero() {
		return -1
	}
	return t.UnixMilli()
}

func appendVarBytes(b, v []byte) []byte {
	if v == nil {
		return binary.AppendVarint(b, -1)
	}
	return append(binary.AppendVarint(b, int64(len(v))), v...)
}

func appendBytes32(b, v []byte) []byte {
	if v == nil {
		return binary.BigEndian.AppendUint32(b, 0xffffffff)
	}
	return append(binary.BigEndian.AppendUint32(b, uint32(len(v))), v...)
}

func compress(codec sarama.CompressionCodec, data []byte) []byte {
	var buf bytes.Buffer
	switch codec {
	case sarama.CompressionGZIP:
		w := gzip.NewWriter(&buf)
		_, _ = w.Write(data)
		_ = w.Close()
	case sarama.CompressionSnappy:
		return snappy.Encode(nil, data)
	case sarama.CompressionLZ4:
		w := lz4.NewWriter(&buf)
		_, _ = w.Write(data)
		_ = w.Close()
	case sarama.CompressionZSTD:
		w, _ := zstd.NewWriter(nil)
		return w.EncodeAll(data, nil)
	default:
		return data
	}
	return buf.Bytes()
}

// appendBatch appends b as a v2 record batch. PartialTrailingRecord cuts it
// after its header.
func appendBatch(out []byte, b *sarama.RecordBatch) []byte {
	var recs []byte
	for _, r := range b.Records {
		var body []byte
		body = append(body, 0)
		body = binary.AppendVarint(body, int64(r.TimestampDelta/time.Millisecond))
		body = binary.AppendVarint(body, r.OffsetDelta)
		body = appendVarBytes(body, r.Key)
		body = appendVarBytes(body, r.Value)
		body = binary.AppendVarint(body, int64(len(r.Headers)))
		for _, h := range r.Headers {
			body = appendVarBytes(body, h.Key)
			body = appendVarBytes(body, h.Value)
		}
		recs = binary.AppendVarint(recs, int64(len(body)))
		recs = append(recs, body...)
	}
	attrs := uint16(b.Codec) & attrCodecMask
	if b.LogAppendTime {
		attrs |= attrLogAppendTime
	}
	if b.IsTransactional {
		attrs |= attrTransactional
	}
	if b.Control {
		attrs |= attrControl
	}
	recs = compress(b.Codec, recs)
	start := len(out)
	out = binary.BigEndian.AppendUint64(out, uint64(b.FirstOffset))
	out = binary.BigEndian.AppendUint32(out, 0) // length, below
	out = binary.BigEndian.AppendUint32(out, uint32(b.PartitionLeaderEpoch))
	out = append(out, 2)
	out = binary.BigEndian.AppendUint32(out, 0) // crc, below
	out = binary.BigEndian.AppendUint16(out, attrs)
	out = binary.BigEndian.AppendUint32(out, uint32(b.LastOffsetDelta))
	out = binary.BigEndian.AppendUint64(out, uint64(millis(b.FirstTimestamp)))
	out = binary.BigEndian.AppendUint64(out, uint64(millis(b.MaxTimestamp)))
	out = binary.BigEndian.AppendUint64(out, uint64(b.ProducerID))
	out = binary.BigEndian.AppendUint16(out, uint16(b.ProducerEpoch))
	out = binary.BigEndian.AppendUint32(out, uint32(b.FirstSequence))
	out = binary.BigEndian.AppendUint32(out, uint32(len(b.Records)))
	out = append(out, recs...)
	binary.BigEndian.PutUint32(out[start+batchLengthAt:], uint32(len(out)-start-12))
	binary.BigEndian.PutUint32(out[start+batchCRCAt:], crc32.Checksum(out[start+batchAttrsAt:], castagnoli))
	if b.PartialTrailingRecord {
		binary.BigEndian.PutUint32(out[start+batchLengthAt:], uint32(len(out)-start-12+100))
	}
	return out
}

// appendMessageSet appends the messages of s (format v0/v1).
// PartialTrailingMessage adds the first bytes of one more message.
func appendMessageSet(out []byte, s *sarama.MessageSet) []byte {
	for _, mb := range s.Messages {
		out = appendMessage(out, mb.Offset, mb.Msg)
	}
	if s.PartialTrailingMessage {
		out = binary.BigEndian.AppendUint64(out, 99)
		out = binary.BigEndian.AppendUint32(out, 100)
		out = append(out, 1, 2, 3, 4, 1, 0)
	}
	return out
}

func appendMessage(out []byte, offset int64, m *sarama.Message) []byte {
	value := m.Value
	if m.Set != nil {
		value = compress(m.Codec, appendMessageSet(nil, m.Set))
	}
	attrs := byte(m.Codec) & attrCodecMask
	if m.LogAppendTime {
		attrs |= attrLogAppendTime
	}
	start := len(out)
	out = binary.BigEndian.AppendUint64(out, uint64(offset))
	out = binary.BigEndian.AppendUint32(out, 0) // size, below
	out = binary.BigEndian.AppendUint32(out, 0) // crc, below
	out = append(out, byte(m.Version), attrs)
	if m.Version >= 1 {
		out = binary.BigEndian.AppendUint64(out, uint64(millis(m.Timestamp)))
	}
	out = appendBytes32(out, m.Key)
	out = appendBytes32(out, value)
	binary.BigEndian.PutUint32(out[start+8:], uint32(len(out)-start-12))
	binary.BigEndian.PutUint32(out[start+msgCRCAt:], crc32.ChecksumIEEE(out[start+msgMagicAt:]))
	return out
}

// TestEncoderMatchesSarama: what this file writes, sarama decodes to the
// same records (a check of the test encoder itself, through MockBroker).
func TestEncoderSelfCheck(t *testing.T) {
	b := batch(5, 0, 1, 2)
	b.Codec = sarama.CompressionZSTD
	d := decodeBlock("t", 0, 5, 1<<20, false, blockOf(b))
	if len(d.msgs) != 3 || string(d.msgs[2].Value) != "v7" || d.next != 8 || d.corrupt != nil {
		t.Fatalf("zstd batch: %+v", d)
	}
	b.Codec = sarama.CompressionLZ4
	d = decodeBlock("t", 0, 5, 1<<20, false, blockOf(b))
	if len(d.msgs) != 3 || string(d.msgs[0].Key) != "k5" || d.corrupt != nil {
		t.Fatalf("lz4 batch: %+v", d)
	}
}
