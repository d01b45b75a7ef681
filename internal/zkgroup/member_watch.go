package zkgroup

import (
	"context"
	"errors"
	"strings"

	"github.com/zkconsumer/zkconsumer/internal/strategyname"
	"github.com/zkconsumer/zkconsumer/internal/zkbrokers"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// armWatches sets every watch that is not armed: children of the group's
// ids (membership), data of each consumed topic (partition count) and, for
// wildcard members, children of /brokers/topics (new topics). A watch fires
// once; when it does, the loop rebalances and arms it again first, so no
// change between the two is missed.
//
// Watches are set in the session the member is registered in, or stays
// out of the group in (StrategyError), none otherwise, and belong to it: watches of an earlier session, whose events
// may still be on their way, are told apart by their session, not by when
// the member learnt of the expiry, so a member that has already moved to
// its next session ignores them.
func (m *Member) armWatches(ctx context.Context) {
	if !m.watchSession() {
		return
	}
	m.armChildren(ctx, zkutil.ConsumerIDsPath(m.cfg.Group))
	if m.cfg.Subscription.Filter != nil {
		m.armChildren(ctx, zkbrokers.BrokerTopicsPath)
	} else {
		for t := range m.cfg.Subscription.Topics {
			m.watchedTopic[t] = true
		}
	}
	for t := range m.watchedTopic {
		m.armData(ctx, zkbrokers.TopicPath(t))
	}
	if m.cfg.Assignor.Name() == strategyname.Sticky && m.registered != 0 {
		m.armSticky(ctx)
	}
}

// watchTopics adds data watches for topics of the group that the member
// does not watch yet (topics a wildcard matched, or other members' topics
// under roundrobin). Topics that left the group stop being watched once
// their watch fires; the subscription's own static topics always stay.
func (m *Member) watchTopics(ctx context.Context, topics map[string][]zkutil.ConsumerThreadID) {
	if !m.watchSession() {
		return
	}
	for t := range m.watchedTopic {
		if _, ok := topics[t]; !ok && m.cfg.Subscription.Topics[t] == 0 {
			delete(m.watchedTopic, t)
		}
	}
	for t := range topics {
		if !m.watchedTopic[t] {
			m.watchedTopic[t] = true
			m.armData(ctx, zkbrokers.TopicPath(t))
		}
	}
}

// watchSession makes the set of armed watches that of the session the
// member is registered in, and reports whether there is one.
func (m *Member) watchSession() bool {
	in := m.registered
	if in == 0 {
		in = m.outIn // out of the group: it watches the membership all the same
	}
	if m.armedIn != in {
		clear(m.armed)
		m.armedIn = in
	}
	return in != 0
}

func (m *Member) armChildren(ctx context.Context, path string) {
	if m.armed[path] {
		return
	}
	in := m.zk.Bind(m.armedIn)
	// The listing of the members that comes with the watch is the one the
	// next reading of the group uses, as long as no change of the
	// membership reaches the session after it (registrationCache).
	mark := m.zk.WatchMark(path)
	children, ch, err := in.ChildrenW(ctx, path)
	if err == nil && path == zkutil.ConsumerIDsPath(m.cfg.Group) && m.zk.ID() == m.armedIn {
		m.regs.keepListing(mark, children)
	}
	if errors.Is(err, zksession.ErrNoNode) {
		_, _, ch, err = in.ExistsW(ctx, path)
	}
	m.forward(path, ch, err)
}

func (m *Member) armData(ctx context.Context, path string) {
	if m.armed[path] {
		return
	}
	in := m.zk.Bind(m.armedIn)
	_, _, ch, err := in.GetW(ctx, path)
	if errors.Is(err, zksession.ErrNoNode) {
		if m.cfg.Subscription.Filter != nil {
			// A wildcard member learns of new topics from the children
			// of /brokers/topics; a watch per vanished topic would only
			// pile up.
			delete(m.watchedTopic, strings.TrimPrefix(path, zkbrokers.BrokerTopicsPath+"/"))
			return
		}
		_, _, ch, err = in.ExistsW(ctx, path) // fires when the topic is created
	}
	m.forward(path, ch, err)
}

// forward hands the watch's one event to the loop. A watch that could not
// be set (connection trouble) is retried at the next rebalance, which a
// failed attempt schedules.
func (m *Member) forward(path string, ch <-chan zksession.WatchEvent, err error) {
	if err != nil {
		m.log.Debug("cannot set watch", "path", path, "err", err)
		return
	}
	m.armed[path] = true
	m.watchers.Add(1)
	fired := firedWatch{path: path, session: m.armedIn}
	go func() {
		defer m.watchers.Done()
		select {
		case <-ch:
		case <-m.loopCtx.Done():
			return
		}
		select {
		case m.fired <- fired:
		case <-m.loopCtx.Done():
		}
	}()
}

// firedWatch is a watch that fired: its path, and the session it was set
// in.
type firedWatch struct {
	path    string
	session int64
}
