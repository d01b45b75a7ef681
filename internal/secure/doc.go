// Package secure turns the security settings of Kafka clients into what
// zkconsumer's broker connections need: one *tls.Config and one set of SASL
// settings, built in one place from the keys Kafka's Java clients use
// (security.protocol, ssl.truststore.*, ssl.keystore.*, sasl.mechanism,
// sasl.jaas.config, ...) or librdkafka's (ssl.ca.location,
// ssl.certificate.location, sasl.username, ...).
//
// [Settings] holds the user's values; [Settings.Validate] reports every
// problem as a [*KeyError] naming the key to fix; [New] loads the key and
// trust stores once and returns a [*Client] that every broker connection
// (fetchers, the leader finder, Kafka-stored offsets, the group tool) applies
// to its sarama configuration with [Client.Apply]. [Client.Endpoint] picks the
// broker listener to connect to from its ZooKeeper registration.
//
// Secrets (passwords, private keys, the JAAS configuration) never appear in
// the output of String, GoString or %v, nor in the errors of this package.
//
// It also holds the ZooKeeper side: digest credentials, zookeeper.set.acl
// and TLS to ZooKeeper ([Settings.ZooKeeperTLS]).
package secure
