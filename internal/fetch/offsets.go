package fetch

import (
	"errors"
	"fmt"

	"github.com/IBM/sarama"
)

// resolveUnset gives the partitions of parts that have no offset yet
// (negative fetched offset: nothing committed) one by AutoOffsetReset, as
// Kafka's AbstractFetcherThread.addPartitions does, and returns the
// partitions ready to fetch. parts is reused.
func (f *fetcher) resolveUnset(parts []*partState) []*partState {
	var unset []reqPart
	for _, ps := range parts {
		if off := ps.pti.FetchedOffset(); off < 0 {
			unset = append(unset, reqPart{ps: ps, offset: off})
		}
	}
	if len(unset) == 0 {
		return parts
	}
	if !f.resetOffsets(unset) {
		return nil
	}
	ready := parts[:0]
	for _, ps := range parts {
		if ps.pti.FetchedOffset() >= 0 && f.owns(ps) {
			ready = append(ready, ps)
		}
	}
	return ready
}

// resetOffsets moves each partition of reqs to the earliest or latest
// offset of its log, per AutoOffsetReset, by asking the leader
// (ListOffsets), and sets both its fetched and its consumed offset there
// (Kafka's handleOffsetOutOfRange). A partition whose fetched offset has
// changed since reqs was made is left alone. A partition the leader cannot
// answer for goes back to the leader finder. It reports false if the
// request failed, in which case the fetcher has handed everything back.
func (f *fetcher) resetOffsets(reqs []reqPart) bool {
	offsets, errs, err := f.listOffsets(reqs)
	if err != nil {
		f.failed(fmt.Errorf("list offsets: %w", err))
		return false
	}
	reset := f.run.m.cfg.AutoOffsetReset
	for _, rp := range reqs {
		ps := rp.ps
		if !f.owns(ps) || ps.pti.FetchedOffset() != rp.offset {
			continue
		}
		if err := errs[rp]; err != nil {
			f.log.Info("cannot reset offset, partition moves back to the leader finder", "partition", ps.tp.String(), "error", err)
			f.handBack(ps)
			continue
		}
		off := offsets[rp]
		if !ps.pti.ResetFetchOffsetFrom(rp.offset, off) {
			continue // moved back by its stream meanwhile
		}
		ps.pti.ResetConsumeOffset(off)
		f.log.Info("reset offset", "partition", ps.tp.String(), "from", rp.offset, "to", off, "auto_offset_reset", reset)
	}
	return true
}

// listOffsets asks the leader for the AutoOffsetReset offset of each
// partition of reqs. err is a failure of the whole request; errs holds
// per-partition failures.
func (f *fetcher) listOffsets(reqs []reqPart) (offsets map[reqPart]int64, errs map[reqPart]error, err error) {
	// Sarama and the fetch requests take turns on the connection: let the
	// request sent ahead, if any, finish first (its response is kept).
	f.settleAhead()
	cfg := &f.run.m.cfg
	// Blocks are added at version 0 so that they carry maxNumOffsets = 1,
	// which sarama keeps only then; the version is raised afterwards and
	// sarama lowers it again to what the broker speaks (v0 before 0.10.1,
	// which would otherwise be asked for zero offsets).
	req := &sarama.OffsetRequest{Version: 0}
	for _, rp := range reqs {
		req.AddBlock(rp.ps.tp.Topic, rp.ps.tp.Partition, cfg.resetTime(), 1)
	}
	req.Version = sarama.NewOffsetRequest(f.run.m.sarama.Version).Version
	if cfg.readCommitted() {
		// "largest" is then the last stable offset.
		req.IsolationLevel = sarama.ReadCommitted
	}
	resp, err := f.broker.GetAvailableOffsets(req)
	if err != nil {
		return nil, nil, err
	}
	offsets = make(map[reqPart]int64, len(reqs))
	errs = map[reqPart]error{}
	for _, rp := range reqs {
		b := resp.GetBlock(rp.ps.tp.Topic, rp.ps.tp.Partition)
		off := int64(-1)
		switch {
		case b == nil:
			errs[rp] = sarama.ErrIncompleteResponse
			continue
		case !errors.Is(b.Err, sarama.ErrNoError):
			errs[rp] = b.Err
			continue
		case len(b.Offsets) > 0:
			off = b.Offsets[0]
		case resp.Version >= 1:
			off = b.Offset
		}
		if off < 0 {
			errs[rp] = fmt.Errorf("list offsets: no valid offset in the response (%d)", off)
			continue
		}
		offsets[rp] = off
	}
	return offsets, errs, nil
}
