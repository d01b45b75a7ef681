// Command zkcluster starts and stops the local test cluster: a real Apache
// ZooKeeper ensemble and real Apache Kafka 3.9 brokers in ZooKeeper mode or,
// with -kraft, Apache Kafka 4.x nodes in KRaft mode (no ZooKeeper), running
// as JVMs from the jars testinfra/fetch-jars.sh resolves.
//
//	zkcluster [-state DIR] up [-brokers N] [-zookeepers Z] [-full-jit]
//	                                         start in the background, print the settings
//	                                         (ZOOKEEPER_CONNECT listing every ZooKeeper
//	                                         server, KAFKA_BROKERS); Z ZooKeeper servers,
//	                                         default 3 (an ensemble), 1 for a single one;
//	                                         -full-jit: JVMs with both compilers (benchmarks)
//	zkcluster [-state DIR] up -kraft [-brokers N] [-controllers K]
//	                                         the same for N Kafka 4 KRaft nodes, the first K
//	                                         (default all) also controllers (KRAFT_BROKERS)
//	zkcluster [-state DIR] down [-kraft]     stop it and remove its data
//	zkcluster [-state DIR] env [-kraft]      print the settings of the running cluster
//	zkcluster info                           describe the cluster named by ZOOKEEPER_CONNECT
//	                                         and KAFKA_BROKERS: each ZooKeeper server's mode,
//	                                         broker API level and the
//	                                         broker ids registered in ZooKeeper; and the
//	                                         KRaft cluster named by KRAFT_BROKERS, if set
//
// DIR (default .cache/cluster; .cache/kraft-cluster when the command has
// -kraft, so both kinds can run side by side) holds state.json, which down
// needs, and env, the settings as shell assignments.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
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
		return errors.New("usage: zkcluster [-state DIR] up [-kraft] [-brokers N] [-zookeepers Z] [-controllers K] | down | env | info")
	}
	stateSet := false
	global.Visit(func(f *flag.Flag) { stateSet = stateSet || f.Name == "state" })
	fl := flag.NewFlagSet(args[0], flag.ContinueOnError)
	kraft := fl.Bool("kraft", false, "a Kafka 4 cluster in KRaft mode, without ZooKeeper")
	var brokers, controllers, zookeepers *int
	fullJIT := new(bool)
	if args[0] == "up" {
		fullJIT = fl.Bool("full-jit", false, "run the JVMs with both of HotSpot's compilers, as production does (for benchmarks); tests' clusters stop at C1, which costs less CPU")
		brokers = fl.Int("brokers", 1, "number of Kafka brokers (KRaft nodes)")
		zookeepers = fl.Int("zookeepers", 3, "number of ZooKeeper servers: 3 or 5 for an ensemble, 1 for a single server (ignored with -kraft)")
		controllers = fl.Int("controllers", 0, "with -kraft: how many nodes are also controllers (0: all)")
	}
	if err := fl.Parse(args[1:]); err != nil {
		return err
	}
	if *kraft && !stateSet {
		*stateDir = filepath.Join(root, ".cache", "kraft-cluster")
	}
	stateFile := filepath.Join(*stateDir, "state.json")
	envFile := filepath.Join(*stateDir, "env")
	switch args[0] {
	case "up":
		if s, err := testcluster.ReadState(stateFile); err == nil {
			return fmt.Errorf("a cluster is already running (data in %s, state in %s); stop it first (make cluster-down, KRAFT=1 for a KRaft one)", s.Dir, *stateDir)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
		defer cancel()
		nzk := *zookeepers
		if *kraft {
			nzk = 0
		}
		c, err := testcluster.Start(ctx, testcluster.Options{Brokers: *brokers, KRaft: *kraft, Controllers: *controllers, ZooKeeperServers: nzk, Detach: true, FullJIT: *fullJIT,
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
		return info()
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

// info describes the clusters named by the environment.
func info() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, ok, err := testcluster.FromEnv()
	if err != nil {
		return err
	}
	k, kok := testcluster.FromEnvKRaft()
	if !ok && !kok {
		return fmt.Errorf("set %s and %s, or %s", testcluster.EnvZKConnect, testcluster.EnvBrokers, testcluster.EnvKRaftBrokers)
	}
	if ok {
		var modes []string
		for i, s := range c.ZKServers() {
			mode, err := c.ZooKeeperServerMode(ctx, i)
			if err != nil {
				mode = err.Error()
			}
			modes = append(modes, s+" "+mode)
		}
		fmt.Printf("zkcluster: ZooKeeper servers: %s\n", strings.Join(modes, ", "))
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
	}
	if kok {
		fetch, err := k.BrokerVersion(ctx)
		if err != nil {
			return fmt.Errorf("ask KRaft broker %s for its API versions: %w", k.BrokerAddrs()[0], err)
		}
		ids, err := k.RegisteredBrokers(ctx)
		if err != nil {
			return err
		}
		fmt.Printf("zkcluster: KRaft broker %s answers Fetch up to v%d (Kafka 4 has no ZooKeeper); brokers %v in its metadata\n",
			k.BrokerAddrs()[0], fetch, ids)
	}
	return nil
}
