package chaos

import (
	"encoding/binary"
	"errors"
	"testing"
)

// kafkaWriter writes the records of __consumer_offsets by hand.
type kafkaWriter struct{ b []byte }

func (w *kafkaWriter) i16(v int16) { w.b = binary.BigEndian.AppendUint16(w.b, uint16(v)) }
func (w *kafkaWriter) i32(v int32) { w.b = binary.BigEndian.AppendUint32(w.b, uint32(v)) }
func (w *kafkaWriter) i64(v int64) { w.b = binary.BigEndian.AppendUint64(w.b, uint64(v)) }
func (w *kafkaWriter) str(s string) {
	w.i16(int16(len(s)))
	w.b = append(w.b, s...)
}
func (w *kafkaWriter) compactStr(s string) {
	w.b = binary.AppendUvarint(w.b, uint64(len(s)+1))
	w.b = append(w.b, s...)
}

func (w *kafkaWriter) offsetKey(version int16, group, topic string, partition int32) {
	w.i16(version)
	w.str(group)
	w.str(topic)
	w.i32(partition)
}

// offsetValue writes an OffsetCommitValue of the given version.
func (w *kafkaWriter) offsetValue(version int16, offset, commitMs int64) {
	w.i16(version)
	w.i64(offset)
	switch {
	case version >= 4:
		w.i32(5) // leader epoch
		w.compactStr("meta")
		w.i64(commitMs)
		w.b = append(w.b, 0) // no tagged fields
		return
	case version == 3:
		w.i32(5)
	}
	w.str("meta")
	w.i64(commitMs)
	if version == 1 {
		w.i64(commitMs + 1000) // expire timestamp
	}
}

func TestDecodeOffsetCommitVersions(t *testing.T) {
	for _, kv := range []int16{0, 1} {
		for vv := int16(0); vv <= 4; vv++ {
			k := &kafkaWriter{}
			k.offsetKey(kv, "grp", "chaos.main", 7)
			v := &kafkaWriter{}
			v.offsetValue(vv, 12345, 1700000000123)
			e, err := DecodeOffsetCommit(k.b, v.b)
			if err != nil {
				t.Fatalf("key v%d, value v%d: %v", kv, vv, err)
			}
			if e.Group != "grp" || e.Topic != "chaos.main" || e.Partition != 7 || e.Offset != 12345 || e.CommitTime != 1700000000123 || e.Deleted {
				t.Fatalf("key v%d, value v%d: %+v", kv, vv, e)
			}
		}
	}
	k := &kafkaWriter{}
	k.offsetKey(1, "grp", "t", 0)
	e, err := DecodeOffsetCommit(k.b, nil)
	if err != nil || !e.Deleted || e.Offset != -1 {
		t.Fatalf("tombstone: %+v, %v", e, err)
	}
	meta := &kafkaWriter{}
	meta.i16(2)
	meta.str("grp")
	if _, err := DecodeOffsetCommit(meta.b, []byte{0, 3}); !errors.Is(err, errNotOffsetCommit) {
		t.Fatalf("group metadata: %v", err)
	}
	v := &kafkaWriter{}
	v.offsetValue(3, 1, 2)
	if _, err := DecodeOffsetCommit(k.b, v.b[:9]); err == nil {
		t.Fatal("a cut value was accepted")
	}
}
