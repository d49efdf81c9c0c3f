package checkpoint_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/stowage/stowage/checkpoint"
	"github.com/stowage/stowage/checkpoint/checkpointtest"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/errorfs"
	"github.com/stowage/stowage/fsbackend/memfs"
)

var countedOps = []errorfs.Op{
	errorfs.OpCreate, errorfs.OpWrite, errorfs.OpSync, errorfs.OpClose, errorfs.OpOpen,
	errorfs.OpReadAt, errorfs.OpList, errorfs.OpStat, errorfs.OpRemove, errorfs.OpRename, errorfs.OpRemoveAll,
}

// calls runs fn and returns the calls of each operation it made on efs.
func calls(efs *errorfs.FS, fn func()) map[errorfs.Op]int64 {
	before := map[errorfs.Op]int64{}
	for _, op := range countedOps {
		before[op] = efs.Calls(op)
	}
	fn()
	out := map[errorfs.Op]int64{}
	for _, op := range countedOps {
		if n := efs.Calls(op) - before[op]; n != 0 {
			out[op] = n
		}
	}
	return out
}

// checkpointMaker writes checkpoint files into an FS as a storage would,
// without a storage on that FS: it stores each in a scratch storage that
// keeps one (so ids must increase), and copies the file.
type checkpointMaker struct {
	scratch fsbackend.FS
	s       *checkpoint.FileStorage
}

func newCheckpointMaker(t testing.TB) *checkpointMaker {
	mem := memfs.New()
	return &checkpointMaker{scratch: mem, s: checkpointtest.Open(t, mem, checkpoint.Options{MaxRetained: 1})}
}

// place writes st's file below the local directory root (no sync).
func (m *checkpointMaker) place(t testing.TB, root string, st checkpoint.PipelineState) {
	t.Helper()
	name := checkpointtest.FilePath(st.JobID, st.PipelineID, st.CheckpointID)
	mustStore(t, m.s, st)
	b, err := fsbackend.ReadFile(ctx, m.scratch, name)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLatestLookupCostDoesNotGrow counts, through a counting wrapper, the
// calls of finding the latest checkpoint of a pipeline and of a job with
// 10 and with 10,000 checkpoints in the job: they are the same, one List
// (of the latest directory), one Stat (the id after the pointer's) and one
// file read per pipeline. A store with every checkpoint kept costs the
// same calls too.
func TestLatestLookupCostDoesNotGrow(t *testing.T) {
	if testing.Short() {
		t.Skip("stores 10,000 checkpoints")
	}
	for _, tc := range []struct {
		name string
		fs   func(dir string) fsbackend.FS
	}{
		{"local", func(dir string) fsbackend.FS { return newLocalAt(t, dir) }},
		{"without-atomic-rename", func(dir string) fsbackend.FS { return objectStoreFS{newLocalAt(t, dir)} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type cost struct{ pipeline, job, store map[errorfs.Op]int64 }
			measure := func(n int) cost {
				dir := t.TempDir()
				efs := errorfs.Wrap(tc.fs(dir), nil)
				maker := newCheckpointMaker(t)
				s := checkpointtest.Open(t, efs, checkpoint.Options{MaxRetained: checkpoint.KeepAll})
				// The first and last few through the storage, the rest
				// written in directly, which is quicker and leaves the
				// same files.
				for id := int64(1); id <= int64(n); id++ {
					if id <= 3 || id > int64(n)-3 {
						mustStore(t, s, checkpointtest.State("j", 1, id))
					} else {
						maker.place(t, dir, checkpointtest.State("j", 1, id))
					}
				}
				mustStore(t, s, checkpointtest.State("j", 2, 7))
				var c cost
				c.pipeline = calls(efs, func() {
					if got, err := s.GetLatestCheckpointByJobAndPipeline(ctx, "j", 1); err != nil || got.CheckpointID != int64(n) {
						t.Fatalf("latest of %d: %d, %v", n, got.CheckpointID, err)
					}
				})
				c.job = calls(efs, func() {
					if got, err := s.GetLatestCheckpoint(ctx, "j"); err != nil || len(got) != 2 || got[0].CheckpointID != int64(n) {
						t.Fatalf("latest of the job of %d: %v, %v", n, got, err)
					}
				})
				c.store = calls(efs, func() { mustStore(t, s, checkpointtest.State("j", 1, int64(n+1))) })
				return c
			}
			small, large := measure(10), measure(10_000)
			for _, c := range []struct {
				what         string
				small, large map[errorfs.Op]int64
			}{
				{"latest of a pipeline", small.pipeline, large.pipeline},
				{"latest of each pipeline of the job", small.job, large.job},
				{"store", small.store, large.store},
			} {
				if !maps.Equal(c.small, c.large) {
					t.Errorf("%s: calls with 10 checkpoints %v, with 10,000 %v", c.what, c.small, c.large)
				}
			}
			want := map[errorfs.Op]int64{errorfs.OpList: 1, errorfs.OpStat: 1, errorfs.OpOpen: 1, errorfs.OpReadAt: 1}
			if !maps.Equal(small.pipeline, want) {
				t.Errorf("latest of a pipeline: calls %v, want %v", small.pipeline, want)
			}
			if fmt.Sprint(large.job) != fmt.Sprint(map[errorfs.Op]int64{errorfs.OpList: 1, errorfs.OpStat: 2, errorfs.OpOpen: 2, errorfs.OpReadAt: 2}) {
				t.Errorf("latest of the job's two pipelines: calls %v, want 1 List and 2 of the rest", large.job)
			}
		})
	}
}
