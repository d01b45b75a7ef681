// A test-only module, never published: it checks that monitoring tools
// written for Kafka's old consumer read zkconsumer's groups from ZooKeeper
// as they read the Scala consumer's. kafka_exporter's ZooKeeper lag
// (--use.consumelag.zookeeper) reads the group's offsets through
// github.com/krallistic/kazoo-go; the test reads a group zkconsumer
// committed with that library, the way kafka_exporter does, against the
// real shared cluster. It is a module of its own so that kazoo-go (and the
// old github.com/samuel/go-zookeeper it pulls in) stays out of the core's
// requirements, and it is not part of the repository's go.work: run it
// with GOWORK=off (scripts/test.sh does, once the cluster is up). The
// replace builds it against the core of this working tree.
module github.com/zkconsumer/zkconsumer/scripts/exporters

go 1.26.0

require (
	github.com/IBM/sarama v1.61.1
	github.com/krallistic/kazoo-go v0.0.0-20170526135507-a15279744f4e
	github.com/stretchr/testify v1.12.1
	github.com/zkconsumer/zkconsumer v0.0.0
)

require (
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/eapache/go-resiliency v1.7.0 // indirect
	github.com/go-zookeeper/zk v1.0.4 // indirect
	github.com/hashicorp/go-uuid v1.0.3 // indirect
	github.com/jcmturner/aescts/v2 v2.0.0 // indirect
	github.com/jcmturner/dnsutils/v2 v2.0.0 // indirect
	github.com/jcmturner/gofork v1.7.6 // indirect
	github.com/jcmturner/gokrb5/v8 v8.4.4 // indirect
	github.com/jcmturner/rpc/v2 v2.0.3 // indirect
	github.com/klauspost/compress v1.20.1 // indirect
	github.com/pierrec/lz4/v4 v4.1.31 // indirect
	github.com/rcrowley/go-metrics v0.0.0-20250401214520-65e299d6c5c9 // indirect
	github.com/samuel/go-zookeeper v0.0.0-20190923202752-2cc03de413da // indirect
	go.uber.org/goleak v1.3.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/crypto v0.57.0 // indirect
	golang.org/x/net v0.59.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	software.sslmate.com/src/go-pkcs12 v0.7.4 // indirect
)

replace github.com/zkconsumer/zkconsumer => ../..
