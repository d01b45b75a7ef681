package kafkagroup

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/abortdial"
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

// coordinator holds two connections to the group's coordinator: join for
// JoinGroup and SyncGroup, which wait for the whole group, and ctrl for
// heartbeats, commits, fetches and LeaveGroup.
type coordinator struct {
	id             int32
	addr           string
	join, ctrl     *sarama.Broker
	joinT, ctrlT   *abortdial.Dialer
	joinGroupMaxV  int16 // highest JoinGroup version the broker speaks
	leaveGroupMaxV int16
	// joinAborted is set when a Join's context ended a JoinGroup or
	// SyncGroup in flight, which aborted the join connection: the next
	// Join connects again, while ctrl stays up for a LeaveGroup.
	joinAborted atomic.Bool
}

// openCoordinator connects to the coordinator at addr and reads the API
// versions it speaks.
func (m *Member) openCoordinator(id int32, addr string) (*coordinator, error) {
	dial := m.cfg.RequestTimeout
	if m.cfg.Sarama != nil {
		dial = m.cfg.Sarama.Net.DialTimeout
	}
	c := &coordinator{id: id, addr: addr, joinT: newTracker(m.cfg, dial), ctrlT: newTracker(m.cfg, dial)}
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
	c.joinT.Abort()
	c.ctrlT.Abort()
	_ = c.join.Close()
	_ = c.ctrl.Close()
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
