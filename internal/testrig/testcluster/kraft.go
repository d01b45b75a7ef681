package testcluster

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

// kraftDirPrefix names the temporary directory of a KRaft cluster.
const kraftDirPrefix = "zkconsumer-kraft-"

// controllerListener is the name of the KRaft controllers' listener.
const controllerListener = "CONTROLLER"

// startKRaft formats and launches the KRaft nodes of c, then waits until
// every broker answers requests and is registered with the controllers.
func (c *Cluster) startKRaft(ctx context.Context) error {
	lib, err := Kafka4Lib()
	if err != nil {
		return err
	}
	log4j2, err := log4j2Config(false)
	if err != nil {
		return err
	}
	n := c.opts.Brokers
	if c.opts.Secure {
		if err := c.prepareSecurity(); err != nil {
			return err
		}
	}
	// Each node gets a client port and a controller port (unused by
	// broker-only nodes).
	ports, err := freePorts(2 * n)
	if err != nil {
		return err
	}
	voters := make([]string, 0, c.opts.Controllers)
	for id := range c.opts.Controllers {
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", id, ports[n+id]))
	}
	cp := filepath.Join(lib, "*")
	cfgs := make([]string, n)
	for id := range n {
		if cfgs[id], err = c.addKRaftNode(cp, log4j2, id, ports[id], ports[n+id], strings.Join(voters, ",")); err != nil {
			return err
		}
	}
	clusterID, err := randomClusterID()
	if err != nil {
		return err
	}
	if err := c.formatStorage(ctx, clusterID, cfgs); err != nil {
		return err
	}
	for _, b := range c.brokers {
		if err := b.start(); err != nil {
			return err
		}
	}
	if err := c.waitAllListening(ctx); err != nil {
		return err
	}
	if err := c.WaitBrokers(ctx, n); err != nil {
		return err
	}
	c.opts.Logf("testcluster: KRaft cluster %s (Kafka 4, %d of %d nodes controllers), brokers %s, data in %s",
		clusterID, c.opts.Controllers, n, strings.Join(c.brokerAddrs, ","), c.dir)
	return nil
}

// addKRaftNode writes the server.properties of node id and prepares its JVM.
// Nodes below opts.Controllers are combined broker and controller nodes.
func (c *Cluster) addKRaftNode(cp, log4j2 string, id, port, controllerPort int, voters string) (string, error) {
	dir := filepath.Join(c.dir, fmt.Sprintf("node-%d", id))
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return "", err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	listeners, roles := "PLAINTEXT://"+addr, "broker"
	if id < c.opts.Controllers {
		listeners += fmt.Sprintf(",%s://127.0.0.1:%d", controllerListener, controllerPort)
		roles = "broker,controller"
	}
	session := c.opts.BrokerSessionTimeout.Milliseconds()
	props := c.brokerProperties()
	for k, v := range map[string]string{
		"node.id":                               strconv.Itoa(id),
		"process.roles":                         roles,
		"controller.quorum.voters":              voters,
		"controller.listener.names":             controllerListener,
		"listeners":                             listeners,
		"advertised.listeners":                  "PLAINTEXT://" + addr,
		"inter.broker.listener.name":            "PLAINTEXT",
		"listener.security.protocol.map":        "PLAINTEXT:PLAINTEXT," + controllerListener + ":PLAINTEXT",
		"log.dirs":                              filepath.Join(dir, "data"),
		"broker.session.timeout.ms":             strconv.FormatInt(session, 10),
		"broker.heartbeat.interval.ms":          strconv.FormatInt(max(100, session/4), 10),
		"controller.quorum.election.timeout.ms": "1000",
		"controller.quorum.fetch.timeout.ms":    "2000",
	} {
		props[k] = v
	}
	if c.security != nil {
		c.security.addSecureListeners(id, props)
	}
	return c.addKafkaServer(fmt.Sprintf("kraft-node-%d", id), dir, cp, "-Dlog4j2.configurationFile="+log4j2, id, port, addr, props)
}

// formatStorage writes every node's meta.properties and bootstrap metadata
// with Kafka's storage tool (what kafka-storage.sh format runs), all nodes
// at once. The static voter set comes from controller.quorum.voters. A
// secure cluster's SCRAM user goes into the bootstrap metadata.
func (c *Cluster) formatStorage(ctx context.Context, clusterID string, cfgs []string) error {
	errs := make([]error, len(cfgs))
	var wg sync.WaitGroup
	for i, cfg := range cfgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := []string{"format", "-t", clusterID, "-c", cfg}
			if c.security != nil {
				args = append(args, c.security.scramFormatArgs()...)
			}
			out, err := RunTool4(ctx, "kafka.tools.StorageTool", args...)
			if err != nil {
				errs[i] = fmt.Errorf("testcluster: format the storage of KRaft node %d: %w", i, err)
				return
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			c.opts.Logf("testcluster: %s", lines[len(lines)-1]) // "Formatting ... with metadata.version ..."
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// randomClusterID returns a random KRaft cluster id as Kafka writes them:
// 16 random bytes in unpadded URL-safe base64. Like Kafka's own generator
// it avoids ids starting with '-', which command lines would take for flags.
func randomClusterID() (string, error) {
	for {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		if id := base64.RawURLEncoding.EncodeToString(b[:]); id[0] != '-' {
			return id, nil
		}
	}
}

// kraftBrokerIDs asks the cluster for the brokers it lists in its metadata:
// the registered, unfenced ones.
func (c *Cluster) kraftBrokerIDs(ctx context.Context) ([]int, error) {
	var lastErr error
	for _, addr := range c.brokerAddrs {
		ids, err := metadataBrokerIDs(ctx, addr, c.ClientConfig())
		if err == nil {
			return ids, nil
		}
		lastErr = err
	}
	return nil, fmt.Errorf("testcluster: no broker of %s answers a metadata request: %w", strings.Join(c.brokerAddrs, ","), lastErr)
}

// waitKRaftBroker waits until broker id is listed in the metadata.
func (c *Cluster) waitKRaftBroker(ctx context.Context, id int) error {
	for {
		ids, err := c.kraftBrokerIDs(ctx)
		for _, got := range ids {
			if got == id {
				return nil
			}
		}
		if b := c.brokers[id]; !b.running() {
			return fmt.Errorf("testcluster: KRaft node %d exited; see %s", id, b.logPath)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testcluster: broker %d is not in the metadata (brokers %v, err %v): %w", id, ids, err, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// metadataBrokerIDs sends one metadata request to addr and returns the ids
// of the brokers in the answer, sorted.
func metadataBrokerIDs(ctx context.Context, addr string, cfg *sarama.Config) ([]int, error) {
	if deadline, ok := ctx.Deadline(); ok {
		cfg.Net.DialTimeout = min(cfg.Net.DialTimeout, max(time.Until(deadline), time.Millisecond))
	}
	b := sarama.NewBroker(addr)
	if err := b.Open(cfg); err != nil {
		return nil, err
	}
	defer b.Close()
	resp, err := b.GetMetadata(sarama.NewMetadataRequest(cfg.Version, nil))
	if err != nil {
		return nil, err
	}
	ids := make([]int, 0, len(resp.Brokers))
	for _, br := range resp.Brokers {
		ids = append(ids, int(br.ID()))
	}
	sort.Ints(ids)
	return ids, nil
}

// kraftPartitionState reads a partition's leader, leader epoch and ISR
// from the metadata.
func (c *Cluster) kraftPartitionState(topic string, partition int32) (PartitionState, error) {
	var st PartitionState
	client, err := sarama.NewClient(c.brokerAddrs, c.ClientConfig())
	if err != nil {
		return st, fmt.Errorf("testcluster: client: %w", err)
	}
	defer client.Close()
	b := client.LeastLoadedBroker()
	if b == nil {
		return st, fmt.Errorf("testcluster: metadata of %s: no broker reachable", topic)
	}
	resp, err := b.GetMetadata(sarama.NewMetadataRequest(c.ClientConfig().Version, []string{topic}))
	if err != nil {
		return st, fmt.Errorf("testcluster: metadata of %s: %w", topic, err)
	}
	for _, t := range resp.Topics {
		if t.Name != topic {
			continue
		}
		for _, p := range t.Partitions {
			if p.ID != partition {
				continue
			}
			if !errors.Is(p.Err, sarama.ErrNoError) {
				return st, fmt.Errorf("testcluster: metadata of %s-%d: %w", topic, partition, p.Err)
			}
			st.Leader, st.LeaderEpoch = int(p.Leader), int(p.LeaderEpoch)
			for _, r := range p.Isr {
				st.ISR = append(st.ISR, int(r))
			}
			return st, nil
		}
	}
	return st, fmt.Errorf("testcluster: metadata lists no partition %s-%d", topic, partition)
}

// waitTopicGone waits until no broker's metadata lists topic.
func (c *Cluster) waitTopicGone(ctx context.Context, topic string) error {
	for {
		listed, err := c.topicListed(topic)
		if err == nil && !listed {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testcluster: topic %s not deleted (listed %v, err %v): %w", topic, listed, err, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// topicListed reports whether the metadata of any broker that answers
// still lists topic; brokers that are down are passed over.
func (c *Cluster) topicListed(topic string) (bool, error) {
	cfg := c.ClientConfig()
	cfg.Net.DialTimeout = time.Second
	var lastErr error
	answered := 0
	for _, addr := range c.brokerAddrs {
		b := sarama.NewBroker(addr)
		if err := b.Open(cfg); err != nil {
			lastErr = err
			continue
		}
		resp, err := b.GetMetadata(sarama.NewMetadataRequest(cfg.Version, []string{topic}))
		b.Close()
		if err != nil {
			lastErr = err
			continue
		}
		answered++
		for _, t := range resp.Topics {
			if t.Name == topic && !errors.Is(t.Err, sarama.ErrUnknownTopicOrPartition) {
				return true, nil
			}
		}
	}
	if answered == 0 {
		return false, lastErr
	}
	return false, nil
}
