package coordinator

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNegotiate: the highest version both speak is chosen for each need;
// a broker too old, too new or without the API fails with errors that
// name the broker and the API, all of them at once.
func TestNegotiate(t *testing.T) {
	have := map[int16]Range{
		APIJoinGroup.Key:    {Min: 2, Max: 9},
		APISyncGroup.Key:    {Min: 0, Max: 5},
		APIOffsetCommit.Key: {Min: 2, Max: 9}, // Kafka 4.0 dropped 0 and 1
		APIOffsetFetch.Key:  {Min: 1, Max: 4},
	}
	v, err := Negotiate("broker 1 at h:9092", have,
		Need{APIJoinGroup, Range{0, 9}}, Need{APISyncGroup, Range{3, 3}}, Need{APIOffsetCommit, Range{2, 7}})
	require.NoError(t, err)
	for api, want := range map[API]int16{APIJoinGroup: 9, APISyncGroup: 3, APIOffsetCommit: 7} {
		got, ok := v.Of(api)
		require.True(t, ok, api.Name)
		require.Equal(t, want, got, api.Name)
	}
	_, ok := v.Of(APIHeartbeat)
	require.False(t, ok, "not negotiated")

	_, err = Negotiate("broker 1 at h:9092", have,
		Need{APIOffsetFetch, Range{5, 5}},            // the broker is too old
		Need{APIOffsetCommit, Range{0, 1}},           // the broker is too new
		Need{APIConsumerGroupHeartbeat, Range{0, 1}}, // the broker lacks it
		Need{APIJoinGroup, Range{0, 9}})              // fine
	require.ErrorIs(t, err, ErrUnsupportedVersion)
	var ue *UnsupportedError
	require.True(t, errors.As(err, &ue))
	require.Equal(t, APIOffsetFetch, ue.API)
	require.EqualError(t, err, "broker 1 at h:9092 speaks OffsetFetch versions 1-4, this client needs 5 (upgrade the broker)\n"+
		"broker 1 at h:9092 speaks OffsetCommit versions 2-9, this client needs 0-1 (the broker dropped the versions this client speaks)\n"+
		"broker 1 at h:9092 does not speak ConsumerGroupHeartbeat (API key 68) at all; this client needs version 0-1")
}
