package testcluster

import (
	"path/filepath"
	"strconv"
)

// A Kafka server of either kind of cluster (a ZooKeeper-mode broker, a
// KRaft node) is a JVM running kafka.Kafka with the server.properties in
// its directory: the entries both kinds share (brokerProperties), those of
// its kind, then Options.BrokerProperties over them.

// brokerProperties are the server.properties entries both kinds of
// cluster share: small thread pools, small internal topics, fast groups.
func (c *Cluster) brokerProperties() map[string]string {
	rf := strconv.Itoa(min(3, c.opts.Brokers))
	return map[string]string{
		"num.partitions":                           "1",
		"auto.create.topics.enable":                "true",
		"delete.topic.enable":                      "true",
		"offsets.topic.replication.factor":         rf,
		"offsets.topic.num.partitions":             "4",
		"transaction.state.log.replication.factor": rf,
		"transaction.state.log.min.isr":            "1",
		"transaction.state.log.num.partitions":     "4",
		"min.insync.replicas":                      "1",
		"group.initial.rebalance.delay.ms":         "0",
		"num.network.threads":                      "2",
		"num.io.threads":                           "2",
		"num.recovery.threads.per.data.dir":        "1",
		"background.threads":                       "2",
		"log.cleaner.dedupe.buffer.size":           "8388608",
		"log.cleaner.threads":                      "1",
		"unclean.leader.election.enable":           "false",
		"leader.imbalance.check.interval.seconds":  "5",
	}
}

// addKafkaServer sets Options.BrokerProperties over props, writes them to
// dir/server.properties, and adds the server with broker id id, listening
// on addr (port), to the brokers: its JVM runs kafka.Kafka from classpath
// cp, logs to dir/server.log, and logFlag names its logging configuration.
// It returns the path of server.properties.
func (c *Cluster) addKafkaServer(name, dir, cp, logFlag string, id, port int, addr string, props map[string]string) (string, error) {
	for k, v := range c.opts.BrokerProperties {
		props[k] = v
	}
	cfg := filepath.Join(dir, "server.properties")
	if err := writeProperties(cfg, props); err != nil {
		return "", err
	}
	c.brokers = append(c.brokers, &node{id: id, port: port, jvm: jvm{
		name:    name,
		detach:  c.opts.Detach,
		logPath: filepath.Join(dir, "server.log"),
		args:    append(c.serverJVMFlags("512m", logFlag, dir), "-cp", cp, "kafka.Kafka", cfg),
	}})
	c.brokerAddrs = append(c.brokerAddrs, addr)
	return cfg, nil
}
