package connector

import (
	"os"
	"testing"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(runChild())
	}
	testcluster.Main(m)
}
