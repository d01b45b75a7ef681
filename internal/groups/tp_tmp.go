package groups

import "github.com/zkconsumer/zkconsumer/zkutil"

// TEMPORARY until the groupfiles branch is merged.
type TopicPartition = zkutil.TopicPartition
