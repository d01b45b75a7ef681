package secure

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// property maps one key to one field of Settings.
type property struct {
	key    string
	secret bool
	set    func(s *Settings, v string) string // returns a reason, or ""
	get    func(s *Settings) (string, bool)
}

func str(key string, secret bool, f func(*Settings) *string) property {
	return property{
		key: key, secret: secret,
		set: func(s *Settings, v string) string { *f(s) = v; return "" },
		get: func(s *Settings) (string, bool) { v := *f(s); return v, v != "" },
	}
}

func boolean(key string, f func(*Settings) *bool) property {
	return property{
		key: key,
		set: func(s *Settings, v string) string {
			b, reason := parseBool(v)
			*f(s) = b
			return reason
		},
		get: func(s *Settings) (string, bool) { return strconv.FormatBool(*f(s)), *f(s) },
	}
}

func optBool(key string, f func(*Settings) **bool) property {
	return property{
		key: key,
		set: func(s *Settings, v string) string {
			b, reason := parseBool(v)
			*f(s) = &b
			return reason
		},
		get: func(s *Settings) (string, bool) {
			if *f(s) == nil {
				return "", false
			}
			return strconv.FormatBool(**f(s)), true
		},
	}
}

func parseBool(v string) (bool, string) {
	switch strings.ToLower(v) {
	case "true":
		return true, ""
	case "false":
		return false, ""
	}
	return false, "must be true or false"
}

// properties lists the keys Settings understands. Aliases (librdkafka's
// names) come after the Java names they stand for.
var properties = []property{
	str("security.protocol", false, func(s *Settings) *string { return &s.SecurityProtocol }),
	str("zkconsumer.listener.name", false, func(s *Settings) *string { return &s.ListenerName }),
	str("ssl.truststore.location", false, func(s *Settings) *string { return &s.SSLTruststoreLocation }),
	str("ssl.truststore.type", false, func(s *Settings) *string { return &s.SSLTruststoreType }),
	str("ssl.truststore.password", true, func(s *Settings) *string { return &s.SSLTruststorePassword }),
	str("ssl.truststore.certificates", false, func(s *Settings) *string { return &s.SSLTruststoreCertificates }),
	str("ssl.keystore.location", false, func(s *Settings) *string { return &s.SSLKeystoreLocation }),
	str("ssl.keystore.type", false, func(s *Settings) *string { return &s.SSLKeystoreType }),
	str("ssl.keystore.password", true, func(s *Settings) *string { return &s.SSLKeystorePassword }),
	str("ssl.key.password", true, func(s *Settings) *string { return &s.SSLKeyPassword }),
	str("ssl.keystore.certificate.chain", false, func(s *Settings) *string { return &s.SSLKeystoreCertificateChain }),
	str("ssl.keystore.key", true, func(s *Settings) *string { return &s.SSLKeystoreKey }),
	str("ssl.certificate.location", false, func(s *Settings) *string { return &s.SSLCertificateLocation }),
	str("ssl.key.location", false, func(s *Settings) *string { return &s.SSLKeyLocation }),
	{
		key: "ssl.endpoint.identification.algorithm",
		set: func(s *Settings, v string) string { s.SSLEndpointIdentificationAlgorithm = &v; return "" },
		get: func(s *Settings) (string, bool) {
			if s.SSLEndpointIdentificationAlgorithm == nil {
				return "", false
			}
			return *s.SSLEndpointIdentificationAlgorithm, true
		},
	},
	str("sasl.mechanism", false, func(s *Settings) *string { return &s.SASLMechanism }),
	str("sasl.jaas.config", true, func(s *Settings) *string { return &s.SASLJAASConfig }),
	str("sasl.username", false, func(s *Settings) *string { return &s.SASLUsername }),
	str("sasl.password", true, func(s *Settings) *string { return &s.SASLPassword }),
	str("zookeeper.auth", true, func(s *Settings) *string { return &s.ZooKeeperAuth }),
	boolean("zookeeper.set.acl", func(s *Settings) *bool { return &s.ZooKeeperSetACL }),
	boolean("zookeeper.ssl.client.enable", func(s *Settings) *bool { return &s.ZooKeeperSSLClientEnable }),
	str("zookeeper.ssl.truststore.location", false, func(s *Settings) *string { return &s.ZooKeeperSSLTruststoreLocation }),
	str("zookeeper.ssl.truststore.type", false, func(s *Settings) *string { return &s.ZooKeeperSSLTruststoreType }),
	str("zookeeper.ssl.truststore.password", true, func(s *Settings) *string { return &s.ZooKeeperSSLTruststorePassword }),
	str("zookeeper.ssl.keystore.location", false, func(s *Settings) *string { return &s.ZooKeeperSSLKeystoreLocation }),
	str("zookeeper.ssl.keystore.type", false, func(s *Settings) *string { return &s.ZooKeeperSSLKeystoreType }),
	str("zookeeper.ssl.keystore.password", true, func(s *Settings) *string { return &s.ZooKeeperSSLKeystorePassword }),
	optBool("zookeeper.ssl.endpoint.identification.enable", func(s *Settings) **bool { return &s.ZooKeeperSSLEndpointIdentificationEnable }),
}

// aliases are other clients' names for keys of properties.
var aliases = map[string]string{
	"ssl.ca.location":  "ssl.truststore.location", // librdkafka
	"sasl.mechanisms":  "sasl.mechanism",          // librdkafka
	"zookeeper.digest": "zookeeper.auth",
}

// ignored are keys that are accepted without effect: Kafka needs them for
// things zkconsumer does on its own.
var ignored = []string{
	"zookeeper.clientCnxnSocket", // Kafka needs Netty for TLS to ZooKeeper
}

// Keys lists every property key Settings reads, aliases included.
func Keys() []string {
	out := make([]string, 0, len(properties)+len(aliases)+len(ignored))
	for _, p := range properties {
		out = append(out, p.key)
	}
	for k := range aliases {
		out = append(out, k)
	}
	out = append(out, ignored...)
	slices.Sort(out)
	return out
}

// IsSecretKey reports whether the values of key are secret.
func IsSecretKey(key string) bool {
	if a, ok := aliases[key]; ok {
		key = a
	}
	for _, p := range properties {
		if p.key == key {
			return p.secret
		}
	}
	return false
}

// SetProperties sets the fields of s named by the keys of props that it
// knows (see Keys), trimming values as Kafka does. Unknown keys are left
// alone. A key given both under its Java name and a librdkafka alias is an
// error, and so is a value that does not parse; errors are *KeyErrors,
// joined, with secret values hidden.
func (s *Settings) SetProperties(props map[string]string) error {
	var errs []error
	for _, alias := range slices.Sorted(maps.Keys(aliases)) { // one order of errors, run after run
		key := aliases[alias]
		if _, ok := props[alias]; ok {
			if _, both := props[key]; both {
				errs = append(errs, &KeyError{Key: alias, Value: shown(key, props[alias]), Reason: "cannot be set together with " + key})
			}
		}
	}
	for _, p := range properties {
		raw, ok := props[p.key]
		for alias, key := range aliases {
			if key == p.key && !ok {
				raw, ok = props[alias]
			}
		}
		if !ok {
			continue
		}
		v := strings.TrimFunc(raw, func(r rune) bool { return r <= ' ' })
		if reason := p.set(s, v); reason != "" {
			errs = append(errs, &KeyError{Key: p.key, Value: shown(p.key, v), Reason: reason})
		}
	}
	return errors.Join(errs...)
}

// shown is v, or Hidden for a secret key.
func shown(key, v string) string {
	if IsSecretKey(key) {
		return Hidden
	}
	return v
}

// Properties returns the settings that are set as properties, under their
// Java names. It includes secrets: do not log it.
func (s Settings) Properties() map[string]string {
	out := map[string]string{}
	for _, p := range properties {
		if v, ok := p.get(&s); ok {
			out[p.key] = v
		}
	}
	return out
}
