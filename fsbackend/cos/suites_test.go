package cos_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/stowage/stowage/checkpoint/checkpointtest"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/internal/objstore/s3test"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/mapstore/mapstoretest"
)

// TestCheckpointSuiteGofakes3 runs the checkpoint scenario suite on COS
// through its S3-compatible endpoint: one server, a fresh bucket per
// scenario.
func TestCheckpointSuiteGofakes3(t *testing.T) {
	srv := newServer(t)
	checkpointtest.Run(t, func(t *testing.T) fsbackend.FS {
		return open(t, props(t, srv))
	})
}

// TestCheckpointSuiteMoto runs the same scenarios on moto when
// STOWAGE_TEST_S3_ENDPOINT names one.
func TestCheckpointSuiteMoto(t *testing.T) {
	ep := s3test.ExternalEndpoint(t)
	checkpointtest.Run(t, func(t *testing.T) fsbackend.FS {
		return open(t, motoProps(t, ep))
	})
}

func motoProps(t *testing.T, ep string) fsbackend.Properties {
	b := s3test.CreateExternalBucket(t, ep, "stowage-cos")
	return fsbackend.Properties{"storage.type": "cos", "cos.bucket": "cosn://" + b, "fs.cosn.endpoint": ep,
		"fs.cosn.userinfo.secretId": "testing", "fs.cosn.userinfo.secretKey": "testing"}
}

// TestMapStoreContractGofakes3 runs the MapStore contract on the file map
// store over COS. One server and bucket serve the whole test; each open
// builds a new FS rooted at a directory derived from dir, so the suite's
// restarts reopen the same objects and no two subtests share any. Under
// the race detector (or with -short) the bulk cases run at their small
// size: every call is an HTTP round trip through the SDK.
func TestMapStoreContractGofakes3(t *testing.T) {
	srv := newServer(t)
	b := "maps-1250000000"
	srv.CreateBucket(t, b)
	mapstoretest.RunWith(t, func(t *testing.T, dir string, partitions int) mapstore.MapStore {
		sum := sha256.Sum256([]byte(dir))
		p := props(t, srv)
		p["cos.bucket"] = "cosn://" + b + "/" + hex.EncodeToString(sum[:8])
		f := open(t, p)
		s, err := filestore.Open(context.Background(), filestore.Options{FS: f, Partitions: partitions})
		if err != nil {
			t.Fatalf("filestore.Open: %v", err)
		}
		return s
	}, mapstoretest.Options{Small: raceEnabled || testing.Short()})
}
