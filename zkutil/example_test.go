package zkutil_test

import (
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
	// map[] bad data in znode /consumers/mygroup/ids/mygroup_c1: stream count of "orders" is 0, want at least 1
}

func ExampleNormalizeTopicFilter() {
	fmt.Println(zkutil.NormalizeTopicFilter(` "orders.*, payments" `))
	// Output:
	// orders.*|payments
}
