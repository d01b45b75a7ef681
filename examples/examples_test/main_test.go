// Package examples_test builds the example programs and runs each against
// the shared test cluster as a user would: start it, produce, watch its
// output, interrupt it, and check what its group committed in ZooKeeper.
package examples_test

import (
	"testing"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

// Each test runs its examples as processes of their own, on a topic and a
// group of its own on the shared cluster, and so runs in parallel with
// the others (t.Parallel); TestPauseResume alone stays serial (see there).
func TestMain(m *testing.M) { testcluster.Main(m) }
