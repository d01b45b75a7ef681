package zkgroup

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/zkconsumer/zkconsumer/internal/zkbrokers"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// registrationCache keeps the registrations of a group, and the partition
// maps of the topics it consumes, as a member last read them, so that a
// rebalance reads only those that are new or have changed instead of every
// member's: without it every member reads every registration on every
// rebalance, N² reads for the group per leave, and every member reads and
// decodes every topic's partition map (tens of kilobytes at thousands of
// partitions) on every rebalance.
//
// Each node is read with a watch, and kept with the session's WatchMark of
// it taken before that read; it is served from the cache while the mark is
// unchanged, that is while no event of the node (a change, its deletion,
// the loss of the watch) has reached the session and the session is the
// same. go-zookeeper reports a watch event before any later answer on the
// connection, so once the listing of the members (read after the change
// that triggered the rebalance) has come back, the event of every
// registration or partition map deleted or rewritten before it has been
// noted: a member that re-registers under the same id (delete, create) is
// read again, and so is a topic whose partitions were added. Entries of
// members no longer listed are dropped, and those of topics not read in the
// last two readings.
//
// What a node decodes into (a member's subscription, a topic's
// partitions) is kept with it and decoded again only when its data
// changes: decoding every registration on every rebalance made each
// member's rebalance cost CPU in proportion to the group's size.
type registrationCache struct {
	ids string // the group's /ids path

	mu      sync.Mutex
	entries map[string]cachedRegistration // by node path
	reading uint64                        // counts the readings (listings of ids)
	// listing is the listing of ids that came with the member's watch on
	// it, and listingMark the mark of ids taken before: while the mark is
	// unchanged, no change of the membership has reached the session
	// since, and the listing is served instead of a second one.
	listing     []string
	listingMark zksession.WatchMark
}

// keepListing keeps children, the listing of ids read with a watch in the
// current session, mark being the mark of ids taken before that read.
func (c *registrationCache) keepListing(mark zksession.WatchMark, children []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.listing, c.listingMark = slices.Clone(children), mark
}

// cachedRegistration is one node as read, and what it decoded into.
type cachedRegistration struct {
	data    []byte
	stat    zksession.Stat
	mark    zksession.WatchMark
	read    uint64 // the reading that last used it
	decoded *decodedNode
}

// decodedNode is what a node's data decoded into: a registration's
// subscription and strategy, or a topic's sorted partitions; err if it did
// not decode.
type decodedNode struct {
	sub      Subscription
	strategy string
	parts    []int32
	err      error
}

func newRegistrationCache(group string) *registrationCache {
	return &registrationCache{ids: zkutil.ConsumerIDsPath(group), entries: map[string]cachedRegistration{}}
}

// reader returns the groupReader readGroup reads the group with: zk, with
// the registrations and partition maps served from the cache where it can.
func (c *registrationCache) reader(zk ZooKeeper) groupReader { return cachingReader{zk: zk, c: c} }

// cachingReader is a groupReader over the cache.
type cachingReader struct {
	zk ZooKeeper
	c  *registrationCache
}

// Children lists the node's children; for the group's /ids, it also drops
// the cached registrations of members no longer listed, and the partition
// maps of topics not read in the last two readings.
func (r cachingReader) Children(ctx context.Context, path string) ([]string, error) {
	var children []string
	var err error
	if path == r.c.ids {
		mark := r.zk.WatchMark(path)
		r.c.mu.Lock()
		if r.c.listing != nil && r.c.listingMark == mark && mark != (zksession.WatchMark{}) {
			children = slices.Clone(r.c.listing)
		}
		r.c.mu.Unlock()
	}
	if children == nil {
		children, err = r.zk.Children(ctx, path)
	}
	if err == nil && path == r.c.ids {
		listed := make(map[string]bool, len(children))
		for _, id := range children {
			listed[id] = true
		}
		r.c.mu.Lock()
		r.c.reading++
		for p, e := range r.c.entries {
			if id, ok := strings.CutPrefix(p, r.c.ids+"/"); ok {
				if !listed[id] {
					delete(r.c.entries, p)
				}
			} else if e.read+1 < r.c.reading {
				delete(r.c.entries, p)
			}
		}
		r.c.mu.Unlock()
	}
	return children, err
}

// cached reports whether path is kept in the cache: a registration of the
// group, or a topic's partition map.
func (r cachingReader) cached(path string) bool {
	return strings.HasPrefix(path, r.c.ids+"/") || strings.HasPrefix(path, zkbrokers.BrokerTopicsPath+"/")
}

// peek returns the node at path from the cache, if it is kept there and
// its mark is unchanged (as Get would); false otherwise.
func (r cachingReader) peek(path string) ([]byte, zksession.Stat, bool) {
	if !r.cached(path) {
		return nil, zksession.Stat{}, false
	}
	mark := r.zk.WatchMark(path)
	r.c.mu.Lock()
	defer r.c.mu.Unlock()
	e, ok := r.c.entries[path]
	if !ok || e.mark != mark || mark == (zksession.WatchMark{}) {
		return nil, zksession.Stat{}, false
	}
	e.read = r.c.reading
	r.c.entries[path] = e
	return e.data, e.stat, true
}

// Get reads the node at path; a registration or a partition map comes from
// the cache when its mark is unchanged, and is otherwise read with a watch
// and cached.
func (r cachingReader) Get(ctx context.Context, path string) ([]byte, zksession.Stat, error) {
	if !r.cached(path) {
		return r.zk.Get(ctx, path)
	}
	if data, stat, ok := r.peek(path); ok {
		return data, stat, nil
	}
	mark := r.zk.WatchMark(path)
	r.c.mu.Lock()
	e, ok := r.c.entries[path]
	r.c.mu.Unlock()
	// The watch's event is noted by the session (WatchMark); its channel
	// is not needed.
	data, stat, _, err := r.zk.GetW(ctx, path)
	r.c.mu.Lock()
	if err == nil {
		next := cachedRegistration{data: data, stat: stat, mark: mark, read: r.c.reading}
		if ok && bytes.Equal(e.data, data) {
			next.decoded = e.decoded // the same data decodes the same
		}
		r.c.entries[path] = next
	} else {
		delete(r.c.entries, path)
	}
	r.c.mu.Unlock()
	return data, stat, err
}

// decode returns what the cached node at path decodes into, if its data is
// data, decoding it with f the first time.
func (r cachingReader) decode(path string, data []byte, f func() *decodedNode) *decodedNode {
	r.c.mu.Lock()
	e, ok := r.c.entries[path]
	r.c.mu.Unlock()
	if ok && e.decoded != nil && bytes.Equal(e.data, data) {
		return e.decoded
	}
	d := f()
	if ok {
		r.c.mu.Lock()
		if e, ok := r.c.entries[path]; ok && bytes.Equal(e.data, data) {
			e.decoded = d
			r.c.entries[path] = e
		}
		r.c.mu.Unlock()
	}
	return d
}
