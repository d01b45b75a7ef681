package zkbrokers

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNoEndpoint is wrapped by the *NoEndpointError that Broker.EndpointFor
// returns.
var ErrNoEndpoint = errors.New("broker has no matching endpoint")

// NoEndpointError reports a broker without a listener of the wanted
// security protocol or name.
type NoEndpointError struct {
	// Broker is the broker id.
	Broker int32
	// Protocol and Listener are what was asked for; Listener is empty when
	// any listener of Protocol would do.
	Protocol, Listener string
	// Endpoints are the broker's listeners.
	Endpoints []Endpoint
}

// Error names the broker, what was asked for and what it has.
func (e *NoEndpointError) Error() string {
	have := make([]string, len(e.Endpoints))
	for i, ep := range e.Endpoints {
		have[i] = ep.Listener + "(" + ep.SecurityProtocol + ")"
	}
	want := "a " + e.Protocol + " listener (security.protocol)"
	if e.Listener != "" {
		want = "listener " + e.Listener + " with protocol " + e.Protocol + " (zkconsumer.listener.name, security.protocol)"
	}
	return fmt.Sprintf("broker %d has no %s; it registered %s", e.Broker, want, strings.Join(have, ", "))
}

// Unwrap returns ErrNoEndpoint.
func (e *NoEndpointError) Unwrap() error { return ErrNoEndpoint }

// EndpointFor picks the listener of b to connect to: the one named
// listener (case-insensitive) if listener is not empty, which must use
// protocol; otherwise the first, in registration order, whose security
// protocol is protocol (case-insensitive, PLAINTEXT if empty).
func (b Broker) EndpointFor(protocol, listener string) (Endpoint, error) {
	protocol = strings.ToUpper(protocol)
	if protocol == "" {
		protocol = SecurityProtocolPlaintext
	}
	listener = strings.ToUpper(listener)
	for _, ep := range b.Endpoints {
		if listener != "" && ep.Listener != listener {
			continue
		}
		if ep.SecurityProtocol == protocol {
			return ep, nil
		}
	}
	return Endpoint{}, &NoEndpointError{Broker: b.ID, Protocol: protocol, Listener: listener, Endpoints: b.Endpoints}
}
