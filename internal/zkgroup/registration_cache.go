package zkgroup

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// registrationCache keeps the registrations of a group as a member last
// read them, so that a rebalance reads only those that are new or have
// changed instead of every member's: without it every member reads every
// registration on every rebalance, N² reads for the group per leave.
//
// Each registration is read with a watch, and kept with the session's
// WatchMark of its node taken before that read; it is served from the
// cache while the mark is unchanged, that is while no event of the node
// (a change, its deletion, the loss of the watch) has reached the session
// and the session is the same. go-zookeeper reports a watch event before
// any later answer on the connection, so once the listing of the members
// (read after the change that triggered the rebalance) has come back, the
// event of every registration deleted or rewritten before it has been
// noted: a member that re-registers under the same id (delete, create) is
// read again. Entries of members no longer listed are dropped.
type registrationCache struct {
	ids string // the group's /ids path

	mu      sync.Mutex
	entries map[string]cachedRegistration // by node path
}

// cachedRegistration is one registration as read.
type cachedRegistration struct {
	data []byte
	stat zksession.Stat
	mark zksession.WatchMark
}

func newRegistrationCache(group string) *registrationCache {
	return &registrationCache{ids: zkutil.ConsumerIDsPath(group), entries: map[string]cachedRegistration{}}
}

// reader returns the groupReader readGroup reads the group with: zk, with
// the registrations served from the cache where it can.
func (c *registrationCache) reader(zk ZooKeeper) groupReader { return cachingReader{zk: zk, c: c} }

// cachingReader is a groupReader over the cache.
type cachingReader struct {
	zk ZooKeeper
	c  *registrationCache
}

// Children lists the node's children; for the group's /ids, it also drops
// the cached registrations of members no longer listed.
func (r cachingReader) Children(ctx context.Context, path string) ([]string, error) {
	children, err := r.zk.Children(ctx, path)
	if err == nil && path == r.c.ids {
		r.c.mu.Lock()
		for p := range r.c.entries {
			if !slices.Contains(children, p[len(r.c.ids)+1:]) {
				delete(r.c.entries, p)
			}
		}
		r.c.mu.Unlock()
	}
	return children, err
}

// Get reads the node at path; a registration comes from the cache when
// its mark is unchanged, and is otherwise read with a watch and cached.
func (r cachingReader) Get(ctx context.Context, path string) ([]byte, zksession.Stat, error) {
	if !strings.HasPrefix(path, r.c.ids+"/") {
		return r.zk.Get(ctx, path)
	}
	mark := r.zk.WatchMark(path)
	r.c.mu.Lock()
	e, ok := r.c.entries[path]
	r.c.mu.Unlock()
	if ok && e.mark == mark && mark != (zksession.WatchMark{}) {
		return e.data, e.stat, nil
	}
	// The watch's event is noted by the session (WatchMark); its channel
	// is not needed.
	data, stat, _, err := r.zk.GetW(ctx, path)
	r.c.mu.Lock()
	if err == nil {
		r.c.entries[path] = cachedRegistration{data: data, stat: stat, mark: mark}
	} else {
		delete(r.c.entries, path)
	}
	r.c.mu.Unlock()
	return data, stat, err
}
