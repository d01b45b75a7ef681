package groups

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestSubscriptions: a member subscribes to a topic by name, by a
// whitelist that matches it or a blacklist that does not; a member whose
// registration cannot be read is taken to subscribe to every topic.
func TestSubscriptions(t *testing.T) {
	members := []Member{
		{ID: "static", Registration: zkutil.Registration{Pattern: zkutil.PatternStatic, Subscription: map[string]int{"orders": 1}}},
		{ID: "white", Registration: zkutil.Registration{Pattern: zkutil.PatternWhitelist, Subscription: map[string]int{"pay.*": 2}}},
		{ID: "black", Registration: zkutil.Registration{Pattern: zkutil.PatternBlacklist, Subscription: map[string]int{"orders|pay.*": 1}}},
	}
	subscribed := subscriptions(members)
	require.Equal(t, []string{"static"}, subscribed("orders"))
	require.Equal(t, []string{"white"}, subscribed("payments"))
	require.Equal(t, []string{"black"}, subscribed("audit"))
	require.Empty(t, subscriptions(members[:2])("audit"))

	unreadable := append(members, Member{ID: "garbage", Err: errors.New("bad json")})
	require.Equal(t, []string{"static", "garbage"}, subscriptions(unreadable)("orders"))
	require.Equal(t, []string{"black", "garbage"}, subscriptions(unreadable)("audit"))
}
