package hdfs_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stowage/stowage/checkpoint/checkpointtest"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/mapstore/mapstoretest"
)

// TestCheckpointSuite runs the checkpoint scenario suite against the real
// HDFS of testdata/hdfs, each scenario in a directory of its own.
func TestCheckpointSuite(t *testing.T) {
	need(t, envHDFS, envCtl)
	checkpointtest.Run(t, func(t *testing.T) fsbackend.FS {
		sub, err := fsbackend.Sub(openRaw(t, clusterProps()), uniqueDir(t))
		if err != nil {
			t.Fatal(err)
		}
		return sub
	})
}

// TestMapStoreContract runs the MapStore contract suite on the file map
// store over the real HDFS. The suite reopens a store on the same dir to
// simulate a restart, so the HDFS directory is derived from dir (a fresh
// temporary directory per subtest): every open of one subtest lands on
// the same HDFS directory, and no two subtests share one.
func TestMapStoreContract(t *testing.T) {
	need(t, envHDFS, envCtl)
	mapstoretest.Run(t, func(t *testing.T, dir string, partitions int) mapstore.MapStore {
		sum := sha256.Sum256([]byte(dir))
		name := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
		sub, err := fsbackend.Sub(openRaw(t, clusterProps()), "stowage-test/"+name+"-"+hex.EncodeToString(sum[:6]))
		if err != nil {
			t.Fatal(err)
		}
		s, err := filestore.Open(context.Background(), filestore.Options{FS: sub, Partitions: partitions})
		if err != nil {
			t.Fatalf("filestore.Open: %v", err)
		}
		return s
	})
}
