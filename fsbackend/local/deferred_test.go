package local_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/fsbackendtest"
	"github.com/stowage/stowage/fsbackend/local"
)

// The Deferred view keeps the whole contract but durability.
func TestDeferredConformance(t *testing.T) {
	fsbackendtest.RunWith(t, func(t *testing.T) fsbackend.FS { return newFS(t).Deferred() }, fsbackendtest.Options{
		Skip: map[string]string{"FSClosed": "closing the view leaves the FS open, by design (fsbackend.DirSyncer); checked in TestDeferredSyncsNothingButSyncDir"},
	})
}

func TestDeferredHelperFindsLocal(t *testing.T) {
	f := newFS(t)
	view, _, ok := fsbackend.Deferred(f)
	if !ok || view == fsbackend.FS(f) {
		t.Fatalf("fsbackend.Deferred(local) = %T, ok %v; want the deferred view", view, ok)
	}
}

// TestDeferredSyncsNothingButSyncDir: through the view, finishing, renaming
// and removing files syncs no directory; SyncDir syncs exactly the one it
// names; the FS itself still syncs as before.
func TestDeferredSyncsNothingButSyncDir(t *testing.T) {
	f := newFS(t)
	view := f.Deferred()
	d := &dirSyncs{root: f.Root()}
	defer local.OnDirSync(d.record)()

	w, err := view.Create(ctx, "job/a.tmp")
	if err != nil {
		t.Fatal(err)
	}
	d.expect(t, "Create making job/", ".")
	if _, err := w.Write([]byte("state")); err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	d.expect(t, "Write, Sync, Close")
	if err := view.Rename(ctx, "job/a.tmp", "job/a"); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"job/b", "job/c"} {
		if err := fsbackend.WriteFile(ctx, view, n, []byte(n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := view.Remove(ctx, "job/b"); err != nil {
		t.Fatal(err)
	}
	d.expect(t, "Rename, WriteFile, Remove")
	if got, err := fsbackend.ReadFile(ctx, f, "job/a"); err != nil || string(got) != "state" {
		t.Fatalf("renamed file through the FS: %q, %v", got, err)
	}
	if err := f.SyncDir(ctx, "job"); err != nil {
		t.Fatal(err)
	}
	d.expect(t, "SyncDir(job)", "job")
	if err := f.SyncDir(ctx, ""); err != nil {
		t.Fatal(err)
	}
	d.expect(t, "SyncDir(root)", ".")
	if err := f.SyncDir(ctx, "nowhere"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("SyncDir of a missing directory: %v, want ErrNotExist", err)
	}
	d.take()

	// Removing the last files leaves the directory in place.
	for _, n := range []string{"job/a", "job/c"} {
		if err := view.Remove(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	d.expect(t, "Remove of the last files")
	if st, err := os.Stat(filepath.Join(f.Root(), "job")); err != nil || !st.IsDir() {
		t.Fatalf("job/ after deferred removes: %v", err)
	}
	if err := view.Remove(ctx, "job/a"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Remove of a missing file: %v, want ErrNotExist", err)
	}

	// The FS itself: Close syncs the entry, Remove syncs and prunes.
	if err := fsbackend.WriteFile(ctx, f, "job/d", []byte("d")); err != nil {
		t.Fatal(err)
	}
	d.expect(t, "WriteFile through the FS", "job")
	if err := f.Remove(ctx, "job/d"); err != nil {
		t.Fatal(err)
	}
	d.expect(t, "Remove through the FS", "job")
	if _, err := os.Stat(filepath.Join(f.Root(), "job")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("job/ should have gone with its last file: %v", err)
	}
	if err := view.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Stat(ctx, "x"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("closing the view closed the FS: %v", err)
	}
	f.Close()
	if err := f.SyncDir(ctx, ""); !errors.Is(err, fsbackend.ErrClosed) {
		t.Fatalf("SyncDir after Close: %v, want ErrClosed", err)
	}
}
