package coordinator

import (
	"errors"
	"fmt"

	"github.com/IBM/sarama"
)

// API is a Kafka API that zkconsumer's group clients send.
type API struct {
	Key  int16
	Name string
}

// The APIs of Kafka's group coordinator that zkconsumer's clients send.
var (
	APIOffsetCommit           = API{8, "OffsetCommit"}
	APIOffsetFetch            = API{9, "OffsetFetch"}
	APIFindCoordinator        = API{10, "FindCoordinator"}
	APIJoinGroup              = API{11, "JoinGroup"}
	APIHeartbeat              = API{12, "Heartbeat"}
	APILeaveGroup             = API{13, "LeaveGroup"}
	APISyncGroup              = API{14, "SyncGroup"}
	APIDescribeGroups         = API{15, "DescribeGroups"}
	APIConsumerGroupHeartbeat = API{68, "ConsumerGroupHeartbeat"}
)

// Range is the versions of one API, Min to Max inclusive.
type Range struct{ Min, Max int16 }

func (r Range) String() string {
	if r.Min == r.Max {
		return fmt.Sprint(r.Min)
	}
	return fmt.Sprintf("%d-%d", r.Min, r.Max)
}

// Need is what a client needs of one API: the versions it can send. The
// highest version the broker speaks within them is chosen.
type Need struct {
	API
	Range
}

// ErrUnsupportedVersion is wrapped by an *UnsupportedError.
var ErrUnsupportedVersion = errors.New("the broker does not speak a version of an API this client needs")

// UnsupportedError is the error of Negotiate for a broker that speaks no
// version of an API that the client needs: too old (its newest version is
// below the client's oldest) or too new (its oldest is above the client's
// newest, as Kafka 4.0 dropped old versions), or without the API at all.
type UnsupportedError struct {
	// Broker names the broker: "broker 2 at host:9092".
	Broker string
	API    API
	// Need is what the client can send.
	Need Range
	// Have is what the broker speaks; nil when it does not speak the API.
	Have *Range
}

func (e *UnsupportedError) Error() string {
	if e.Have == nil {
		return fmt.Sprintf("%s does not speak %s (API key %d) at all; this client needs version %s",
			e.Broker, e.API.Name, e.API.Key, e.Need)
	}
	hint := "upgrade the broker"
	if e.Have.Min > e.Need.Max {
		hint = "the broker dropped the versions this client speaks"
	}
	return fmt.Sprintf("%s speaks %s versions %s, this client needs %s (%s)",
		e.Broker, e.API.Name, e.Have, e.Need, hint)
}

// Unwrap returns ErrUnsupportedVersion.
func (e *UnsupportedError) Unwrap() error { return ErrUnsupportedVersion }

// Versions are the versions chosen for one broker, the one place where
// zkconsumer's group clients pick the versions they send.
type Versions struct {
	picked map[int16]int16
}

// Of returns the version chosen for api, ok=false if it was not
// negotiated.
func (v Versions) Of(api API) (version int16, ok bool) {
	version, ok = v.picked[api.Key]
	return version, ok
}

// Negotiate chooses, for each need, the highest version that both the
// client and the broker speak, given the broker's ApiVersions answer
// (have). A need the broker cannot meet fails with an *UnsupportedError
// naming the broker and the API.
func Negotiate(broker string, have map[int16]Range, needs ...Need) (Versions, error) {
	v := Versions{picked: make(map[int16]int16, len(needs))}
	var errs []error
	for _, n := range needs {
		h, ok := have[n.Key]
		if !ok {
			errs = append(errs, &UnsupportedError{Broker: broker, API: n.API, Need: n.Range})
			continue
		}
		hi, lo := min(h.Max, n.Max), max(h.Min, n.Min)
		if hi < lo {
			errs = append(errs, &UnsupportedError{Broker: broker, API: n.API, Need: n.Range, Have: &h})
			continue
		}
		v.picked[n.Key] = hi
	}
	if len(errs) > 0 {
		return Versions{}, errors.Join(errs...)
	}
	return v, nil
}

// BrokerName names a broker in errors: "broker 2 at host:9092".
func BrokerName(id int32, addr string) string { return fmt.Sprintf("broker %d at %s", id, addr) }

// ApiVersions asks b, connected, which versions of each API it speaks.
func ApiVersions(b *sarama.Broker) (map[int16]Range, error) {
	resp, err := b.ApiVersions(&sarama.ApiVersionsRequest{})
	if err == nil && resp.ErrorCode != int16(sarama.ErrNoError) {
		err = sarama.KError(resp.ErrorCode)
	}
	if err != nil {
		return nil, fmt.Errorf("ApiVersions: %w", err)
	}
	out := make(map[int16]Range, len(resp.ApiKeys))
	for _, k := range resp.ApiKeys {
		out[k.ApiKey] = Range{Min: k.MinVersion, Max: k.MaxVersion}
	}
	return out, nil
}
