package fetch

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"
)

// memConn is a connection whose peer answers every request with the same
// fetch response body, handed out at most piece bytes per Read, as a
// socket would.
type memConn struct {
	net.Conn
	body  []byte
	piece int
	hdr   [8]byte
	at    int // what was read of hdr and body
}

func (c *memConn) Write(p []byte) (int, error) {
	// The size, then the correlation id (after the API key and version).
	binary.BigEndian.PutUint32(c.hdr[:], uint32(4+len(c.body)))
	copy(c.hdr[4:], p[8:12])
	c.at = 0
	return len(p), nil
}

func (c *memConn) Read(p []byte) (int, error) {
	if c.at < len(c.hdr) {
		n := copy(p, c.hdr[c.at:])
		c.at += n
		return n, nil
	}
	at := c.at - len(c.hdr)
	if at == len(c.body) {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.piece)], c.body[at:])
	c.at += n
	return n, nil
}

func (c *memConn) SetReadDeadline(time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }

// benchResponse is a fetch v12 response for 4 partitions of 256 KiB each:
// 16 batches of 150 uncompressed 100-byte records (about 16 KiB, a
// producer's default batch.size) per partition, 1 MiB in all.
func benchResponse(b *testing.B, checkCRCs bool) (*wireConn, *fetchRequest, int) {
	const version, partitions, batches, records = 12, 4, 16, 150
	value := bytes.Repeat([]byte{'v'}, 100)
	var recs []byte
	for i := range int64(batches) {
		recs = append(recs, rawBatch(i*records, 0, records-1, records, rawRecords(seq(records), func(int) []byte { return value }))...)
	}
	parts := make([]testPartition, partitions)
	for i := range parts {
		parts[i].records = recs
	}
	body := encodeResponse(version, [][]testPartition{parts})
	w := &wireConn{conn: &memConn{body: body, piece: 64 << 10}, version: version, checkCRCs: checkCRCs,
		readTimeout: time.Second, writeTimeout: time.Second}
	reqs := expectTopics(w, 1<<20, partitions)
	req := &fetchRequest{maxBytes: minRequestMaxBytes, parts: reqs}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	// Released buffers are not overwritten, as outside tests.
	poisonReleased = false
	b.Cleanup(func() { poisonReleased = true })
	return w, req, partitions * batches * records
}

// BenchmarkParseResponse reads a 1 MiB fetch response from a connection
// and parses it down to each partition's records, checksums verified or
// not: what the connection's reader does for every response.
func BenchmarkParseResponse(b *testing.B) {
	for _, crc := range []bool{true, false} {
		name := "crc"
		if !crc {
			name = "nocrc"
		}
		b.Run(name, func(b *testing.B) {
			w, req, _ := benchResponse(b, crc)
			p := &pools{}
			for b.Loop() {
				resp, err := w.roundTrip(req, p)
				if err != nil || len(resp.blocks) != len(req.parts) {
					b.Fatal(err)
				}
				resp.pb.release()
			}
		})
	}
}

// BenchmarkResponseToMessages is the whole path of a response through the
// fetcher: read and parsed, the offsets of the request sent ahead
// predicted from each partition's block, and each block decoded into
// messages, checksums verified.
func BenchmarkResponseToMessages(b *testing.B) {
	w, req, n := benchResponse(b, true)
	p := &pools{}
	opts := decodeOpts{checkCRCs: true}
	for b.Loop() {
		resp, err := w.roundTrip(req, p)
		if err != nil {
			b.Fatal(err)
		}
		msgs := 0
		for i, rp := range req.parts {
			blk := resp.blockFor(i, rp)
			if _, ok := predictNext(rp.offset, rp.ps.pti.FetchSize, blk); !ok {
				b.Fatal("truncated")
			}
			d := decodeRecords(rp.ps.tp.Topic, rp.ps.tp.Partition, rp.offset, rp.ps.pti.FetchSize, opts, blk)
			msgs += len(d.msgs)
		}
		if msgs != n {
			b.Fatalf("%d messages, want %d", msgs, n)
		}
		resp.pb.release()
	}
}
