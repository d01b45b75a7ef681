package secure_test

import (
	"testing"

	"github.com/zkconsumer/zkconsumer/internal/testcluster"
)

func TestMain(m *testing.M) { testcluster.Main(m) }
