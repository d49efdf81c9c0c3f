package checkpoint_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stowage/stowage/checkpoint"
	"github.com/stowage/stowage/checkpoint/checkpointtest"
	"github.com/stowage/stowage/fsbackend"
)

// syncCounter counts what the storage does on the local disk: directory
// syncs, removals through the FS (each syncs its directory and tries to
// remove emptied parents) and through the Deferred view (neither).
type syncCounter struct {
	mu                               sync.Mutex
	syncDirs                         []string
	removes, deferredRemove, retires int
	removeAlls                       []string // directories, through the Deferred view
	renameDirs                       []string // "dir -> newDir", through the FS
	recycles                         int      // retired files written over, through the Deferred view
	// reaped counts the deferred removals of retired checkpoints only
	// (superseded latest pointers are removed through the same view, as
	// many as the pointer updates that overlapped).
	reaped int
}

// takeReaped returns and resets reaped.
func (c *syncCounter) takeReaped() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.reaped
	c.reaped = 0
	return n
}

func (c *syncCounter) take() (syncDirs []string, removes, deferredRemoves, retires int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	syncDirs, removes, deferredRemoves, retires = c.syncDirs, c.removes, c.deferredRemove, c.retires
	c.syncDirs, c.removes, c.deferredRemove, c.retires, c.removeAlls, c.renameDirs = nil, 0, 0, 0, nil, nil
	return
}

// takeRenameDirs returns and resets renameDirs.
func (c *syncCounter) takeRenameDirs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.renameDirs
	c.renameDirs = nil
	return d
}

// takeRemoveAlls returns and resets removeAlls.
func (c *syncCounter) takeRemoveAlls() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.removeAlls
	c.removeAlls = nil
	return d
}

type countingFS struct {
	fsbackend.FS
	c        *syncCounter
	deferred bool
}

func (f *countingFS) Remove(ctx context.Context, name string) error {
	f.c.mu.Lock()
	if f.deferred {
		f.c.deferredRemove++
		if strings.HasSuffix(name, ".retired") {
			f.c.reaped++
		}
	} else {
		f.c.removes++
	}
	f.c.mu.Unlock()
	return f.FS.Remove(ctx, name)
}

// Recycle counts the retired files written over through the Deferred view.
func (f *countingFS) Recycle(ctx context.Context, oldName, newName string) (fsbackend.Writer, error) {
	f.c.mu.Lock()
	if f.deferred && strings.HasSuffix(oldName, ".retired") {
		f.c.recycles++
	}
	f.c.mu.Unlock()
	return f.FS.(fsbackend.Recycler).Recycle(ctx, oldName, newName)
}

// RemoveAll counts the recursive deletes through the Deferred view; the
// FS's own is not used by the storage.
func (f *countingFS) RemoveAll(ctx context.Context, dir string) error {
	f.c.mu.Lock()
	if f.deferred {
		f.c.removeAlls = append(f.c.removeAlls, dir)
	} else {
		f.c.removes += 1000 // counted as many: the test fails
	}
	f.c.mu.Unlock()
	return f.FS.(fsbackend.DirRemover).RemoveAll(ctx, dir)
}

// RenameDir counts the directory moves (a job's directory into the
// trash); through the Deferred view they count as many as fail the test.
func (f *countingFS) RenameDir(ctx context.Context, dir, newDir string) error {
	f.c.mu.Lock()
	if f.deferred {
		f.c.removes += 1000
	}
	f.c.renameDirs = append(f.c.renameDirs, dir+" -> "+newDir)
	f.c.mu.Unlock()
	return f.FS.(fsbackend.DirRenamer).RenameDir(ctx, dir, newDir)
}

func (f *countingFS) Rename(ctx context.Context, oldName, newName string) error {
	if strings.HasSuffix(newName, ".retired") {
		f.c.mu.Lock()
		f.c.retires++
		f.c.mu.Unlock()
	}
	return f.FS.Rename(ctx, oldName, newName)
}

func (f *countingFS) Deferred() fsbackend.FS {
	return &countingFS{FS: f.FS.(fsbackend.DirSyncer).Deferred(), c: f.c, deferred: true}
}

func (f *countingFS) SyncDir(ctx context.Context, dir string) error {
	f.c.mu.Lock()
	f.c.syncDirs = append(f.c.syncDirs, dir)
	f.c.mu.Unlock()
	return f.FS.(fsbackend.DirSyncer).SyncDir(ctx, dir)
}

// TestLocalSyncsOncePerCall: on the local disk a store syncs the job's
// directory once, retention included (the pointer is renamed, and so is
// the retired checkpoint, which the next store writes over), and deleting a
// job of 10 or of 200 checkpoints is one move of its directory into the
// namespace's trash directory, then, in the background, one recursive
// delete of it: no other sync, no marker, no remove.
func TestLocalSyncsOncePerCall(t *testing.T) {
	c := &syncCounter{}
	fsys := &countingFS{FS: newLocal(t), c: c}
	s := checkpointtest.Open(t, fsys, checkpoint.Options{MaxRetained: 3})
	mustStore(t, s, checkpointtest.State("j", 1, 1))
	syncs, removes, _, _ := c.take()
	if fmt.Sprint(syncs) != "[checkpointtest/j/latest checkpointtest/j]" || removes != 0 {
		t.Fatalf("first store of a job: synced %v, %d syncing removes; want the latest directory (its markers) and the job's", syncs, removes)
	}
	for id := int64(2); id <= 10; id++ {
		mustStore(t, s, checkpointtest.State("j", 1, id))
		syncs, removes, _, retires := c.take()
		wantRetires := 0
		if id > 3 {
			wantRetires = 1 // renamed out of the way, deleted in the background
		}
		if fmt.Sprint(syncs) != "[checkpointtest/j]" || removes != 0 || retires != wantRetires {
			t.Fatalf("store %d: synced %v, %d syncing removes, %d retired; want the job's directory once, 0 and %d", id, syncs, removes, retires, wantRetires)
		}
	}
	if err := s.Close(); err != nil { // waits for the background deletions
		t.Fatal(err)
	}
	// Each retired checkpoint but the last is written over by the next
	// store; Close deletes the last.
	if reaped := c.takeReaped(); reaped != 1 || c.recycles != 6 {
		t.Fatalf("%d retired checkpoints deleted, %d written over; want 1 (the last, at Close) and the 6 others", reaped, c.recycles)
	}
	fis, err := fsys.List(ctx, "checkpointtest/j")
	if err != nil {
		t.Fatal(err)
	}
	for _, fi := range fis {
		if strings.HasSuffix(fi.Name, ".retired") {
			t.Fatalf("retired file %s left after Close", fi.Name)
		}
	}
	if n := len(checkpointtest.CheckpointFiles(t, fsys, "j")); n != 3 {
		t.Fatalf("%d checkpoint files, want 3", n)
	}

	for _, n := range []int{10, 200} {
		job := fmt.Sprintf("del-%d", n)
		k := checkpointtest.Open(t, fsys, checkpoint.Options{MaxRetained: checkpoint.KeepAll})
		for id := int64(1); id <= int64(n); id++ {
			mustStore(t, k, checkpointtest.State(job, 1, id))
		}
		c.take()
		if err := k.DeleteCheckpoint(ctx, job); err != nil {
			t.Fatal(err)
		}
		renames := c.takeRenameDirs()
		checkpointtest.WaitBackground(t, k)
		removeAlls := c.takeRemoveAlls()
		syncs, removes, deferred, _ := c.take()
		// One move of the job's directory into the trash (which syncs
		// both directories itself), no other sync, no marker, no remove;
		// in the background one recursive delete of the moved directory,
		// which no sync follows.
		trash, ok := "", len(renames) == 1
		if ok {
			var from string
			from, trash, _ = strings.Cut(renames[0], " -> ")
			ok = from == "checkpointtest/"+job && strings.HasPrefix(trash, "checkpointtest/..trash/")
		}
		if !ok || len(syncs) != 0 || removes != 0 || deferred != 0 || fmt.Sprint(removeAlls) != fmt.Sprint([]string{trash}) {
			t.Fatalf("deleting a job of %d: moved %v, synced %v, %d syncing and %d deferred removes, recursive deletes of %v; want one move of checkpointtest/%s into checkpointtest/..trash/, no sync or remove, one recursive delete of the moved directory", n, renames, syncs, removes, deferred, removeAlls, job)
		}
		if fis, err := fsys.List(ctx, "checkpointtest/..trash"); err != nil || len(fis) != 0 {
			t.Fatalf("after deleting job %s, in the trash: %v, %v", job, fis, err)
		}
		if fis, err := fsys.List(ctx, "checkpointtest/"+job); err != nil || len(fis) != 0 {
			t.Fatalf("after deleting job %s: %v, %v", job, fis, err)
		}
	}
}
