// Command zkcluster starts and stops the local test cluster: a real Apache
// ZooKeeper and real Apache Kafka 3.9 brokers in ZooKeeper mode, running as
// JVMs from the jars testinfra/fetch-jars.sh resolves.
//
//	zkcluster [-state DIR] up [-brokers N]   start in the background, print the settings
//	zkcluster [-state DIR] down              stop it and remove its data
//	zkcluster [-state DIR] env               print the settings of the running cluster
//	zkcluster info                           describe the cluster named by ZOOKEEPER_CONNECT
//	                                         and KAFKA_BROKERS: broker API level and the
//	                                         broker ids registered in ZooKeeper
//
// DIR (default .cache/cluster) holds state.json, which down needs, and env,
// the settings as shell assignments.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/testcluster"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "zkcluster:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	root, err := testcluster.RepoRoot()
	if err != nil {
		return err
	}
	global := flag.NewFlagSet("zkcluster", flag.ContinueOnError)
	stateDir := global.String("state", filepath.Join(root, ".cache", "cluster"), "directory for the cluster's state and env files")
	if err := global.Parse(args); err != nil {
		return err
	}
	args = global.Args()
	if len(args) == 0 {
		return errors.New("usage: zkcluster [-state DIR] up [-brokers N] | down | env | info")
	}
	stateFile := filepath.Join(*stateDir, "state.json")
	envFile := filepath.Join(*stateDir, "env")
	switch args[0] {
	case "up":
		fl := flag.NewFlagSet("up", flag.ContinueOnError)
		brokers := fl.Int("brokers", 1, "number of Kafka brokers")
		if err := fl.Parse(args[1:]); err != nil {
			return err
		}
		if s, err := testcluster.ReadState(stateFile); err == nil {
			return fmt.Errorf("a cluster is already running (data in %s, state in %s); stop it first (make cluster-down)", s.Dir, *stateDir)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		c, err := testcluster.Start(ctx, testcluster.Options{Brokers: *brokers, Detach: true,
			Logf: func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }})
		if err != nil {
			return err
		}
		st := c.State()
		if err := testcluster.WriteState(stateFile, st); err != nil {
			_ = testcluster.StopState(st)
			return err
		}
		if err := os.WriteFile(envFile, []byte(st.EnvLines()), 0o644); err != nil {
			return err
		}
		fmt.Print(st.EnvLines())
		return nil
	case "down":
		s, err := testcluster.ReadState(stateFile)
		if errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintln(os.Stderr, "zkcluster: no cluster is running")
			return nil
		}
		if err != nil {
			return err
		}
		if err := testcluster.StopState(s); err != nil {
			return err
		}
		_ = os.Remove(envFile)
		return os.Remove(stateFile)
	case "info":
		c, ok, err := testcluster.FromEnv()
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("set %s and %s", testcluster.EnvZKConnect, testcluster.EnvBrokers)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		fetch, err := c.BrokerVersion(ctx)
		if err != nil {
			return fmt.Errorf("ask broker %s for its API versions: %w", c.BrokerAddrs()[0], err)
		}
		ids, err := c.RegisteredBrokers(ctx)
		if err != nil {
			return err
		}
		fmt.Printf("zkcluster: broker %s answers Fetch up to v%d (v17 = Kafka 3.9); broker ids %v registered under %s/brokers/ids\n",
			c.BrokerAddrs()[0], fetch, ids, c.Chroot())
		return nil
	case "env":
		s, err := testcluster.ReadState(stateFile)
		if err != nil {
			return fmt.Errorf("no cluster is running (make cluster-up): %w", err)
		}
		fmt.Print(s.EnvLines())
		return nil
	}
	return fmt.Errorf("unknown command %q: want up, down or env", args[0])
}
