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
	fsbackendtest.RunWith(t, func(t *testing.T) fsbackend.FS {
		raw := openRaw(t, clusterProps())
		sub, err := fsbackend.Sub(raw, uniqueDir(t))
		if err != nil {
			t.Fatal(err)
		}
		return sub
	}, fsbackendtest.Options{Skip: map[string]string{
		// Tracked deviations, to be fixed in the back end or the contract:
		"FSClosed":                 "the FS under test is a Sub, whose Close does not close it (see the suite's Sub note)",
		"SpecialCharacters":        "HDFS refuses ':' in path names (InvalidPathException); names need escaping on HDFS",
		"ReaderClosed":             "the HDFS reader does not report ErrClosed on a second Close",
		"AbortAfterCloseKeepsFile": "the HDFS writer's Abort removes the file even after a successful Close",
	}})
}
