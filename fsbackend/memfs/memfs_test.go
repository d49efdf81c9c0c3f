package memfs_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"testing"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/fsbackendtest"
	"github.com/stowage/stowage/fsbackend/memfs"
)

var ctx = context.Background()

func TestConformance(t *testing.T) {
	fsbackendtest.Run(t, func(t *testing.T) fsbackend.FS { return memfs.New() })
}

func create(t *testing.T, f fsbackend.FS, name string) fsbackend.Writer {
	t.Helper()
	w, err := f.Create(ctx, name)
	if err != nil {
		t.Fatalf("Create(%q): %v", name, err)
	}
	return w
}

func write(t *testing.T, w fsbackend.Writer, s string) {
	t.Helper()
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatalf("Write(%q): %v", s, err)
	}
}

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// content returns the file's bytes, or "<missing>".
func content(t *testing.T, f fsbackend.FS, name string) string {
	t.Helper()
	b, err := fsbackend.ReadFile(ctx, f, name)
	if errors.Is(err, fs.ErrNotExist) {
		return "<missing>"
	}
	must(t, "ReadFile "+name, err)
	return string(b)
}

func TestCrash(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script func(t *testing.T, f *memfs.FS)
		before string // content just before the crash
		after  string // content after it
	}{
		{"NeverSynced", func(t *testing.T, f *memfs.FS) {
			write(t, create(t, f, "x"), "lost")
		}, "lost", "<missing>"},
		{"CreatedOnly", func(t *testing.T, f *memfs.FS) {
			create(t, f, "x")
		}, "", "<missing>"},
		{"SyncedPrefix", func(t *testing.T, f *memfs.FS) {
			w := create(t, f, "x")
			write(t, w, "kept;")
			must(t, "Sync", w.Sync())
			write(t, w, "lost")
		}, "kept;lost", "kept;"},
		{"SyncedEmpty", func(t *testing.T, f *memfs.FS) {
			w := create(t, f, "x")
			must(t, "Sync", w.Sync())
			write(t, w, "lost")
		}, "lost", ""},
		{"Closed", func(t *testing.T, f *memfs.FS) {
			w := create(t, f, "x")
			write(t, w, "whole")
			must(t, "Close", w.Close())
		}, "whole", "whole"},
		{"TruncateNotYetSynced", func(t *testing.T, f *memfs.FS) {
			w := create(t, f, "x")
			write(t, w, "good;bad")
			must(t, "Sync", w.Sync())
			must(t, "Truncate", w.(fsbackend.Truncater).Truncate(5))
			write(t, w, "new")
		}, "good;new", "good;bad"},
		{"TruncateSynced", func(t *testing.T, f *memfs.FS) {
			w := create(t, f, "x")
			write(t, w, "good;bad")
			must(t, "Sync", w.Sync())
			must(t, "Truncate", w.(fsbackend.Truncater).Truncate(5))
			must(t, "Sync", w.Sync())
			write(t, w, "lost")
		}, "good;lost", "good;"},
		{"Removed", func(t *testing.T, f *memfs.FS) {
			must(t, "WriteFile", fsbackend.WriteFile(ctx, f, "x", []byte("gone")))
			must(t, "Remove", f.Remove(ctx, "x"))
		}, "<missing>", "<missing>"},
		{"Renamed", func(t *testing.T, f *memfs.FS) {
			must(t, "WriteFile", fsbackend.WriteFile(ctx, f, "x.tmp", []byte("moved")))
			must(t, "Rename", f.Rename(ctx, "x.tmp", "x"))
		}, "moved", "moved"},
		{"Aborted", func(t *testing.T, f *memfs.FS) {
			w := create(t, f, "x")
			write(t, w, "abc")
			must(t, "Sync", w.Sync())
			must(t, "Abort", w.Abort())
		}, "<missing>", "<missing>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := memfs.New()
			tc.script(t, f)
			if got := content(t, f, "x"); got != tc.before {
				t.Fatalf("before the crash x = %q, want %q", got, tc.before)
			}
			snap := f.Clone()
			f.Crash()
			if got := content(t, f, "x"); got != tc.after {
				t.Fatalf("after the crash x = %q, want %q", got, tc.after)
			}
			// The clone taken before the crash still has the written state,
			// and crashes the same way.
			if got := content(t, snap, "x"); got != tc.before {
				t.Fatalf("clone x = %q, want %q", got, tc.before)
			}
			snap.Crash()
			if got := content(t, snap, "x"); got != tc.after {
				t.Fatalf("crashed clone x = %q, want %q", got, tc.after)
			}
		})
	}
}

func TestCrashEndsWritersAndReaders(t *testing.T) {
	f := memfs.New()
	w := create(t, f, "log")
	write(t, w, "a")
	must(t, "Sync", w.Sync())
	must(t, "WriteFile", fsbackend.WriteFile(ctx, f, "done", []byte("d")))
	r, err := f.Open(ctx, "done")
	must(t, "Open", err)
	f.Crash()
	if _, err := w.Write([]byte("b")); !errors.Is(err, fsbackend.ErrClosed) {
		t.Errorf("Write after Crash: %v, want ErrClosed", err)
	}
	if err := w.Sync(); !errors.Is(err, fsbackend.ErrClosed) {
		t.Errorf("Sync after Crash: %v, want ErrClosed", err)
	}
	if err := w.(fsbackend.Truncater).Truncate(0); !errors.Is(err, fsbackend.ErrClosed) {
		t.Errorf("Truncate after Crash: %v, want ErrClosed", err)
	}
	if err := w.Close(); !errors.Is(err, fsbackend.ErrClosed) {
		t.Errorf("Close after Crash: %v, want ErrClosed", err)
	}
	if _, err := r.ReadAt(make([]byte, 1), 0); !errors.Is(err, fsbackend.ErrClosed) {
		t.Errorf("ReadAt after Crash: %v, want ErrClosed", err)
	}
	// The file the dead writer synced is whole and finished: it can be
	// renamed and the FS works as after a restart.
	if got := content(t, f, "log"); got != "a" {
		t.Fatalf("log after Crash = %q, want %q", got, "a")
	}
	must(t, "Rename", f.Rename(ctx, "log", "log.old"))
	must(t, "WriteFile", fsbackend.WriteFile(ctx, f, "log", []byte("new")))
	if got := content(t, f, "log"); got != "new" {
		t.Fatalf("log = %q", got)
	}
}

func TestCloneIsIndependent(t *testing.T) {
	f := memfs.New()
	w := create(t, f, "log")
	write(t, w, "one;")
	must(t, "Sync", w.Sync())
	c := f.Clone()
	write(t, w, "two;")
	must(t, "Close", w.Close())
	must(t, "WriteFile", fsbackend.WriteFile(ctx, c, "only-in-clone", nil))
	if got := content(t, c, "log"); got != "one;" {
		t.Errorf("clone log = %q, want %q", got, "one;")
	}
	if got := content(t, f, "only-in-clone"); got != "<missing>" {
		t.Errorf("original sees a file made in the clone: %q", got)
	}
	c.Crash()
	if got := content(t, f, "log"); got != "one;two;" {
		t.Errorf("original log after the clone crashed = %q", got)
	}
	// A file being written when the clone was taken can be renamed there.
	must(t, "Rename in clone", c.Rename(ctx, "log", "log2"))
}

func TestRenameWhileWriting(t *testing.T) {
	f := memfs.New()
	w := create(t, f, "a")
	defer w.Abort()
	if err := f.Rename(ctx, "a", "b"); err == nil {
		t.Fatal("Rename of a file still being written succeeded")
	}
}

func TestCreateBelowAFile(t *testing.T) {
	f := memfs.New()
	must(t, "WriteFile", fsbackend.WriteFile(ctx, f, "a", nil))
	if w, err := f.Create(ctx, "a/b"); err == nil {
		w.Abort()
		t.Fatal("Create below a file succeeded")
	}
	must(t, "WriteFile", fsbackend.WriteFile(ctx, f, "d/x", nil))
	if _, err := f.Create(ctx, "d"); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Create of a directory's name: %v, want fs.ErrExist", err)
	}
}

// TestConcurrentCrash runs writers while the FS crashes: every writer
// either finishes before the crash (and its file survives whole) or gets
// ErrClosed, and every surviving file holds a synced prefix.
func TestConcurrentCrash(t *testing.T) {
	f := memfs.New()
	const writers = 8
	var wg sync.WaitGroup
	started := make(chan struct{}, writers)
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := f.Create(ctx, fmt.Sprintf("w/%d", i))
			if err != nil {
				t.Errorf("Create: %v", err)
				return
			}
			started <- struct{}{}
			for j := 0; ; j++ {
				if _, err := w.Write([]byte("0123456789")); err != nil {
					if !errors.Is(err, fsbackend.ErrClosed) {
						t.Errorf("Write: %v", err)
					}
					return
				}
				if err := w.Sync(); err != nil {
					if !errors.Is(err, fsbackend.ErrClosed) {
						t.Errorf("Sync: %v", err)
					}
					return
				}
			}
		}()
	}
	for i := 0; i < writers; i++ {
		<-started
	}
	f.Crash()
	wg.Wait()
	list, err := f.List(ctx, "")
	must(t, "List", err)
	for _, fi := range list {
		if fi.Size%10 != 0 {
			t.Errorf("%s has %d bytes after the crash: not a synced prefix", fi.Name, fi.Size)
		}
	}
}

// TestSyncedFileInNewDirectoriesSurvives pins the rule the local back end
// keeps too: a file in directories that did not exist is there after a
// crash once its first Sync returned, while it is still being written,
// and a sibling created at the same time but never synced is not.
func TestSyncedFileInNewDirectoriesSurvives(t *testing.T) {
	f := memfs.New()
	w := create(t, f, "ns/log/run/1.log")
	write(t, w, "acknowledged;")
	must(t, "Sync", w.Sync())
	write(t, w, "in flight")
	create(t, f, "ns/log/run/2.log")
	f.Crash()
	if got := content(t, f, "ns/log/run/1.log"); got != "acknowledged;" {
		t.Errorf("after the crash 1.log = %q, want the synced bytes", got)
	}
	if got := content(t, f, "ns/log/run/2.log"); got != "<missing>" {
		t.Errorf("after the crash the never-synced 2.log = %q, want it missing", got)
	}
}
