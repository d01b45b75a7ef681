package connector

import (
	"strconv"

	"github.com/zkconsumer/zkconsumer/internal/zksession"
)

// SessionStats is the state and event counts of the connector's ZooKeeper
// session since New (Stats.Session), for metrics.
type SessionStats struct {
	// State is the session's current state; 0 before the first session
	// and in Kafka mode.
	State SessionState
	// Disconnects counts the connections lost while a session was
	// established (SessionDisconnected).
	Disconnects int64
	// Expirations counts the sessions ZooKeeper dropped (SessionExpired).
	Expirations int64
}

// SessionState is the state of the connector's ZooKeeper session.
type SessionState int

// The values of SessionState.
const (
	// SessionConnected: connected, with a session.
	SessionConnected SessionState = iota + 1
	// SessionDisconnected: the connection is lost; the session may still
	// be alive on the server for the session timeout.
	SessionDisconnected
	// SessionExpired: the server dropped the session; a new one follows.
	SessionExpired
	// SessionClosed: the connector closed the session.
	SessionClosed
)

// String returns "connected", "disconnected", "expired" or "closed".
func (s SessionState) String() string {
	switch s {
	case SessionConnected:
		return "connected"
	case SessionDisconnected:
		return "disconnected"
	case SessionExpired:
		return "expired"
	case SessionClosed:
		return "closed"
	}
	return "SessionState(" + strconv.Itoa(int(s)) + ")"
}

// sessionStates maps the session's states to the connector's.
var sessionStates = map[zksession.SessionState]SessionState{
	zksession.StateConnected:    SessionConnected,
	zksession.StateDisconnected: SessionDisconnected,
	zksession.StateExpired:      SessionExpired,
	zksession.StateClosed:       SessionClosed,
}

// sessionStatsOf converts the session's counts to the connector's type.
func sessionStatsOf(s zksession.SessionStats) SessionStats {
	return SessionStats{State: sessionStates[s.State], Disconnects: s.Disconnects, Expirations: s.Expirations}
}
