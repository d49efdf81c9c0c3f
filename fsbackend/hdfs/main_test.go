package hdfs_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no client goroutine (lease renewal, DataNode
// pipelines) outlives the FS and files that used it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
