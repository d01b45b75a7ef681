package zkutil

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPaths(t *testing.T) {
	tests := []struct{ got, want string }{
		{ConsumersPath, "/consumers"},
		{GroupPath("g1"), "/consumers/g1"},
		{ConsumerIDsPath("g1"), "/consumers/g1/ids"},
		{ConsumerIDPath("g1", "g1_host-1531000000000-5f3a9c2e"), "/consumers/g1/ids/g1_host-1531000000000-5f3a9c2e"},
		{OwnersPath("g1"), "/consumers/g1/owners"},
		{OwnersTopicPath("g1", "orders"), "/consumers/g1/owners/orders"},
		{OwnerPath("g1", "orders", 7), "/consumers/g1/owners/orders/7"},
		{OffsetsPath("g1"), "/consumers/g1/offsets"},
		{OffsetsTopicPath("g1", "orders"), "/consumers/g1/offsets/orders"},
		{OffsetPath("g1", "orders", 0), "/consumers/g1/offsets/orders/0"},
		{OffsetPath("g1", "orders", math.MaxInt32), "/consumers/g1/offsets/orders/2147483647"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.got)
	}
}
