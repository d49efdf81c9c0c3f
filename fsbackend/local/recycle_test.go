package local_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stowage/stowage/fsbackend"
)

// TestRecycle: a recycled file takes the new name, holds exactly the
// bytes written over it (shorter and longer than before), keeps its inode
// (its blocks are written over, not freed), and the old name is gone. A
// taken new name and a missing old one fail, leaving both as they were.
func TestRecycle(t *testing.T) {
	ctx := context.Background()
	f := newFS(t)
	for _, view := range []struct {
		name string
		fs   fsbackend.FS
	}{{"fs", f}, {"deferred", f.Deferred()}} {
		t.Run(view.name, func(t *testing.T) {
			r := view.fs.(fsbackend.Recycler)
			if err := fsbackend.WriteFile(ctx, f, view.name+"/a", []byte("0123456789")); err != nil {
				t.Fatal(err)
			}
			ino := func(name string) uint64 {
				st, err := os.Stat(filepath.Join(f.Root(), name))
				if err != nil {
					t.Fatal(err)
				}
				return st.Sys().(*syscall.Stat_t).Ino
			}
			before := ino(view.name + "/a")
			prev := view.name + "/a"
			for i, content := range []string{"xy", "a longer text than before"} {
				next := view.name + "/b" + string(rune('0'+i))
				w, err := r.Recycle(ctx, prev, next)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := w.Write([]byte(content)); err != nil {
					t.Fatal(err)
				}
				if err := w.Sync(); err != nil {
					t.Fatal(err)
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				got, err := fsbackend.ReadFile(ctx, f, next)
				if err != nil || string(got) != content {
					t.Fatalf("recycled file holds %q, %v; want %q", got, err, content)
				}
				if _, err := f.Stat(ctx, prev); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("old name after Recycle: %v, want ErrNotExist", err)
				}
				if ino(next) != before {
					t.Fatal("the recycled file is a new inode")
				}
				prev = next
			}
			if err := fsbackend.WriteFile(ctx, f, view.name+"/taken", []byte("t")); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Recycle(ctx, prev, view.name+"/taken"); !errors.Is(err, fs.ErrExist) {
				t.Fatalf("Recycle onto a taken name: %v, want ErrExist", err)
			}
			if got, err := fsbackend.ReadFile(ctx, f, view.name+"/taken"); err != nil || string(got) != "t" {
				t.Fatalf("the taken name after a refused Recycle: %q, %v", got, err)
			}
			if _, err := r.Recycle(ctx, view.name+"/none", view.name+"/c"); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("Recycle of a missing file: %v, want ErrNotExist", err)
			}
		})
	}
}
