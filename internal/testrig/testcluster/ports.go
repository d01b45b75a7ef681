package testcluster

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// A cluster's JVMs bind ports the harness chose before they start, and
// bind them again when they are restarted. A port the kernel hands out for
// port 0 comes from its ephemeral range, which every outgoing connection on
// the machine draws from too: between the choice and the JVM's bind, or
// while a server is down for a restart, another process may take it
// ("Address already in use" when a second test suite ran beside the
// first). So the harness picks ports below the ephemeral range, which the
// kernel never gives to outgoing connections, and reserves each one for
// the life of the process that chose it with a lock file that every
// process of this harness respects (flock: the lock ends with the process,
// however it ends).

// portsFloor is the lowest port freePorts picks.
const portsFloor = 10000

var (
	portsMu   sync.Mutex
	portLocks []*os.File // held for the life of the process
)

// freePorts reserves n distinct free TCP ports on 127.0.0.1.
func freePorts(n int) ([]int, error) {
	lo, hi := portsFloor, ephemeralLow()-1
	if hi-lo < 1000 {
		return kernelPorts(n) // no room below the ephemeral range
	}
	dir := filepath.Join(os.TempDir(), "zkconsumer-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("testcluster: port reservations: %w", err)
	}
	portsMu.Lock()
	defer portsMu.Unlock()
	ports := make([]int, 0, n)
	for tries := 0; len(ports) < n; tries++ {
		if tries == 20*(hi-lo+1) {
			return nil, fmt.Errorf("testcluster: no %d free ports in %d-%d", n, lo, hi)
		}
		p := lo + rand.IntN(hi-lo+1)
		f, err := reservePort(dir, p)
		if err != nil {
			return nil, err
		}
		if f == nil {
			continue // reserved by another process, or by this one
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			f.Close() // in use by something else: leave it
			continue
		}
		l.Close()
		portLocks = append(portLocks, f)
		ports = append(ports, p)
	}
	return ports, nil
}

// reservePort takes the lock of port p, or returns nil if another holder
// has it (this process included: each open file has a lock of its own).
func reservePort(dir string, p int) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(p)), os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, fmt.Errorf("testcluster: port reservation %d: %w", p, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, fmt.Errorf("testcluster: port reservation %d: %w", p, err)
	}
	return f, nil
}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux's
// default, 32768, when it cannot be read).
func ephemeralLow() int {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return 32768
	}
	low, err := strconv.Atoi(fields[0])
	if err != nil {
		return 32768
	}
	return low
}

// kernelPorts asks the kernel for n distinct free ports.
func kernelPorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
