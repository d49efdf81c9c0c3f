package hdfs_test

import (
	"testing"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/fsbackendtest"
)

// TestConformance runs the suite every back end passes against the real
// HDFS of testdata/hdfs, each subtest in a directory of its own.
func TestConformance(t *testing.T) {
	need(t, envHDFS, envCtl)
	fsbackendtest.Run(t, func(t *testing.T) fsbackend.FS {
		raw := openRaw(t, clusterProps())
		sub, err := fsbackend.Sub(raw, uniqueDir(t))
		if err != nil {
			t.Fatal(err)
		}
		return sub
	})
}
