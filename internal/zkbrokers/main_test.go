package zkbrokers

import (
	"testing"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

func TestMain(m *testing.M) { testcluster.Main(m) }
