package fetch

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestTLSFetch: with Config.Sarama.Net.TLS, the fetcher's dialer sets up
// TLS itself (sarama would wrap a connection the fetcher could not use for
// its own fetch requests); fetching and ListOffsets work over it.
func TestTLSFetch(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}})
	if err != nil {
		t.Fatal(err)
	}
	mb := sarama.NewMockBrokerListener(t, 0, ln)
	t.Cleanup(mb.Close)
	fetch := sarama.NewMockFetchResponse(t, 3)
	for o := range int64(20) {
		fetch.SetMessage("t", 0, o, sarama.StringEncoder("m"))
	}
	fetch.SetHighWaterMark("t", 0, 20)
	mb.SetHandlerByMap(map[string]sarama.MockResponse{
		"ApiVersionsRequest": mockAPIVersions(t),
		"MetadataRequest":    sarama.NewMockMetadataResponse(t).SetBroker(mb.Addr(), 0).SetLeader("t", 0, 0),
		"FetchRequest":       fetch,
		"OffsetRequest":      sarama.NewMockOffsetResponse(t).SetOffset("t", 0, sarama.OffsetOldest, 0).SetOffset("t", 0, sarama.OffsetNewest, 20),
	})
	mb.SetLatency(2 * time.Millisecond)

	roots := x509.NewCertPool()
	roots.AddCert(cert)
	sc := sarama.NewConfig()
	sc.Version = sarama.V3_9_0_0
	sc.Net.TLS.Enable = true
	sc.Net.TLS.Config = &tls.Config{RootCAs: roots} // ServerName comes from the address
	cfg := testConfig(t)
	cfg.Sarama = sc
	cfg.AutoOffsetReset = AutoOffsetResetSmallest
	m := newManager(t, cfg, staticBrokers{{ID: 0, Addr: mb.Addr()}})
	s := newStream(t, 2)
	p := streamcore.NewPartitionTopicInfo("t", 0, streamcore.QueueOf(s), -1, -1, 1<<20) // reset by ListOffsets
	if err := m.StartConnections(context.Background(), []*streamcore.PartitionTopicInfo{p}); err != nil {
		t.Fatal(err)
	}
	defer m.StopConnections()
	c := collect(s)
	testwait.WaitFor(t, 10*time.Second, func() bool { return c.count() == 20 }, "20 messages over TLS")
	for i, msg := range c.stop() {
		if msg.Offset != int64(i) {
			t.Fatalf("message %d has offset %d", i, msg.Offset)
		}
	}
}
