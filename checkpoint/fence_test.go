package checkpoint_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stowage/stowage/checkpoint"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/memfs"
)

var errLeaseLost = errors.New("the lease is not known to be renewed")

// A storage whose Fence refuses stores and deletes with ErrFenced and the
// fence's error, writing nothing, and accepts them again once the fence
// admits writes; reads are served throughout.
func TestFencedStoreRefused(t *testing.T) {
	fsys := memfs.New()
	var fenced atomic.Bool
	s, err := checkpoint.Open(ctx, checkpoint.Options{FS: fsys, Namespace: "/ck/", Fence: func() error {
		if fenced.Load() {
			return errLeaseLost
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st := func(id int64) checkpoint.PipelineState {
		return checkpoint.PipelineState{JobID: "job", PipelineID: 1, CheckpointID: id, States: []byte("s")}
	}
	mustStore(t, s, st(1))
	before, err := fsys.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}

	fenced.Store(true)
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, checkpoint.ErrFenced) || !errors.Is(err, errLeaseLost) {
			t.Errorf("%s while fenced: %v, want ErrFenced and the fence's error", what, err)
		}
	}
	_, err = s.StoreCheckpoint(ctx, st(2))
	refused("store", err)
	_, err = s.AsyncStoreCheckpoint(ctx, st(3)).Wait(ctx)
	refused("asynchronous store", err)
	refused("delete", s.DeleteCheckpoint(ctx, "job"))
	refused("delete by id", s.DeleteCheckpointByID(ctx, "job", 1, 1))
	refused("delete several", s.DeleteCheckpoints(ctx, "job", 1, []int64{1}))
	after, err := fsys.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Fatalf("%d files while fenced, %d before", len(after), len(before))
	}
	if got, err := s.GetLatestCheckpointByJobAndPipeline(ctx, "job", 1); err != nil || got.CheckpointID != 1 {
		t.Fatalf("read while fenced: %d, %v", got.CheckpointID, err)
	}

	fenced.Store(false)
	mustStore(t, s, st(2))
	if err := s.DeleteCheckpoint(ctx, "job"); err != nil {
		t.Fatal(err)
	}
}

// The lease records below the namespace are neither a job nor a stray
// file to inspection.
func TestLeaseRecordsNotInspected(t *testing.T) {
	fsys := memfs.New()
	s, err := checkpoint.Open(ctx, checkpoint.Options{FS: fsys, Namespace: "/ck/"})
	if err != nil {
		t.Fatal(err)
	}
	mustStore(t, s, checkpoint.PipelineState{JobID: "job", PipelineID: 1, CheckpointID: 1, States: []byte("s")})
	s.Close()
	if err := fsbackend.WriteFile(ctx, fsys, "ck/"+checkpoint.LeaseRecords+"/00000000000000000001", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	jobs, err := checkpoint.Inspect(ctx, fsys, "/ck/")
	if err != nil || len(jobs) != 1 || jobs[0].Job != "job" {
		t.Fatalf("inspect: %+v, %v; want job alone", jobs, err)
	}
	rep, err := checkpoint.Verify(ctx, fsys, "/ck/", checkpoint.VerifyOptions{})
	if err != nil || len(rep.Stray) != 0 || len(rep.Temporary) != 0 || rep.Jobs != 1 {
		t.Fatalf("verify: %+v, %v", rep, err)
	}
	if err := checkpoint.ValidJobID(checkpoint.LeaseRecords); err == nil {
		t.Fatalf("%q is a valid job id", checkpoint.LeaseRecords)
	}
}
