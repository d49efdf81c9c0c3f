package local_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/fsbackendtest"
	"github.com/stowage/stowage/fsbackend/local"
)

var ctx = context.Background()

func newFS(t *testing.T) *local.FS {
	t.Helper()
	f, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestConformance(t *testing.T) {
	fsbackendtest.Run(t, func(t *testing.T) fsbackend.FS { return newFS(t) })
}

func TestNewCreatesRoot(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	f, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() || f.Root() != dir {
		t.Fatalf("New(%s): root %q, stat %v", dir, f.Root(), err)
	}
}

// TestFilesAreOnDisk: names map to paths below the root, so operators can
// see and copy them.
func TestFilesAreOnDisk(t *testing.T) {
	f := newFS(t)
	if err := fsbackend.WriteFile(ctx, f, "ns/map/META", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(f.Root(), "ns", "map", "META"))
	if err != nil || string(b) != "v1" {
		t.Fatalf("file on disk = %q, %v", b, err)
	}
}

func TestRemoveCleansEmptyParents(t *testing.T) {
	f := newFS(t)
	for _, n := range []string{"a/b/c/1", "a/keep"} {
		if err := fsbackend.WriteFile(ctx, f, n, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Remove(ctx, "a/b/c/1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(f.Root(), "a", "b")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("emptied directory a/b is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.Root(), "a", "keep")); err != nil {
		t.Fatalf("sibling removed: %v", err)
	}
	if _, err := os.Stat(f.Root()); err != nil {
		t.Fatalf("root removed: %v", err)
	}
}

func TestAbortAfterCloseKeepsTheFile(t *testing.T) {
	f := newFS(t)
	w, err := f.Create(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("kept"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("Abort after Close: %v", err)
	}
	if b, err := fsbackend.ReadFile(ctx, f, "x"); err != nil || string(b) != "kept" {
		t.Fatalf("after a deferred-style Abort, x = %q, %v", b, err)
	}
}

func TestPathThroughAFileIsMissing(t *testing.T) {
	f := newFS(t)
	if err := fsbackend.WriteFile(ctx, f, "file", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Stat(ctx, "file/x"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat(file/x): %v", err)
	}
	if _, err := f.Open(ctx, "file/x"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open(file/x): %v", err)
	}
	if err := f.Remove(ctx, "file/x"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Remove(file/x): %v", err)
	}
	if err := f.Rename(ctx, "file/x", "y"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Rename(file/x): %v", err)
	}
}

// TestCreateWhileRemovingSiblings races creates in a directory against
// removes that empty it (and so remove it): every create must succeed.
func TestCreateWhileRemovingSiblings(t *testing.T) {
	f := newFS(t)
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				name := fmt.Sprintf("d/sub/%d-%d", g, i)
				if err := fsbackend.WriteFile(ctx, f, name, nil); err != nil {
					errs <- err
					continue
				}
				if err := f.Remove(ctx, name); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestRegistered(t *testing.T) {
	f, err := fsbackend.Open(ctx, fsbackend.Properties{"storage.type": "hdfs", "fs.defaultFS": "file:///"})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if l, ok := f.(*local.FS); !ok || l.Root() != "/" {
		t.Fatalf("Open(file:///) = %T, want a local FS rooted at /", f)
	}
}

// dirSyncs records the directories synced, relative to root.
type dirSyncs struct {
	mu   sync.Mutex
	root string
	got  []string
}

func (d *dirSyncs) record(dir string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	rel, err := filepath.Rel(d.root, dir)
	if err != nil {
		rel = dir
	}
	d.got = append(d.got, filepath.ToSlash(rel))
}

// take returns the directories synced since the last take.
func (d *dirSyncs) take() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	got := d.got
	d.got = nil
	return got
}

func (d *dirSyncs) expect(t *testing.T, when string, want ...string) {
	t.Helper()
	got := d.take()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: directories synced %q, want %q", when, got, want)
	}
}

// TestExistenceDurableAtFirstSync: a file's directory entry, and the
// entries of the directories Create made for it, are synced no later than
// its first successful Sync, so bytes a Sync made durable in a fresh file
// are reachable after a power cut. Only the first Sync pays for it.
func TestExistenceDurableAtFirstSync(t *testing.T) {
	dir := t.TempDir()
	// ns/ existed before the FS was opened: made by someone who may not
	// have synced it.
	if err := os.Mkdir(filepath.Join(dir, "ns"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	d := &dirSyncs{root: f.Root()}
	defer local.OnDirSync(d.record)()

	w, err := f.Create(ctx, "ns/log/run/1.log")
	if err != nil {
		t.Fatal(err)
	}
	d.expect(t, "Create", ".", "ns", "ns/log")
	if _, err := w.Write([]byte("batch 1")); err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	d.expect(t, "first Sync", "ns/log/run")
	w.Write([]byte("batch 2"))
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	d.expect(t, "second Sync")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	d.expect(t, "Close after a Sync")

	// A second file in the same directory: no directory to make; its own
	// entry at its first Sync.
	w, err = f.Create(ctx, "ns/log/run/2.log")
	if err != nil {
		t.Fatal(err)
	}
	d.expect(t, "Create in a known directory")
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	d.expect(t, "first Sync of the second file", "ns/log/run")
	w.Abort()
	d.take()

	// A file only closed: its entry is synced by Close.
	if err := fsbackend.WriteFile(ctx, f, "ns/META", []byte("m")); err != nil {
		t.Fatal(err)
	}
	d.expect(t, "WriteFile", "ns")

	// A directory emptied and removed by Remove is made, and synced, again.
	if err := f.Remove(ctx, "ns/log/run/1.log"); err != nil {
		t.Fatal(err)
	}
	d.take()
	if _, err := os.Stat(filepath.Join(dir, "ns", "log")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ns/log should have been removed with its last file: %v", err)
	}
	w, err = f.Create(ctx, "ns/log/run/3.log")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	d.expect(t, "Create after its directories were removed", "ns", "ns/log")
}
