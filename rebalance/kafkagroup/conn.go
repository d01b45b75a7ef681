package kafkagroup

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

// errAborted is the error of dials after a tracker was aborted.
var errAborted = errors.New("kafkagroup: connection aborted")

// tracker is the dialer of a set of connections that can be torn down at
// once. sarama.Broker holds its lock for a whole request, and JoinGroup
// may wait minutes: closing the sockets is the only way to end such a
// request early, which Close and a cancelled Join must do.
type tracker struct {
	timeout time.Duration

	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	aborted bool
}

func newTracker(dialTimeout time.Duration) *tracker {
	return &tracker{timeout: dialTimeout, conns: map[net.Conn]struct{}{}}
}

// Dial implements sarama's proxy dialer (golang.org/x/net/proxy.Dialer).
func (t *tracker) Dial(network, addr string) (net.Conn, error) {
	t.mu.Lock()
	if t.aborted {
		t.mu.Unlock()
		return nil, errAborted
	}
	t.mu.Unlock()
	c, err := (&net.Dialer{Timeout: t.timeout, KeepAlive: 30 * time.Second}).Dial(network, addr)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.aborted {
		_ = c.Close()
		return nil, errAborted
	}
	tc := &trackedConn{Conn: c, t: t}
	t.conns[tc] = struct{}{}
	return tc, nil
}

// abort closes every connection and refuses new ones.
func (t *tracker) abort() {
	t.mu.Lock()
	t.aborted = true
	conns := t.conns
	t.conns = map[net.Conn]struct{}{}
	t.mu.Unlock()
	for c := range conns {
		_ = c.(*trackedConn).Conn.Close()
	}
}

type trackedConn struct {
	net.Conn
	t *tracker
}

func (c *trackedConn) Close() error {
	c.t.mu.Lock()
	delete(c.t.conns, c)
	c.t.mu.Unlock()
	return c.Conn.Close()
}

// saramaConfig returns a copy of the base configuration that dials through
// t and waits readTimeout for responses.
func (m *Member) saramaConfig(t *tracker, readTimeout time.Duration) *sarama.Config {
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

// coordinator holds two connections to the group's coordinator: join for
// JoinGroup and SyncGroup, which wait for the whole group, and ctrl for
// heartbeats, commits, fetches and LeaveGroup.
type coordinator struct {
	id             int32
	addr           string
	join, ctrl     *sarama.Broker
	joinT, ctrlT   *tracker
	joinGroupMaxV  int16 // highest JoinGroup version the broker speaks
	leaveGroupMaxV int16
}

// openCoordinator connects to the coordinator at addr and reads the API
// versions it speaks.
func (m *Member) openCoordinator(id int32, addr string) (*coordinator, error) {
	dial := m.cfg.RequestTimeout
	if m.cfg.Sarama != nil {
		dial = m.cfg.Sarama.Net.DialTimeout
	}
	c := &coordinator{id: id, addr: addr, joinT: newTracker(dial), ctrlT: newTracker(dial)}
	c.join = sarama.NewBroker(addr)
	c.ctrl = sarama.NewBroker(addr)
	if err := c.join.Open(m.saramaConfig(c.joinT, m.cfg.RebalanceTimeout+m.cfg.RequestTimeout)); err != nil {
		return nil, err
	}
	if err := c.ctrl.Open(m.saramaConfig(c.ctrlT, m.cfg.RequestTimeout)); err != nil {
		c.close()
		return nil, err
	}
	resp, err := c.ctrl.ApiVersions(&sarama.ApiVersionsRequest{})
	if err == nil && resp.ErrorCode != int16(sarama.ErrNoError) {
		err = sarama.KError(resp.ErrorCode)
	}
	if err != nil {
		c.close()
		return nil, err
	}
	for _, k := range resp.ApiKeys {
		switch k.ApiKey {
		case apiKeyJoinGroup:
			c.joinGroupMaxV = k.MaxVersion
		case apiKeyLeaveGroup:
			c.leaveGroupMaxV = k.MaxVersion
		}
	}
	return c, nil
}

// Kafka API keys.
const (
	apiKeyJoinGroup  = 11
	apiKeyLeaveGroup = 13
)

// close aborts both connections and closes the brokers.
func (c *coordinator) close() {
	c.joinT.abort()
	c.ctrlT.abort()
	_ = c.join.Close()
	_ = c.ctrl.Close()
}

// withAbort runs op; if ctx ends first, the connections of t are torn down
// so that op returns promptly.
func withAbort[T any](ctx context.Context, t *tracker, op func() (T, error)) (T, error) {
	stop := context.AfterFunc(ctx, t.abort)
	res, err := op()
	if !stop() && ctx.Err() != nil {
		var zero T
		return zero, context.Cause(ctx)
	}
	return res, err
}
