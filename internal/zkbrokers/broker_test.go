package zkbrokers

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const brokerPath = "/brokers/ids/1"

func plaintext(host string, port int) Endpoint {
	return Endpoint{Listener: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: host, Port: port}
}

func TestDecodeBroker(t *testing.T) {
	tests := []struct {
		name string
		data string
		want Broker
	}{
		{
			name: "version 1",
			data: `{"version":1,"host":"h1","port":9092,"jmx_port":-1,"timestamp":"1531000000000"}`,
			want: Broker{ID: 1, Host: "h1", Port: 9092, Endpoints: []Endpoint{plaintext("h1", 9092)}},
		},
		{
			name: "version 2",
			data: `{"version":2,"host":"h1","port":9092,"jmx_port":-1,"timestamp":"1","endpoints":["PLAINTEXT://h1:9092","SSL://h1:9093"]}`,
			want: Broker{ID: 1, Host: "h1", Port: 9092, Endpoints: []Endpoint{
				plaintext("h1", 9092),
				{Listener: "SSL", SecurityProtocol: "SSL", Host: "h1", Port: 9093},
			}},
		},
		{
			name: "version 3 with rack, SSL first",
			data: `{"version":3,"host":"h1","port":9092,"jmx_port":9999,"timestamp":"1","endpoints":["SSL://h1:9093","PLAINTEXT://h1:9092"],"rack":"r1"}`,
			want: Broker{ID: 1, Host: "h1", Port: 9092, Rack: "r1", Endpoints: []Endpoint{
				{Listener: "SSL", SecurityProtocol: "SSL", Host: "h1", Port: 9093},
				plaintext("h1", 9092),
			}},
		},
		{
			name: "version 4 with named listeners",
			data: `{"listener_security_protocol_map":{"INTERNAL":"SASL_SSL","EXTERNAL":"PLAINTEXT"},"endpoints":["INTERNAL://10.0.0.1:9094","EXTERNAL://kafka.example.com:19092"],"rack":null,"jmx_port":-1,"host":"kafka.example.com","timestamp":"1","port":19092,"version":4}`,
			want: Broker{ID: 1, Host: "kafka.example.com", Port: 19092, Endpoints: []Endpoint{
				{Listener: "INTERNAL", SecurityProtocol: "SASL_SSL", Host: "10.0.0.1", Port: 9094},
				{Listener: "EXTERNAL", SecurityProtocol: "PLAINTEXT", Host: "kafka.example.com", Port: 19092},
			}},
		},
		{
			name: "Kafka 3.9 version 5",
			data: `{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://127.0.0.1:9092"],"jmx_port":-1,"port":9092,"host":"127.0.0.1","version":5,"timestamp":"1700000000000"}`,
			want: Broker{ID: 1, Host: "127.0.0.1", Port: 9092, Endpoints: []Endpoint{plaintext("127.0.0.1", 9092)}},
		},
		{
			name: "first of two PLAINTEXT listeners",
			data: `{"version":4,"listener_security_protocol_map":{"A":"PLAINTEXT","B":"PLAINTEXT"},"endpoints":["B://b:2","A://a:1"]}`,
			want: Broker{ID: 1, Host: "b", Port: 2, Endpoints: []Endpoint{
				{Listener: "B", SecurityProtocol: "PLAINTEXT", Host: "b", Port: 2},
				{Listener: "A", SecurityProtocol: "PLAINTEXT", Host: "a", Port: 1},
			}},
		},
		{
			name: "IPv6 in brackets",
			data: `{"version":4,"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://[::1]:9092"],"host":"::1","port":9092}`,
			want: Broker{ID: 1, Host: "::1", Port: 9092, Endpoints: []Endpoint{plaintext("::1", 9092)}},
		},
		{
			name: "IPv6 with zone, no brackets",
			data: `{"version":2,"endpoints":["PLAINTEXT://fe80::1%eth0:9092"]}`,
			want: Broker{ID: 1, Host: "fe80::1%eth0", Port: 9092, Endpoints: []Endpoint{plaintext("fe80::1%eth0", 9092)}},
		},
		{
			name: "empty host, lower-case names",
			data: `{"version":4,"listener_security_protocol_map":{"plaintext":"plaintext"},"endpoints":["plaintext://:9092"]}`,
			want: Broker{ID: 1, Host: "", Port: 9092, Endpoints: []Endpoint{plaintext("", 9092)}},
		},
		{
			name: "future version, null map",
			data: `{"version":9,"listener_security_protocol_map":null,"endpoints":["PLAINTEXT://h:-1"]}`,
			want: Broker{ID: 1, Host: "h", Port: -1, Endpoints: []Endpoint{plaintext("h", -1)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeBroker(1, brokerPath, []byte(tt.data))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestDecodeBrokerNoPlaintext(t *testing.T) {
	tests := []struct {
		name string
		data string
		want []Endpoint
	}{
		{
			name: "SSL only",
			data: `{"version":4,"listener_security_protocol_map":{"SSL":"SSL"},"endpoints":["SSL://h:9093"],"host":null,"port":-1,"rack":"r"}`,
			want: []Endpoint{{Listener: "SSL", SecurityProtocol: "SSL", Host: "h", Port: 9093}},
		},
		{
			name: "listener named PLAINTEXT that is SASL",
			data: `{"version":4,"listener_security_protocol_map":{"PLAINTEXT":"SASL_PLAINTEXT"},"endpoints":["PLAINTEXT://h:9092"]}`,
			want: []Endpoint{{Listener: "PLAINTEXT", SecurityProtocol: "SASL_PLAINTEXT", Host: "h", Port: 9092}},
		},
		{
			name: "no endpoints",
			data: `{"version":2,"endpoints":[]}`,
			want: []Endpoint{},
		},
		{
			name: "listener name containing ://",
			data: `{"version":2,"endpoints":["X://PLAINTEXT://h:1"]}`,
			want: []Endpoint{{Listener: "X://PLAINTEXT", SecurityProtocol: "X://PLAINTEXT", Host: "h", Port: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeBroker(7, brokerPath, []byte(tt.data))
			requireDecodeError(t, err, brokerPath)
			assert.ErrorIs(t, err, ErrNoPlaintextEndpoint)
			assert.Equal(t, int32(7), got.ID)
			assert.Empty(t, got.Host)
			assert.Zero(t, got.Port)
			assert.Equal(t, tt.want, got.Endpoints)
		})
	}
}

func TestDecodeBrokerRejects(t *testing.T) {
	tests := []struct{ name, data string }{
		{"empty", ""},
		{"null", "null"},
		{"bad JSON", `{"version":1,`},
		{"no version", `{"host":"h","port":9092}`},
		{"version 0", `{"version":0,"host":"h","port":9092}`},
		{"version string", `{"version":"1","host":"h","port":9092}`},
		{"v1 without host", `{"version":1,"port":9092}`},
		{"v1 null host", `{"version":1,"host":null,"port":9092}`},
		{"v1 without port", `{"version":1,"host":"h"}`},
		{"v1 string port", `{"version":1,"host":"h","port":"9092"}`},
		{"v2 without endpoints", `{"version":2,"host":"h","port":9092}`},
		{"endpoints not an array", `{"version":2,"endpoints":"PLAINTEXT://h:1"}`},
		{"endpoints null", `{"version":2,"endpoints":null}`},
		{"endpoint not a string", `{"version":2,"endpoints":[1]}`},
		{"endpoint without scheme", `{"version":2,"endpoints":["h:9092"]}`},
		{"endpoint without port", `{"version":2,"endpoints":["PLAINTEXT://h"]}`},
		{"endpoint with empty port", `{"version":2,"endpoints":["PLAINTEXT://h:"]}`},
		{"endpoint port not a number", `{"version":2,"endpoints":["PLAINTEXT://h:http"]}`},
		{"endpoint port too big", `{"version":2,"endpoints":["PLAINTEXT://h:2147483648"]}`},
		{"endpoint with path", `{"version":2,"endpoints":["PLAINTEXT://h/x:1"]}`},
		{"endpoint host with space", `{"version":2,"endpoints":["PLAINTEXT://h x:1"]}`},
		{"endpoint without listener", `{"version":2,"endpoints":["://h:1"]}`},
		{"listener missing from map", `{"version":4,"listener_security_protocol_map":{"SSL":"SSL"},"endpoints":["PLAINTEXT://h:9092"]}`},
		{"map not an object", `{"version":4,"listener_security_protocol_map":["PLAINTEXT"],"endpoints":["PLAINTEXT://h:9092"]}`},
		{"map value not a string", `{"version":4,"listener_security_protocol_map":{"PLAINTEXT":1},"endpoints":["PLAINTEXT://h:9092"]}`},
		{"map conflict by case", `{"version":4,"listener_security_protocol_map":{"A":"SSL","a":"PLAINTEXT"},"endpoints":["A://h:9092"]}`},
		{"rack not a string", `{"version":3,"endpoints":["PLAINTEXT://h:9092"],"rack":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeBroker(1, brokerPath, []byte(tt.data))
			requireDecodeError(t, err, brokerPath)
			assert.False(t, errors.Is(err, ErrNoPlaintextEndpoint))
			assert.Equal(t, Broker{}, got)
		})
	}
}

func TestBrokerAddr(t *testing.T) {
	assert.Equal(t, "h1:9092", Broker{Host: "h1", Port: 9092}.Addr())
	assert.Equal(t, "[::1]:9092", Broker{Host: "::1", Port: 9092}.Addr())
	assert.Equal(t, "10.0.0.1:9094", Endpoint{Host: "10.0.0.1", Port: 9094}.Addr())
	assert.Equal(t, "[fe80::1%eth0]:1", Endpoint{Host: "fe80::1%eth0", Port: 1}.Addr())
}

// encodeBrokerV5 writes b the way a Kafka 3.x broker would, for round trips.
func encodeBrokerV5(t testing.TB, b Broker) []byte {
	t.Helper()
	protocols := map[string]string{}
	endpoints := []string{}
	for _, ep := range b.Endpoints {
		host := ep.Host
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		endpoints = append(endpoints, ep.Listener+"://"+host+":"+strconv.Itoa(ep.Port))
		protocols[ep.Listener] = ep.SecurityProtocol
	}
	m := map[string]any{
		"version":                        5,
		"features":                       map[string]any{},
		"listener_security_protocol_map": protocols,
		"endpoints":                      endpoints,
		"jmx_port":                       -1,
		"host":                           b.Host,
		"port":                           b.Port,
		"timestamp":                      "1700000000000",
	}
	if b.Rack != "" {
		m["rack"] = b.Rack
	}
	data, err := json.Marshal(m)
	require.NoError(t, err)
	return data
}

func FuzzDecodeBroker(f *testing.F) {
	for _, s := range []string{
		`{"version":1,"host":"h1","port":9092,"jmx_port":-1,"timestamp":"1531000000000"}`,
		`{"version":2,"host":"h1","port":9092,"endpoints":["PLAINTEXT://h1:9092","SSL://h1:9093"]}`,
		`{"version":3,"endpoints":["SSL://h1:9093","PLAINTEXT://h1:9092"],"rack":"r1"}`,
		`{"version":4,"listener_security_protocol_map":{"INTERNAL":"SASL_SSL","EXTERNAL":"PLAINTEXT"},"endpoints":["INTERNAL://10.0.0.1:9094","EXTERNAL://kafka.example.com:19092"],"rack":null}`,
		`{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://127.0.0.1:9092"],"jmx_port":-1,"port":9092,"host":"127.0.0.1","version":5,"timestamp":"1700000000000"}`,
		`{"version":4,"listener_security_protocol_map":{"plaintext":"plaintext"},"endpoints":["plaintext://[::1]:9092","x://:1"]}`,
		`{"version":2,"endpoints":["X://PLAINTEXT://h:1","PLAINTEXT://[h:-0"]}`,
		`{"version":4,"listener_security_protocol_map":{"SSL":"SSL"},"endpoints":["SSL://h:9093"],"host":null,"port":-1}`,
		`{"version":0}`, `null`, `{`, ``,
	} {
		f.Add(int32(1), []byte(s))
	}
	f.Fuzz(func(t *testing.T, id int32, data []byte) {
		b, err := DecodeBroker(id, brokerPath, data)
		if errors.Is(err, ErrNoPlaintextEndpoint) {
			requireDecodeError(t, err, brokerPath)
			require.Equal(t, id, b.ID)
			for _, ep := range b.Endpoints {
				require.NotEqual(t, SecurityProtocolPlaintext, ep.SecurityProtocol)
			}
			return
		}
		if err != nil {
			requireDecodeError(t, err, brokerPath)
			return
		}
		require.Equal(t, id, b.ID)
		require.NotEmpty(t, b.Endpoints)
		first := -1
		for i, ep := range b.Endpoints {
			if ep.SecurityProtocol == SecurityProtocolPlaintext {
				first = i
				break
			}
		}
		require.GreaterOrEqual(t, first, 0)
		require.Equal(t, b.Endpoints[first].Addr(), b.Addr())

		back, err := DecodeBroker(id, brokerPath, encodeBrokerV5(t, b))
		require.NoError(t, err)
		require.Equal(t, b, back)
	})
}

// FuzzDecodeBrokerEndpoint drives the endpoint parser through well-formed
// registrations with arbitrary endpoint strings and listener maps.
func FuzzDecodeBrokerEndpoint(f *testing.F) {
	f.Add("PLAINTEXT://h1:9092", "PLAINTEXT", "PLAINTEXT")
	f.Add("EXTERNAL://[::1]:19092", "external", "plaintext")
	f.Add("X://PLAINTEXT://[fe80::1%eth0:-0", "X://PLAINTEXT", "PLAINTEXT")
	f.Add("SSL://:9093", "SSL", "SSL")
	f.Add("ǅ://h:1", "ǆ", "PLAINTEXT")
	f.Fuzz(func(t *testing.T, endpoint, listener, protocol string) {
		data, err := json.Marshal(map[string]any{
			"version":                        4,
			"listener_security_protocol_map": map[string]string{listener: protocol},
			"endpoints":                      []string{endpoint},
		})
		require.NoError(t, err)
		b, err := DecodeBroker(3, brokerPath, data)
		if err != nil {
			requireDecodeError(t, err, brokerPath)
			if !errors.Is(err, ErrNoPlaintextEndpoint) {
				return
			}
			require.Len(t, b.Endpoints, 1)
			require.NotEqual(t, SecurityProtocolPlaintext, b.Endpoints[0].SecurityProtocol)
			return
		}
		require.Len(t, b.Endpoints, 1)
		ep := b.Endpoints[0]
		require.Equal(t, SecurityProtocolPlaintext, ep.SecurityProtocol)
		require.Equal(t, strings.ToUpper(listener), ep.Listener)
		port, err := strconv.Atoi(endpoint[strings.LastIndexByte(endpoint, ':')+1:])
		require.NoError(t, err)
		require.Equal(t, port, ep.Port)
		require.Equal(t, ep.Host, b.Host)
		require.Equal(t, ep.Port, b.Port)
		back, err := DecodeBroker(3, brokerPath, encodeBrokerV5(t, b))
		require.NoError(t, err)
		require.Equal(t, b, back)
	})
}
