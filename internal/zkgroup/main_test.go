package zkgroup

import (
	"os"
	"testing"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

func TestMain(m *testing.M) {
	if os.Getenv(childMemberEnv) != "" {
		os.Exit(runChildMember())
	}
	testcluster.Main(m)
}
