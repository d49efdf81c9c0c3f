package checkpoint_test

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stowage/stowage/checkpoint"
	"github.com/stowage/stowage/checkpoint/checkpointtest"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/local"
)

// The crash tests run a scenario in a child process (this test binary,
// started again with crashScenarioEnv set; see TestMain) on the local
// disk, through stopFS: when the scenario reaches its stop point the child
// says so on stdout and waits, and the parent SIGKILLs it. The parent then
// opens the same directory as the next process would.
const (
	crashScenarioEnv = "STOWAGE_CHECKPOINT_CRASH_SCENARIO"
	crashDirEnv      = "STOWAGE_CHECKPOINT_CRASH_DIR"
)

// stopFS wraps the local FS, and its Deferred view (so that the storage
// takes the path it takes on the local disk), and stops the process at
// the first Create, Rename, Remove or SyncDir that stop accepts, before it
// runs.
type stopFS struct {
	fsbackend.FS
	stop func(op, name string) bool
}

func (f *stopFS) check(op, name string) {
	if f.stop(op, name) {
		fmt.Printf("stopped at %s %s\n", op, name)
		select {} // until SIGKILL
	}
}

func (f *stopFS) Create(ctx context.Context, name string) (fsbackend.Writer, error) {
	f.check("create", name)
	return f.FS.Create(ctx, name)
}

func (f *stopFS) Rename(ctx context.Context, oldName, newName string) error {
	f.check("rename", newName)
	return f.FS.Rename(ctx, oldName, newName)
}

func (f *stopFS) Remove(ctx context.Context, name string) error {
	f.check("remove", name)
	return f.FS.Remove(ctx, name)
}

// RemoveAll removes the files below dir one at a time, each a stop
// point, in the order that is worst for the storage: a latest directory's
// deleting marker first, its other files last. A recursive delete of a back end removes files in
// no set order, so a crash may leave any of them.
func (f *stopFS) RemoveAll(ctx context.Context, dir string) error {
	f.check("removeall", dir)
	fis, err := f.FS.List(ctx, dir)
	if err != nil {
		return err
	}
	first := func(fi fsbackend.FileInfo) int {
		switch {
		case fi.Name == dir+"/latest/deleting":
			return 0
		case strings.HasPrefix(fi.Name, dir+"/latest/"):
			return 2 // pointers last: they would lead lookups on
		}
		return 1
	}
	slices.SortStableFunc(fis, func(a, b fsbackend.FileInfo) int { return cmp.Compare(first(a), first(b)) })
	for _, fi := range fis {
		f.check("remove", fi.Name)
		if err := f.FS.Remove(ctx, fi.Name); err != nil && !errors.Is(err, fsbackend.ErrNotExist) {
			return err
		}
	}
	return fsbackend.RemoveAll(ctx, f.FS, dir) // the emptied directories
}

func (f *stopFS) Deferred() fsbackend.FS {
	return &stopFS{FS: f.FS.(fsbackend.DirSyncer).Deferred(), stop: f.stop}
}

func (f *stopFS) SyncDir(ctx context.Context, dir string) error {
	f.check("syncdir", dir)
	return f.FS.(fsbackend.DirSyncer).SyncDir(ctx, dir)
}

// stopRenameFS is stopFS with the local disk's directory moves, so that a
// job delete takes the local disk's own way: its directory moved into the
// trash, then unlinked there (one file at a time through stopFS).
type stopRenameFS struct{ *stopFS }

func (f stopRenameFS) RenameDir(ctx context.Context, dir, newDir string) error {
	f.check("renamedir", dir)
	return f.FS.(fsbackend.DirRenamer).RenameDir(ctx, dir, newDir)
}

func (f stopRenameFS) Deferred() fsbackend.FS {
	return stopRenameFS{f.stopFS.Deferred().(*stopFS)}
}

// crashScenario is what the child does: setup runs, then run, which must
// reach stop (only consulted while run runs). With renameDirs the FS
// moves directories (stopRenameFS).
type crashScenario struct {
	renameDirs bool
	keep       int
	setup      func(ctx context.Context, s checkpoint.Storage) error
	run        func(ctx context.Context, s checkpoint.Storage) error
	stop       func(op, name string) bool
}

// deleteJobJ deletes job j and waits for the removal of its files, which
// the local disk leaves to the background.
func deleteJobJ(ctx context.Context, s checkpoint.Storage) error {
	if err := s.DeleteCheckpoint(ctx, "j"); err != nil {
		return err
	}
	return s.(*checkpoint.FileStorage).WaitBackground(ctx)
}

func storeRange(ctx context.Context, s checkpoint.Storage, job string, pipeline int, from, to int64) error {
	for id := from; id <= to; id++ {
		if _, err := s.StoreCheckpoint(ctx, checkpointtest.State(job, pipeline, id)); err != nil {
			return err
		}
	}
	return nil
}

// pointerMove accepts the move (a rename, or a create) of a pipeline-1
// pointer to id: after the checkpoint's rename, before the pointer moves.
func pointerMove(id int64) func(op, name string) bool {
	suffix := fmt.Sprintf("-c%019d", id)
	return func(op, name string) bool {
		return (op == "rename" || op == "create") && strings.Contains(name, "/latest/p0000000001-s") && strings.HasSuffix(name, suffix)
	}
}

// removal accepts the removal of a checkpoint file of pipeline 1, or its
// retirement (a rename to a name that is no checkpoint's).
func removal(id int64) func(op, name string) bool {
	return func(op, name string) bool {
		return (op == "remove" && strings.HasSuffix(name, "/"+checkpoint.FileName(1, id))) ||
			(op == "rename" && strings.HasSuffix(name, "/"+checkpoint.FileName(1, id)+".retired"))
	}
}

var crashScenarios = map[string]crashScenario{
	// SIGKILL between a checkpoint's rename and its pointer's move.
	"rename-pointer": {
		keep:  3,
		setup: func(ctx context.Context, s checkpoint.Storage) error { return storeRange(ctx, s, "j", 1, 1, 5) },
		run:   func(ctx context.Context, s checkpoint.Storage) error { return storeRange(ctx, s, "j", 1, 6, 6) },
		stop:  pointerMove(6),
	},
	// The same with an id that leaves a gap: probing from the old pointer
	// would miss it.
	"rename-pointer-gap": {
		keep:  3,
		setup: func(ctx context.Context, s checkpoint.Storage) error { return storeRange(ctx, s, "j", 1, 1, 5) },
		run:   func(ctx context.Context, s checkpoint.Storage) error { return storeRange(ctx, s, "j", 1, 9, 9) },
		stop:  pointerMove(9),
	},
	// Between the pointer's move and retention's deletion.
	"pointer-retention": {
		keep:  3,
		setup: func(ctx context.Context, s checkpoint.Storage) error { return storeRange(ctx, s, "j", 1, 1, 5) },
		run:   func(ctx context.Context, s checkpoint.Storage) error { return storeRange(ctx, s, "j", 1, 6, 6) },
		stop:  removal(3),
	},
	// With max-retained 1 the previous checkpoint is deleted after the
	// new one is durable: stop just before.
	"pointer-retention-keep-1": {
		keep:  1,
		setup: func(ctx context.Context, s checkpoint.Storage) error { return storeRange(ctx, s, "j", 1, 1, 5) },
		run:   func(ctx context.Context, s checkpoint.Storage) error { return storeRange(ctx, s, "j", 1, 6, 6) },
		stop:  removal(5),
	},
	// Midway through deleting a job (its checkpoints laid out by the
	// parent): at the removal of checkpoint 150 of 300, the latest
	// directory's deleting marker already gone.
	"delete-job": {
		keep:  checkpoint.KeepAll,
		setup: func(context.Context, checkpoint.Storage) error { return nil },
		run:   deleteJobJ,
		stop:  removal(150),
	},
	// Between the job's deletion marks and the recursive delete of its
	// directory: every checkpoint file is still there.
	"delete-job-marked": {
		keep:  checkpoint.KeepAll,
		setup: func(context.Context, checkpoint.Storage) error { return nil },
		run:   deleteJobJ,
		stop:  func(op, name string) bool { return op == "removeall" && strings.HasSuffix(name, "/j") },
	},
	// The local disk's way: midway through unlinking the job's directory
	// moved into the trash, at checkpoint 150 of 300.
	"delete-job-trash": {
		renameDirs: true,
		keep:       checkpoint.KeepAll,
		setup:      func(context.Context, checkpoint.Storage) error { return nil },
		run:        deleteJobJ,
		stop:       removal(150),
	},
	// After the move into the trash, before any file there is unlinked.
	"delete-job-trashed": {
		renameDirs: true,
		keep:       checkpoint.KeepAll,
		setup:      func(context.Context, checkpoint.Storage) error { return nil },
		run:        deleteJobJ,
		stop:       func(op, name string) bool { return op == "removeall" && strings.Contains(name, "/..trash/") },
	},
}

// crashChild runs the scenario named by crashScenarioEnv and returns the
// exit code; it does not return if the scenario stops as it should.
func crashChild() int {
	sc, ok := crashScenarios[os.Getenv(crashScenarioEnv)]
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown crash scenario %q\n", os.Getenv(crashScenarioEnv))
		return 2
	}
	base, err := local.New(os.Getenv(crashDirEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var armed atomic.Bool
	var fsys fsbackend.FS = &stopFS{FS: base, stop: func(op, name string) bool { return armed.Load() && sc.stop(op, name) }}
	if sc.renameDirs {
		fsys = stopRenameFS{fsys.(*stopFS)}
	}
	ctx := context.Background()
	s, err := checkpoint.Open(ctx, checkpoint.Options{FS: fsys, Namespace: checkpointtest.Namespace, MaxRetained: sc.keep})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := sc.setup(ctx, s); err != nil {
		fmt.Fprintln(os.Stderr, "setup:", err)
		return 2
	}
	armed.Store(true)
	err = sc.run(ctx, s)
	fmt.Printf("finished without stopping: %v\n", err)
	return 3
}

// crash runs scenario in a child process on dir and SIGKILLs it at its
// stop point.
func crash(t *testing.T, dir, scenario string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashScenarioEnv+"="+scenario, crashDirEnv+"="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		lines <- line
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(2 * time.Minute):
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	werr := cmd.Wait()
	if !strings.HasPrefix(line, "stopped at ") {
		t.Fatalf("child %s did not stop where it should: %q (%v), stderr:\n%s", scenario, line, werr, stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child %s: %v, want killed by SIGKILL", scenario, werr)
	}
	t.Logf("child %s %s", scenario, strings.TrimSpace(line))
}

func ids(sts []checkpoint.PipelineState) []int64 {
	out := make([]int64, 0, len(sts))
	for _, st := range sts {
		out = append(out, st.CheckpointID)
	}
	return out
}

func wantIDs(t *testing.T, what string, got []checkpoint.PipelineState, want ...int64) {
	t.Helper()
	if fmt.Sprint(ids(got)) != fmt.Sprint(want) {
		t.Fatalf("%s: checkpoints %v, want %v", what, ids(got), want)
	}
	for _, st := range got {
		if w := checkpointtest.State(st.JobID, st.PipelineID, st.CheckpointID); !bytes.Equal(st.States, w.States) {
			t.Fatalf("%s: checkpoint %d reads %q, want %q", what, st.CheckpointID, st.States, w.States)
		}
	}
}

func wantVerified(t *testing.T, fsys fsbackend.FS) {
	t.Helper()
	r, err := checkpoint.Verify(ctx, fsys, checkpointtest.Namespace, checkpoint.VerifyOptions{})
	if err != nil || !r.OK() {
		t.Fatalf("verify: %+v, %v", r, err)
	}
}

// TestCrashBetweenCheckpointAndPointer: a child stores checkpoint 6 (or 9,
// after a gap) on top of 1..5 and is SIGKILLed once the checkpoint is
// renamed into place, before its pointer moves. The next process finds it
// as the latest, and its next store leaves exactly max-retained.
func TestCrashBetweenCheckpointAndPointer(t *testing.T) {
	for _, tc := range []struct {
		scenario string
		newest   int64
	}{{"rename-pointer", 6}, {"rename-pointer-gap", 9}} {
		t.Run(tc.scenario, func(t *testing.T) {
			dir := t.TempDir()
			crash(t, dir, tc.scenario)
			fsys := newLocalAt(t, dir)
			if _, err := fsys.Stat(ctx, checkpointtest.FilePath("j", 1, tc.newest)); err != nil {
				t.Fatalf("the child stopped before checkpoint %d was in place: %v", tc.newest, err)
			}
			s := checkpointtest.Open(t, fsys, checkpoint.Options{MaxRetained: 3})
			got, err := s.GetLatestCheckpointByJobAndPipeline(ctx, "j", 1)
			if err != nil {
				t.Fatal(err)
			}
			wantIDs(t, "latest after the crash", []checkpoint.PipelineState{got}, tc.newest)
			all, err := s.GetLatestCheckpoint(ctx, "j")
			if err != nil {
				t.Fatal(err)
			}
			wantIDs(t, "latest of the job after the crash", all, tc.newest)
			info, _, err := checkpoint.Show(ctx, fsys, checkpointtest.Namespace, "j", 1, checkpoint.Latest)
			if err != nil || info.CheckpointID != tc.newest {
				t.Fatalf("inspect show latest: %d, %v; want %d", info.CheckpointID, err, tc.newest)
			}
			wantVerified(t, fsys)
			mustStore(t, s, checkpointtest.State("j", 1, tc.newest+1))
			p1, err := s.GetCheckpointsByJobAndPipeline(ctx, "j", 1)
			if err != nil {
				t.Fatal(err)
			}
			wantIDs(t, "after the next store (max-retained 3)", p1, 5, tc.newest, tc.newest+1)
		})
	}
}

// TestCrashBetweenPointerAndRetention: the child is SIGKILLed after
// checkpoint 6 and its pointer are in place, before retention deletes the
// retired checkpoints. The next process finds 6, and its next store leaves
// exactly max-retained.
func TestCrashBetweenPointerAndRetention(t *testing.T) {
	for _, tc := range []struct {
		scenario   string
		keep       int
		afterCrash []int64 // pipeline 1 as the next process finds it
		afterStore []int64
	}{
		{"pointer-retention", 3, []int64{3, 4, 5, 6}, []int64{5, 6, 7}},
		{"pointer-retention-keep-1", 1, []int64{5, 6}, []int64{7}},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			dir := t.TempDir()
			crash(t, dir, tc.scenario)
			fsys := newLocalAt(t, dir)
			s := checkpointtest.Open(t, fsys, checkpoint.Options{MaxRetained: tc.keep})
			got, err := s.GetLatestCheckpointByJobAndPipeline(ctx, "j", 1)
			if err != nil {
				t.Fatal(err)
			}
			wantIDs(t, "latest after the crash", []checkpoint.PipelineState{got}, 6)
			if ps := checkpointtest.Pointers(t, fsys, "j", 1); len(ps) != 1 || !strings.HasSuffix(ps[0], fmt.Sprintf("-c%019d", 6)) {
				t.Fatalf("pointers after the crash: %v, want one at 6", ps)
			}
			p1, err := s.GetCheckpointsByJobAndPipeline(ctx, "j", 1)
			if err != nil {
				t.Fatal(err)
			}
			wantIDs(t, "pipeline 1 after the crash", p1, tc.afterCrash...)
			wantVerified(t, fsys)
			mustStore(t, s, checkpointtest.State("j", 1, 7))
			if p1, err = s.GetCheckpointsByJobAndPipeline(ctx, "j", 1); err != nil {
				t.Fatal(err)
			}
			wantIDs(t, fmt.Sprintf("after the next store (max-retained %d)", tc.keep), p1, tc.afterStore...)
			if n := len(checkpointtest.CheckpointFiles(t, fsys, "j")); n != len(tc.afterStore) {
				t.Fatalf("%d checkpoint files after the next store, want %d", n, len(tc.afterStore))
			}
		})
	}
}

// TestCrashMidJobDelete: a job of 300 + 3 checkpoints is being deleted
// when the child is SIGKILLed: after its deletion marks, before the
// recursive delete of its directory (all files there), or midway through
// it (about half of its files gone, its latest directory's marker first);
// or, the local disk's way, after its directory's move into the trash,
// before or midway through unlinking it there. The next process sees no
// checkpoint of the job through any call, though files of it are still
// there, and its first store or delete, of this job or another, finishes
// the work.
func TestCrashMidJobDelete(t *testing.T) {
	for _, tc := range []struct{ scenario, finish string }{
		{"delete-job", "delete"}, {"delete-job", "store"}, {"delete-job", "restart"},
		{"delete-job-marked", "delete"}, {"delete-job-marked", "store"}, {"delete-job-marked", "restart"},
		{"delete-job-trash", "delete"}, {"delete-job-trash", "store"}, {"delete-job-trash", "restart"},
		{"delete-job-trashed", "delete"}, {"delete-job-trashed", "store"}, {"delete-job-trashed", "restart"},
	} {
		scenario, finish := tc.scenario, tc.finish
		t.Run(scenario+"/"+finish, func(t *testing.T) {
			dir := t.TempDir()
			fsys := newLocalAt(t, dir)
			s := checkpointtest.Open(t, fsys, checkpoint.Options{MaxRetained: checkpoint.KeepAll})
			maker := newCheckpointMaker(t)
			for id := int64(1); id <= 300; id++ {
				if id <= 2 || id >= 299 {
					mustStore(t, s, checkpointtest.State("j", 1, id))
				} else {
					maker.place(t, dir, checkpointtest.State("j", 1, id))
				}
			}
			for id := int64(1); id <= 3; id++ {
				mustStore(t, s, checkpointtest.State("j", 2, id))
			}
			mustStore(t, s, checkpointtest.State("other", 1, 1))
			crash(t, dir, scenario)

			left := checkpointtest.CheckpointFiles(t, fsys, "j")
			switch {
			case scenario == "delete-job" && (len(left) == 0 || len(left) >= 303):
				t.Fatalf("%d checkpoint files left by the interrupted delete, want some but not all", len(left))
			case scenario == "delete-job-marked" && len(left) != 303:
				t.Fatalf("%d checkpoint files left by the delete stopped before its recursive delete, want all 303", len(left))
			}
			trashed := func() int {
				t.Helper()
				fis, err := fsys.List(ctx, "checkpointtest/..trash")
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, fi := range fis {
					if _, _, ok := checkpoint.ParseFileName(filepath.Base(fi.Name)); ok {
						n++
					}
				}
				return n
			}
			switch n := trashed(); {
			case scenario == "delete-job-trash" && (len(left) != 0 || n == 0 || n >= 303):
				t.Fatalf("%d checkpoint files in the job's directory and %d in the trash after the interrupted unlinking, want none and some but not all", len(left), n)
			case scenario == "delete-job-trashed" && (len(left) != 0 || n != 303):
				t.Fatalf("%d checkpoint files in the job's directory and %d in the trash after the move, want none and all 303", len(left), n)
			}
			s2 := checkpointtest.Open(t, fsys, checkpoint.Options{MaxRetained: checkpoint.KeepAll})
			for what, get := range map[string]func(context.Context, string) ([]checkpoint.PipelineState, error){
				"GetLatestCheckpoint": s2.GetLatestCheckpoint, "GetAllCheckpoints": s2.GetAllCheckpoints,
			} {
				if got, err := get(ctx, "j"); err != nil || len(got) != 0 {
					t.Fatalf("%s of the half-deleted job: %v, %v; want none", what, ids(got), err)
				}
			}
			for _, p := range []int{1, 2} {
				if _, err := s2.GetLatestCheckpointByJobAndPipeline(ctx, "j", p); !errors.Is(err, checkpoint.ErrNotFound) {
					t.Fatalf("latest of pipeline %d of the half-deleted job: %v, want ErrNotFound", p, err)
				}
				if got, err := s2.GetCheckpointsByJobAndPipeline(ctx, "j", p); err != nil || len(got) != 0 {
					t.Fatalf("pipeline %d of the half-deleted job: %v, %v; want none", p, ids(got), err)
				}
			}
			if _, err := s2.GetCheckpoint(ctx, "j", 1, 300); !errors.Is(err, checkpoint.ErrNotFound) {
				t.Fatalf("checkpoint 300 of the half-deleted job: %v, want ErrNotFound", err)
			}
			if _, _, err := checkpoint.Show(ctx, fsys, checkpointtest.Namespace, "j", 1, checkpoint.Latest); !errors.Is(err, checkpoint.ErrNotFound) {
				t.Fatalf("inspect show latest of the half-deleted job: %v, want ErrNotFound", err)
			}
			wantVerified(t, fsys)
			otherLatest := int64(1)
			wantLatestOther := func(what string) {
				got, err := s2.GetLatestCheckpointByJobAndPipeline(ctx, "other", 1)
				if err != nil || got.CheckpointID != otherLatest {
					t.Fatalf("%s: the other job's latest: %d, %v", what, got.CheckpointID, err)
				}
			}
			wantLatestOther("after the crash")

			wantGone := func(what string) {
				t.Helper()
				if fis, err := fsys.List(ctx, "checkpointtest/j"); err != nil || len(fis) != 0 {
					t.Fatalf("%s: files of the job remain: %v (%v)", what, fis, err)
				}
				if _, err := os.Stat(filepath.Join(dir, "checkpointtest", "j")); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("%s: the job's directory remains: %v", what, err)
				}
				if fis, err := fsys.List(ctx, "checkpointtest/..deleting"); err != nil || len(fis) != 0 {
					t.Fatalf("%s: deletion marks remain: %v (%v)", what, fis, err)
				}
				checkpointtest.WaitBackground(t, s2)
				if fis, err := fsys.List(ctx, "checkpointtest/..trash"); err != nil || len(fis) != 0 {
					t.Fatalf("%s: files remain in the trash: %d (%v)", what, len(fis), err)
				}
			}
			switch finish {
			case "restart":
				// The first store of the restarted storage, of another
				// job, finishes the deletion.
				mustStore(t, s2, checkpointtest.State("other", 1, 2))
				otherLatest = 2
				wantGone("after the restarted storage's first store")
				if got, err := s2.GetAllCheckpoints(ctx, "j"); err != nil || len(got) != 0 {
					t.Fatalf("the deleted job after the restart: %v, %v; want none", ids(got), err)
				}
				mustStore(t, s2, checkpointtest.State("j", 1, 1))
				all, err := s2.GetAllCheckpoints(ctx, "j")
				if err != nil {
					t.Fatal(err)
				}
				wantIDs(t, "a new checkpoint of the job after its deletion finished", all, 1)
			case "delete":
				if err := s2.DeleteCheckpoint(ctx, "j"); err != nil {
					t.Fatal(err)
				}
				checkpointtest.WaitBackground(t, s2)
				wantGone("after the delete finished")
			case "store":
				mustStore(t, s2, checkpointtest.State("j", 1, 301))
				all, err := s2.GetAllCheckpoints(ctx, "j")
				if err != nil {
					t.Fatal(err)
				}
				wantIDs(t, "after a store into the half-deleted job", all, 301)
				if n := len(checkpointtest.CheckpointFiles(t, fsys, "j")); n != 1 {
					t.Fatalf("%d checkpoint files after the store finished the delete, want 1", n)
				}
				checkpointtest.WaitBackground(t, s2)
				if n := trashed(); n != 0 {
					t.Fatalf("%d checkpoint files left in the trash after the store", n)
				}
			}
			wantLatestOther("at the end")
		})
	}
}
