package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/IBM/sarama"
	"github.com/zkconsumer/zkconsumer/internal/streamcore"
)

// The fetcher decodes each partition's records by itself, so a batch
// whose checksum does not match, or whose payload does not decompress,
// stops only its own partition (see fetcher.deliver). What is left here is
// a response whose structure cannot be parsed at all (errMalformed). The
// fetcher then fetches the partitions one by one: those that parse carry
// on, and one that does not is asked for with smaller and smaller limits
// (salvage), then reports ErrCorruptMessage on its stream and stops there
// (Kafka's iterator failed on such a message for good).

// undecodable reports whether err, returned by a fetch, means that the
// response arrived but could not be decoded: a malformed or short
// structure (and, from sarama's decoder, a checksum mismatch or a payload
// that does not decompress). Failures of the connection and of the request
// itself are not.
//
// A truncated gzip payload surfaces as io.ErrUnexpectedEOF, which a broken
// connection also yields; it is taken for the latter.
func undecodable(err error) bool {
	var (
		pde  sarama.PacketDecodingError
		kerr sarama.KError
		pee  sarama.PacketEncodingError
		cfg  sarama.ConfigurationError
		nerr net.Error
		serr syscall.Errno
	)
	switch {
	case err == nil:
		return false
	case errors.Is(err, errMalformed), errors.As(err, &pde), errors.Is(err, sarama.ErrInsufficientData), errors.Is(err, sarama.ErrDecompressedBatchTooLarge):
		return true
	case errors.As(err, &kerr), errors.As(err, &pee), errors.As(err, &cfg), errors.As(err, &nerr), errors.As(err, &serr),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, sarama.ErrNotConnected), errors.Is(err, sarama.ErrUnsupportedVersion),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	}
	// What is left comes from the compression libraries.
	return true
}

// isolate handles a response to a request for parts that could not be
// decoded, or was larger than the request allows (cause): it fetches each
// partition alone, on a fresh connection (the old one may be out of step),
// and processes what decodes. A partition whose response alone does not
// decode goes to salvage; one whose response alone is too large has a
// first batch larger than its fetch size allows, and stops there.
func (f *fetcher) isolate(parts []*partState, cause error) {
	f.log.Warn("fetch response cannot be used, fetching its partitions one by one", "partitions", len(parts), "error", cause)
	f.disconnect()
	if !f.connect() {
		return
	}
	for _, ps := range parts {
		if f.ctx.Err() != nil || f.broker == nil {
			return
		}
		if !f.owns(ps) || ps.pti.Revoked() {
			continue
		}
		rp := reqPart{ps: ps, offset: ps.pti.FetchedOffset()}
		if rp.offset < 0 {
			continue
		}
		resp, err := f.probe(rp, ps.pti.FetchSize)
		switch {
		case err == nil:
			f.doneWith(resp, f.process(resp, []reqPart{rp}))
		case errors.Is(err, errResponseTooLarge):
			// Alone, the partition's response is larger than its fetch
			// size allows: its first batch is.
			f.tooLarge(ps, rp.offset)
		case undecodable(err):
			f.salvage(rp, err)
		default:
			f.failed(err)
			return
		}
	}
}

// salvage handles a partition whose response, fetched alone at rp, cannot
// be parsed (cause). It asks for it again with half the fetch size, then
// a quarter and so on: from fetch v3 on the broker sends at least the
// first batch whole, and within the limit only the batches before the bad
// one and the start of the next (which is left undecoded). The first
// response that decodes is processed, which delivers those batches; the
// next round finds the bad batch again, closer. When even the first batch
// at rp does not decode (or what decodes does not move the partition),
// the partition reports ErrCorruptMessage on its stream and stops at rp.
func (f *fetcher) salvage(rp reqPart, cause error) {
	ps := rp.ps
	for size := ps.pti.FetchSize / 2; size > 0; size /= 2 {
		if f.ctx.Err() != nil {
			return
		}
		resp, err := f.probe(rp, size)
		if errors.Is(err, errResponseTooLarge) {
			f.tooLarge(ps, rp.offset)
			return
		}
		if undecodable(err) {
			cause = err
			continue
		}
		if err != nil {
			f.failed(err)
			return
		}
		if block := resp.block(ps.tp.Topic, ps.tp.Partition); block != nil && block.err == sarama.ErrNoError {
			if _, ok := predictNext(rp.offset, ps.pti.FetchSize, block); !ok {
				// Only the start of the first batch (fetch v0-v2): what
				// follows it cannot be reached.
				break
			}
		}
		f.doneWith(resp, f.process(resp, []reqPart{rp}))
		if f.ctx.Err() == nil && f.owns(ps) && ps.pti.FetchedOffset() == rp.offset {
			// Nothing came of it: no message, no error, no move.
			break
		}
		return
	}
	f.corrupt(ps, rp.offset, cause)
}

// probe fetches one partition alone at rp with a per-partition limit of
// maxBytes, without waiting for data to arrive.
func (f *fetcher) probe(rp reqPart, maxBytes int32) (*fetchResponse, error) {
	req := f.request([]reqPart{rp})
	req.minBytes, req.maxWait = 0, 0
	req.sizes = []int32{maxBytes}
	res := f.reader.exchange(req)
	resp, err := res.resp, res.err
	if err == nil && resp.errCode != 0 {
		f.doneWith(resp, false)
		err = sarama.KError(resp.errCode)
	}
	return resp, err
}

// corrupt reports records at offset that cannot be decoded on the
// partition's stream and stops fetching the partition, whose fetched
// offset stays at offset.
func (f *fetcher) corrupt(ps *partState, offset int64, cause error) {
	err := fmt.Errorf("the records of %s from offset %d cannot be decoded: %w (%w)", ps.tp, offset, streamcore.ErrCorruptMessage, cause)
	f.log.Warn("fetched records cannot be decoded, partition stopped", "partition", ps.tp.String(), "offset", offset, "error", cause)
	f.stopAt(ps, offset, err)
}
