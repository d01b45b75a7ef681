package zkbrokers

import (
	"errors"
	"github.com/zkconsumer/zkconsumer/zkutil"
	"strings"
	"testing"
)

func TestEndpointFor(t *testing.T) {
	data := []byte(`{"version":5,"host":null,"port":-1,"endpoints":["INTERNAL://10.0.0.1:9092","EXTERNAL://kafka.example.com:9094","REPL://10.0.0.1:9093","CLIENT://kafka.example.com:9095"],
		"listener_security_protocol_map":{"INTERNAL":"SASL_PLAINTEXT","EXTERNAL":"SASL_SSL","REPL":"SSL","CLIENT":"SASL_SSL"}}`)
	for _, tc := range []struct {
		protocol, listener, want string
	}{
		{"SASL_SSL", "", "kafka.example.com:9094"},
		{"sasl_ssl", "client", "kafka.example.com:9095"},
		{"SSL", "", "10.0.0.1:9093"},
		{"SASL_PLAINTEXT", "", "10.0.0.1:9092"},
		{"", "", ""},
		{"SSL", "EXTERNAL", ""},
	} {
		_, ep, err := decodeBrokerEndpoint(3, "/brokers/ids/3", data, tc.protocol, tc.listener)
		if tc.want == "" {
			var ne *NoEndpointError
			if !errors.As(err, &ne) || !errors.Is(err, ErrNoEndpoint) || ne.Broker != 3 {
				t.Errorf("%s/%s: error %v", tc.protocol, tc.listener, err)
			} else if !strings.Contains(err.Error(), "EXTERNAL(SASL_SSL)") {
				t.Errorf("%s/%s: error does not list the listeners: %v", tc.protocol, tc.listener, err)
			}
			continue
		}
		if err != nil || ep.Addr() != tc.want {
			t.Errorf("%s/%s: got %s, %v; want %s", tc.protocol, tc.listener, ep.Addr(), err, tc.want)
		}
	}
	// Corrupt registrations are still errors.
	if _, _, err := decodeBrokerEndpoint(3, "/brokers/ids/3", []byte(`{`), "SSL", ""); !errors.As(err, new(*zkutil.DecodeError)) {
		t.Errorf("corrupt: %v", err)
	}
}

// decodeBrokerEndpoint decodes a registration like DecodeBroker and picks
// its endpoint with EndpointFor. A broker without a PLAINTEXT listener is
// not an error here unless protocol is PLAINTEXT.
func decodeBrokerEndpoint(id int32, path string, data []byte, protocol, listener string) (Broker, Endpoint, error) {
	b, err := DecodeBroker(id, path, data)
	if err != nil && !errors.Is(err, ErrNoPlaintextEndpoint) {
		return b, Endpoint{}, err
	}
	ep, err := b.EndpointFor(protocol, listener)
	if err != nil {
		return b, Endpoint{}, err
	}
	return b, ep, nil
}
