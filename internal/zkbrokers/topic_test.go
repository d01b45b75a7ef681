package zkbrokers

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	topicPath = "/brokers/topics/orders"
	statePath = "/brokers/topics/orders/partitions/0/state"
)

func TestDecodeTopicPartitions(t *testing.T) {
	tests := []struct {
		name string
		data string
		want map[int32][]int32
	}{
		{
			name: "Kafka 1.x",
			data: `{"version":1,"partitions":{"0":[1,2],"1":[2,3]}}`,
			want: map[int32][]int32{0: {1, 2}, 1: {2, 3}},
		},
		{
			name: "Kafka 3.x extra keys",
			data: `{"partitions":{"2":[3],"0":[1],"10":[2],"1":[2]},"topic_id":"Hm3HnZUvRW2oVXYmNCzmqQ","adding_replicas":{"0":[4]},"removing_replicas":{},"version":3}`,
			want: map[int32][]int32{0: {1}, 1: {2}, 2: {3}, 10: {2}},
		},
		{
			name: "empty partitions and replicas",
			data: `{"version":1,"partitions":{}}`,
			want: map[int32][]int32{},
		},
		{
			name: "parseInt-style keys",
			data: `{"partitions":{"+1":[],"007":[1],"2147483647":[-1]}}`,
			want: map[int32][]int32{1: {}, 7: {1}, 2147483647: {-1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeTopicPartitions("orders", topicPath, []byte(tt.data))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestDecodeTopicPartitionsRejects(t *testing.T) {
	tests := []struct{ name, data string }{
		{"empty", ""},
		{"null", "null"},
		{"bad JSON", `{"partitions":{"0":[1,2]}`},
		{"no partitions", `{"version":1}`},
		{"null partitions", `{"version":1,"partitions":null}`},
		{"partitions array", `{"version":1,"partitions":[[1,2]]}`},
		{"negative partition", `{"partitions":{"-1":[1]}}`},
		{"non-numeric partition", `{"partitions":{"a":[1]}}`},
		{"empty partition key", `{"partitions":{"":[1]}}`},
		{"partition too big", `{"partitions":{"2147483648":[1]}}`},
		{"partition listed twice", `{"partitions":{"1":[1],"01":[2]}}`},
		{"null replicas", `{"partitions":{"0":null}}`},
		{"replicas not an array", `{"partitions":{"0":1}}`},
		{"replica not an integer", `{"partitions":{"0":[1.5]}}`},
		{"replica a string", `{"partitions":{"0":["1"]}}`},
		{"replica too big", `{"partitions":{"0":[4294967296]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeTopicPartitions("orders", topicPath, []byte(tt.data))
			de := requireDecodeError(t, err, topicPath)
			assert.Contains(t, de.Error(), `topic "orders"`)
			assert.Nil(t, got)
		})
	}
}

func TestSortedPartitions(t *testing.T) {
	assert.Equal(t, []int32{0, 1, 2, 10, 11}, SortedPartitions(map[int32][]int32{10: nil, 2: nil, 0: nil, 11: nil, 1: nil}))
	assert.Empty(t, SortedPartitions(nil))
}

func TestDecodePartitionState(t *testing.T) {
	tests := []struct {
		name string
		data string
		want PartitionState
	}{
		{
			name: "Kafka 1.x",
			data: `{"controller_epoch":3,"leader":1,"version":1,"leader_epoch":5,"isr":[1,2]}`,
			want: PartitionState{Leader: 1, LeaderEpoch: 5, ISR: []int32{1, 2}, ControllerEpoch: 3},
		},
		{
			name: "no leader",
			data: `{"controller_epoch":3,"leader":-1,"version":1,"leader_epoch":6,"isr":[]}`,
			want: PartitionState{Leader: NoLeader, LeaderEpoch: 6, ISR: []int32{}, ControllerEpoch: 3},
		},
		{
			name: "Kafka 3.x extra keys",
			data: `{"isr":[2],"leader":2,"leader_recovery_state":0,"version":2,"leader_epoch":0,"controller_epoch":1}`,
			want: PartitionState{Leader: 2, ISR: []int32{2}, ControllerEpoch: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodePartitionState(statePath, []byte(tt.data))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestDecodePartitionStateRejects(t *testing.T) {
	tests := []struct{ name, data string }{
		{"empty", ""},
		{"bad JSON", `{"leader":1`},
		{"no leader", `{"controller_epoch":3,"version":1,"leader_epoch":5,"isr":[1,2]}`},
		{"no leader_epoch", `{"controller_epoch":3,"leader":1,"isr":[1,2]}`},
		{"no controller_epoch", `{"leader":1,"leader_epoch":5,"isr":[1,2]}`},
		{"no isr", `{"controller_epoch":3,"leader":1,"leader_epoch":5}`},
		{"leader below -1", `{"controller_epoch":3,"leader":-2,"leader_epoch":5,"isr":[1]}`},
		{"leader a string", `{"controller_epoch":3,"leader":"1","leader_epoch":5,"isr":[1]}`},
		{"leader null", `{"controller_epoch":3,"leader":null,"leader_epoch":5,"isr":[1]}`},
		{"epoch a float", `{"controller_epoch":3,"leader":1,"leader_epoch":5.5,"isr":[1]}`},
		{"isr null", `{"controller_epoch":3,"leader":1,"leader_epoch":5,"isr":null}`},
		{"isr of strings", `{"controller_epoch":3,"leader":1,"leader_epoch":5,"isr":["1"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodePartitionState(statePath, []byte(tt.data))
			requireDecodeError(t, err, statePath)
			assert.Equal(t, PartitionState{}, got)
		})
	}
}

func encodeTopicPartitions(t testing.TB, m map[int32][]int32) []byte {
	t.Helper()
	parts := make(map[string][]int32, len(m))
	for p, r := range m {
		parts[strconv.Itoa(int(p))] = r
	}
	data, err := json.Marshal(map[string]any{"version": 1, "partitions": parts})
	require.NoError(t, err)
	return data
}

func FuzzDecodeTopicPartitions(f *testing.F) {
	for _, s := range []string{
		`{"version":1,"partitions":{"0":[1,2],"1":[2,3]}}`,
		`{"partitions":{"2":[3],"0":[1]},"topic_id":"x","adding_replicas":{},"removing_replicas":{},"version":3}`,
		`{"partitions":{"+1":[],"007":[1],"2147483647":[-1]}}`,
		`{"partitions":{"1":[1],"01":[2]}}`,
		`{"partitions":{"-1":[1]}}`,
		`{"partitions":null}`, `{}`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeTopicPartitions("orders", topicPath, data)
		if err != nil {
			requireDecodeError(t, err, topicPath)
			return
		}
		sorted := SortedPartitions(m)
		require.Len(t, sorted, len(m))
		require.True(t, slices.IsSorted(sorted))
		for _, p := range sorted {
			require.GreaterOrEqual(t, p, int32(0))
			require.NotNil(t, m[p])
		}
		back, err := DecodeTopicPartitions("orders", topicPath, encodeTopicPartitions(t, m))
		require.NoError(t, err)
		require.Equal(t, m, back)
	})
}

func FuzzDecodePartitionState(f *testing.F) {
	for _, s := range []string{
		`{"controller_epoch":3,"leader":1,"version":1,"leader_epoch":5,"isr":[1,2]}`,
		`{"controller_epoch":3,"leader":-1,"version":1,"leader_epoch":6,"isr":[]}`,
		`{"isr":[2],"leader":2,"leader_recovery_state":0,"version":2,"leader_epoch":0,"controller_epoch":1}`,
		`{"controller_epoch":3,"leader":-2,"leader_epoch":5,"isr":[1]}`,
		`{"leader":1}`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := DecodePartitionState(statePath, data)
		if err != nil {
			requireDecodeError(t, err, statePath)
			return
		}
		require.GreaterOrEqual(t, s.Leader, NoLeader)
		require.NotNil(t, s.ISR)
		enc, err := json.Marshal(map[string]any{
			"controller_epoch": s.ControllerEpoch, "leader": s.Leader, "version": 1,
			"leader_epoch": s.LeaderEpoch, "isr": s.ISR,
		})
		require.NoError(t, err)
		back, err := DecodePartitionState(statePath, enc)
		require.NoError(t, err)
		require.Equal(t, s, back)
	})
}
