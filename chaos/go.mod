module github.com/zkconsumer/zkconsumer/chaos

go 1.26.0

// The core is the working tree's, through go.work (see its comment); this
// module is never published.
require (
	github.com/IBM/sarama v1.61.1
	github.com/stretchr/testify v1.12.1
	github.com/zkconsumer/zkconsumer v0.1.0
)
