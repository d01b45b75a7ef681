package fetch

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// hostileResponse is a fetch response that a broker could send, valid to
// the byte, that costs the reader much if it keeps what it was not asked
// for: besides the requested partition t0-0, unrequested partitions of
// t0 and of other topics with no records, a long list of aborted
// transactions, one large batch.
type hostileResponse struct {
	version     int16
	unrequested int // partition entries the request did not ask for
	topics      int // unrequested topics they are spread over (0: all in t0)
	aborted     int // aborted transactions of t0-0
	records     []byte
}

// body encodes the response body (after the correlation id).
func (h hostileResponse) body() []byte {
	flex := flexible(h.version)
	var b []byte
	array := func(n int) {
		if flex {
			b = binary.AppendUvarint(b, uint64(n+1))
		} else {
			b = binary.BigEndian.AppendUint32(b, uint32(n))
		}
	}
	tags := func() {
		if flex {
			b = append(b, 0)
		}
	}
	partition := func(p int32, aborted int, records []byte) {
		b = binary.BigEndian.AppendUint32(b, uint32(p))
		b = append(b, 0, 0)                         // error code
		b = binary.BigEndian.AppendUint64(b, 1<<40) // high watermark
		if h.version >= 4 {
			b = binary.BigEndian.AppendUint64(b, 1<<40) // last stable offset
			if h.version >= 5 {
				b = binary.BigEndian.AppendUint64(b, 0) // log start offset
			}
			array(aborted)
			for k := range aborted {
				// Producers and first offsets out of order, as brokers
				// list them (by the offsets of their markers).
				b = binary.BigEndian.AppendUint64(b, uint64(aborted-k))
				b = binary.BigEndian.AppendUint64(b, uint64((k*7919)%aborted))
				tags()
			}
		}
		if h.version >= 11 {
			b = binary.BigEndian.AppendUint32(b, 0xffffffff) // preferred read replica
		}
		if flex {
			b = binary.AppendUvarint(b, uint64(len(records)+1))
		} else {
			b = binary.BigEndian.AppendUint32(b, uint32(len(records)))
		}
		b = append(b, records...)
		tags()
	}
	tags()
	if h.version >= 1 {
		b = binary.BigEndian.AppendUint32(b, 0) // throttle
	}
	if h.version >= 7 {
		b = append(b, 0, 0, 0, 0, 0, 0) // error code, session id
	}
	others := min(h.topics, h.unrequested)
	inT0 := h.unrequested
	if others > 0 {
		inT0 = 0
	}
	array(1 + others)
	b = appendString(b, "t0", flex)
	array(1 + inT0)
	partition(0, h.aborted, h.records)
	for p := range inT0 {
		partition(int32(p+1), 0, nil)
	}
	tags()
	for i := range others {
		n := h.unrequested / others
		if i < h.unrequested%others {
			n++
		}
		b = appendString(b, fmt.Sprintf("u%d", i), flex)
		array(n)
		for p := range n {
			partition(int32(p), 0, nil)
		}
		tags()
	}
	tags()
	return b
}

// serveFetch answers the next request on c with body, as a broker would.
func serveFetch(c net.Conn, body []byte) error {
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return err
	}
	req := make([]byte, binary.BigEndian.Uint32(hdr[:]))
	if _, err := io.ReadFull(c, req); err != nil {
		return err
	}
	corr := req[4:8] // after the API key and version
	out := binary.BigEndian.AppendUint32(nil, uint32(4+len(body)))
	out = append(out, corr...)
	if _, err := c.Write(out); err != nil {
		return err
	}
	_, err := c.Write(body)
	return err
}

// fetchHostile sends a request for t0-0 (fetch size size) over a pipe to
// a server that answers body, and decodes the block of t0-0 if the
// response is read. It returns what the client side allocated, the
// response's error and the messages decoded.
func fetchHostile(t testing.TB, version int16, size int32, readCommitted bool, body []byte) (alloc uint64, err error, msgs int) {
	client, server := net.Pipe()
	defer client.Close()
	var wg sync.WaitGroup
	wg.Go(func() {
		defer server.Close()
		_ = serveFetch(server, body)
	})
	defer wg.Wait()
	pti := streamcore.NewPartitionTopicInfo("t0", 0, nil, 0, 0, size)
	ps := &partState{tp: zkutil.TopicPartition{Topic: "t0"}, pti: pti, epoch: -1}
	req := &fetchRequest{maxWait: 0, maxBytes: minRequestMaxBytes, readCommitted: readCommitted, parts: []reqPart{{ps: ps}}}
	w := &wireConn{conn: client, clientID: "test", version: version, checkCRCs: true, readTimeout: 10 * time.Second, writeTimeout: 10 * time.Second}
	alloc = allocated(func() {
		var resp *fetchResponse
		resp, err = w.roundTrip(req, nil)
		if err != nil {
			return
		}
		if blk := resp.block("t0", 0); blk != nil {
			d := decodeRecords("t0", 0, 0, size, decodeOpts{readCommitted: readCommitted, checkCRCs: true}, blk)
			msgs = len(d.msgs)
		}
		runtime.KeepAlive(resp)
	})
	return alloc, err, msgs
}

// FuzzResponseWireAllocation reads whole fetch responses from a pipe, as
// the fetcher reads them from a broker, and decodes the requested
// partition: hostile but valid ones, with many partitions the request did
// not ask for (spread over topics or not), long aborted-transaction lists,
// and one batch far beyond the fetch size. What the reader allocates is
// bounded by the response buffer, which holds the body, plus a constant,
// and a response larger than its request allows is not read into memory
// at all. Before, each unrequested entry of 37 bytes cost about 88 bytes
// and a map entry, an aborted list was copied twice and indexed (4.1x its
// bytes), and any response up to 100 MiB was read whatever the fetch size.
func FuzzResponseWireAllocation(f *testing.F) {
	// Many unrequested partitions, in the requested topic or in others;
	// more than the request allows.
	f.Add(uint8(12), uint32(25000), uint16(0), uint16(0), uint16(0), false)
	f.Add(uint8(4), uint32(25000), uint16(200), uint16(0), uint16(0), false)
	f.Add(uint8(7), uint32(90000), uint16(0), uint16(0), uint16(0), false)
	// A long aborted-transaction list, read_committed.
	f.Add(uint8(12), uint32(0), uint16(0), uint16(60000), uint16(0), true)
	f.Add(uint8(5), uint32(0), uint16(0), uint16(60000), uint16(0), true)
	// A response of 4 MiB for a fetch size of 64 KiB: one batch.
	f.Add(uint8(11), uint32(0), uint16(0), uint16(0), uint16(4096), false)
	f.Add(uint8(12), uint32(100), uint16(3), uint16(10), uint16(0), true)
	f.Fuzz(func(t *testing.T, version uint8, unrequested uint32, topics, aborted, bigKiB uint16, readCommitted bool) {
		versions := []int16{4, 5, 7, 11, 12}
		v := int16(version)
		if !slices.Contains(versions, v) {
			v = versions[int(version)%len(versions)]
		}
		h := hostileResponse{version: v, unrequested: int(unrequested % 100000), topics: int(topics), aborted: int(aborted)}
		// The requested partition: a few small records, or one batch of
		// 64 KiB records (bigKiB/64 of them).
		n := max(1, int(bigKiB%8192)/64)
		value := 10
		if bigKiB > 0 {
			value = 64<<10 - 16
		}
		h.records = rawBatch(0, 0, int32(n-1), int32(n), rawRecords(seq(n), func(int) []byte { return bytes.Repeat([]byte{'v'}, value) }))
		const size = 64 << 10
		body := h.body()
		alloc, err, msgs := fetchHostile(t, v, size, readCommitted, body)
		// The buffer the response is read into, the decoded messages,
		// and a constant: the request, the parsed block, scratch. A
		// response larger than the fetch size, one batch of a broker's
		// default message.max.bytes sent whole beyond it (KIP-74) and
		// room for the structure and aborted transactions is not read.
		bound := uint64(64 << 10)
		if allowed := size + 1<<20 + 12 + 64<<10; len(body) > allowed && err == nil {
			t.Fatalf("a response of %d bytes for a fetch size of %d was read", len(body), size)
		}
		if err == nil {
			bound += uint64(len(body)) + uint64(msgs)*uint64(2*msgCost)
		}
		t.Logf("fetch v%d, %d unrequested partitions, %d aborted transactions, %d bytes of records: %d bytes read, %d allocated (bound %d), %d messages, %v",
			v, h.unrequested, h.aborted, len(h.records), len(body), alloc, bound, msgs, err)
		if alloc > bound {
			t.Fatalf("fetch v%d, %d unrequested partitions in %d topics, %d aborted transactions, %d bytes of records: a response of %d bytes (%v) allocated %d bytes, bound %d",
				v, h.unrequested, h.topics, h.aborted, len(h.records), len(body), err, alloc, bound)
		}
	})
}

// TestOversizedResponseStopsOnlyItsPartition: a broker answers a request
// for two partitions with a message of 2 MiB on one of them, more than its
// fetch size of 64 KiB and a default message.max.bytes allow together.
// The response is refused unread; the fetcher asks for each partition
// alone, delivers the other one's messages, and stops the partition of the
// big message at it with ErrMessageTooLarge.
func TestOversizedResponseStopsOnlyItsPartition(t *testing.T) {
	mb := sarama.NewMockBroker(t, 0)
	defer mb.Close()
	res := sarama.NewMockFetchResponse(t, 10)
	for o := range int64(10) {
		res.SetMessage("t", 0, o, sarama.StringEncoder(fmt.Sprint("m", o)))
	}
	res.SetMessage("t", 1, 0, sarama.ByteEncoder(bytes.Repeat([]byte{'x'}, 2<<20)))
	res.SetHighWaterMark("t", 0, 10).SetHighWaterMark("t", 1, 1)
	mb.SetHandlerByMap(map[string]sarama.MockResponse{
		"ApiVersionsRequest": mockAPIVersions(t),
		"MetadataRequest":    sarama.NewMockMetadataResponse(t).SetBroker(mb.Addr(), 0).SetLeader("t", 0, 0).SetLeader("t", 1, 0),
		"FetchRequest":       res,
	})
	cfg := testConfig(t)
	var events []FetchEvent
	var mu sync.Mutex
	cfg.OnFetch = func(e FetchEvent) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	}
	m := newManager(t, cfg, staticBrokers{{ID: 0, Addr: mb.Addr()}})
	s0, s1 := newStream(t, 2), newStream(t, 2)
	p0 := streamcore.NewPartitionTopicInfo("t", 0, streamcore.QueueOf(s0), 0, 0, 64<<10)
	p1 := streamcore.NewPartitionTopicInfo("t", 1, streamcore.QueueOf(s1), 0, 0, 64<<10)
	if err := m.StartConnections(context.Background(), []*streamcore.PartitionTopicInfo{p0, p1}); err != nil {
		t.Fatal(err)
	}
	defer m.StopConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := nextOrError(ctx, s1)
	var perr *streamcore.PartitionError
	if len(got) != 0 || !errors.As(err, &perr) || !errors.Is(err, streamcore.ErrMessageTooLarge) || perr.Partition != 1 {
		t.Fatalf("partition 1: %d messages, %v; want ErrMessageTooLarge", len(got), err)
	}
	t.Logf("partition 1: %v", err)
	if p1.FetchedOffset() != 0 {
		t.Errorf("partition 1 fetched offset %d, want 0 (the big message)", p1.FetchedOffset())
	}
	var offsets []int64
	for len(offsets) < 10 {
		msg, err := s0.Next(ctx)
		if err != nil {
			t.Fatalf("partition 0 after %v: %v", offsets, err)
		}
		offsets = append(offsets, msg.Offset)
	}
	if want := offsetsFrom(0, 10); !equalOffsets(offsets, want) {
		t.Errorf("partition 0: %v, want %v", offsets, want)
	}
	mu.Lock()
	defer mu.Unlock()
	refused := 0
	for _, e := range events {
		if errors.Is(e.Err, errResponseTooLarge) {
			refused++
			if e.Bytes < 2<<20 {
				t.Errorf("a refused response of %d bytes", e.Bytes)
			}
		}
	}
	if refused == 0 {
		t.Errorf("no fetch reported a refused response: %+v", events)
	}
}
