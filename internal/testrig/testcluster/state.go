package testcluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// State describes a detached cluster (make cluster-up) so that another
// process can stop it (make cluster-down).
type State struct {
	// Dir holds the cluster's data and logs.
	Dir string `json:"dir"`
	// KRaft is set for a Kafka 4.x KRaft cluster.
	KRaft bool `json:"kraft,omitempty"`
	// ZKConnect is the ZooKeeper connect string, every server and the
	// chroot.
	ZKConnect string `json:"zookeeper_connect"`
	// Brokers are the brokers' host:port, by id.
	Brokers []string `json:"kafka_brokers"`
	// ZKPIDs are the ZooKeeper servers' pids, by server index.
	ZKPIDs []int `json:"zookeeper_pids"`
	// ZKPID is the one ZooKeeper pid a state file written before
	// ensembles holds; StopState stops it too.
	ZKPID int `json:"zookeeper_pid,omitempty"`
	// BrokerPIDs are the brokers' pids, by id.
	BrokerPIDs []int `json:"broker_pids"`
}

// State returns what StopState needs to stop this cluster later.
func (c *Cluster) State() State {
	s := State{Dir: c.dir, KRaft: c.kraft, ZKConnect: c.ZKConnect(), Brokers: c.BrokerAddrs()}
	for _, z := range c.zk {
		s.ZKPIDs = append(s.ZKPIDs, z.pid)
	}
	for _, b := range c.brokers {
		s.BrokerPIDs = append(s.BrokerPIDs, b.pid)
	}
	return s
}

// EnvLines are the connection settings as shell assignments: ZOOKEEPER_CONNECT
// and KAFKA_BROKERS, or KRAFT_BROKERS alone for a KRaft cluster, so that
// the env files of both kinds of cluster can be sourced together.
func (s State) EnvLines() string {
	if s.KRaft {
		return fmt.Sprintf("export %s=%s\n", EnvKRaftBrokers, strings.Join(s.Brokers, ","))
	}
	return fmt.Sprintf("export ZOOKEEPER_CONNECT=%s\nexport KAFKA_BROKERS=%s\n", s.ZKConnect, strings.Join(s.Brokers, ","))
}

// WriteState saves s as JSON at path.
func WriteState(path string, s State) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// ReadState loads a state file written by WriteState.
func ReadState(path string) (State, error) {
	var s State
	data, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("testcluster: %s: %w", path, err)
	}
	return s, nil
}

// StopState ends the processes of a detached cluster, brokers first, and
// removes its directory. A pid is signalled only if its command line still
// carries the cluster's marker, so a recycled pid is never hit.
func StopState(s State) error {
	base := filepath.Base(s.Dir)
	if s.Dir == "" || !strings.Contains(base, "zkconsumer-cluster-") && !strings.Contains(base, kraftDirPrefix) {
		return fmt.Errorf("testcluster: refusing to stop a cluster whose directory %q was not made by testcluster", s.Dir)
	}
	var errs []error
	pids := append(append(append([]int(nil), s.BrokerPIDs...), s.ZKPIDs...), s.ZKPID)
	for _, pid := range pids {
		if pid <= 0 || !pidAlive(pid) || !pidCmdlineContains(pid, "-Dzkconsumer.testcluster="+s.Dir) {
			continue
		}
		_ = syscall.Kill(-pid, syscall.SIGCONT)
		if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for pidAlive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if pidAlive(pid) {
			errs = append(errs, fmt.Errorf("testcluster: pid %d did not exit", pid))
		}
	}
	errs = append(errs, os.RemoveAll(s.Dir))
	return errors.Join(errs...)
}
