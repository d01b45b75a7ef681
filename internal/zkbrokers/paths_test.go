package zkbrokers

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPaths(t *testing.T) {
	tests := []struct{ got, want string }{
		{BrokerIDsPath, "/brokers/ids"},
		{BrokerTopicsPath, "/brokers/topics"},
		{BrokerIDPath(1001), "/brokers/ids/1001"},
		{TopicPath("orders"), "/brokers/topics/orders"},
		{PartitionStatePath("orders", 3), "/brokers/topics/orders/partitions/3/state"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.got)
	}
}
