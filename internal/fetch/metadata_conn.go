package fetch

import (
	"context"

	"github.com/IBM/sarama"
)

// metadataConn is the leader finder's connection for metadata requests.
// Kafka's leader finder opens a connection per lookup; with TLS and SASL
// each would cost a handshake, so the finder keeps one open to the broker
// that last answered and drops it on any error. It is owned by the leader
// finder's goroutine.
type metadataConn struct {
	addr string
	b    *sarama.Broker
	// opened counts the connections opened, for tests.
	opened int
}

// get returns the connection to addr, opening it (and closing one to
// another address) if needed.
func (c *metadataConn) get(ctx context.Context, addr string, conf *sarama.Config) (*sarama.Broker, error) {
	if c.b != nil && c.addr == addr {
		return c.b, nil
	}
	c.close()
	b, err := openBroker(ctx, addr, conf, 0, nil)
	if err != nil {
		return nil, err
	}
	c.addr, c.b = addr, b
	c.opened++
	return b, nil
}

// close closes the connection, if any.
func (c *metadataConn) close() {
	if c.b != nil {
		_ = c.b.Close()
	}
	c.addr, c.b = "", nil
}
