package zkutil

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTopicPartitionString(t *testing.T) {
	assert.Equal(t, "orders-3", TopicPartition{Topic: "orders", Partition: 3}.String())
	assert.Equal(t, "a-b-10", TopicPartition{Topic: "a-b", Partition: 10}.String())
}

func TestConsumerThreadIDString(t *testing.T) {
	id := ConsumerThreadID{ConsumerID: "mygroup_host1-1531000000000-5f3a9c2e", Thread: 0}
	assert.Equal(t, "mygroup_host1-1531000000000-5f3a9c2e-0", id.String())
}

func TestConsumerThreadIDLess(t *testing.T) {
	ids := []ConsumerThreadID{{"g_c2", 0}, {"g_c1", 2}, {"g_c1", 10}, {"g_c1", 1}, {"g_c1", 0}}
	slices.SortFunc(ids, func(a, b ConsumerThreadID) int {
		switch {
		case a.Less(b):
			return -1
		case b.Less(a):
			return 1
		}
		return 0
	})
	// Java string order: "g_c1-10" sorts before "g_c1-2".
	assert.Equal(t, []ConsumerThreadID{{"g_c1", 0}, {"g_c1", 1}, {"g_c1", 10}, {"g_c1", 2}, {"g_c2", 0}}, ids)
}

func TestParseConsumerThreadID(t *testing.T) {
	tests := []struct {
		in   string
		want ConsumerThreadID
	}{
		{"mygroup_host1-1531000000000-5f3a9c2e-0", ConsumerThreadID{"mygroup_host1-1531000000000-5f3a9c2e", 0}},
		{"g_c1-12", ConsumerThreadID{"g_c1", 12}},
		{"a--1", ConsumerThreadID{"a-", 1}},
	}
	for _, tt := range tests {
		got, err := ParseConsumerThreadID(tt.in)
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got)
		assert.Equal(t, tt.in, got.String())
	}
	for _, bad := range []string{"", "-", "-0", "g_c1", "g_c1-", "g_c1-x", "g_c1-01", "g_c1-+1", "g_c1-1 ", "g_c1-99999999999999999999"} {
		_, err := ParseConsumerThreadID(bad)
		require.Error(t, err, bad)
		assert.NotRegexp(t, `^zkutil: `, err.Error())
	}
}

func FuzzParseConsumerThreadID(f *testing.F) {
	for _, s := range []string{
		"mygroup_host1-1531000000000-5f3a9c2e-0", "g_c1-12", "a--1", "", "-", "-0",
		"g_c1-", "g_c1-01", "g_c1-+1", "g_c1--1", "g_c1-99999999999999999999", "ü-1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseConsumerThreadID(s)
		if err != nil {
			require.NotRegexp(t, `^zkutil: `, err.Error())
			return
		}
		require.NotEmpty(t, id.ConsumerID)
		require.GreaterOrEqual(t, id.Thread, 0)
		require.Equal(t, s, id.String())
		back, err := ParseConsumerThreadID(id.String())
		require.NoError(t, err)
		require.Equal(t, id, back)
	})
}
