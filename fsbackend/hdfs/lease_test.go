package hdfs_test

import (
	"testing"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/fsbackendtest"
)

// TestLease: the namespace lease on the real HDFS of testdata/hdfs (HDFS
// create fails when the file exists), each "cluster" with its own client.
func TestLease(t *testing.T) {
	need(t, envHDFS)
	dir := uniqueDir(t)
	fsbackendtest.RunLease(t, func(t *testing.T) fsbackend.FS { return openRaw(t, clusterProps()) }, dir)
}
