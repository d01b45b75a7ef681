package secure

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkconsumer/zkconsumer/internal/zksession"
)

// validateZooKeeper checks the ZooKeeper settings.
func (s Settings) validateZooKeeper() []error {
	var errs []error
	auth := s.zooKeeperAuth()
	if auth != "" {
		user, _, ok := strings.Cut(auth, ":")
		if !ok || user == "" {
			key := "zookeeper.auth"
			if s.ZooKeeperAuth == "" {
				key += " (from " + ZooKeeperAuthEnv + ")"
			}
			errs = append(errs, &KeyError{Key: key, Value: Hidden, Reason: `must have the form "user:password"`})
		}
	}
	if s.ZooKeeperSetACL && auth == "" {
		errs = append(errs, &KeyError{Key: "zookeeper.set.acl", Value: "true",
			Reason: "needs credentials: set zookeeper.auth (user:password) or " + ZooKeeperAuthEnv})
	}
	return errs
}

// ZooKeeperCredentials returns the credentials of s to add to the ZooKeeper session:
// zookeeper.auth (or ZooKeeperAuthEnv) with the digest scheme, or none.
func ZooKeeperCredentials(s Settings) []zksession.Auth {
	auth := s.zooKeeperAuth()
	if auth == "" {
		return nil
	}
	return []zksession.Auth{{Scheme: "digest", Secret: []byte(auth)}}
}

// ZooKeeperACL returns the ACL of the nodes the consumer creates: with
// zookeeper.set.acl, read for everyone and everything for the creating
// identity (ZooKeeper's READ_ACL_UNSAFE plus CREATOR_ALL_ACL, as Kafka's
// brokers secure their nodes); otherwise nil, the open ACL.
func ZooKeeperACL(s Settings) []zk.ACL {
	if !s.ZooKeeperSetACL {
		return nil
	}
	return append(zk.AuthACL(zk.PermAll), zk.WorldACL(zk.PermRead)...)
}

// ZooKeeperDialer returns the dialer of TLS connections to ZooKeeper when s has
// zookeeper.ssl.client.enable is set, nil otherwise. inner, if not nil,
// opens the TCP connections under TLS. Store errors are *KeyErrors.
func ZooKeeperDialer(s Settings, inner zk.Dialer) (zk.Dialer, error) {
	if !s.ZooKeeperSSLClientEnable {
		return nil, nil
	}
	t := &tls.Config{MinVersion: tls.VersionTLS12}
	var errs []error
	if s.ZooKeeperSSLTruststoreLocation != "" {
		certs, err := loadTrustStore(s.ZooKeeperSSLTruststoreLocation, s.ZooKeeperSSLTruststoreType, s.ZooKeeperSSLTruststorePassword, zkTruststoreKeys)
		if err != nil {
			errs = append(errs, err)
		} else {
			t.RootCAs = poolOf(certs)
		}
	}
	if s.ZooKeeperSSLKeystoreLocation != "" {
		cert, err := loadKeyStore(s.ZooKeeperSSLKeystoreLocation, s.ZooKeeperSSLKeystoreType, s.ZooKeeperSSLKeystorePassword, "", zkKeystoreKeys)
		if err != nil {
			errs = append(errs, err)
		} else {
			t.Certificates = []tls.Certificate{cert}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if e := s.ZooKeeperSSLEndpointIdentificationEnable; e != nil && !*e {
		skipHostCheck(t)
	}
	keys := "zookeeper.ssl.truststore.location"
	if s.ZooKeeperSSLTruststoreLocation == "" {
		keys += " (unset: the system's authorities are trusted)"
	}
	return func(network, addr string, timeout time.Duration) (net.Conn, error) {
		d := &tlsDialer{conf: t, timeout: timeout, keys: keys}
		d.direct.Timeout = timeout
		if inner != nil {
			d.inner = zkDialer{inner, timeout}
		}
		return d.DialContext(context.Background(), network, addr)
	}, nil
}

// zkDialer adapts a zk.Dialer to proxy.Dialer.
type zkDialer struct {
	dial    zk.Dialer
	timeout time.Duration
}

func (d zkDialer) Dial(network, addr string) (net.Conn, error) {
	return d.dial(network, addr, d.timeout)
}
