package coordinator

import (
	"crypto/tls"
	"net"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/kip848"
)

// Dialer returns what dials a coordinator for a kip848.Conn as sarama
// would dial it with sc: through sc's proxy dialer when one is set (the
// connector's WithDialer, an abortdial tracker, or the TLS dialer of
// secure), with TLS when sc enables it. ok is false when sc enables SASL,
// which kip848.Conn does not speak: the caller then uses sarama's own
// requests, or refuses.
func Dialer(sc *sarama.Config) (d kip848.Dialer, ok bool) {
	if sc.Net.SASL.Enable {
		return nil, false
	}
	d = &net.Dialer{Timeout: sc.Net.DialTimeout, KeepAlive: sc.Net.KeepAlive}
	if sc.Net.Proxy.Enable && sc.Net.Proxy.Dialer != nil {
		d = sc.Net.Proxy.Dialer
	}
	if sc.Net.TLS.Enable {
		return tlsDialer{d, sc.Net.TLS.Config}, true
	}
	return d, true
}

type tlsDialer struct {
	inner kip848.Dialer
	conf  *tls.Config
}

// Dial connects through the inner dialer and completes a TLS handshake.
func (t tlsDialer) Dial(network, addr string) (net.Conn, error) {
	c, err := t.inner.Dial(network, addr)
	if err != nil {
		return nil, err
	}
	conf := t.conf
	if conf == nil {
		conf = &tls.Config{}
	}
	if conf.ServerName == "" && !conf.InsecureSkipVerify {
		conf = conf.Clone()
		conf.ServerName, _, _ = net.SplitHostPort(addr)
	}
	tc := tls.Client(c, conf)
	if err := tc.Handshake(); err != nil {
		_ = c.Close()
		return nil, err
	}
	return tc, nil
}

// KIP848Versions converts a kip848.Conn's ApiVersions answer for
// Negotiate.
func KIP848Versions(c *kip848.Conn, keys ...API) map[int16]Range {
	out := make(map[int16]Range, len(keys))
	for _, k := range keys {
		if v, ok := c.Versions(k.Key); ok {
			out[k.Key] = Range{Min: v.Min, Max: v.Max}
		}
	}
	return out
}
