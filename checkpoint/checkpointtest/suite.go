package checkpointtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stowage/stowage/checkpoint"
	"github.com/stowage/stowage/fsbackend"
)

// Namespace is where the suite stores checkpoints in each FS.
const Namespace = "/checkpointtest/"

// Run runs every scenario as a subtest, each on its own FS from newFS.
func Run(t *testing.T, newFS func(t *testing.T) fsbackend.FS) {
	tests := []struct {
		name string
		fn   func(t *testing.T, fsys fsbackend.FS)
	}{
		{"SeaTunnelScenario", testSeaTunnelScenario},
		{"LatestByIDNotTime", testLatestByIDNotTime},
		{"GetAndDelete", testGetAndDelete},
		{"RetentionExact", testRetentionExact},
		{"RetentionAcrossReopen", testRetentionAcrossReopen},
		{"DamagedLatestFallsBack", testDamagedLatestFallsBack},
		{"StoreAgain", testStoreAgain},
		{"BadJobIDs", testBadJobIDs},
		{"AsyncFullQueue", testAsyncFullQueue},
		{"JobsAreSeparate", testJobsAreSeparate},
		{"PointerFallbacks", testPointerFallbacks},
		{"GapsAndOldIDs", testGapsAndOldIDs},
		{"DeleteLatest", testDeleteLatest},
		{"InterruptedJobDelete", testInterruptedJobDelete},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newFS(t)) })
	}
}

// Open opens a FileStorage on fsys below Namespace and closes it at the
// end of the test.
func Open(t testing.TB, fsys fsbackend.FS, opts checkpoint.Options) *checkpoint.FileStorage {
	t.Helper()
	opts.FS = fsys
	if opts.Namespace == "" {
		opts.Namespace = Namespace
	}
	s, err := checkpoint.Open(context.Background(), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// State returns a recognisable state for a checkpoint.
// WaitBackground waits for the work s left to the background (on the
// local disk, the unlinking of deleted jobs' files), where s has any.
func WaitBackground(t testing.TB, s checkpoint.Storage) {
	t.Helper()
	if w, ok := s.(interface{ WaitBackground(context.Context) error }); ok {
		if err := w.WaitBackground(context.Background()); err != nil {
			t.Fatalf("WaitBackground: %v", err)
		}
	}
}

func State(job string, pipeline int, id int64) checkpoint.PipelineState {
	return checkpoint.PipelineState{
		JobID: job, PipelineID: pipeline, CheckpointID: id,
		States: fmt.Appendf(nil, "state of %s/%d/%d", job, pipeline, id),
	}
}

func store(t *testing.T, s checkpoint.Storage, st checkpoint.PipelineState) {
	t.Helper()
	if _, err := s.StoreCheckpoint(context.Background(), st); err != nil {
		t.Fatalf("StoreCheckpoint(%s/%d/%d): %v", st.JobID, st.PipelineID, st.CheckpointID, err)
	}
}

// key describes a state for comparisons.
func key(st checkpoint.PipelineState) string {
	return fmt.Sprintf("%s/%d/%d:%q", st.JobID, st.PipelineID, st.CheckpointID, st.States)
}

func keys(sts []checkpoint.PipelineState) string {
	out := make([]string, len(sts))
	for i, st := range sts {
		out[i] = key(st)
	}
	return strings.Join(out, " ")
}

func wantStates(t *testing.T, what string, got []checkpoint.PipelineState, want ...checkpoint.PipelineState) {
	t.Helper()
	if g, w := keys(got), keys(want); g != w {
		t.Fatalf("%s:\n got %s\nwant %s", what, g, w)
	}
}

// CheckpointFiles lists the checkpoint files of job in fsys (names ending
// in ".ckpt"), below Namespace.
func CheckpointFiles(t testing.TB, fsys fsbackend.FS, job string) []string {
	t.Helper()
	return CheckpointFilesIn(t, fsys, fsbackend.Join(strings.Trim(Namespace, "/"), job))
}

// CheckpointFilesIn lists the names ending in ".ckpt" below dir of fsys.
func CheckpointFilesIn(t testing.TB, fsys fsbackend.FS, dir string) []string {
	t.Helper()
	fis, err := fsys.List(context.Background(), dir)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	var out []string
	for _, fi := range fis {
		if strings.HasSuffix(fi.Name, ".ckpt") {
			out = append(out, fi.Name)
		}
	}
	return out
}

// FilePath is the name in fsys of a checkpoint's file.
func FilePath(job string, pipeline int, id int64) string {
	return fsbackend.Join(strings.Trim(Namespace, "/"), job, checkpoint.FileName(pipeline, id))
}

// Rewrite replaces the file name in fsys by what change makes of its bytes.
func Rewrite(t testing.TB, fsys fsbackend.FS, name string, change func([]byte) []byte) {
	t.Helper()
	ctx := context.Background()
	b, err := fsbackend.ReadFile(ctx, fsys, name)
	if err != nil {
		t.Fatalf("ReadFile(%s): %v", name, err)
	}
	nb := change(bytes.Clone(b))
	if err := fsys.Remove(ctx, name); err != nil {
		t.Fatalf("Remove(%s): %v", name, err)
	}
	if err := fsbackend.WriteFile(ctx, fsys, name, nb); err != nil {
		t.Fatalf("WriteFile(%s): %v", name, err)
	}
}

// testSeaTunnelScenario is SeaTunnel's own CheckpointStorage test.
func testSeaTunnelScenario(t *testing.T, fsys fsbackend.FS) {
	ctx := context.Background()
	s := Open(t, fsys, checkpoint.Options{MaxRetained: checkpoint.KeepAll})
	const job = "57743"
	a, b, c := State(job, 1, 1), State(job, 1, 2), State(job, 2, 3)
	for _, st := range []checkpoint.PipelineState{a, b, c} {
		store(t, s, st)
	}
	all, err := s.GetAllCheckpoints(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	wantStates(t, "GetAllCheckpoints", all, a, b, c)
	latest, err := s.GetLatestCheckpoint(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	wantStates(t, "GetLatestCheckpoint", latest, b, c)
	l1, err := s.GetLatestCheckpointByJobAndPipeline(ctx, job, 1)
	if err != nil {
		t.Fatal(err)
	}
	wantStates(t, "latest of pipeline 1", []checkpoint.PipelineState{l1}, b)
	p1, err := s.GetCheckpointsByJobAndPipeline(ctx, job, 1)
	if err != nil {
		t.Fatal(err)
	}
	wantStates(t, "pipeline 1", p1, a, b)
	if err := s.DeleteCheckpoint(ctx, job); err != nil {
		t.Fatal(err)
	}
	all, err = s.GetAllCheckpoints(ctx, job)
	if err != nil || len(all) != 0 {
		t.Fatalf("after DeleteCheckpoint: %d checkpoints, err %v", len(all), err)
	}
	if _, err := s.GetLatestCheckpointByJobAndPipeline(ctx, job, 1); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("latest after delete: err %v, want ErrNotFound", err)
	}
	WaitBackground(t, s)
	if files, err := fsys.List(ctx, fsbackend.Join(strings.Trim(Namespace, "/"), job)); err != nil || len(files) != 0 {
		t.Fatalf("after DeleteCheckpoint files remain: %v (err %v)", files, err)
	}
}

func testLatestByIDNotTime(t *testing.T, fsys fsbackend.FS) {
	ctx := context.Background()
	s := Open(t, fsys, checkpoint.Options{MaxRetained: checkpoint.KeepAll})
	five, three := State("j", 1, 5), State("j", 1, 3)
	five.Created = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	three.Created = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) // newer clock, lower id
	store(t, s, five)
	store(t, s, three)
	got, err := s.GetLatestCheckpointByJobAndPipeline(ctx, "j", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got.CheckpointID != 5 || !bytes.Equal(got.States, five.States) {
		t.Fatalf("latest = %s, want checkpoint 5", key(got))
	}
	if !got.Created.Equal(five.Created) {
		t.Fatalf("Created = %v, want %v", got.Created, five.Created)
	}
	all, err := s.GetLatestCheckpoint(ctx, "j")
	if err != nil || len(all) != 1 || all[0].CheckpointID != 5 {
		t.Fatalf("GetLatestCheckpoint = %s, %v; want checkpoint 5", keys(all), err)
	}
}

func testGetAndDelete(t *testing.T, fsys fsbackend.FS) {
	ctx := context.Background()
	s := Open(t, fsys, checkpoint.Options{MaxRetained: checkpoint.KeepAll})
	empty := checkpoint.PipelineState{JobID: "j", PipelineID: 0, CheckpointID: 0, States: nil}
	binary := checkpoint.PipelineState{JobID: "j", PipelineID: 7, CheckpointID: 1 << 40, States: bytes.Repeat([]byte{0xF7, 0x5A, 0, 0xFF}, 3000)}
	store(t, s, empty)
	store(t, s, binary)
	for _, want := range []checkpoint.PipelineState{empty, binary} {
		got, err := s.GetCheckpoint(ctx, want.JobID, want.PipelineID, want.CheckpointID)
		if err != nil {
			t.Fatal(err)
		}
		if key(got) != key(want) {
			t.Fatalf("GetCheckpoint = %s, want %s", key(got), key(want))
		}
	}
	if _, err := s.GetCheckpoint(ctx, "j", 7, 2); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("missing checkpoint: err %v, want ErrNotFound", err)
	}
	if _, err := s.GetCheckpoint(ctx, "j", 7, -1); !errors.Is(err, checkpoint.ErrInvalidID) {
		t.Fatalf("negative id: err %v, want ErrInvalidID", err)
	}
	for id := int64(1); id <= 4; id++ {
		store(t, s, State("j", 3, id))
	}
	if err := s.DeleteCheckpointByID(ctx, "j", 3, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteCheckpointByID(ctx, "j", 3, 99); err != nil {
		t.Fatalf("deleting an absent checkpoint: %v", err)
	}
	if err := s.DeleteCheckpoints(ctx, "j", 3, []int64{1, 4, 42}); err != nil {
		t.Fatal(err)
	}
	p3, err := s.GetCheckpointsByJobAndPipeline(ctx, "j", 3)
	if err != nil {
		t.Fatal(err)
	}
	wantStates(t, "pipeline 3 after deletes", p3, State("j", 3, 3))
	all, err := s.GetAllCheckpoints(ctx, "j")
	if err != nil {
		t.Fatal(err)
	}
	wantStates(t, "all after deletes", all, empty, State("j", 3, 3), binary)
	if got, err := s.GetAllCheckpoints(ctx, "nobody"); err != nil || len(got) != 0 {
		t.Fatalf("unknown job: %d checkpoints, err %v", len(got), err)
	}
}

func testRetentionExact(t *testing.T, fsys fsbackend.FS) {
	ctx := context.Background()
	s := Open(t, fsys, checkpoint.Options{MaxRetained: 3})
	for id := int64(1); id <= 50; id++ {
		store(t, s, State("j", 1, id))
		store(t, s, State("j", 2, id))
	}
	for _, p := range []int{1, 2} {
		got, err := s.GetCheckpointsByJobAndPipeline(ctx, "j", p)
		if err != nil {
			t.Fatal(err)
		}
		wantStates(t, fmt.Sprintf("pipeline %d after 50 stores", p), got, State("j", p, 48), State("j", p, 49), State("j", p, 50))
	}
	if files := CheckpointFiles(t, fsys, "j"); len(files) != 6 {
		t.Fatalf("%d checkpoint files remain, want 6: %v", len(files), files)
	}
}

func testRetentionAcrossReopen(t *testing.T, fsys fsbackend.FS) {
	ctx := context.Background()
	// A first run keeps everything (or a process died before deleting).
	s1, err := checkpoint.Open(ctx, checkpoint.Options{FS: fsys, Namespace: Namespace, MaxRetained: checkpoint.KeepAll})
	if err != nil {
		t.Fatal(err)
	}
	for id := int64(1); id <= 10; id++ {
		store(t, s1, State("j", 1, id))
	}
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	// A new process with max-retained 2 knows nothing but the storage.
	s2, err := checkpoint.Open(ctx, checkpoint.Options{FS: fsys, Namespace: Namespace, MaxRetained: 2})
	if err != nil {
		t.Fatal(err)
	}
	store(t, s2, State("j", 1, 11))
	got, err := s2.GetCheckpointsByJobAndPipeline(ctx, "j", 1)
	if err != nil {
		t.Fatal(err)
	}
	wantStates(t, "after reopen with max-retained 2", got, State("j", 1, 10), State("j", 1, 11))
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	s3 := Open(t, fsys, checkpoint.Options{MaxRetained: 2})
	for id := int64(12); id <= 20; id++ {
		store(t, s3, State("j", 1, id))
	}
	got, err = s3.GetCheckpointsByJobAndPipeline(ctx, "j", 1)
	if err != nil {
		t.Fatal(err)
	}
	wantStates(t, "after a third run", got, State("j", 1, 19), State("j", 1, 20))
	if files := CheckpointFiles(t, fsys, "j"); len(files) != 2 {
		t.Fatalf("%d checkpoint files remain, want 2: %v", len(files), files)
	}
}

func testDamagedLatestFallsBack(t *testing.T, fsys fsbackend.FS) {
	cases := []struct {
		name   string
		damage func(fsys fsbackend.FS, job string)
	}{
		{"flipped state byte", func(fsys fsbackend.FS, job string) {
			Rewrite(t, fsys, FilePath(job, 1, 3), func(b []byte) []byte { b[len(b)/2] ^= 0x40; return b })
		}},
		{"flipped header byte", func(fsys fsbackend.FS, job string) {
			Rewrite(t, fsys, FilePath(job, 1, 3), func(b []byte) []byte { b[14] ^= 1; return b })
		}},
		{"truncated to half", func(fsys fsbackend.FS, job string) {
			Rewrite(t, fsys, FilePath(job, 1, 3), func(b []byte) []byte { return b[:len(b)/2] })
		}},
		{"trailer cut off", func(fsys fsbackend.FS, job string) {
			Rewrite(t, fsys, FilePath(job, 1, 3), func(b []byte) []byte { return b[:len(b)-3] })
		}},
		{"empty file", func(fsys fsbackend.FS, job string) {
			Rewrite(t, fsys, FilePath(job, 1, 3), func(b []byte) []byte { return nil })
		}},
		{"garbage appended", func(fsys fsbackend.FS, job string) {
			Rewrite(t, fsys, FilePath(job, 1, 3), func(b []byte) []byte { return append(b, 1, 2, 3) })
		}},
		{"another checkpoint's file under its name", func(fsys fsbackend.FS, job string) {
			other, err := fsbackend.ReadFile(context.Background(), fsys, FilePath(job, 1, 1))
			if err != nil {
				t.Fatal(err)
			}
			Rewrite(t, fsys, FilePath(job, 1, 3), func([]byte) []byte { return other })
		}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			job := fmt.Sprintf("damaged-%d", i)
			var mu sync.Mutex
			var damages []checkpoint.Damage
			s := Open(t, fsys, checkpoint.Options{MaxRetained: checkpoint.KeepAll, OnDamage: func(d checkpoint.Damage) {
				mu.Lock()
				damages = append(damages, d)
				mu.Unlock()
			}})
			for id := int64(1); id <= 3; id++ {
				store(t, s, State(job, 1, id))
			}
			tc.damage(fsys, job)
			got, err := s.GetLatestCheckpointByJobAndPipeline(ctx, job, 1)
			if err != nil {
				t.Fatalf("latest with damaged checkpoint 3: %v", err)
			}
			wantStates(t, "latest", []checkpoint.PipelineState{got}, State(job, 1, 2))
			latest, err := s.GetLatestCheckpoint(ctx, job)
			if err != nil {
				t.Fatal(err)
			}
			wantStates(t, "GetLatestCheckpoint", latest, State(job, 1, 2))
			if _, err := s.GetCheckpoint(ctx, job, 1, 3); !errors.Is(err, checkpoint.ErrCorrupt) {
				t.Fatalf("GetCheckpoint of the damaged file: err %v, want ErrCorrupt", err)
			}
			mu.Lock()
			n := len(damages)
			var first checkpoint.Damage
			if n > 0 {
				first = damages[0]
			}
			mu.Unlock()
			if n == 0 || first.CheckpointID != 3 || first.Job != job || first.Reason == "" {
				t.Fatalf("OnDamage got %d reports (first %+v), want checkpoint 3 of %s", n, first, job)
			}
			r, err := checkpoint.Verify(ctx, fsys, Namespace, checkpoint.VerifyOptions{Job: job})
			if err != nil {
				t.Fatal(err)
			}
			if r.OK() || len(r.Damaged) != 1 || r.Damaged[0].CheckpointID != 3 || r.Good != 2 {
				t.Fatalf("Verify = %+v, want one damaged file (checkpoint 3) and 2 good", r)
			}
			if !strings.HasSuffix(r.Damaged[0].File, checkpoint.FileName(1, 3)) {
				t.Fatalf("damaged file %q, want checkpoint 3's", r.Damaged[0].File)
			}
			// A new store replaces the damaged file when it is stored again.
			store(t, s, State(job, 1, 3))
			got, err = s.GetLatestCheckpointByJobAndPipeline(ctx, job, 1)
			if err != nil || got.CheckpointID != 3 {
				t.Fatalf("after re-store: %s, %v; want checkpoint 3", key(got), err)
			}
		})
	}
}

func testStoreAgain(t *testing.T, fsys fsbackend.FS) {
	ctx := context.Background()
	s := Open(t, fsys, checkpoint.Options{MaxRetained: checkpoint.KeepAll})
	st := State("j", 1, 1)
	store(t, s, st)
	store(t, s, st) // a retried store of the same state
	other := st
	other.States = []byte("something else")
	if _, err := s.StoreCheckpoint(ctx, other); !errors.Is(err, checkpoint.ErrExists) {
		t.Fatalf("storing different contents under the same id: err %v, want ErrExists", err)
	}
	got, err := s.GetCheckpoint(ctx, "j", 1, 1)
	if err != nil || key(got) != key(st) {
		t.Fatalf("after conflicting store: %s, %v; want the first state", key(got), err)
	}
}

func testBadJobIDs(t *testing.T, fsys fsbackend.FS) {
	ctx := context.Background()
	s := Open(t, fsys, checkpoint.Options{})
	for _, id := range []string{"", "a/b", "/abs", "..", "a..b", "../escape", "nul\x00", `back\slash`, ".", strings.Repeat("x", 256)} {
		st := State(id, 1, 1)
		if _, err := s.StoreCheckpoint(ctx, st); !errors.Is(err, checkpoint.ErrInvalidJobID) {
			t.Errorf("StoreCheckpoint job %q: err %v, want ErrInvalidJobID", id, err)
		}
		if err := s.AsyncStoreCheckpoint(ctx, st).Err(); !errors.Is(err, checkpoint.ErrInvalidJobID) {
			t.Errorf("AsyncStoreCheckpoint job %q: err %v, want ErrInvalidJobID", id, err)
		}
		if _, err := s.GetAllCheckpoints(ctx, id); !errors.Is(err, checkpoint.ErrInvalidJobID) {
			t.Errorf("GetAllCheckpoints job %q: err %v, want ErrInvalidJobID", id, err)
		}
		if err := s.DeleteCheckpoint(ctx, id); !errors.Is(err, checkpoint.ErrInvalidJobID) {
			t.Errorf("DeleteCheckpoint job %q: err %v, want ErrInvalidJobID", id, err)
		}
	}
	if fis, err := fsys.List(ctx, ""); err != nil || len(fis) != 0 {
		t.Fatalf("bad job ids left files: %v (err %v)", fis, err)
	}
	for _, id := range []string{"57743", "job-1", "a.b", "作业"} {
		store(t, s, State(id, 1, 1))
	}
}

func testAsyncFullQueue(t *testing.T, fsys fsbackend.FS) {
	ctx := context.Background()
	s := Open(t, fsys, checkpoint.Options{MaxRetained: checkpoint.KeepAll, AsyncQueue: 1, AsyncWorkers: 2})
	const submitters, each = 8, 5
	pendings := make([][]*checkpoint.Pending, submitters)
	var wg sync.WaitGroup
	for g := range submitters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				pendings[g] = append(pendings[g], s.AsyncStoreCheckpoint(ctx, State("async", g, int64(i+1))))
			}
		}()
	}
	wg.Wait()
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for g := range submitters {
		for i, p := range pendings[g] {
			name, err := p.Wait(wctx)
			if err != nil {
				t.Fatalf("async store %d/%d: %v", g, i+1, err)
			}
			if name != checkpoint.FileName(g, int64(i+1)) {
				t.Fatalf("async store %d/%d stored as %q", g, i+1, name)
			}
		}
	}
	all, err := s.GetAllCheckpoints(ctx, "async")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != submitters*each {
		t.Fatalf("%d checkpoints stored, want %d", len(all), submitters*each)
	}
}

func testJobsAreSeparate(t *testing.T, fsys fsbackend.FS) {
	ctx := context.Background()
	s := Open(t, fsys, checkpoint.Options{MaxRetained: 1})
	store(t, s, State("a", 1, 1))
	store(t, s, State("ab", 1, 2))
	store(t, s, State("a", 1, 3))
	got, err := s.GetAllCheckpoints(ctx, "ab")
	if err != nil {
		t.Fatal(err)
	}
	wantStates(t, "job ab", got, State("ab", 1, 2))
	if err := s.DeleteCheckpoint(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	got, err = s.GetAllCheckpoints(ctx, "ab")
	if err != nil {
		t.Fatal(err)
	}
	wantStates(t, "job ab after deleting job a", got, State("ab", 1, 2))
	// Another namespace on the same FS sees nothing of this one.
	other := Open(t, fsys, checkpoint.Options{Namespace: "/other/ns/"})
	if got, err := other.GetAllCheckpoints(ctx, "ab"); err != nil || len(got) != 0 {
		t.Fatalf("other namespace sees %d checkpoints (err %v)", len(got), err)
	}
}
