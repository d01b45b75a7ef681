package zkutil_test

import (
	"errors"
	"fmt"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

func ExampleEncodeRegistration() {
	data, err := zkutil.EncodeRegistration(zkutil.Registration{
		Subscription: map[string]int{"payments": 1, "orders": 2},
		Pattern:      zkutil.PatternStatic,
		Timestamp:    1531000000000,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(data))
	// Output:
	// {"version":1,"subscription":{"orders":2,"payments":1},"pattern":"static","timestamp":"1531000000000"}
}

func ExampleDecodeRegistration() {
	path := zkutil.ConsumerIDPath("mygroup", "mygroup_c1")
	r, err := zkutil.DecodeRegistration(path, []byte(`{"version":1,"subscription":{"orders":0},"pattern":"static","timestamp":"1"}`))
	fmt.Println(r.Subscription, err)
	// Output:
	// map[] zkutil: bad data in znode /consumers/mygroup/ids/mygroup_c1: stream count of "orders" is 0, want at least 1
}

func ExampleDecodeBroker() {
	data := []byte(`{"listener_security_protocol_map":{"INTERNAL":"SSL","EXTERNAL":"PLAINTEXT"},` +
		`"endpoints":["INTERNAL://[fd00::1]:9093","EXTERNAL://kafka1.example.com:9092"],"version":4}`)
	b, err := zkutil.DecodeBroker(1, zkutil.BrokerIDPath(1), data)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(b.Addr())
	for _, ep := range b.Endpoints {
		fmt.Println(ep.Listener, ep.SecurityProtocol, ep.Addr())
	}

	_, err = zkutil.DecodeBroker(2, zkutil.BrokerIDPath(2), []byte(`{"version":2,"endpoints":["SSL://h:9093"]}`))
	fmt.Println(errors.Is(err, zkutil.ErrNoPlaintextEndpoint), err)
	// Output:
	// kafka1.example.com:9092
	// INTERNAL SSL [fd00::1]:9093
	// EXTERNAL PLAINTEXT kafka1.example.com:9092
	// true zkutil: bad data in znode /brokers/ids/2: broker has no PLAINTEXT endpoint
}

func ExampleNormalizeTopicFilter() {
	fmt.Println(zkutil.NormalizeTopicFilter(` "orders.*, payments" `))
	// Output:
	// orders.*|payments
}
