package checkpointtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stowage/stowage/checkpoint"
	"github.com/stowage/stowage/fsbackend"
)

// The scenarios below work on the job's latest directory as FORMAT.md
// describes it: <namespace><job>/latest/ holding p<pipeline> markers,
// p<pipeline>-s<seq>-c<checkpoint> and p<pipeline>-s<seq>-list pointers,
// "complete" and "deleting".

// LatestDir is the name in fsys of a job's latest directory.
func LatestDir(job string) string {
	return fsbackend.Join(strings.Trim(Namespace, "/"), job, "latest")
}

// LatestFiles returns the base names in a job's latest directory.
func LatestFiles(t testing.TB, fsys fsbackend.FS, job string) []string {
	t.Helper()
	fis, err := fsys.List(context.Background(), LatestDir(job))
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	out := make([]string, 0, len(fis))
	for _, fi := range fis {
		out = append(out, strings.TrimPrefix(fi.Name, LatestDir(job)+"/"))
	}
	return out
}

// Pointers returns the names (in fsys) of the pointers of one pipeline.
func Pointers(t testing.TB, fsys fsbackend.FS, job string, pipeline int) []string {
	t.Helper()
	var out []string
	prefix := fmt.Sprintf("p%010d-s", pipeline)
	for _, n := range LatestFiles(t, fsys, job) {
		if strings.HasPrefix(n, prefix) {
			out = append(out, LatestDir(job)+"/"+n)
		}
	}
	return out
}

// SetPointer replaces the pipeline's pointers by one at checkpoint id, with
// a seq above theirs: what a store that crashed before moving the pointer
// (id older than the newest) or an operator's edit leaves.
func SetPointer(t testing.TB, fsys fsbackend.FS, job string, pipeline int, id int64) {
	t.Helper()
	ctx := context.Background()
	for _, n := range Pointers(t, fsys, job, pipeline) {
		if err := fsys.Remove(ctx, n); err != nil {
			t.Fatalf("Remove(%s): %v", n, err)
		}
	}
	name := LatestDir(job) + "/" + fmt.Sprintf("p%010d-s%019d-c%019d", pipeline, 1000, id)
	if err := fsbackend.WriteFile(ctx, fsys, name, nil); err != nil {
		t.Fatalf("WriteFile(%s): %v", name, err)
	}
}

func latestOf(t *testing.T, s checkpoint.Storage, job string, pipeline int) int64 {
	t.Helper()
	got, err := s.GetLatestCheckpointByJobAndPipeline(context.Background(), job, pipeline)
	if err != nil {
		t.Fatalf("latest of %s/%d: %v", job, pipeline, err)
	}
	if want := State(job, pipeline, got.CheckpointID); key(got) != key(want) {
		t.Fatalf("latest of %s/%d reads %s, want %s", job, pipeline, key(got), key(want))
	}
	return got.CheckpointID
}

func wantLatest(t *testing.T, s checkpoint.Storage, what, job string, pipeline int, want int64) {
	t.Helper()
	if got := latestOf(t, s, job, pipeline); got != want {
		t.Fatalf("%s: latest of %s/%d = %d, want %d", what, job, pipeline, got, want)
	}
	all, err := s.GetLatestCheckpoint(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range all {
		if st.PipelineID == pipeline {
			if st.CheckpointID != want {
				t.Fatalf("%s: GetLatestCheckpoint gives %d for pipeline %d, want %d", what, st.CheckpointID, pipeline, want)
			}
			return
		}
	}
	t.Fatalf("%s: GetLatestCheckpoint = %s, missing pipeline %d", what, keys(all), pipeline)
}

// testPointerFallbacks damages the latest directory in every way a crash,
// an operator or a bad disk could, and checks that the answer stays the
// newest readable checkpoint.
func testPointerFallbacks(t *testing.T, fsys fsbackend.FS) {
	ctx := context.Background()
	s := Open(t, fsys, checkpoint.Options{MaxRetained: checkpoint.KeepAll})
	const job = "ptr"
	for id := int64(1); id <= 5; id++ {
		store(t, s, State(job, 1, id))
	}
	store(t, s, State(job, 2, 40))
	wantLatest(t, s, "stored", job, 1, 5)
	if n := len(Pointers(t, fsys, job, 1)); n != 1 {
		t.Fatalf("%d pointers for pipeline 1, want 1", n)
	}

	// Behind by two: as after a crash between storing checkpoints and
	// moving the pointer. The ids that follow it are found.
	SetPointer(t, fsys, job, 1, 3)
	wantLatest(t, s, "pointer behind", job, 1, 5)

	// At a checkpoint that does not exist (ahead, or deleted behind the
	// storage's back): the listing.
	SetPointer(t, fsys, job, 1, 99)
	wantLatest(t, s, "pointer at a missing checkpoint", job, 1, 5)

	// At a damaged checkpoint: the previous readable one.
	SetPointer(t, fsys, job, 1, 5)
	Rewrite(t, fsys, FilePath(job, 1, 5), func(b []byte) []byte { return b[:len(b)-2] })
	wantLatest(t, s, "pointer at a damaged checkpoint", job, 1, 4)

	// No pointer at all, and junk beside it: the listing.
	for _, n := range Pointers(t, fsys, job, 1) {
		if err := fsys.Remove(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	for _, junk := range []string{"p0000000001-s", "p0000000001-sxyz-c5", "p0000000001-s0000000000000000009-c00000000000000000x5", "notes"} {
		if err := fsbackend.WriteFile(ctx, fsys, LatestDir(job)+"/"+junk, []byte("torn \x00 bytes")); err != nil {
			t.Fatal(err)
		}
	}
	wantLatest(t, s, "no pointer, junk names", job, 1, 4)

	// A pointer file with bytes in it: only its name counts.
	SetPointer(t, fsys, job, 1, 4)
	Rewrite(t, fsys, Pointers(t, fsys, job, 1)[0], func([]byte) []byte { return []byte("garbage") })
	wantLatest(t, s, "pointer with contents", job, 1, 4)

	// The next store repairs: the damaged 5 is replaced, one pointer
	// again, at the new checkpoint.
	store(t, s, State(job, 1, 5))
	store(t, s, State(job, 1, 6))
	wantLatest(t, s, "after two more stores", job, 1, 6)
	if ps := Pointers(t, fsys, job, 1); len(ps) != 1 || !strings.HasSuffix(ps[0], fmt.Sprintf("-c%019d", 6)) {
		t.Fatalf("pointers after the repairing stores: %v, want one at checkpoint 6", ps)
	}
	wantLatest(t, s, "the other pipeline", job, 2, 40)

	// A pipeline's marker lost although the job's latest directory says
	// complete: its pointer still names it.
	if err := fsys.Remove(ctx, LatestDir(job)+"/p0000000002"); err != nil {
		t.Fatal(err)
	}
	wantLatest(t, s, "marker of pipeline 2 lost", job, 2, 40)
	if _, err := s.GetLatestCheckpointByJobAndPipeline(ctx, job, 3); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("latest of a pipeline with no checkpoints: %v, want ErrNotFound", err)
	}
}

// testGapsAndOldIDs stores ids with gaps and an older id after a newer
// one: the pointer never goes back, and a 'list' pointer (what a store
// whose id does not follow leaves while it runs) makes lookups list.
func testGapsAndOldIDs(t *testing.T, fsys fsbackend.FS) {
	ctx := context.Background()
	s := Open(t, fsys, checkpoint.Options{MaxRetained: checkpoint.KeepAll})
	const job = "gaps"
	for _, id := range []int64{1, 2, 10, 11, 30, 20, 25} {
		store(t, s, State(job, 1, id))
	}
	wantLatest(t, s, "ids 1 2 10 11 30 20 25", job, 1, 30)
	// What a crash in the middle of storing 50 leaves: the list pointer
	// written before it, and checkpoint 50 complete.
	intent := LatestDir(job) + "/" + fmt.Sprintf("p%010d-s%019d-list", 1, 2000)
	if err := fsbackend.WriteFile(ctx, fsys, intent, nil); err != nil {
		t.Fatal(err)
	}
	other := Open(t, fsys, checkpoint.Options{Namespace: "/scratch/", MaxRetained: checkpoint.KeepAll})
	store(t, other, State(job, 1, 50))
	copyFile(t, fsys, fsbackend.Join("scratch", job, checkpoint.FileName(1, 50)), FilePath(job, 1, 50))
	wantLatest(t, s, "list pointer, 50 stored", job, 1, 50)
	store(t, s, State(job, 1, 51))
	wantLatest(t, s, "after storing 51", job, 1, 51)
	if ps := Pointers(t, fsys, job, 1); len(ps) != 1 || strings.HasSuffix(ps[0], "-list") {
		t.Fatalf("pointers after the next store: %v, want one at 51", ps)
	}
}

func copyFile(t *testing.T, fsys fsbackend.FS, from, to string) {
	t.Helper()
	ctx := context.Background()
	b, err := fsbackend.ReadFile(ctx, fsys, from)
	if err != nil {
		t.Fatal(err)
	}
	if err := fsbackend.WriteFile(ctx, fsys, to, b); err != nil {
		t.Fatal(err)
	}
}

// testDeleteLatest deletes a pipeline's latest checkpoints by id: the
// latest is the newest left, and a pipeline emptied is gone.
func testDeleteLatest(t *testing.T, fsys fsbackend.FS) {
	ctx := context.Background()
	s := Open(t, fsys, checkpoint.Options{MaxRetained: checkpoint.KeepAll})
	const job = "dl"
	for id := int64(1); id <= 6; id++ {
		store(t, s, State(job, 1, id))
	}
	store(t, s, State(job, 2, 1))
	if err := s.DeleteCheckpoints(ctx, job, 1, []int64{6, 5, 2}); err != nil {
		t.Fatal(err)
	}
	wantLatest(t, s, "after deleting 6, 5 and 2", job, 1, 4)
	if err := s.DeleteCheckpointByID(ctx, job, 1, 3); err != nil {
		t.Fatal(err)
	}
	wantLatest(t, s, "after deleting 3 (below the latest)", job, 1, 4)
	if err := s.DeleteCheckpoints(ctx, job, 1, []int64{1, 4}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetLatestCheckpointByJobAndPipeline(ctx, job, 1); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("latest of an emptied pipeline: %v, want ErrNotFound", err)
	}
	all, err := s.GetLatestCheckpoint(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	wantStates(t, "GetLatestCheckpoint with pipeline 1 emptied", all, State(job, 2, 1))
	if ps := Pointers(t, fsys, job, 1); len(ps) != 0 {
		t.Fatalf("an emptied pipeline keeps pointers %v", ps)
	}
	store(t, s, State(job, 1, 9))
	wantLatest(t, s, "a new checkpoint of the emptied pipeline", job, 1, 9)
}

// testInterruptedJobDelete leaves a job as a deletion that stopped midway
// leaves it (the 'deleting' marker, some files gone): the job reads as
// deleted, and the next delete, or store, finishes the work.
func testInterruptedJobDelete(t *testing.T, fsys fsbackend.FS) {
	ctx := context.Background()
	for _, finish := range []string{"delete", "store"} {
		t.Run(finish, func(t *testing.T) {
			s := Open(t, fsys, checkpoint.Options{MaxRetained: checkpoint.KeepAll})
			job := "half-deleted-by-" + finish
			for id := int64(1); id <= 6; id++ {
				store(t, s, State(job, 1, id))
			}
			store(t, s, State(job, 2, 1))
			if err := fsbackend.WriteFile(ctx, fsys, LatestDir(job)+"/deleting", nil); err != nil {
				t.Fatal(err)
			}
			for _, id := range []int64{1, 2, 6} {
				if err := fsys.Remove(ctx, FilePath(job, 1, id)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.GetLatestCheckpointByJobAndPipeline(ctx, job, 1); !errors.Is(err, checkpoint.ErrNotFound) {
				t.Fatalf("latest of a job being deleted: %v, want ErrNotFound", err)
			}
			if _, err := s.GetCheckpoint(ctx, job, 1, 4); !errors.Is(err, checkpoint.ErrNotFound) {
				t.Fatalf("a checkpoint of a job being deleted: %v, want ErrNotFound", err)
			}
			for what, get := range map[string]func(context.Context, string) ([]checkpoint.PipelineState, error){
				"GetLatestCheckpoint": s.GetLatestCheckpoint, "GetAllCheckpoints": s.GetAllCheckpoints,
			} {
				if got, err := get(ctx, job); err != nil || len(got) != 0 {
					t.Fatalf("%s of a job being deleted: %s, %v; want none", what, keys(got), err)
				}
			}
			if got, err := s.GetCheckpointsByJobAndPipeline(ctx, job, 1); err != nil || len(got) != 0 {
				t.Fatalf("pipeline of a job being deleted: %s, %v; want none", keys(got), err)
			}
			switch finish {
			case "delete":
				if err := s.DeleteCheckpoint(ctx, job); err != nil {
					t.Fatal(err)
				}
				WaitBackground(t, s)
				if fis, err := fsys.List(ctx, fsbackend.Join(strings.Trim(Namespace, "/"), job)); err != nil || len(fis) != 0 {
					t.Fatalf("after the delete finished: %v (err %v)", fis, err)
				}
			case "store":
				store(t, s, State(job, 1, 7))
				all, err := s.GetAllCheckpoints(ctx, job)
				if err != nil {
					t.Fatal(err)
				}
				wantStates(t, "after a store finished the delete", all, State(job, 1, 7))
				wantLatest(t, s, "after a store finished the delete", job, 1, 7)
			}
		})
	}
}
