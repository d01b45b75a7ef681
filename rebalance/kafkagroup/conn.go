package kafkagroup

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/abortdial"
	gc "github.com/zkconsumer/zkconsumer/internal/coordinator"
	"github.com/zkconsumer/zkconsumer/internal/kip848"
)

// errAborted is the error of dials after a tracker was aborted.
var errAborted = errors.New("kafkagroup: connection aborted")

// newTracker returns the dialer of a set of connections that can be torn
// down at once (see abortdial): JoinGroup may wait minutes, and Close and
// a cancelled Join must end it early. It dials through the proxy dialer of
// cfg.Sarama when one is set (the connector's WithDialer).
func newTracker(cfg Config, dialTimeout time.Duration) *abortdial.Dialer {
	if cfg.Sarama != nil && cfg.Sarama.Net.Proxy.Enable && cfg.Sarama.Net.Proxy.Dialer != nil {
		return abortdial.Through(cfg.Sarama.Net.Proxy.Dialer, errAborted)
	}
	return abortdial.New(dialTimeout, 30*time.Second, errAborted)
}

// saramaConfig returns a copy of the base configuration that dials through
// t and waits readTimeout for responses.
func (m *Member) saramaConfig(t *abortdial.Dialer, readTimeout time.Duration) *sarama.Config {
	var c sarama.Config
	if m.cfg.Sarama != nil {
		c = *m.cfg.Sarama
	} else {
		c = *sarama.NewConfig()
		c.Version = sarama.V2_4_0_0
	}
	c.ClientID = m.cfg.ClientID
	c.Net.ReadTimeout = readTimeout
	c.Net.WriteTimeout = m.cfg.RequestTimeout
	c.Net.Proxy.Enable = true
	c.Net.Proxy.Dialer = t
	c.Metadata.RefreshFrequency = 0
	c.Metadata.Full = false
	c.Metadata.AllowAutoTopicCreation = false
	c.Metadata.Retry.Max = 0
	if m.cfg.Secure != nil {
		m.cfg.Secure(&c)
	}
	return &c
}

// coordinator holds the connections to the group's coordinator: join for
// JoinGroup and SyncGroup, which wait for the whole group (join9 for
// JoinGroup v9, our own encoding, dialled on first use through joinT),
// ctrl for commits, fetches and LeaveGroup, and hb for heartbeats alone.
// A broker answers the requests of one connection in order, and a commit
// may wait seconds for the offsets topic's replicas (a follower that
// stopped, up to offsets.commit.timeout.ms): on a connection of their own,
// heartbeats never wait behind one, so the lease and the membership do
// not lapse while a commit is slow.
type coordinator struct {
	id                int32
	addr              string
	join, ctrl, hb    *sarama.Broker
	joinT, ctrlT, hbT *abortdial.Dialer
	// versions are those negotiated with the broker (needs).
	versions gc.Versions
	// join9Dialer dials join9 (with the TLS and SASL of the join
	// connection); nil when JoinGroup v9 is not used (the broker lacks
	// it, or Config.noJoinV9).
	join9Dialer kip848.Dialer
	join9       *kip848.Conn
	// joinAborted is set when a Join's context ended a JoinGroup or
	// SyncGroup in flight, which aborted the join connection: the next
	// Join connects again, while ctrl stays up for a LeaveGroup.
	joinAborted atomic.Bool
}

// needs is what a classic member sends to its coordinator. JoinGroup
// goes up to 9 (KIP-814, kip848's encoding); below 9 sarama's encoding is
// used, at most version 5 (static membership).
var needs = []gc.Need{
	{API: gc.APIJoinGroup, Range: gc.Range{Min: 0, Max: kip848.JoinGroupVersion}},
	{API: gc.APISyncGroup, Range: gc.Range{Min: 3, Max: 3}},
	{API: gc.APIHeartbeat, Range: gc.Range{Min: 3, Max: 3}},
	{API: gc.APILeaveGroup, Range: gc.Range{Min: 0, Max: 3}},
	{API: gc.APIOffsetCommit, Range: gc.Range{Min: 7, Max: 7}},
	{API: gc.APIOffsetFetch, Range: gc.Range{Min: 5, Max: 5}},
}

// openCoordinator connects to the coordinator at addr and negotiates the
// versions of the requests the member sends; a broker that speaks none of
// the versions of one of them is an ErrFatal error naming it.
func (m *Member) openCoordinator(id int32, addr string) (*coordinator, error) {
	dial := m.cfg.RequestTimeout
	if m.cfg.Sarama != nil {
		dial = m.cfg.Sarama.Net.DialTimeout
	}
	c := &coordinator{id: id, addr: addr, joinT: newTracker(m.cfg, dial), ctrlT: newTracker(m.cfg, dial), hbT: newTracker(m.cfg, dial)}
	c.join = sarama.NewBroker(addr)
	c.ctrl = sarama.NewBroker(addr)
	c.hb = sarama.NewBroker(addr)
	joinCfg := m.saramaConfig(c.joinT, m.cfg.RebalanceTimeout+m.cfg.RequestTimeout)
	if err := c.join.Open(joinCfg); err != nil {
		return nil, err
	}
	if err := c.ctrl.Open(m.saramaConfig(c.ctrlT, m.cfg.RequestTimeout)); err != nil {
		c.close()
		return nil, err
	}
	if err := c.hb.Open(m.saramaConfig(c.hbT, m.cfg.RequestTimeout)); err != nil {
		c.close()
		return nil, err
	}
	have, err := gc.ApiVersions(c.ctrl)
	if err != nil {
		c.close()
		return nil, err
	}
	if c.versions, err = gc.Negotiate(gc.BrokerName(id, addr), have, needs...); err != nil {
		c.close()
		return nil, fmt.Errorf("%w: %w", ErrFatal, err)
	}
	if v, _ := c.versions.Of(gc.APIJoinGroup); v >= kip848.JoinGroupVersion && !m.cfg.noJoinV9 {
		c.join9Dialer = gc.Dialer(joinCfg)
	}
	return c, nil
}

// version is the version of api negotiated with c (needs lists every API
// the member sends).
func (c *coordinator) version(api gc.API) int16 {
	v, _ := c.versions.Of(api)
	return v
}

// joinVersion is the JoinGroup version sent to c: 9 over join9, else at
// most 5 over join.
func (c *coordinator) joinVersion() int16 {
	if c.join9Dialer != nil {
		return kip848.JoinGroupVersion
	}
	return min(c.version(gc.APIJoinGroup), 5)
}

// close aborts every connection and closes the brokers.
func (c *coordinator) close() {
	c.joinT.Abort()
	c.ctrlT.Abort()
	c.hbT.Abort()
	if c.join9 != nil {
		c.join9.Close()
	}
	_ = c.join.Close()
	_ = c.ctrl.Close()
	_ = c.hb.Close()
}

// withAbort runs op; if ctx ends first, the connections of t are torn down
// so that op returns promptly.
func withAbort[T any](ctx context.Context, t *abortdial.Dialer, op func() (T, error)) (T, error) {
	stop := context.AfterFunc(ctx, t.Abort)
	res, err := op()
	if !stop() && ctx.Err() != nil {
		var zero T
		return zero, context.Cause(ctx)
	}
	return res, err
}
