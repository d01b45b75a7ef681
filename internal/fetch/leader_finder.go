package fetch

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/IBM/sarama"
	"github.com/zkconsumer/zkconsumer/internal/backoff"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// leader is where a partition is to be fetched from.
type leader struct {
	id    int32
	addr  string
	epoch int32 // -1 when the metadata response does not carry it
}

// leaderFinder is the goroutine of Kafka's LeaderFinderThread. Whenever
// partitions are leaderless it asks a broker for their topics' metadata,
// hands the partitions that have a leader to the fetcher for
// (leader, fetcher id), shuts down fetchers left without partitions and
// pauses for RefreshLeaderBackoff.
func (r *run) leaderFinder() {
	defer close(r.finderDone)
	defer r.mdConn.close()
	for {
		pending := r.leaderless()
		if len(pending) == 0 {
			select {
			case <-r.ctx.Done():
				return
			case <-r.wake:
				continue
			}
		}
		r.findLeaders(pending)
		r.shutdownIdleFetchers()
		if !backoff.Sleep(r.ctx, r.m.cfg.RefreshLeaderBackoff) {
			return
		}
	}
}

// leaderless returns the partitions waiting for a leader, dropping revoked
// ones.
func (r *run) leaderless() []zkutil.TopicPartition {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]zkutil.TopicPartition, 0, len(r.noLeader))
	for tp := range r.noLeader {
		if r.partitions[tp].Revoked() {
			delete(r.noLeader, tp)
			continue
		}
		out = append(out, tp)
	}
	return out
}

// findLeaders resolves the leaders of pending and moves the partitions that
// have one to their fetchers.
func (r *run) findLeaders(pending []zkutil.TopicPartition) {
	brokers, err := r.m.brokers.Brokers(r.ctx)
	if err != nil {
		r.finderFailed(fmt.Errorf("list brokers: %w", err))
		return
	}
	if len(brokers) == 0 {
		r.finderFailed(fmt.Errorf("%w: the broker list is empty", ErrNoBrokers))
		return
	}
	topics := make([]string, 0, len(pending))
	for _, tp := range pending {
		topics = append(topics, tp.Topic)
	}
	slices.Sort(topics)
	topics = slices.Compact(topics)
	md, err := r.metadata(brokers, topics)
	if err != nil {
		r.finderFailed(err)
		return
	}
	if r.finderFailing {
		r.finderFailing = false
		r.m.log.Info("topic metadata available again")
	}
	leaders := leadersOf(md, brokers)

	type group struct {
		addr  string
		parts []*partState
	}
	groups := map[fetcherKey]*group{}
	var still []zkutil.TopicPartition
	r.mu.Lock()
	for _, tp := range pending {
		if _, ok := r.noLeader[tp]; !ok {
			continue
		}
		l, ok := leaders[tp]
		if !ok {
			still = append(still, tp)
			continue
		}
		delete(r.noLeader, tp)
		key := fetcherKey{broker: l.id, id: fetcherID(tp.Topic, tp.Partition, r.m.cfg.NumFetchers)}
		g := groups[key]
		if g == nil {
			g = &group{addr: l.addr}
			groups[key] = g
		}
		g.parts = append(g.parts, &partState{tp: tp, pti: r.partitions[tp], epoch: l.epoch})
	}
	r.mu.Unlock()
	r.noteLeaderless(md, still)
	for key, g := range groups {
		r.addToFetcher(key, g.addr, g.parts)
	}
}

// finderFailed logs and reports a failed round of the leader finder: the
// first of a series at warning level and to Config.OnError, the others at
// debug level, since the finder retries every RefreshLeaderBackoff.
func (r *run) finderFailed(err error) {
	if r.ctx.Err() != nil {
		return
	}
	if r.finderFailing {
		r.m.log.Debug("leader lookup failed again", "error", err)
		return
	}
	r.finderFailing = true
	r.m.log.Warn("leader lookup failed, retrying", "error", err)
	r.report(err)
}

// leadersOf extracts the partitions that have a leader with a known
// address from md. The address comes from brokers (ZooKeeper's view) when
// it lists the leader, else from the metadata response.
func leadersOf(md *sarama.MetadataResponse, brokers []BrokerInfo) map[zkutil.TopicPartition]leader {
	addrs := make(map[int32]string, len(brokers)+len(md.Brokers))
	for _, b := range md.Brokers {
		addrs[b.ID()] = b.Addr()
	}
	for _, b := range brokers {
		addrs[b.ID] = b.Addr
	}
	out := map[zkutil.TopicPartition]leader{}
	for _, t := range md.Topics {
		for _, p := range t.Partitions {
			if p.Leader < 0 || addrs[p.Leader] == "" {
				continue
			}
			epoch := int32(-1)
			if md.Version >= 7 {
				epoch = p.LeaderEpoch
			}
			out[zkutil.TopicPartition{Topic: t.Name, Partition: p.ID}] = leader{id: p.Leader, addr: addrs[p.Leader], epoch: epoch}
		}
	}
	return out
}

// metadata asks the brokers, in random order, for the metadata of topics
// until one answers (Kafka's ClientUtils.fetchTopicMetadata). The broker
// the finder is still connected to is asked first, so that a TLS or SASL
// handshake is not paid for every lookup.
func (r *run) metadata(brokers []BrokerInfo, topics []string) (*sarama.MetadataResponse, error) {
	var errs []error
	order := rand.Perm(len(brokers))
	for k, i := range order {
		if brokers[i].Addr == r.mdConn.addr {
			order[0], order[k] = order[k], order[0]
			break
		}
	}
	for _, i := range order {
		b := brokers[i]
		md, err := r.metadataFrom(b.Addr, topics)
		if err == nil {
			return md, nil
		}
		if r.ctx.Err() != nil {
			return nil, context.Cause(r.ctx)
		}
		errs = append(errs, fmt.Errorf("broker %d at %s: %w", b.ID, b.Addr, err))
	}
	return nil, fmt.Errorf("%w: metadata for %v: %w", ErrNoBrokers, topics, errors.Join(errs...))
}

// metadataFrom sends one metadata request to addr, over the finder's
// connection if it goes there, else over a new one that replaces it. A
// request that fails on a kept connection (the broker may have closed it
// as idle) is tried once more on a new one.
func (r *run) metadataFrom(addr string, topics []string) (*sarama.MetadataResponse, error) {
	reused := r.mdConn.b != nil && r.mdConn.addr == addr
	b, err := r.mdConn.get(r.ctx, addr, r.m.sarama)
	if err != nil {
		return nil, err
	}
	req := sarama.NewMetadataRequest(r.m.sarama.Version, topics)
	req.AllowAutoTopicCreation = false
	md, err := b.GetMetadata(req)
	if err != nil {
		r.mdConn.close()
		if reused && r.ctx.Err() == nil {
			return r.metadataFrom(addr, topics)
		}
	}
	return md, err
}

// addToFetcher gives parts to the fetcher for key, starting it if need be.
// A fetcher for key that talks to another address (the broker moved) is
// replaced; its partitions go back to the leader finder.
func (r *run) addToFetcher(key fetcherKey, addr string, parts []*partState) {
	r.mu.Lock()
	if r.ctx.Err() != nil {
		r.mu.Unlock()
		return
	}
	f := r.fetchers[key]
	var old *fetcher
	if f != nil && f.addr != addr {
		old, f = f, nil
	}
	if f == nil {
		f = newFetcher(r, key, addr)
		r.fetchers[key] = f
		go f.loop()
	}
	r.mu.Unlock()
	if old != nil {
		r.m.log.Info("broker moved, replacing its fetcher", "broker", key.broker, "from", old.addr, "to", addr)
		old.stop()
		r.partitionsWithError(old.takeAll())
	}
	f.add(parts)
}

// shutdownIdleFetchers stops the fetchers that have no partition left.
func (r *run) shutdownIdleFetchers() {
	var idle []*fetcher
	r.mu.Lock()
	for key, f := range r.fetchers {
		if f.idle() {
			idle = append(idle, f)
			delete(r.fetchers, key)
		}
	}
	r.mu.Unlock()
	for _, f := range idle {
		f.stop()
		// Only this goroutine adds partitions, so there are none; be safe.
		r.partitionsWithError(f.takeAll())
	}
}
