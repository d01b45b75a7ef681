package zkbrokers_test

import (
	"errors"
	"fmt"

	"github.com/zkconsumer/zkconsumer/internal/zkbrokers"
)

func ExampleDecodeBroker() {
	data := []byte(`{"listener_security_protocol_map":{"INTERNAL":"SSL","EXTERNAL":"PLAINTEXT"},` +
		`"endpoints":["INTERNAL://[fd00::1]:9093","EXTERNAL://kafka1.example.com:9092"],"version":4}`)
	b, err := zkbrokers.DecodeBroker(1, zkbrokers.BrokerIDPath(1), data)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(b.Addr())
	for _, ep := range b.Endpoints {
		fmt.Println(ep.Listener, ep.SecurityProtocol, ep.Addr())
	}

	_, err = zkbrokers.DecodeBroker(2, zkbrokers.BrokerIDPath(2), []byte(`{"version":2,"endpoints":["SSL://h:9093"]}`))
	fmt.Println(errors.Is(err, zkbrokers.ErrNoPlaintextEndpoint), err)
	// Output:
	// kafka1.example.com:9092
	// INTERNAL SSL [fd00::1]:9093
	// EXTERNAL PLAINTEXT kafka1.example.com:9092
	// true bad data in znode /brokers/ids/2: broker has no PLAINTEXT endpoint
}
