package fetch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/IBM/sarama"
	"github.com/klauspost/compress/zstd"
)

// The tests of this file check what decoding allocates for payloads whose
// headers allow far more output than they hold, and that sizes no payload
// can hold are reported as corruption, not as over the limit.

// Compressed zstd blocks that decode to nothing: a literals section
// header saying 0 raw literals (in 1, 2 or 3 bytes) and a sequences header
// saying 0 sequences (RFC 8878 3.1.1.3). The 2-byte one is the shortest
// legal block; the longer ones are as legal, and their headers alone do
// not say that they are empty.
var zstdEmptyContents = map[int][]byte{
	2: {0x00, 0x00},
	3: {0x04, 0x00, 0x00},
	4: {0x0C, 0x00, 0x00, 0x00},
}

// zstdWithEmptyBlocks returns a zstd frame (window 128 KiB) holding data
// in raw blocks followed by n empty compressed blocks of content bytes
// each (see zstdEmptyContents). With fcs the frame declares a content
// size: that of data, or, if lie is set, what n full blocks would hold.
func zstdWithEmptyBlocks(data []byte, n, content int, fcs, lie bool) []byte {
	return zstdWithBlocks(data, n, zstdEmptyContents[content], fcs, lie)
}

// zstdWithBlocks is zstdWithEmptyBlocks with compressed blocks of the
// given content.
func zstdWithBlocks(data []byte, n int, content []byte, fcs, lie bool) []byte {
	fhd, wd := byte(0x00), byte(7<<3) // a window descriptor: 2^17
	if fcs {
		fhd = 0x80 // a 4-byte content size
	}
	f := binary.LittleEndian.AppendUint32(nil, zstdFrameMagic)
	f = append(f, fhd, wd)
	if fcs {
		size := uint32(len(data))
		if lie {
			size += uint32(n) * zstdMaxBlock
		}
		f = binary.LittleEndian.AppendUint32(f, size)
	}
	appendBlock := func(kind uint32, body []byte, last bool) {
		bh := uint32(len(body))<<3 | kind<<1
		if last {
			bh |= 1
		}
		f = append(f, byte(bh), byte(bh>>8), byte(bh>>16))
		f = append(f, body...)
	}
	for len(data) > zstdMaxBlock {
		appendBlock(0, data[:zstdMaxBlock], false)
		data = data[zstdMaxBlock:]
	}
	appendBlock(0, data, n == 0)
	for i := range n {
		appendBlock(2, content, i == n-1)
	}
	return f
}

// TestZstdEmptyBlocksAreEmpty: the klauspost decoder decodes each of
// zstdEmptyContents to nothing, and every other 2-byte content of a
// compressed block to nothing or an error, as zstdOutputSize counts them.
func TestZstdEmptyBlocksAreEmpty(t *testing.T) {
	data := []byte("records")
	for content := range zstdEmptyContents {
		out, err := decompress(codecZstd, zstdWithEmptyBlocks(data, 3, content, false, false), 1<<20)
		if err != nil || !bytes.Equal(out, data) {
			t.Errorf("%d-byte empty blocks: %q, %v", content, out, err)
		}
	}
	_, _ = withZstd(func(dec zstdPair) ([]byte, error) {
		for v := range 1 << 16 {
			content := []byte{byte(v), byte(v >> 8)}
			frame := zstdWithBlocks(data, 1, content, false, false)
			_, atMost, _, err := zstdOutputSize(frame, 1<<20)
			out, derr := dec.open.DecodeAll(frame, nil)
			if err == nil && derr == nil && len(out) > atMost {
				t.Fatalf("content % x: decoded %d bytes, counted at most %d", content, len(out), atMost)
			}
		}
		return nil, nil
	})
}

// emptyBlocksResponse returns the records of a partition's block of n
// batches of one 100-byte record each, zstd frames that follow their
// records with blocks empty compressed blocks of content bytes each, and
// the uncompressed records of one batch.
func emptyBlocksResponse(n, blocks, content int, fcs bool) (records, one []byte) {
	for i := range n {
		recs := rawRecords([]int64{0}, func(int) []byte { return bytes.Repeat([]byte{byte('a' + i%26)}, 100) })
		records = append(records, rawBatch(int64(i), codecZstd, 0, 1, zstdWithEmptyBlocks(recs, blocks, content, fcs, false))...)
		one = recs
	}
	return records, one
}

// decodeWhole decodes a whole block from offset 0, chunk by chunk, as the
// fetcher does, releasing each chunk at once. It returns the messages,
// the bytes of their keys and values, and the last chunk.
func decodeWhole(blk *respBlock, opts decodeOpts, fetchSize int32) (msgs int, payload int64, last decoded) {
	p := &pools{}
	p.noteLimit(decodeLimit(opts.maxDecoded, fetchSize))
	bd := newBlockDecoder("t", 0, 0, fetchSize, opts, blk, p)
	defer bd.close()
	for i := 0; bd.more() && i < 1_000_000; i++ {
		last = bd.chunk()
		msgs += len(last.msgs)
		for _, m := range last.msgs {
			payload += int64(len(m.Key) + len(m.Value))
		}
		if last.lease != nil {
			last.lease.release()
		}
		if !last.capped {
			break
		}
	}
	return msgs, payload, last
}

// TestZstdEmptyBlocksAllocateLittle: batches whose zstd frames add
// hundreds of empty compressed blocks to a few records (legal data) cost
// about what honest batches of the same records cost. Their headers allow
// 128 KiB per block, and the output buffer of each batch was sized on
// that: 965 such batches in a 1 MiB fetch allocated 24 GiB (review N2).
// With 5-byte blocks (recognisably empty) and 6- and 7-byte ones (which
// only decoding tells), with and without a declared content size, with
// and without recycling.
func TestZstdEmptyBlocksAllocateLittle(t *testing.T) {
	const batches, blocks = 100, 200
	for _, content := range []int{2, 3, 4} {
		for _, fcs := range []bool{false, true} {
			for _, recycle := range []bool{false, true} {
				t.Run(fmt.Sprintf("%d-byte blocks/fcs=%v/recycle=%v", 3+content, fcs, recycle), func(t *testing.T) {
					records, one := emptyBlocksResponse(batches, blocks, content, fcs)
					blk := &respBlock{records: records, hwm: batches}
					opts := decodeOpts{checkCRCs: true, recycle: recycle}
					var (
						msgs int
						last decoded
					)
					n := allocated(func() { msgs, _, last = decodeWhole(blk, opts, 1<<20) })
					if msgs != batches || last.corrupt != nil || last.overLimit != nil || last.next != batches {
						t.Fatalf("%d messages, next %d, %v %v", msgs, last.next, last.corrupt, last.overLimit)
					}
					// What an honest batch of the same records costs:
					// the payload, its message, a slab, a chunk; the
					// decoder's scratch buffers come from pools. With
					// recycling, each batch holds a buffer of its own,
					// with the room the decoder wants past it.
					perBatch := 4*len(one) + 4<<10
					if recycle || raceEnabled {
						// The race detector empties the scratch pool at
						// random: a scratch buffer per batch at worst.
						perBatch += startSize(len(records)/batches) + zstdSlack
					}
					if bound := uint64(batches*perBatch) + 4*mib; n > bound {
						t.Errorf("%d bytes of batches allocated %d bytes, bound %d", len(records), n, bound)
					}
					t.Logf("%d bytes of batches, %d bytes of records: allocated %d bytes", len(records), batches*len(one), n)
				})
			}
		}
	}
}

// TestZstdEmptyBlocksPastTheLimit: a batch whose empty blocks allow more
// than the decoding limit (the decoder is then held to the limit) decodes
// as it is, growing its buffer only with what it produces.
func TestZstdEmptyBlocksPastTheLimit(t *testing.T) {
	const maxDecoded = 1 << 20 // 8 blocks of 128 KiB
	for _, content := range []int{3, 4} {
		records, one := emptyBlocksResponse(20, 100, content, false)
		blk := &respBlock{records: records, hwm: 20}
		var (
			msgs int
			last decoded
		)
		n := allocated(func() { msgs, _, last = decodeWhole(blk, decodeOpts{maxDecoded: maxDecoded}, 1<<20) })
		if msgs != 20 || last.corrupt != nil || last.overLimit != nil || last.next != 20 {
			t.Fatalf("%d-byte blocks: %d messages, next %d, %v %v", 3+content, msgs, last.next, last.corrupt, last.overLimit)
		}
		perBatch := 4*len(one) + 4<<10
		if raceEnabled {
			perBatch += startSize(len(records)/20) + zstdSlack
		}
		if bound := uint64(20*perBatch) + 4*mib; n > bound {
			t.Errorf("%d-byte blocks: allocated %d bytes, bound %d", 3+content, n, bound)
		}
	}
	// Output that fills the limit is still over it, having allocated
	// about the limit.
	big := rawRecords([]int64{0}, func(int) []byte { return make([]byte, 2*maxDecoded) })
	payload := zstdWithEmptyBlocks(big, 10, 3, false, false)
	blk := &respBlock{records: rawBatch(0, codecZstd, 0, 1, payload), hwm: 1}
	var d decoded
	n := allocated(func() { d = decodeRecords("t", 0, 0, 1<<20, decodeOpts{maxDecoded: maxDecoded}, blk) })
	if d.overLimit == nil || d.msgs != nil || d.next != 0 {
		t.Errorf("past the limit: %+v", d)
	}
	if n > 4*maxDecoded+mib {
		t.Errorf("past the limit: allocated %d bytes", n)
	}
}

// TestImpossibleSizeIsCorrupt: a payload that declares more output than
// its bytes can hold in its codec is corrupt (ErrCorruptMessage for its
// partition), not over the decoding limit (ErrDecodedTooLarge, which
// advises raising MaxDecodedBytes; review N6): a snappy block declaring
// 90 MiB in a few bytes, the same in xerial framing, a zstd frame whose
// declared content size its blocks cannot produce, an lz4 frame whose
// declared content size its blocks cannot hold, below and above the
// limit, and zstd raw blocks larger than any block. Payloads that can
// hold what they declare stay over the limit
// (TestHostileInflationOfOneBatch).
func TestImpossibleSizeIsCorrupt(t *testing.T) {
	bombs := declaredBombs()
	add := func(name string, codec int8, payload []byte) {
		bombs[name] = struct {
			codec   int8
			payload []byte
		}{codec, payload}
	}
	recs := rawRecords([]int64{0}, func(int) []byte { return []byte("value") })
	add("zstd, empty blocks under a declared size", codecZstd, zstdWithEmptyBlocks(recs, 400, 2, true, true))
	add("zstd, few blocks under a declared size within the limit", codecZstd, zstdWithEmptyBlocks(recs, 4, 2, true, true))
	big := zstdWithEmptyBlocks(recs, 0, 0, false, false)
	binary.LittleEndian.PutUint32(big[6:], 200<<10<<3|1) // a last raw block of 200 KiB
	add("zstd, raw block past any block", codecZstd, append(big, make([]byte, 200<<10)...))
	for _, size := range []uint64{1 << 30, 512 << 10} {
		// An lz4 frame (64 KiB blocks, content size) holding one
		// 2-byte compressed block.
		lz := binary.LittleEndian.AppendUint32(nil, lz4FrameMagic)
		lz = append(lz, 0x60|0x08, 0x40)
		lz = binary.LittleEndian.AppendUint64(lz, size)
		lz = append(lz, 0) // header checksum, fixed below
		lz[len(lz)-1] = byte(xxh32Short(lz[4:len(lz)-1]) >> 8)
		lz = binary.LittleEndian.AppendUint32(lz, 2)
		lz = append(lz, 0x10, 'x') // one literal
		lz = binary.LittleEndian.AppendUint32(lz, 0)
		add(fmt.Sprintf("lz4, content size %d", size), codecLZ4, lz)
	}
	for name, b := range bombs {
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
				if !errors.Is(d.corrupt, errCorrupt) || d.overLimit != nil || d.msgs != nil || d.next != 0 {
					t.Errorf("want corrupt at 0: corrupt %v, over the limit %v, %d messages, next %d", d.corrupt, d.overLimit, len(d.msgs), d.next)
				}
			})
		}
	}
}

// FuzzResponseAllocation decodes a whole partition block of many batches,
// hostile but legal ones among them, and bounds what decoding allocates
// by what it takes in and gives out: per byte of records and per byte of
// delivered keys and values, plus a constant per batch and per chunk. The
// batches are the fuzzer's records, compressed with its codec, each
// followed (zstd) by empty blocks of 2 to 4 content bytes, or with a
// declared content size; empty-blocks batches allocated 128 KiB each
// before (review N2), which no other fuzz target measured.
func FuzzResponseAllocation(f *testing.F) {
	recs := rawRecords(seq(3), func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i)}, 100) })
	// Empty zstd blocks of 2, 3 and 4 content bytes (5, 6 and 7 with
	// their headers).
	f.Add(recs, uint8(codecZstd), uint16(200), uint16(100), uint8(0), false, false)
	f.Add(recs, uint8(codecZstd), uint16(200), uint16(100), uint8(1), true, false)
	f.Add(recs, uint8(codecZstd), uint16(400), uint16(50), uint8(2), false, true)
	f.Add(recs, uint8(codecZstd), uint16(0), uint16(100), uint8(0), true, false)
	f.Add(recs, uint8(codecGzip), uint16(0), uint16(100), uint8(0), false, false)
	f.Add(recs, uint8(codecLZ4), uint16(0), uint16(100), uint8(0), false, true)
	f.Add(recs, uint8(codecSnappy), uint16(0), uint16(100), uint8(0), false, false)
	f.Add(rawRecords(seq(1), func(int) []byte { return make([]byte, 64<<10) }), uint8(codecZstd), uint16(100), uint16(20), uint8(3), false, false)
	f.Fuzz(func(t *testing.T, data []byte, codec uint8, empty, batches uint16, content uint8, fcs, recycle bool) {
		codec %= 5
		batches = max(1, batches%300)
		empty %= 1000
		if len(data) > 256<<10 {
			return
		}
		var records []byte
		count, lastDelta := int32(0), int32(0)
		if n, _, ok := parseRecords(data); ok {
			count, lastDelta = int32(n), max(0, int32(n)-1)
			if ds := recordDeltas(data); len(ds) > 0 {
				lastDelta = int32(max(int64(lastDelta), ds[len(ds)-1]))
			}
		}
		var payload []byte
		switch {
		case codec == codecZstd && (empty > 0 || fcs):
			payload = zstdWithEmptyBlocks(data, int(empty), 2+int(content%3), fcs, false)
		default:
			payload = compressCodec(int8(codec), data)
		}
		base := int64(0)
		for range batches {
			records = append(records, rawBatch(base, int16(codec), lastDelta, count, payload)...)
			base += int64(lastDelta) + 1
		}
		blk := &respBlock{records: records, hwm: base}
		const fetchSize = 1 << 20
		opts := decodeOpts{checkCRCs: true, recycle: recycle, maxDecoded: 4 << 20}
		var (
			before, after runtime.MemStats
			payloadBytes  int64
			msgs          int
			last          decoded
		)
		runtime.ReadMemStats(&before)
		msgs, payloadBytes, last = decodeWhole(blk, opts, fetchSize)
		runtime.ReadMemStats(&after)
		n := after.TotalAlloc - before.TotalAlloc
		// Each chunk may hold the decoding limit; a batch costs its
		// scratch and exact-size buffers (pools empty at random under
		// the race detector) and a message costs its struct. The lz4
		// reader takes a buffer of the block size its frame declares (4
		// MiB by default) from a pool of its own for each batch.
		chunks := uint64(msgs)*uint64(msgCost)/uint64(opts.maxDecoded) + 2
		perBatch := 4*len(data) + 2*(startSize(len(payload))+zstdSlack)
		if codec == codecLZ4 {
			perBatch += 8 << 20
		}
		bound := 8*uint64(len(records)) + 8*uint64(payloadBytes) + uint64(msgs)*uint64(2*msgCost) +
			uint64(batches)*uint64(perBatch) + chunks*uint64(opts.maxDecoded)
		if n > bound {
			t.Fatalf("%d batches, %d bytes of records, %d messages of %d bytes (%v): allocated %d bytes, bound %d",
				batches, len(records), msgs, payloadBytes, errors.Join(last.corrupt, last.overLimit), n, bound)
		}
		if last.next > base || last.next < 0 || (last.corrupt == nil && last.overLimit == nil && last.next != base && !last.truncated) {
			t.Fatalf("next %d of %d: %v %v", last.next, base, last.corrupt, last.overLimit)
		}
	})
}

// BenchmarkDecodeZstdStreamed decodes a batch of 500 1 KiB records whose
// zstd frame does not declare its content size, as a streaming compressor
// (the Java producer's) writes it: its compressed blocks bound its output
// only loosely. Values are half random hex digits (about 2:1), or a
// random hex digit every 32 bytes (about 45:1, past startFactor).
func BenchmarkDecodeZstdStreamed(b *testing.B) {
	for _, c := range []struct {
		name  string
		every int
	}{{"2to1", 2}, {"45to1", 32}} {
		rb := &sarama.RecordBatch{Version: 2, FirstTimestamp: t0, ProducerID: -1, LastOffsetDelta: 499}
		seed := uint32(1)
		for i := range 500 {
			v := bytes.Repeat([]byte{'x'}, 1024)
			for j := 0; j < len(v); j += c.every {
				seed = seed*1664525 + 1013904223
				v[j] = "0123456789abcdef"[seed>>28]
			}
			rb.Records = append(rb.Records, &sarama.Record{OffsetDelta: int64(i), Value: v})
		}
		recs := appendBatch(nil, rb)[recordBatchOverhead:]
		var buf bytes.Buffer
		w, _ := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1))
		_, _ = w.Write(recs)
		_ = w.Close()
		if h, err := zstdHeader(buf.Bytes()); err != nil || h {
			b.Fatalf("frame declares its size (%v) or %v", h, err)
		}
		blk := &respBlock{records: rawBatch(0, codecZstd, 499, 500, buf.Bytes()), hwm: 500}
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(recs)))
			b.ReportAllocs()
			for b.Loop() {
				if d := decodeBlock("t", 0, 0, 1<<20, false, blk); len(d.msgs) != 500 {
					b.Fatal(d.corrupt, d.overLimit)
				}
			}
			b.ReportMetric(float64(len(recs))/float64(buf.Len()), "ratio")
		})
	}
}

// zstdHeader reports whether a zstd frame declares its content size.
func zstdHeader(frame []byte) (bool, error) {
	var h zstd.Header
	if err := h.Decode(frame); err != nil {
		return false, err
	}
	return h.HasFCS, nil
}
