package fetch

import (
	"context"
	"net"
	"sync/atomic"
	"testing"

	"github.com/IBM/sarama"
)

// countingDialer counts the connections sarama opens through it.
type countingDialer struct{ n atomic.Int32 }

func (d *countingDialer) Dial(network, addr string) (net.Conn, error) {
	d.n.Add(1)
	return net.Dial(network, addr)
}

// TestLeaderFinderKeepsItsConnection: successive metadata lookups share
// one connection (one TLS and SASL handshake), and a connection the broker
// dropped is replaced within the same lookup.
func TestLeaderFinderKeepsItsConnection(t *testing.T) {
	mb := sarama.NewMockBroker(t, 0)
	defer mb.Close()
	mb.SetHandlerByMap(map[string]sarama.MockResponse{
		"ApiVersionsRequest": mockAPIVersions(t),
		"MetadataRequest":    sarama.NewMockMetadataResponse(t).SetBroker(mb.Addr(), 0).SetLeader("t", 0, 0),
	})
	dialer := &countingDialer{}
	sc := testConfig(t).withDefaults().saramaConfig()
	sc.Net.Proxy.Enable, sc.Net.Proxy.Dialer = true, dialer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &run{m: &ConsumerFetcherManager{sarama: sc}, ctx: ctx}
	defer r.mdConn.close()
	brokers := []BrokerInfo{{ID: 0, Addr: mb.Addr()}}
	for i := range 5 {
		md, err := r.metadata(brokers, []string{"t"})
		if err != nil {
			t.Fatalf("lookup %d: %v", i, err)
		}
		if len(md.Topics) != 1 {
			t.Fatalf("lookup %d: %d topics", i, len(md.Topics))
		}
	}
	if n := dialer.n.Load(); n != 1 {
		t.Fatalf("%d connections for 5 lookups, want 1", n)
	}
	// The broker drops idle connections; the next lookup reconnects and
	// still succeeds.
	_ = r.mdConn.b.Close()
	if _, err := r.metadata(brokers, []string{"t"}); err != nil {
		t.Fatalf("lookup after the connection closed: %v", err)
	}
	if n := dialer.n.Load(); n != 2 {
		t.Fatalf("%d connections, want 2", n)
	}
}
