// Package examples_test builds the example programs and runs each against
// the shared test cluster as a user would: start it, produce, watch its
// output, interrupt it, and check what its group committed in ZooKeeper.
package examples_test

import (
	"testing"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

func TestMain(m *testing.M) { testcluster.Main(m) }
