package fetch

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// readmeR is R as the README's memory bound states it, for P partitions of
// fetch size S:
//
//	R = min(P × S + max(S, 1 MiB + 12 B) + P × 400 B
//	        (+ 28 % of P × S + P × 1.1 KiB with read_committed), 100 MiB)
func readmeR(p int, s int64, readCommitted bool) int64 {
	r := int64(p)*s + max(s, 1<<20+12) + int64(p)*400
	if readCommitted {
		r += int64(p)*s*28/100 + int64(p)*1126
	}
	return min(r, 100<<20)
}

// limitFor returns responseLimit for a request of fetch version v for the
// partitions of topics (one name per partition, repeated for several
// partitions of a topic) of fetch size size each.
func limitFor(v int16, readCommitted bool, size int32, topics ...string) int64 {
	var parts []reqPart
	for i, topic := range topics {
		pti := streamcore.NewPartitionTopicInfo(topic, int32(i), nil, 0, 0, size)
		parts = append(parts, reqPart{ps: &partState{tp: zkutil.TopicPartition{Topic: topic, Partition: int32(i)}, pti: pti}})
	}
	req := &fetchRequest{maxBytes: minRequestMaxBytes, readCommitted: readCommitted, parts: parts}
	for _, rp := range parts {
		req.maxBytes = max(req.maxBytes, rp.ps.pti.FetchSize)
	}
	w := &wireConn{version: v}
	w.encode(nil, req)
	return w.responseLimit(req)
}

// TestResponseLimitIsTheREADMEsR: the largest response the fetcher reads
// is at most the R of the README's memory bound, for any number of
// partitions, fetch size, topic names, fetch version and isolation level;
// with the defaults and 12 partitions (the README's example) it is 13 MiB.
func TestResponseLimitIsTheREADMEsR(t *testing.T) {
	t.Parallel()
	topics := func(p int, name func(int) string) []string {
		out := make([]string, p)
		for i := range out {
			out[i] = name(i)
		}
		return out
	}
	one := func(int) string { return "events" }
	example := limitFor(12, false, 1<<20, topics(12, one)...)
	if example < 13<<20 || example > 13<<20+4<<10 {
		t.Errorf("12 partitions of 1 MiB: R %d, want 13 MiB", example)
	}
	t.Logf("12 partitions of 1 MiB: R = %d bytes; with read_committed %d", example, limitFor(12, true, 1<<20, topics(12, one)...))
	rng := rand.New(rand.NewPCG(29, 3))
	longest := func(i int) string { return fmt.Sprintf("%d%s", i, strings.Repeat("x", 240)) }
	for range 2000 {
		p := 1 + rng.IntN(400)
		s := int32(1 + rng.IntN(16<<20))
		if rng.IntN(2) == 0 {
			s = int32(1 + rng.IntN(64<<10))
		}
		rc := rng.IntN(2) == 0
		v := []int16{0, 2, 3, 4, 7, 11, 12}[rng.IntN(7)]
		name := one
		if rng.IntN(2) == 0 {
			name = longest // a topic of its own per partition, of 243 bytes
		}
		if got, want := limitFor(v, rc, s, topics(p, name)...), readmeR(p, int64(s), rc); got > want {
			t.Fatalf("v%d, %d partitions of %d bytes, read_committed %v: R %d, more than the README's %d", v, p, s, rc, got, want)
		}
	}
}

// TestParsedResponsePerPartition: parsing a response allocates a block
// per partition of the request (respBlock), whatever the response holds,
// in the request's order or not; and a connection keeps, once a response
// departs from the request's order, maps of the request's partitions. A
// block holds what the parse found of its entry headers (respBlock.scan),
// so that the decoder does not walk them again. A fetcher holds the blocks of two
// responses at most (the one it processes and the one sent ahead): the
// README counts 400 bytes per partition of a fetcher for all that.
func TestParsedResponsePerPartition(t *testing.T) {
	const p = 1000
	parts := [][]testPartition{make([]testPartition, p/2), make([]testPartition, p/2)}
	inOrder := encodeResponse(12, parts)
	// t1's partitions first: the topics' names swapped.
	swapped := bytes.Replace(bytes.Replace(bytes.Clone(inOrder), []byte("t0"), []byte("tX"), 1), []byte("t1"), []byte("t0"), 1)
	swapped = bytes.Replace(swapped, []byte("tX"), []byte("t1"), 1)
	for _, c := range []struct {
		name string
		body []byte
	}{{"request order", inOrder}, {"another order", swapped}} {
		w := &wireConn{version: 12}
		reqs := expectTopics(w, 1<<20, p/2, p/2)
		var (
			resp *fetchResponse
			err  error
		)
		buf := bytes.Clone(c.body)
		kept := allocated(func() { resp, err = w.parse(buf) })
		if err != nil {
			t.Fatal(err)
		}
		for i, blk := range resp.blocks {
			if blk.missing || blk.topic != reqs[i].ps.tp.Topic || blk.partition != reqs[i].ps.tp.Partition {
				t.Fatalf("%s: block %d is %+v", c.name, i, blk)
			}
		}
		// The next request: the maps are made again, in place.
		buf = bytes.Clone(c.body)
		w.ix.mapped = false
		each := allocated(func() { resp, err = w.parse(buf) })
		perResp, perConn := each/p, (kept-each)/p
		t.Logf("%s: %d partitions: %d bytes per partition per response, %d kept by the connection", c.name, p, perResp, perConn)
		if perResp > 160 || 2*perResp+perConn > 400 {
			t.Errorf("%s: %d bytes per partition per response, %d per connection: more than the README's 400 for a fetcher", c.name, perResp, perConn)
		}
		runtime.KeepAlive(resp)
	}
}
