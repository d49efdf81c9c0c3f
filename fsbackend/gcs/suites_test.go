package gcs_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/fsouza/fake-gcs-server/fakestorage"
	"google.golang.org/api/option"

	"github.com/stowage/stowage/checkpoint/checkpointtest"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/fsbackendtest"
	"github.com/stowage/stowage/fsbackend/gcs"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/mapstore/mapstoretest"
)

// TestConformance runs the suite every back end passes, each subtest on a
// fresh in-process fake-gcs-server.
func TestConformance(t *testing.T) {
	fsbackendtest.RunWith(t, func(t *testing.T) fsbackend.FS {
		return newFixture(t, gcs.RetryPolicy{}, "root").fs
	}, fsbackendtest.Options{LargeFile: 1 << 20})
}

// TestCheckpointSuite runs the checkpoint scenario suite, each scenario on
// a fresh server: the object-store path (no atomic rename, conditional
// create of the final name).
func TestCheckpointSuite(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) fsbackend.FS {
		return newFixture(t, gcs.RetryPolicy{}, "root").fs
	})
}

// TestMapStoreContract runs the MapStore contract on the file map store.
// One server serves the whole test; each open builds a new client and FS
// rooted at a bucket directory derived from dir, so the suite's restarts
// reopen the same objects and no two subtests share any. Under the race
// detector (or with -short) the bulk cases run at their small size: every
// call is an HTTP round trip through the client library.
func TestMapStoreContract(t *testing.T) {
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{NoListener: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	srv.CreateBucket(bucket)
	mapstoretest.RunWith(t, func(t *testing.T, dir string, partitions int) mapstore.MapStore {
		ctx := context.Background()
		client, err := storage.NewClient(ctx, option.WithHTTPClient(srv.HTTPClient()))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(dir))
		f, err := gcs.New(ctx, gcs.Options{
			Bucket: bucket, Prefix: "maps/" + hex.EncodeToString(sum[:8]), Client: client,
			Retry: gcs.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: 4 * time.Millisecond},
		})
		if err != nil {
			client.Close()
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close(); client.Close() })
		s, err := filestore.Open(ctx, filestore.Options{FS: f, Partitions: partitions})
		if err != nil {
			t.Fatalf("filestore.Open: %v", err)
		}
		return s
	}, mapstoretest.Options{Small: raceEnabled || testing.Short()})
}
