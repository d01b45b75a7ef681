package zkbrokers

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/zkconsumer/zkconsumer/internal/zkjson"
)

// SecurityProtocolPlaintext is the security protocol of the listeners the
// old consumer can use: no TLS, no SASL.
const SecurityProtocolPlaintext = "PLAINTEXT"

// ErrNoPlaintextEndpoint is the cause of the *zkutil.DecodeError that DecodeBroker
// returns for a broker without a PLAINTEXT listener (Kafka's
// BrokerEndPointNotAvailableException).
var ErrNoPlaintextEndpoint = errors.New("broker has no PLAINTEXT endpoint")

// Endpoint is one listener of a broker, parsed from an entry such as
// "EXTERNAL://host:9092" of the broker registration.
type Endpoint struct {
	// Listener is the listener name in upper case, such as "PLAINTEXT" or
	// "EXTERNAL".
	Listener string
	// SecurityProtocol is PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL, in
	// upper case.
	SecurityProtocol string
	// Host is the advertised host name or IP address, without brackets. It
	// is empty when the broker advertised none.
	Host string
	// Port is the advertised port.
	Port int
}

// Addr returns "host:port", with an IPv6 host in brackets.
func (e Endpoint) Addr() string {
	return net.JoinHostPort(e.Host, strconv.Itoa(e.Port))
}

// Broker is a broker registration (/brokers/ids/<id>) as the old consumer
// uses it.
type Broker struct {
	// ID is the broker id, the name of its znode.
	ID int32
	// Host and Port are those of the first PLAINTEXT endpoint, the only one
	// the old consumer connects to (Kafka 0.9 and later).
	Host string
	Port int
	// Rack is the broker's rack, empty when it has none.
	Rack string
	// Endpoints are all the listeners in registration order, including
	// those that need TLS or SASL.
	Endpoints []Endpoint
}

// Addr returns the "host:port" the consumer connects to, with an IPv6 host
// in brackets.
func (b Broker) Addr() string {
	return net.JoinHostPort(b.Host, strconv.Itoa(b.Port))
}

// DecodeBroker parses the registration of broker id stored at path. It reads
// every version brokers wrote (1 to 5, and treats later versions like 5):
//
//   - version 1 has only "host" and "port", a PLAINTEXT listener;
//   - version 2 and later list "endpoints" as "LISTENER://host:port", with
//     IPv6 hosts in brackets and an empty host allowed;
//   - version 4 and later add "listener_security_protocol_map", which maps
//     each listener name to its security protocol. Without it, a listener's
//     name is its protocol. Names and protocols are compared in upper case.
//
// Top-level "host" and "port" of versions 2 and later are ignored, as Kafka
// does: they are null and -1 when the broker has no PLAINTEXT listener.
//
// When no endpoint uses PLAINTEXT, DecodeBroker returns a *zkutil.DecodeError
// wrapping ErrNoPlaintextEndpoint together with a Broker that has ID, Rack
// and Endpoints filled in, so that callers may still use other listeners.
func DecodeBroker(id int32, path string, data []byte) (Broker, error) {
	b, err := decodeBroker(id, data)
	if err != nil {
		return b, decodeError(path, err)
	}
	return b, nil
}

func decodeBroker(id int32, data []byte) (Broker, error) {
	obj, err := zkjson.ParseObject(data)
	if err != nil {
		return Broker{}, err
	}
	rawVersion, ok := obj["version"]
	if !ok {
		return Broker{}, errors.New(`broker registration has no "version"`)
	}
	version, err := zkjson.Int32(rawVersion)
	if err != nil {
		return Broker{}, fmt.Errorf("broker version: %w", err)
	}
	if version < 1 {
		return Broker{}, fmt.Errorf("broker registration version %d is not supported", version)
	}

	b := Broker{ID: id}
	if raw, ok := obj["rack"]; ok && !zkjson.IsNull(raw) {
		if b.Rack, err = zkjson.String(raw); err != nil {
			return Broker{}, fmt.Errorf("broker rack: %w", err)
		}
	}
	if version == 1 {
		ep, err := decodeV1Endpoint(obj)
		if err != nil {
			return Broker{}, err
		}
		b.Endpoints = []Endpoint{ep}
	} else if b.Endpoints, err = decodeEndpoints(obj); err != nil {
		return Broker{}, err
	}

	for _, ep := range b.Endpoints {
		if ep.SecurityProtocol == SecurityProtocolPlaintext {
			b.Host, b.Port = ep.Host, ep.Port
			return b, nil
		}
	}
	return b, ErrNoPlaintextEndpoint
}

// decodeV1Endpoint reads the top-level host and port of a version 1
// registration, which is a single PLAINTEXT listener.
func decodeV1Endpoint(obj map[string]json.RawMessage) (Endpoint, error) {
	rawHost, ok := obj["host"]
	if !ok {
		return Endpoint{}, errors.New(`version 1 broker registration has no "host"`)
	}
	host, err := zkjson.String(rawHost)
	if err != nil {
		return Endpoint{}, fmt.Errorf("broker host: %w", err)
	}
	rawPort, ok := obj["port"]
	if !ok {
		return Endpoint{}, errors.New(`version 1 broker registration has no "port"`)
	}
	port, err := zkjson.Int32(rawPort)
	if err != nil {
		return Endpoint{}, fmt.Errorf("broker port: %w", err)
	}
	return Endpoint{
		Listener:         SecurityProtocolPlaintext,
		SecurityProtocol: SecurityProtocolPlaintext,
		Host:             host,
		Port:             int(port),
	}, nil
}

// decodeEndpoints reads "endpoints" and "listener_security_protocol_map" of
// a version 2+ registration.
func decodeEndpoints(obj map[string]json.RawMessage) ([]Endpoint, error) {
	var protocols map[string]string // nil: a listener's name is its protocol
	if raw, ok := obj["listener_security_protocol_map"]; ok && !zkjson.IsNull(raw) {
		m, err := zkjson.Object(raw)
		if err != nil {
			return nil, fmt.Errorf("listener_security_protocol_map: %w", err)
		}
		protocols = make(map[string]string, len(m))
		for name, rawProto := range m {
			proto, err := zkjson.String(rawProto)
			if err != nil {
				return nil, fmt.Errorf("protocol of listener %q: %w", name, err)
			}
			name, proto = strings.ToUpper(name), strings.ToUpper(proto)
			if prev, dup := protocols[name]; dup && prev != proto {
				return nil, fmt.Errorf("listener %q maps to both %q and %q", name, prev, proto)
			}
			protocols[name] = proto
		}
	}

	raw, ok := obj["endpoints"]
	if !ok {
		return nil, errors.New(`broker registration has no "endpoints"`)
	}
	list, err := zkjson.Array(raw)
	if err != nil {
		return nil, fmt.Errorf("endpoints: %w", err)
	}
	eps := make([]Endpoint, 0, len(list))
	for _, rawEP := range list {
		s, err := zkjson.String(rawEP)
		if err != nil {
			return nil, fmt.Errorf("endpoint: %w", err)
		}
		ep, err := parseEndpoint(s)
		if err != nil {
			return nil, err
		}
		ep.SecurityProtocol = ep.Listener
		if protocols != nil {
			if ep.SecurityProtocol, ok = protocols[ep.Listener]; !ok {
				return nil, fmt.Errorf("no security protocol for listener %q", ep.Listener)
			}
		}
		eps = append(eps, ep)
	}
	return eps, nil
}

// parseEndpoint splits "LISTENER://host:port" or "LISTENER://[v6host]:port"
// the way Kafka's EndPoint.createEndPoint does: the listener is everything
// before the last "://"; the port is a possibly negative 32-bit decimal
// after the last ':'; the host between them may be empty and may be wrapped
// in brackets, and otherwise consists of ASCII letters, digits and "-%._:".
// The listener name is returned in upper case.
func parseEndpoint(s string) (Endpoint, error) {
	bad := func(why string) error {
		return fmt.Errorf("endpoint %s: %s", zkjson.Quote([]byte(s)), why)
	}
	i := strings.LastIndex(s, "://")
	if i < 0 {
		return Endpoint{}, bad(`want "LISTENER://host:port"`)
	}
	listener, rest := strings.ToUpper(s[:i]), s[i+len("://"):]
	if listener == "" {
		return Endpoint{}, bad("no listener name")
	}
	j := strings.LastIndexByte(rest, ':')
	if j < 0 {
		return Endpoint{}, bad("no port")
	}
	host, portStr := rest[:j], rest[j+1:]
	if !zkjson.IsIntegerLiteral(portStr) {
		return Endpoint{}, bad("port is not a number")
	}
	port, err := strconv.ParseInt(portStr, 10, 32)
	if err != nil {
		return Endpoint{}, bad("port is out of range")
	}
	host = strings.TrimPrefix(host, "[")
	host = strings.TrimSuffix(host, "]")
	for k := 0; k < len(host); k++ {
		if !isHostChar(host[k]) {
			return Endpoint{}, bad(fmt.Sprintf("host has the invalid character %q", host[k]))
		}
	}
	return Endpoint{Listener: listener, Host: host, Port: int(port)}, nil
}

func isHostChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-%._:", c) >= 0
}
