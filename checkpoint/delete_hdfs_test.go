package checkpoint_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stowage/stowage/checkpoint"
	"github.com/stowage/stowage/checkpoint/checkpointtest"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/errorfs"
	"github.com/stowage/stowage/fsbackend/hdfs"
)

// TestJobDeleteOnHDFSIsOneRemoveAll deletes jobs of 10 and of 200
// checkpoints of two pipelines on the MiniDFSCluster of testdata/hdfs
// (STOWAGE_TEST_HDFS), through a counting wrapper: each delete is exactly
// one RemoveAll, one recursive delete at the NameNode, and nothing else
// (no marker, no sync, no listing); after it the job has no files and no
// checkpoint through any lookup, the other job keeps its own, and a new
// store of the job stands alone.
func TestJobDeleteOnHDFSIsOneRemoveAll(t *testing.T) {
	nn := os.Getenv("STOWAGE_TEST_HDFS")
	if nn == "" {
		t.Skip(`STOWAGE_TEST_HDFS is not set: start the fixture with eval "$(bash testdata/hdfs/start.sh)"`)
	}
	raw, err := hdfs.Open(ctx, fsbackend.Properties{"storage.type": "hdfs", "fs.defaultFS": "hdfs://" + nn})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var b [6]byte
	_, _ = rand.Read(b[:])
	dir := "stowage-test/ckpt-delete-" + hex.EncodeToString(b[:])
	defer fsbackend.RemoveAll(ctx, raw, dir)
	sub, err := fsbackend.Sub(raw, dir)
	if err != nil {
		t.Fatal(err)
	}
	efs := errorfs.Wrap(sub, nil)
	if !fsbackend.RemovesAtomically(efs) {
		t.Fatal("HDFS does not report an atomic recursive delete")
	}
	s, err := checkpoint.Open(ctx, checkpoint.Options{FS: efs, Namespace: checkpointtest.Namespace, MaxRetained: checkpoint.KeepAll})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustStore(t, s, checkpointtest.State("other", 1, 1))
	for _, n := range []int64{10, 200} {
		job := fmt.Sprintf("j%d", n)
		for id := int64(1); id <= n; id++ {
			for _, p := range []int{1, 2} {
				mustStore(t, s, checkpointtest.State(job, p, id))
			}
		}
		got := calls(efs, func() {
			if err := s.DeleteCheckpoint(ctx, job); err != nil {
				t.Fatal(err)
			}
		})
		if want := fmt.Sprint(map[errorfs.Op]int64{errorfs.OpRemoveAll: 1}); fmt.Sprint(got) != want {
			t.Fatalf("deleting a job of %d checkpoints on HDFS: %v; want only %s", 2*n, got, want)
		}
		if fis, err := sub.List(ctx, fsbackend.Join(strings.Trim(checkpointtest.Namespace, "/"), job)); err != nil || len(fis) != 0 {
			t.Fatalf("files of job %s after its delete: %v, %v", job, fis, err)
		}
		if all, err := s.GetAllCheckpoints(ctx, job); err != nil || len(all) != 0 {
			t.Fatalf("job %s after its delete: %v, %v; want none", job, ids(all), err)
		}
		mustStore(t, s, checkpointtest.State(job, 1, 5000))
		all, err := s.GetAllCheckpoints(ctx, job)
		if err != nil {
			t.Fatal(err)
		}
		wantIDs(t, "a store after the delete", all, 5000)
	}
	if got, err := s.GetLatestCheckpointByJobAndPipeline(ctx, "other", 1); err != nil || got.CheckpointID != 1 {
		t.Fatalf("the other job after the deletes: %d, %v", got.CheckpointID, err)
	}
}
