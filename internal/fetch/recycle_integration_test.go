package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// recycleHarness is a fetcher with Config.RecycleMessages and partitions
// 0..n-1 of topic "t", each on a stream of its own.
type recycleHarness struct {
	f       *fetcher
	reqs    []reqPart
	streams []*streamcore.KafkaStream
}

func newRecycleHarness(t *testing.T, n int, maxDecoded int64) *recycleHarness {
	t.Helper()
	cfg := testConfig(t)
	cfg.RecycleMessages = true
	cfg.MaxDecodedBytes = maxDecoded
	m, err := NewConsumerFetcherManager(cfg, staticBrokers{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	r := newRun(ctx, m, nil)
	t.Cleanup(func() { r.cancel(errStopped) })
	h := &recycleHarness{f: newFetcher(r, fetcherKey{}, "nowhere")}
	t.Cleanup(func() { h.f.cancel(errStopped) })
	for p := range int32(n) {
		s, _, err := streamcore.NewKafkaStream(64, 200*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		h.streams = append(h.streams, s)
		pti := streamcore.NewPartitionTopicInfo("t", p, streamcore.QueueOf(s), 0, 0, 1<<20)
		ps := &partState{tp: zkutil.TopicPartition{Topic: "t", Partition: p}, pti: pti, epoch: -1}
		h.f.add([]*partState{ps})
		h.reqs = append(h.reqs, reqPart{ps: ps, offset: 0})
	}
	return h
}

// response returns a response whose partition i holds records[i], read
// into a buffer of the fetcher's pools as the reader would.
func (h *recycleHarness) response(records ...[]byte) *fetchResponse {
	pb := h.f.pools.response(len(bytes.Join(records, nil)))
	resp := &fetchResponse{pb: pb, buf: pb.b}
	at := 0
	for i, r := range records {
		n := copy(pb.b[at:], r)
		resp.blocks = append(resp.blocks, respBlock{topic: "t", partition: int32(i), hwm: 1 << 40, records: pb.b[at : at+n : at+n]})
		at += n
	}
	return resp
}

// TestRecycledMessages: with RecycleMessages a message is valid until the
// next call to Next after its chunk's last message; then its chunk is
// released: its bytes (in the response, or in a decompressed payload) are
// overwritten in test binaries, its Message struct too, and the response
// buffer goes back to the fetcher's free list once no chunk holds it. A
// Clone taken while it was valid stays intact.
func TestRecycledMessages(t *testing.T) {
	value := func(p, i int) []byte { return fmt.Appendf(nil, "p%d-value-%d", p, i) }
	recs := func(p int) []byte { return rawRecords(seq(4), func(i int) []byte { return value(p, i) }) }
	h := newRecycleHarness(t, 2, 0)
	resp := h.response(
		rawBatch(0, 0, 3, 4, recs(0)),
		rawBatch(0, codecZstd, 3, 4, compress(sarama.CompressionZSTD, recs(1))),
	)
	respBuf := resp.pb
	aliased := h.f.process(resp, h.reqs)
	h.f.doneWith(resp, aliased)
	if n := respBuf.refs.Load(); n != 1 {
		t.Fatalf("the response is held %d times, want once (by partition 0's chunk)", n)
	}
	ctx := context.Background()
	for p, s := range h.streams {
		var kept, clone *streamcore.Message
		for i := range 4 {
			m, err := s.Next(ctx)
			if err != nil {
				t.Fatalf("partition %d, message %d: %v", p, i, err)
			}
			if m.Offset != int64(i) || !bytes.Equal(m.Value, value(p, i)) {
				t.Fatalf("partition %d: message at %d holds %q, want %q", p, m.Offset, m.Value, value(p, i))
			}
			if i == 1 {
				kept, clone = m, m.Clone()
			}
		}
		val := kept.Value
		if _, err := s.Next(ctx); !errors.Is(err, streamcore.ErrConsumerTimeout) {
			t.Fatalf("partition %d: %v, want the consumer timeout", p, err)
		}
		// Used after its chunk was released: poisoned.
		if !bytes.Equal(val, bytes.Repeat([]byte{poisonByte}, len(val))) || kept.Offset == 1 || kept.Topic == "t" {
			t.Errorf("partition %d: a message kept past its chunk reads %q at %d of %q, want it poisoned", p, val, kept.Offset, kept.Topic)
		}
		if clone.Offset != 1 || !bytes.Equal(clone.Value, value(p, 1)) {
			t.Errorf("partition %d: the clone reads %q at %d", p, clone.Value, clone.Offset)
		}
	}
	if n := respBuf.refs.Load(); n != 0 || len(h.f.pools.resp) != 1 || h.f.pools.resp[0] != respBuf {
		t.Errorf("after its chunks: the response is held %d times, %d buffers in the free list", n, len(h.f.pools.resp))
	}
	// The next response is read into it.
	if next := h.f.pools.response(10); next != respBuf {
		t.Error("the next response got a new buffer")
	}
	if len(h.f.pools.slabs) == 0 || len(h.f.pools.bufs) == 0 {
		t.Errorf("free lists: %d slabs, %d payload buffers; want the chunks' back", len(h.f.pools.slabs), len(h.f.pools.bufs))
	}
}

// TestIntegrationRecycledMessages reads, with RecycleMessages, topics of
// every codec from a real broker, through the fetcher's free lists, each
// message checked while it is valid: a buffer recycled while a message
// still aliased it would read as poison (test binaries overwrite what is
// released). Every message comes once, in order, and the free lists are
// used.
func TestIntegrationRecycledMessages(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	for _, codec := range []sarama.CompressionCodec{sarama.CompressionNone, sarama.CompressionLZ4, sarama.CompressionZSTD, sarama.CompressionGZIP} {
		t.Run(codec.String(), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			topic := newTopic(t, c, "fetch-recycled", 3, 1)
			produced := produce(ctx, t, c, topic, 3000, testcluster.ProduceOptions{Partition: -1, Compression: codec, ValueSize: 900})
			cfg := testConfig(t)
			cfg.RecycleMessages = true
			// Several chunks per response (a zstd batch's window, its whole
			// content for the producer's single-segment frames of up to
			// 600 KB here, must fit).
			cfg.MaxDecodedBytes = 1 << 20
			m := newManager(t, cfg, clusterBrokers(c))
			streams := []*streamcore.KafkaStream{newStream(t, 2), newStream(t, 2), newStream(t, 2)}
			infos := infosFor(topic, 3, streams, 0, 512<<10)
			if err := m.StartConnections(ctx, infos); err != nil {
				t.Fatal(err)
			}
			defer m.StopConnections()
			got := make(chan []*streamcore.Message, len(streams))
			errs := make(chan error, len(streams))
			for _, s := range streams {
				go func() {
					var out []*streamcore.Message
					for {
						msg, err := s.Next(ctx)
						if errors.Is(err, streamcore.ErrConsumerTimeout) {
							continue
						}
						if err != nil {
							errs <- err
							got <- out
							return
						}
						if _, err := testcluster.ParseSeq(msg.Value); err != nil {
							errs <- fmt.Errorf("%s-%d@%d: %v (value %.20q)", msg.Topic, msg.Partition, msg.Offset, err, msg.Value)
						}
						out = append(out, msg.Clone())
						if len(out) >= 1000 {
							got <- out
							return
						}
					}
				}()
			}
			var msgs []*streamcore.Message
			for range streams {
				msgs = append(msgs, <-got...)
			}
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			checkExactlyOnce(t, msgs, produced)
		})
	}
}

// TestCorruptWrapperReleasesPayload: with recycling, a compressed message
// set (format v1) whose inner messages turn out malformed gives its
// decompressed payload back to the free list. The entry held it from
// decompression on, but took it over only after those checks, so an
// error between left it held for good (review, minor).
func TestCorruptWrapperReleasesPayload(t *testing.T) {
	inner := append(rawMessage(0, 1, 0, nil, []byte("a")), rawBatch(1, 0, 0, 1, rawRecords([]int64{0}, func(int) []byte { return []byte("b") }))...)
	for _, c := range []struct {
		name  string
		inner []byte
	}{
		{"record batch inside a message set", inner},
		{"malformed inner message set", append(rawMessage(0, 1, 0, nil, []byte("a")), 0, 0, 0)},
		{"wrapper offset below its last inner offset", append(rawMessage(0, 1, 0, nil, []byte("a")), rawMessage(9, 1, 0, nil, []byte("b"))...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			blk := &respBlock{records: rawMessage(5, 1, codecGzip, nil, compress(sarama.CompressionGZIP, c.inner)), hwm: 6}
			p := &pools{}
			p.noteLimit(decodeLimitForTest(1 << 20))
			bd := newBlockDecoder("t", 0, 0, 1<<20, decodeOpts{checkCRCs: true, recycle: true}, blk, p)
			d := bd.chunk()
			bd.close()
			if d.lease != nil {
				d.lease.release()
			}
			if !errors.Is(d.corrupt, errCorrupt) {
				t.Fatalf("corrupt %v", d.corrupt)
			}
			p.mu.Lock()
			free := len(p.bufs)
			p.mu.Unlock()
			if free != 1 {
				t.Errorf("%d payload buffers back in the free list, want 1", free)
			}
		})
	}
}
