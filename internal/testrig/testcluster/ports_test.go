package testcluster

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFreePortsAreOutsideTheEphemeralRangeAndReserved: the ports a
// cluster binds (and binds again on restart) are ones no outgoing
// connection can take, and no other harness process picks while this one
// lives.
func TestFreePortsAreOutsideTheEphemeralRangeAndReserved(t *testing.T) {
	if ephemeralLow()-1-portsFloor < 1000 {
		t.Skipf("no room below the ephemeral range (it starts at %d) on this machine", ephemeralLow())
	}
	ports, err := freePorts(50)
	require.NoError(t, err)
	seen := map[int]bool{}
	dir := filepath.Join(os.TempDir(), "zkconsumer-ports")
	for _, p := range ports {
		require.False(t, seen[p], "port %d twice", p)
		seen[p] = true
		require.GreaterOrEqual(t, p, portsFloor)
		require.Less(t, p, ephemeralLow(), "port %d in the ephemeral range", p)
		// Another holder (a new open file, as another process would
		// have) cannot take the reservation.
		f, err := reservePort(dir, p)
		require.NoError(t, err)
		require.Nil(t, f, "port %d not reserved", p)
		// And the port is free to bind.
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		require.NoError(t, err, "port %d", p)
		l.Close()
	}
	more, err := freePorts(50)
	require.NoError(t, err)
	for _, p := range more {
		require.False(t, seen[p], "port %d handed out again while reserved", p)
	}
}

// TestFreePortsSkipsPortsInUse: a port something listens on is not handed
// out, reserved or not.
func TestFreePortsSkipsPortsInUse(t *testing.T) {
	if ephemeralLow()-1-portsFloor < 1000 {
		t.Skipf("no room below the ephemeral range (it starts at %d) on this machine", ephemeralLow())
	}
	var held []net.Listener
	busy := map[int]bool{}
	for p := portsFloor; len(held) < 200 && p < ephemeralLow(); p += 7 {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		held = append(held, l)
		busy[p] = true
	}
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	ports, err := freePorts(200)
	require.NoError(t, err)
	for _, p := range ports {
		require.False(t, busy[p], "port %d is in use", p)
	}
}
