package fetch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"testing"
)

// testPartition is one partition of a response built by encodeResponse.
type testPartition struct {
	aborted int
	records []byte // nil: null records
}

// encodeResponse encodes a fetch response body (after the correlation id)
// of the given version: topics "t0", "t1", ... with the given partitions.
func encodeResponse(version int16, topics [][]testPartition) []byte {
	flex := flexible(version)
	var b []byte
	tags := func() {
		if flex {
			b = append(b, 0)
		}
	}
	array := func(n int) {
		if flex {
			b = binary.AppendUvarint(b, uint64(n+1))
		} else {
			b = binary.BigEndian.AppendUint32(b, uint32(n))
		}
	}
	tags()
	if version >= 1 {
		b = binary.BigEndian.AppendUint32(b, 0) // throttle
	}
	if version >= 7 {
		b = append(b, 0, 0, 0, 0, 0, 7) // error code, session id
	}
	array(len(topics))
	for i, parts := range topics {
		b = appendString(b, fmt.Sprintf("t%d", i), flex)
		array(len(parts))
		for j, p := range parts {
			b = binary.BigEndian.AppendUint32(b, uint32(j))
			b = append(b, 0, 0)                         // error code
			b = binary.BigEndian.AppendUint64(b, 1<<40) // high watermark
			if version >= 4 {
				b = binary.BigEndian.AppendUint64(b, 1<<40) // last stable offset
				if version >= 5 {
					b = binary.BigEndian.AppendUint64(b, 0) // log start offset
				}
				array(p.aborted)
				for k := range p.aborted {
					b = binary.BigEndian.AppendUint64(b, uint64(k))
					b = binary.BigEndian.AppendUint64(b, uint64(k))
					tags()
				}
			}
			if version >= 11 {
				b = binary.BigEndian.AppendUint32(b, 0xffffffff)
			}
			switch {
			case p.records == nil && flex:
				b = append(b, 0)
			case p.records == nil:
				b = binary.BigEndian.AppendUint32(b, 0xffffffff)
			case flex:
				b = binary.AppendUvarint(b, uint64(len(p.records)+1))
			default:
				b = binary.BigEndian.AppendUint32(b, uint32(len(p.records)))
			}
			b = append(b, p.records...)
			tags()
		}
		tags()
	}
	tags()
	return b
}

// TestParseInPieces: a response is parsed as it is read, whatever the
// pieces it arrives in, to the same blocks as at once; the checksums of
// record batches are verified on the way: each partition's verified
// prefix covers exactly its leading batches with a good checksum, and
// stops at a bad checksum, a message set, or a batch the fetch size cut.
// The decoder then skips those batches and still finds the bad ones.
func TestParseInPieces(t *testing.T) {
	good := func(base int64) []byte {
		return rawBatch(base, 0, 2, 3, rawRecords(seq(3), func(i int) []byte { return bytes.Repeat([]byte{'v'}, 100*i) }))
	}
	bad := good(6)
	bad[len(bad)-1] ^= 1
	g0, g3, g9 := good(0), good(3), good(9)
	partial := good(6)[:40]
	legacy := rawMessage(0, 1, 0, nil, []byte("x"))
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	topics := [][]testPartition{
		{{records: cat(g0, g3)}, {aborted: 2, records: cat(g0, g3, bad, g9)}},
		{{records: cat(legacy, g3)}, {records: nil}, {records: []byte{}}, {aborted: 1, records: cat(g0, g3, partial)}},
	}
	want := []int{len(g0) + len(g3), len(g0) + len(g3), 0, 0, 0, len(g0) + len(g3)}
	for _, version := range []int16{3, 4, 5, 7, 11, 12} {
		body := encodeResponse(version, topics)
		w := &wireConn{version: version, checkCRCs: true}
		expectTopics(w, 1<<20, 2, 4)
		whole, err := w.parse(bytes.Clone(body))
		if err != nil || len(whole.blocks) != len(want) {
			t.Fatalf("v%d: %v", version, err)
		}
		for _, piece := range []int{1, 7, 61, 256, len(body)} {
			buf := make([]byte, len(body))
			p := w.startParse(buf)
			for filled := 0; filled < len(body); {
				n := min(piece, len(body)-filled)
				copy(buf[filled:], body[filled:filled+n])
				filled += n
				p.advance(filled)
			}
			if p.state != parsed {
				t.Fatalf("v%d in pieces of %d: state %d (%v) once read", version, piece, p.state, p.err)
			}
			resp, err := p.finish()
			if err != nil {
				t.Fatal(err)
			}
			verified := make([]int, len(resp.blocks))
			for i, b := range resp.blocks {
				verified[i] = b.verified
				wb := whole.blocks[i]
				if b.err != wb.err || b.hwm != wb.hwm || !bytes.Equal(b.records, wb.records) || !bytes.Equal(b.aborted, wb.aborted) ||
					!sameScan(b.scan, wb.scan) || !b.scanned || b.missing {
					t.Errorf("v%d in pieces of %d: block %d %+v, at once %+v", version, piece, i, b, wb)
				}
			}
			if fmt.Sprint(verified) != fmt.Sprint(want) {
				t.Errorf("v%d in pieces of %d: verified %v, want %v", version, piece, verified, want)
			}
			checkVerified(t, resp)
		}
		// The parse's scan serves the fetch it was made for only: a block
		// asked for at another offset is scanned anew.
		if next, ok := predictNext(100, 1<<20, &whole.blocks[0]); !ok || next != 100 {
			t.Errorf("v%d: at offset 100, predicted %d (%v), want 100", version, next, ok)
		}
		// The decoder skips the verified batches and finds the bad one.
		blk := whole.blocks[1]
		d := decodeRecords("t0", 1, 0, 1<<20, decodeOpts{checkCRCs: true}, &blk)
		if !errors.Is(d.corrupt, errCorrupt) || !equalOffsets(offsetsOf(d.msgs), offsetsFrom(0, 6)) || d.next != 6 {
			t.Errorf("v%d: offsets %v next %d corrupt %v", version, offsetsOf(d.msgs), d.next, d.corrupt)
		}
	}
}

// TestParseSkipsUnrequestedInPieces: records of a partition the request
// did not ask for are skipped, also when they are still being read. The
// parse moved past them before they arrived and read the next field from
// there (a slice out of range) until the fuzzer found it.
func TestParseSkipsUnrequestedInPieces(t *testing.T) {
	g0 := rawBatch(0, 0, 2, 3, rawRecords(seq(3), func(int) []byte { return bytes.Repeat([]byte{'v'}, 100) }))
	topics := [][]testPartition{{{records: g0}, {records: g0}}, {{records: g0}, {records: g0}}}
	for _, version := range []int16{3, 4, 11, 12} {
		body := encodeResponse(version, topics)
		w := &wireConn{version: version, checkCRCs: true}
		expectTopics(w, 1<<20, 1, 1) // t0-0 and t1-0 only
		for _, piece := range []int{1, 13, 100, len(body)} {
			buf := make([]byte, len(body))
			p := w.startParse(buf)
			for filled := 0; filled < len(body); {
				n := min(piece, len(body)-filled)
				copy(buf[filled:], body[filled:filled+n])
				filled += n
				p.advance(filled)
			}
			resp, err := p.finish()
			if err != nil {
				t.Fatalf("v%d in pieces of %d: %v", version, piece, err)
			}
			for i, b := range resp.blocks {
				if b.missing || !bytes.Equal(b.records, g0) || b.verified != len(g0) {
					t.Errorf("v%d in pieces of %d: block %d %+v", version, piece, i, b)
				}
			}
		}
	}
}

// checkVerified fails t when a verified prefix of a block of resp is not
// made of record batches whose checksums match.
func checkVerified(t *testing.T, resp *fetchResponse) {
	t.Helper()
	for i, b := range resp.blocks {
		recs, v := b.records, b.verified
		if v > len(recs) {
			t.Fatalf("block %d: %d bytes verified of %d", i, v, len(recs))
		}
		for at := 0; at < v; {
			n := 12 + int(binary.BigEndian.Uint32(recs[at+batchLengthAt:]))
			b := recs[at : at+n]
			if binary.BigEndian.Uint32(b[batchCRCAt:]) != crc32.Checksum(b[batchAttrsAt:], castagnoli) {
				t.Fatalf("block %d: batch at %d verified with a bad checksum", i, at)
			}
			at += n
		}
	}
}

// sameScan reports whether two scans tell the same, errors by their text.
func sameScan(a, b scanned) bool {
	return a.next == b.next && a.truncated == b.truncated && a.stopAt == b.stopAt && fmt.Sprint(a.bad) == fmt.Sprint(b.bad)
}

// TestReaderVarint: reader.varint reads what binary.Varint reads, and
// fails where it fails (short, more than 10 bytes, overflow).
func TestReaderVarint(t *testing.T) {
	cases := [][]byte{{}, {0}, {1}, {0x7f}, {0x80}, {0x80, 1}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1},
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1},
		{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0}}
	for _, v := range []int64{0, -1, 1, 63, -64, 64, 1 << 20, -1 << 40, 1<<63 - 1, -1 << 63} {
		cases = append(cases, binary.AppendVarint(nil, v), append(binary.AppendVarint(nil, v), 5))
	}
	for _, b := range cases {
		want, n := binary.Varint(b)
		r := reader{b: b}
		got := r.varint()
		if n <= 0 {
			if r.err == nil || got != 0 || r.off != len(b) {
				t.Errorf("%x: %d, off %d, err %v; binary.Varint fails (%d)", b, got, r.off, r.err, n)
			}
			continue
		}
		if r.err != nil || got != want || r.off != n {
			t.Errorf("%x: %d, off %d, err %v; binary.Varint %d, %d bytes", b, got, r.off, r.err, want, n)
		}
	}
}
