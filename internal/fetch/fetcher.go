package fetch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"
	"github.com/zkconsumer/zkconsumer/internal/backoff"
	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// minRequestMaxBytes is the request-level limit of a fetch (Kafka 1.1.1
// sent Int.MaxValue): large enough never to bind before the per-partition
// limits of a typical fetcher, small enough to stay under
// sarama.MaxResponseSize (100 MiB). A partition whose fetch size is larger
// raises it. Brokers cap it further with their own fetch.max.bytes.
const minRequestMaxBytes = 50 << 20

// fetcherKey names a fetcher: one per broker and fetcher id.
type fetcherKey struct {
	broker int32
	id     int
}

// partState is a partition as one fetcher serves it.
type partState struct {
	tp    zkutil.TopicPartition
	pti   *streamcore.PartitionTopicInfo
	epoch int32 // leader epoch for fencing (fetch v9+), -1 if unknown
}

// reqPart is a partition in one fetch request and the offset asked for.
type reqPart struct {
	ps     *partState
	offset int64
}

// fetcher is Kafka's ConsumerFetcherThread: one goroutine with its own
// connection to a broker, fetching all the partitions the leader finder
// gave it in one request at a time and enqueueing each partition's
// messages on its stream. A full queue blocks the whole fetcher
// (backpressure) until the reader makes room or the partition is paused
// (streamcore.PartitionTopicInfo.Pause), which releases it; paused partitions
// are left out of its requests. Partitions it cannot serve go back to the
// leader finder.
//
// Unlike Kafka's thread, it keeps one request in flight while it decodes
// and enqueues a response: as soon as response N arrives, request N+1
// goes out (see sendAhead) with the offsets response N will most likely
// leave each partition at, and the connection's reader (connReader)
// receives it, verifying its checksums as it arrives. The network wait
// thus overlaps the work on response N. A prediction that turns out wrong
// costs one round and nothing else: process skips every partition whose
// fetched offset is not the one its request asked for. There is never
// more than one request ahead, so a fetcher holds at most one response
// more than a sequential one (at most what its request allows, see
// responseLimit). A fetcher blocked on a full queue sends nothing more
// until it is unblocked. Responses are read into buffers of the fetcher's free lists
// (pools), and a block is decoded in as many chunks as the decoding limit
// takes, all from the same response.
type fetcher struct {
	run  *run
	key  fetcherKey
	addr string
	log  *slog.Logger

	ctx    context.Context
	cancel context.CancelCauseFunc
	done   chan struct{}
	wake   chan struct{} // cap 1: partitions were added

	mu    sync.Mutex
	parts map[zkutil.TopicPartition]*partState

	// Owned by the loop goroutine.
	broker    *sarama.Broker
	wire      *wireConn          // broker's connection, for fetch requests
	reader    *connReader        // the goroutine that sends them and reads the responses
	closeConn context.CancelFunc // closes broker's connection at once
	ahead     *pendingFetch      // the request sent ahead, if any (see sendAhead)
	failing   bool               // the last request or connection attempt failed
	scratch   []*partState
	predicted map[*partState]int64 // scratch of sendAhead
	// pools are the free lists of the fetcher's responses and, with
	// Config.RecycleMessages, of what its chunks hold (see pool.go).
	pools *pools

	// read counts the bytes read from the fetcher's connections; only
	// with Config.OnFetch (see roundTrip).
	read atomic.Int64
}

// pendingFetch is a fetch request for the connection's reader: reqs and
// the request req built from them. res is set when done is closed.
type pendingFetch struct {
	reqs []reqPart
	req  *fetchRequest
	done chan struct{}
	res  timedFetch
}

func newFetcher(r *run, key fetcherKey, addr string) *fetcher {
	ctx, cancel := context.WithCancelCause(r.ctx)
	return &fetcher{
		run:    r,
		key:    key,
		addr:   addr,
		log:    r.m.log.With("broker", key.broker, "fetcher", key.id, "addr", addr),
		ctx:    ctx,
		cancel: cancel,
		done:   make(chan struct{}),
		wake:   make(chan struct{}, 1),
		parts:  map[zkutil.TopicPartition]*partState{},
		pools:  &pools{},
	}
}

// add gives the fetcher partitions to serve.
func (f *fetcher) add(parts []*partState) {
	f.mu.Lock()
	for _, ps := range parts {
		f.parts[ps.tp] = ps
	}
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// idle reports whether the fetcher serves no partition.
func (f *fetcher) idle() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.parts) == 0
}

// stop ends the fetcher's goroutine, interrupting a blocked request or
// Enqueue, and waits for it.
func (f *fetcher) stop() {
	f.cancel(errStopped)
	<-f.done
}

// takeAll removes and returns the partitions of a stopped fetcher.
func (f *fetcher) takeAll() []zkutil.TopicPartition {
	f.mu.Lock()
	defer f.mu.Unlock()
	tps := make([]zkutil.TopicPartition, 0, len(f.parts))
	for tp := range f.parts {
		tps = append(tps, tp)
	}
	clear(f.parts)
	return tps
}

// loop is the fetcher's goroutine (AbstractFetcherThread.doWork).
func (f *fetcher) loop() {
	defer close(f.done)
	defer f.disconnect()
	for f.ctx.Err() == nil {
		parts, paused := f.snapshot()
		if len(parts) == 0 {
			f.dropAhead()
			// A resumed partition, or a stopped one moved back, does not
			// wake the fetcher: with such partitions, look again after a
			// backoff.
			var recheck *time.Timer
			var recheckC <-chan time.Time
			if paused {
				recheck = time.NewTimer(min(max(f.run.m.cfg.RefreshLeaderBackoff, 10*time.Millisecond), time.Second))
				recheckC = recheck.C
			}
			select {
			case <-f.ctx.Done():
			case <-f.wake:
			case <-recheckC:
			}
			if recheck != nil {
				recheck.Stop()
			}
			continue
		}
		if !f.connect() {
			continue
		}
		if parts = f.resolveUnset(parts); len(parts) == 0 {
			continue
		}
		f.fetch(parts)
	}
}

// snapshot returns the partitions to fetch, dropping revoked ones and
// leaving paused ones and stopped ones (see stopAt) out: they stay the
// fetcher's, and are fetched again from their fetched offset once resumed,
// or moved back; paused reports whether there were any. The slice is
// reused by the next call.
func (f *fetcher) snapshot() (out []*partState, paused bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out = f.scratch[:0]
	for tp, ps := range f.parts {
		if ps.pti.Revoked() {
			delete(f.parts, tp)
			continue
		}
		if ps.pti.Paused() || ps.pti.Stopped() {
			paused = true
			continue
		}
		out = append(out, ps)
	}
	f.scratch = out
	return out, paused
}

// owns reports whether ps is still one of the fetcher's partitions.
func (f *fetcher) owns(ps *partState) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.parts[ps.tp] == ps
}

// drop stops serving ps without handing it back: it was revoked, its queue
// closed, or it cannot make progress (its error went to its stream).
func (f *fetcher) drop(ps *partState) {
	f.mu.Lock()
	if f.parts[ps.tp] == ps {
		delete(f.parts, ps.tp)
	}
	f.mu.Unlock()
}

// handBack stops serving parts and gives them back to the leader finder.
func (f *fetcher) handBack(parts ...*partState) {
	tps := make([]zkutil.TopicPartition, 0, len(parts))
	f.mu.Lock()
	for _, ps := range parts {
		if f.parts[ps.tp] == ps {
			delete(f.parts, ps.tp)
			tps = append(tps, ps.tp)
		}
	}
	f.mu.Unlock()
	f.run.partitionsWithError(tps)
}

// connect opens the connection if there is none. On failure it hands every
// partition back and backs off.
func (f *fetcher) connect() bool {
	if f.broker != nil {
		return true
	}
	// The connection has a context of its own, so that disconnect can
	// interrupt the request sent ahead (sarama's Close would wait for it).
	ctx, cancel := context.WithCancel(f.ctx)
	var read *atomic.Int64
	if f.run.m.cfg.OnFetch != nil {
		read = &f.read
	}
	b, conn, err := openBrokerConn(ctx, f.addr, f.run.m.sarama, f.run.m.cfg.SocketReceiveBufferBytes, read)
	if err != nil {
		cancel()
		f.failed(err)
		return false
	}
	version, err := negotiateFetch(b, f.run.fetchVersion)
	if err != nil {
		_ = b.Close()
		cancel()
		f.failed(err)
		return false
	}
	sc := f.run.m.sarama
	f.broker, f.closeConn = b, cancel
	f.wire = &wireConn{conn: conn, clientID: sc.ClientID, version: version, checkCRCs: f.run.decodeOpts.checkCRCs,
		readTimeout: sc.Net.ReadTimeout, writeTimeout: sc.Net.WriteTimeout}
	f.reader = f.startReader(ctx, f.wire)
	return true
}

// disconnect closes the connection, if any, interrupting the request sent
// ahead, and waits for that request's goroutine.
func (f *fetcher) disconnect() {
	if f.broker != nil {
		f.closeConn()
		f.dropAhead()
		<-f.reader.done
		_ = f.broker.Close()
		f.broker, f.wire, f.reader, f.closeConn = nil, nil, nil, nil
	}
}

// settleAhead waits until the request sent ahead, if any, has its
// response, which stays for fetch to take: the connection is then free for
// a request of sarama's (the fetcher's own requests and sarama's must not
// overlap on one connection; see wire.go).
func (f *fetcher) settleAhead() {
	if a := f.ahead; a != nil {
		<-a.done
	}
}

// dropAhead waits for the request sent ahead, if any, and discards its
// response.
func (f *fetcher) dropAhead() {
	if a := f.ahead; a != nil {
		f.ahead = nil
		<-a.done
		f.doneWith(a.res.resp, false)
	}
}

// failed handles a failed request or connection: the connection is closed,
// every partition goes back to the leader finder (its leader may have
// moved) and the fetcher pauses for RefreshLeaderBackoff.
func (f *fetcher) failed(err error) {
	f.disconnect()
	if f.ctx.Err() != nil {
		return
	}
	// A dead leader fails every round until the controller moves its
	// partitions: warn and report once, then only at debug level.
	if !f.failing {
		f.failing = true
		f.log.Warn("fetch failed, handing partitions back to the leader finder", "error", err)
		f.run.report(fmt.Errorf("broker %d at %s: %w", f.key.broker, f.addr, err))
	} else {
		f.log.Debug("fetch failed again", "error", err)
	}
	f.mu.Lock()
	parts := make([]*partState, 0, len(f.parts))
	for _, ps := range f.parts {
		parts = append(parts, ps)
	}
	f.mu.Unlock()
	f.handBack(parts...)
	backoff.Sleep(f.ctx, f.run.m.cfg.RefreshLeaderBackoff)
}

// fetch gets the response to one fetch request, the one sent ahead if
// there is one, else a request for parts at their fetched offsets. It then
// sends the next request ahead and processes the response.
//
// The request sent ahead was built from an earlier snapshot of the
// partitions: partitions added since are fetched from the next request
// on, and those removed since are skipped by process.
func (f *fetcher) fetch(parts []*partState) {
	var (
		reqs []reqPart
		res  timedFetch
	)
	if a := f.ahead; a != nil {
		f.ahead = nil
		<-a.done
		reqs, res = a.reqs, a.res
	} else {
		reqs = make([]reqPart, 0, len(parts))
		for _, ps := range parts {
			reqs = append(reqs, reqPart{ps: ps, offset: ps.pti.FetchedOffset()})
		}
		res = f.reader.exchange(f.request(reqs))
	}
	resp, err := res.resp, res.err
	if err == nil && resp.errCode != 0 {
		err = sarama.KError(resp.errCode)
	}
	f.observe(res, err)
	if undecodable(err) || errors.Is(err, errResponseTooLarge) {
		// A response larger than its request allows is a batch larger
		// than the limit a broker sent whole (KIP-74), or a broker
		// that does not keep to the request: each partition alone
		// tells which.
		f.isolate(parts, err)
		return
	}
	if err != nil {
		f.failed(err)
		return
	}
	f.failing = false
	f.sendAhead(parts, reqs, resp)
	f.doneWith(resp, f.process(resp, reqs))
}

// doneWith lets go of a processed response: its buffer goes back to the
// free list once no chunk holds it any more. Without recycling, a response
// a queued message aliases is left to the garbage collector instead: the
// application may keep the message.
func (f *fetcher) doneWith(resp *fetchResponse, aliased bool) {
	if resp == nil || resp.pb == nil {
		return
	}
	if f.run.decodeOpts.recycle || !aliased {
		resp.pb.release()
	}
	resp.pb = nil
}

// sendAhead starts the request that will follow resp, the response to
// reqs, before resp is processed: it asks for each partition of parts at
// the offset processing resp should leave it at (predictNext), or at its
// fetched offset if resp does not cover it or will be skipped for it (the
// request for resp was itself sent ahead at an offset the partition did not
// reach). Whatever goes differently (a partition revoked, moved or reset
// meanwhile) only makes process skip that partition in the response, and
// the request after it asks for the partition where it is.
//
// It sends nothing when processing resp will itself need the connection
// (an offset out of range to reset, a truncated batch to fetch alone), so
// that those rare paths run as they would without it, nor when the
// fetcher is stopping. Partitions whose fetch failed are left out: they go
// back to the leader finder.
func (f *fetcher) sendAhead(parts []*partState, reqs []reqPart, resp *fetchResponse) {
	if f.ctx.Err() != nil {
		return
	}
	if f.predicted == nil {
		f.predicted = make(map[*partState]int64, len(reqs))
	}
	pred := f.predicted
	defer clear(pred)
	for i, rp := range reqs {
		// The requests before resp have been processed: a partition they
		// left elsewhere than resp's request assumed skips resp.
		if cur := rp.ps.pti.FetchedOffset(); cur != rp.offset {
			pred[rp.ps] = cur
			continue
		}
		next := rp.offset
		if block := resp.blockFor(i, rp); block != nil {
			switch block.err {
			case sarama.ErrNoError:
				var ok bool
				if next, ok = predictNext(rp.offset, rp.ps.pti.FetchSize, block); !ok {
					return
				}
			case sarama.ErrOffsetOutOfRange:
				return
			default:
				next = -1
			}
		}
		pred[rp.ps] = next
	}
	next := make([]reqPart, 0, len(parts))
	for _, ps := range parts {
		off, ok := pred[ps]
		if !ok {
			off = ps.pti.FetchedOffset()
		}
		if off >= 0 {
			next = append(next, reqPart{ps: ps, offset: off})
		}
	}
	if len(next) == 0 {
		return
	}
	a := &pendingFetch{reqs: next, req: f.request(next), done: make(chan struct{})}
	f.reader.submit(a)
	f.ahead = a
}

// request builds the fetch request for reqs.
func (f *fetcher) request(reqs []reqPart) *fetchRequest {
	cfg := &f.run.m.cfg
	req := &fetchRequest{
		maxWait:       int32(cfg.FetchWaitMax / time.Millisecond),
		minBytes:      cfg.FetchMinBytes,
		maxBytes:      minRequestMaxBytes,
		readCommitted: cfg.readCommitted(),
		parts:         reqs,
	}
	for _, rp := range reqs {
		req.maxBytes = max(req.maxBytes, rp.ps.pti.FetchSize)
	}
	return req
}

// process handles the response to a request for reqs. It reports whether
// a queued message may alias the response's buffer (see doneWith).
func (f *fetcher) process(resp *fetchResponse, reqs []reqPart) (aliased bool) {
	var outOfRange, alone []reqPart
	for i, rp := range reqs {
		if f.ctx.Err() != nil {
			return true
		}
		ps := rp.ps
		if !f.owns(ps) {
			continue
		}
		if ps.pti.Revoked() {
			f.drop(ps)
			continue
		}
		block := resp.blockFor(i, rp)
		if block == nil {
			continue
		}
		if block.err == sarama.ErrNoError {
			ps.pti.SetHighWatermark(block.hwm)
		}
		// Kafka's check: the partition has not moved since the request.
		if ps.pti.FetchedOffset() != rp.offset {
			continue
		}
		switch block.err {
		case sarama.ErrNoError:
			retry, al := f.deliver(rp, block, resp.pb, len(reqs) == 1)
			if retry {
				alone = append(alone, rp)
			}
			aliased = aliased || al
		case sarama.ErrOffsetOutOfRange:
			outOfRange = append(outOfRange, rp)
		default:
			f.partitionError(ps, block.err)
		}
	}
	if len(outOfRange) > 0 {
		f.resetOffsets(outOfRange)
	}
	for _, rp := range alone {
		f.fetchAlone(rp)
	}
	return aliased
}

// deliver decodes and enqueues the messages of one partition's block, in
// as many chunks as the decoding limit (Config.MaxDecodedBytes) takes. It
// reports retryAlone when the block held only part of a batch and the
// partition must be fetched alone to tell a batch larger than its fetch
// size from a request whose total size ran out (see decoded.truncated),
// and aliased when the messages it queued alias the response buffer.
//
// A batch that cannot be decoded (a checksum mismatch, a payload that does
// not decompress, a malformed record, offsets that do not fit the fetch)
// ends the block: the messages before it are delivered and the partition
// moves to it; once it is the first thing fetched, the stream gets
// ErrCorruptMessage and the partition stops there. A record that alone
// needs more than the limit stops the partition with ErrDecodedTooLarge.
func (f *fetcher) deliver(rp reqPart, block *respBlock, respBuf *pbuf, alone bool) (retryAlone, aliased bool) {
	ps := rp.ps
	opts := f.run.decodeOpts
	bd := newBlockDecoder(ps.tp.Topic, ps.tp.Partition, rp.offset, ps.pti.FetchSize, opts, block, f.pools)
	defer bd.close()
	if opts.recycle {
		f.pools.noteLimit(bd.maxChunk)
	}
	at := rp.offset
	for {
		d := bd.chunk()
		switch {
		case d.truncated && !alone:
			return true, aliased
		case d.truncated:
			f.tooLarge(ps, at)
			return false, aliased
		case d.oversize:
			// The message may lie past where the partition is (compacted
			// gaps); move there first so that the partition stops
			// exactly at it.
			if d.next == at || ps.pti.EnqueueFrom(f.ctx, at, nil, d.next, nil) == nil {
				f.tooLarge(ps, d.next)
			}
			return false, aliased
		case d.corrupt != nil && len(d.msgs) == 0 && d.next == at:
			f.corrupt(ps, at, d.corrupt)
			return false, aliased
		case d.overLimit != nil && len(d.msgs) == 0 && d.next == at:
			f.decodedTooLarge(ps, at, d.overLimit)
			return false, aliased
		case len(d.msgs) == 0 && d.next == at:
			// Nothing, or nothing that moves (a chunk that could not
			// make progress is not retried here: the next fetch does).
			return false, aliased
		}
		var release func()
		if l := d.lease; l != nil {
			if d.aliased {
				l.holdResponse(respBuf)
			}
			release = l.release
		}
		aliased = aliased || d.aliased
		err := ps.pti.EnqueueFrom(f.ctx, at, d.msgs, d.next, release)
		if errors.Is(err, streamcore.ErrClosed) {
			f.drop(ps)
		}
		if err != nil || !d.capped || f.ctx.Err() != nil {
			return false, aliased
		}
		at = d.next
	}
}

// fetchAlone fetches one partition in a request of its own, after a
// response held only the start of its first batch. Apache Kafka sends that
// only on fetch v0-v2 (0.10.0 and older), whose per-partition limit is
// hard; from 0.10.1 on (KIP-74) it sends the first batch of the first
// partition with data whole whatever its size, and nothing at all for a
// later partition whose first batch does not fit. The lone request tells a
// batch larger than the fetch size from one cut by a request-level limit,
// which other broker implementations might apply.
func (f *fetcher) fetchAlone(rp reqPart) {
	if f.ctx.Err() != nil || !f.owns(rp.ps) || rp.ps.pti.FetchedOffset() != rp.offset {
		return
	}
	reqs := []reqPart{rp}
	res := f.reader.exchange(f.request(reqs))
	resp, err := res.resp, res.err
	if err == nil && resp.errCode != 0 {
		err = sarama.KError(resp.errCode)
	}
	f.observe(res, err)
	if errors.Is(err, errResponseTooLarge) {
		f.tooLarge(rp.ps, rp.offset)
		return
	}
	if undecodable(err) {
		f.salvage(rp, err)
		return
	}
	if err != nil {
		f.failed(err)
		return
	}
	f.doneWith(resp, f.process(resp, reqs))
}

// tooLarge reports a batch at offset that does not fit in the partition's
// fetch size on its stream and stops fetching the partition, whose fetched
// offset stays at offset: without a larger fetch size it cannot progress.
func (f *fetcher) tooLarge(ps *partState, offset int64) {
	err := fmt.Errorf("message at offset %d of %s does not fit in fetch size %d: %w", offset, ps.tp, ps.pti.FetchSize, streamcore.ErrMessageTooLarge)
	f.log.Warn("message larger than the fetch size, partition stopped", "partition", ps.tp.String(), "offset", offset, "fetch_size", ps.pti.FetchSize)
	f.stopAt(ps, offset, err)
}

// decodedTooLarge reports a record at offset that cannot be decoded within
// the partition's decoding limit (Config.MaxDecodedBytes) on its stream
// and stops fetching the partition, whose fetched offset stays at offset.
func (f *fetcher) decodedTooLarge(ps *partState, offset int64, cause error) {
	limit := decodeLimit(f.run.m.cfg.MaxDecodedBytes, ps.pti.FetchSize)
	err := fmt.Errorf("the record of %s at offset %d cannot be decoded within %d bytes, the decoding limit (by default %d × fetch.message.max.bytes, at least %d MiB): %w: %w (%v)",
		ps.tp, offset, limit, defaultMaxDecodedFactor, defaultMaxDecodedFactor, streamcore.ErrMessageTooLarge, ErrDecodedTooLarge, cause)
	f.log.Warn("record decodes beyond the limit, partition stopped", "partition", ps.tp.String(), "offset", offset, "limit", limit)
	f.stopAt(ps, offset, err)
}

// stopAt puts err, for a partition the fetcher cannot get past offset, its
// fetched offset, on the partition's stream. The partition stays the
// fetcher's, but it is not fetched again (snapshot leaves it out) unless
// its stream drops the error with the chunks before it, for a pause, and
// moves the fetched offset back (streamcore.PartitionTopicInfo.Stopped):
// then the error comes again after those chunks.
func (f *fetcher) stopAt(ps *partState, offset int64, err error) {
	if err := ps.pti.EnqueueStop(f.ctx, offset, err); errors.Is(err, streamcore.ErrClosed) {
		f.drop(ps)
	}
}

// partitionError hands a partition whose fetch failed back to the leader
// finder, as Kafka does for every error but OFFSET_OUT_OF_RANGE. The usual
// leadership changes are routine; anything else is also reported, paced
// (see refusals).
func (f *fetcher) partitionError(ps *partState, kerr sarama.KError) {
	switch kerr {
	case sarama.ErrNotLeaderForPartition, sarama.ErrLeaderNotAvailable, sarama.ErrUnknownTopicOrPartition,
		sarama.ErrFencedLeaderEpoch, sarama.ErrUnknownLeaderEpoch, sarama.ErrReplicaNotAvailable,
		sarama.ErrKafkaStorageError, sarama.ErrOffsetNotAvailable, sarama.ErrRequestTimedOut:
		f.log.Info("partition moves back to the leader finder", "partition", ps.tp.String(), "error", kerr)
	default:
		// Paced: a refusal that lasts comes back every RefreshLeaderBackoff.
		if !f.run.refusals.due(ps.tp, kerr, time.Now(), f.run.m.leaderlessRepeat) {
			f.log.Debug("fetch error again, partition moves back to the leader finder", "partition", ps.tp.String(), "error", kerr)
			break
		}
		f.log.Warn("fetch error, partition moves back to the leader finder", "partition", ps.tp.String(), "error", kerr)
		f.run.report(&streamcore.PartitionError{Topic: ps.tp.Topic, Partition: ps.tp.Partition,
			Err: fmt.Errorf("fetch from broker %d: %w", f.key.broker, kerr)})
	}
	f.handBack(ps)
}
