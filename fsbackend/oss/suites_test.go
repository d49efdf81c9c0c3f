package oss_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/stowage/stowage/checkpoint/checkpointtest"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/fsbackendtest"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/mapstore/mapstoretest"
)

// TestConformance runs the suite every back end passes, each subtest on a
// fresh in-process OSS server opened through fsbackend.Open.
func TestConformance(t *testing.T) {
	fsbackendtest.RunWith(t, func(t *testing.T) fsbackend.FS {
		return open(t, props(newServer(t)))
	}, fsbackendtest.Options{LargeFile: 1 << 20})
}

// TestCheckpointSuite runs the checkpoint scenario suite, each scenario on
// a fresh server: the object-store path (no atomic rename, conditional
// create of the final name).
func TestCheckpointSuite(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) fsbackend.FS {
		return open(t, props(newServer(t)))
	})
}

// TestMapStoreContract runs the MapStore contract on the file map store.
// One server serves the whole test; each open builds a new FS (a new
// client, disable.cache) rooted at a bucket directory derived from dir,
// so the suite's restarts reopen the same objects and no two subtests
// share any. Under the race detector (or with -short) the bulk cases run at
// their small size: every call is an HTTP round trip through the SDK.
func TestMapStoreContract(t *testing.T) {
	srv := newServer(t)
	mapstoretest.RunWith(t, func(t *testing.T, dir string, partitions int) mapstore.MapStore {
		sum := sha256.Sum256([]byte(dir))
		f := open(t, props(srv, "oss.bucket", "oss://"+bucket+"/maps/"+hex.EncodeToString(sum[:8])))
		s, err := filestore.Open(context.Background(), filestore.Options{FS: f, Partitions: partitions})
		if err != nil {
			t.Fatalf("filestore.Open: %v", err)
		}
		return s
	}, mapstoretest.Options{Small: raceEnabled || testing.Short()})
}
