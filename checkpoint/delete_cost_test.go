package checkpoint_test

import (
	"fmt"
	"testing"

	"github.com/stowage/stowage/checkpoint"
	"github.com/stowage/stowage/checkpoint/checkpointtest"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/errorfs"
	"github.com/stowage/stowage/fsbackend/memfs"
)

// TestJobDeleteIsOneRecursiveDelete counts, through a counting wrapper,
// the calls of deleting a job of 10 and of 1,000 checkpoints of two
// pipelines, on back ends with a recursive delete: the same calls for
// both, among them exactly one RemoveAll (of the job's directory) and no
// Remove of a checkpoint file. Where the recursive delete is atomic
// (memfs, as HDFS) that RemoveAll is the only call: no marker is written.
func TestJobDeleteIsOneRecursiveDelete(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fs     func(dir string) fsbackend.FS
		place  bool // lay checkpoints out directly in dir (a local disk)
		atomic bool // the back end's RemoveAll is atomic
	}{
		{"local", func(dir string) fsbackend.FS { return newLocalAt(t, dir) }, true, false},
		{"memfs", func(string) fsbackend.FS { return memfs.New() }, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			measure := func(n int) map[errorfs.Op]int64 {
				dir := t.TempDir()
				efs := errorfs.Wrap(tc.fs(dir), nil)
				maker := newCheckpointMaker(t)
				s := checkpointtest.Open(t, efs, checkpoint.Options{MaxRetained: checkpoint.KeepAll})
				for id := int64(1); id <= int64(n); id++ {
					for _, p := range []int{1, 2} {
						if st := checkpointtest.State("j", p, id); tc.place && id > 2 && id < int64(n)-1 {
							maker.place(t, dir, st)
						} else {
							mustStore(t, s, st)
						}
					}
				}
				mustStore(t, s, checkpointtest.State("other", 1, 1))
				got := calls(efs, func() {
					if err := s.DeleteCheckpoint(ctx, "j"); err != nil {
						t.Fatal(err)
					}
				})
				if got[errorfs.OpRemoveAll] != 1 || got[errorfs.OpRemove] > 6 {
					t.Fatalf("deleting a job of %d checkpoints: %v; want one recursive delete and a few removes (the latest directory's files, the deletion mark)", 2*n, got)
				}
				if want := fmt.Sprint(map[errorfs.Op]int64{errorfs.OpRemoveAll: 1}); tc.atomic && fmt.Sprint(got) != want {
					t.Fatalf("deleting a job of %d checkpoints on a back end with an atomic recursive delete: %v; want only %s", 2*n, got, want)
				}
				if fsbackend.RemovesAtomically(efs) != tc.atomic {
					t.Fatalf("RemovesAtomically = %v, want %v", !tc.atomic, tc.atomic)
				}
				if fis, err := efs.List(ctx, "checkpointtest/j"); err != nil || len(fis) != 0 {
					t.Fatalf("after deleting the job of %d: %v, %v", 2*n, fis, err)
				}
				if fis, err := efs.List(ctx, "checkpointtest/..deleting"); err != nil || len(fis) != 0 {
					t.Fatalf("deletion marks left: %v, %v", fis, err)
				}
				if got, err := s.GetLatestCheckpointByJobAndPipeline(ctx, "other", 1); err != nil || got.CheckpointID != 1 {
					t.Fatalf("the other job after the delete: %d, %v", got.CheckpointID, err)
				}
				return got
			}
			small, large := measure(10), measure(1000)
			if fmt.Sprint(small) != fmt.Sprint(large) {
				t.Fatalf("deleting a job of 20 checkpoints made %v, of 2,000 %v; want the same", small, large)
			}
			t.Logf("calls of a job delete: %v", large)
		})
	}
}

// TestStoreRightAfterBackgroundDelete: on the local disk a job delete
// returns before the job's files are unlinked; a store of the same job
// right after it, and a second delete and store, leave exactly the new
// checkpoints, whichever of the store and the background removal runs
// first.
func TestStoreRightAfterBackgroundDelete(t *testing.T) {
	fsys := newLocal(t)
	s := checkpointtest.Open(t, fsys, checkpoint.Options{MaxRetained: 3})
	for round := range 3 {
		for id := int64(1); id <= 30; id++ {
			mustStore(t, s, checkpointtest.State("j", 1, id+int64(round)*100))
		}
		if err := s.DeleteCheckpoint(ctx, "j"); err != nil {
			t.Fatal(err)
		}
		if got, err := s.GetAllCheckpoints(ctx, "j"); err != nil || len(got) != 0 {
			t.Fatalf("round %d: the job right after its delete: %v, %v; want none", round, ids(got), err)
		}
		mustStore(t, s, checkpointtest.State("j", 1, 1000+int64(round)))
		checkpointtest.WaitBackground(t, s)
		got, err := s.GetAllCheckpoints(ctx, "j")
		if err != nil {
			t.Fatal(err)
		}
		wantIDs(t, fmt.Sprintf("round %d: after a store right after the delete", round), got, 1000+int64(round))
		latest, err := s.GetLatestCheckpointByJobAndPipeline(ctx, "j", 1)
		if err != nil || latest.CheckpointID != 1000+int64(round) {
			t.Fatalf("round %d: latest %d, %v", round, latest.CheckpointID, err)
		}
		if err := s.DeleteCheckpoint(ctx, "j"); err != nil {
			t.Fatal(err)
		}
	}
	checkpointtest.WaitBackground(t, s)
	if fis, err := fsys.List(ctx, "checkpointtest"); err != nil || len(fis) != 0 {
		t.Fatalf("files left after the last delete: %v, %v", fis, err)
	}
}
