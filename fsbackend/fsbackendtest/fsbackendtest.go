package fsbackendtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"
	"testing"

	"github.com/stowage/stowage/fsbackend"
)

// Options tune the suite for slow back ends.
type Options struct {
	// LargeFile is the size of the large round trip (default 4 MiB).
	LargeFile int
	// Concurrency is how many goroutines create files at once (default 8).
	Concurrency int
}

// Run runs the suite with default options.
func Run(t *testing.T, newFS func(t *testing.T) fsbackend.FS) {
	RunWith(t, newFS, Options{})
}

// RunWith runs the suite; newFS returns a fresh, empty FS for each subtest.
func RunWith(t *testing.T, newFS func(t *testing.T) fsbackend.FS, o Options) {
	if o.LargeFile <= 0 {
		o.LargeFile = 4 << 20
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 8
	}
	ctx := context.Background()
	tests := []struct {
		name string
		fn   func(t *testing.T, f fsbackend.FS)
	}{
		{"CreateWriteRead", func(t *testing.T, f fsbackend.FS) {
			mustWrite(t, f, "a/b/c.txt", []byte("hello"))
			if got := mustRead(t, f, "a/b/c.txt"); string(got) != "hello" {
				t.Fatalf("read %q, want hello", got)
			}
			fi, err := f.Stat(ctx, "a/b/c.txt")
			if err != nil || fi.Size != 5 || fi.Name != "a/b/c.txt" {
				t.Fatalf("Stat = %+v, %v", fi, err)
			}
		}},
		{"CreateExclusive", func(t *testing.T, f fsbackend.FS) {
			mustWrite(t, f, "x", []byte("1"))
			w, err := f.Create(ctx, "x")
			if err == nil {
				// Back ends that check at Close must refuse there.
				w.Write([]byte("2"))
				err = w.Close()
				if err != nil {
					_ = w.Abort()
				}
			}
			if f.Capabilities().ConditionalCreate && !errors.Is(err, fs.ErrExist) {
				t.Fatalf("second Create of x: err = %v, want fs.ErrExist", err)
			}
			if got := mustRead(t, f, "x"); string(got) != "1" {
				t.Fatalf("x = %q after a refused Create, want 1", got)
			}
		}},
		{"MissingFiles", func(t *testing.T, f fsbackend.FS) {
			if _, err := f.Open(ctx, "nope"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Open: %v, want fs.ErrNotExist", err)
			}
			if _, err := f.Stat(ctx, "nope"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Stat: %v, want fs.ErrNotExist", err)
			}
			if err := f.Remove(ctx, "nope"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Remove: %v, want fs.ErrNotExist", err)
			}
			if l, err := f.List(ctx, "no/such/dir"); err != nil || len(l) != 0 {
				t.Errorf("List of a missing dir = %v, %v; want empty", l, err)
			}
		}},
		{"ListRecursiveSorted", func(t *testing.T, f fsbackend.FS) {
			for _, n := range []string{"d/z", "d/a", "d/m/n", "d/m/a", "db/x", "e"} {
				mustWrite(t, f, n, []byte(n))
			}
			l, err := f.List(ctx, "d")
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, fi := range l {
				names = append(names, fi.Name)
			}
			if want := "d/a d/m/a d/m/n d/z"; fmt.Sprint(names) != "["+want+"]" {
				t.Fatalf("List(d) = %v, want [%s]", names, want)
			}
			all, _ := f.List(ctx, "")
			if len(all) != 6 {
				t.Fatalf("List(\"\") has %d files, want 6", len(all))
			}
		}},
		{"Remove", func(t *testing.T, f fsbackend.FS) {
			mustWrite(t, f, "r/1", []byte("1"))
			if err := f.Remove(ctx, "r/1"); err != nil {
				t.Fatal(err)
			}
			if _, err := f.Stat(ctx, "r/1"); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("after Remove, Stat: %v", err)
			}
			mustWrite(t, f, "r/1", []byte("again")) // the name is free again
		}},
		{"Rename", func(t *testing.T, f fsbackend.FS) {
			mustWrite(t, f, "old", []byte("new content"))
			mustWrite(t, f, "dst/target", []byte("old content"))
			if err := f.Rename(ctx, "old", "dst/target"); err != nil {
				t.Fatal(err)
			}
			if got := mustRead(t, f, "dst/target"); string(got) != "new content" {
				t.Fatalf("target = %q", got)
			}
			if _, err := f.Stat(ctx, "old"); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("source still there: %v", err)
			}
			if err := f.Rename(ctx, "missing", "x"); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("Rename of a missing file: %v", err)
			}
		}},
		{"AbortLeavesNothing", func(t *testing.T, f fsbackend.FS) {
			w, err := f.Create(ctx, "ab/c")
			if err != nil {
				t.Fatal(err)
			}
			w.Write([]byte("partial"))
			if err := w.Abort(); err != nil {
				t.Fatal(err)
			}
			if _, err := f.Stat(ctx, "ab/c"); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("after Abort, Stat: %v", err)
			}
			mustWrite(t, f, "ab/c", []byte("whole"))
		}},
		{"SyncCapability", func(t *testing.T, f fsbackend.FS) {
			w, err := f.Create(ctx, "s")
			if err != nil {
				t.Fatal(err)
			}
			w.Write([]byte("abc"))
			err = w.Sync()
			if f.Capabilities().DurableAppend {
				if err != nil {
					t.Fatalf("Sync on a DurableAppend back end: %v", err)
				}
				w.Write([]byte("def"))
				if err := w.Sync(); err != nil {
					t.Fatal(err)
				}
			} else if !errors.Is(err, fsbackend.ErrUnsupported) {
				t.Fatalf("Sync without DurableAppend: %v, want ErrUnsupported", err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			want := "abc"
			if f.Capabilities().DurableAppend {
				want = "abcdef"
			}
			if got := mustRead(t, f, "s"); string(got) != want {
				t.Fatalf("s = %q, want %q", got, want)
			}
		}},
		{"InvalidNames", func(t *testing.T, f fsbackend.FS) {
			for _, n := range []string{"", "/abs", "a/../b", "./a", "a//b", "a/", "a\x00b", ".."} {
				if _, err := f.Create(ctx, n); !errors.Is(err, fsbackend.ErrInvalidName) {
					t.Errorf("Create(%q): %v", n, err)
				}
				if _, err := f.Open(ctx, n); !errors.Is(err, fsbackend.ErrInvalidName) {
					t.Errorf("Open(%q): %v", n, err)
				}
				if _, err := f.Stat(ctx, n); !errors.Is(err, fsbackend.ErrInvalidName) {
					t.Errorf("Stat(%q): %v", n, err)
				}
				if err := f.Remove(ctx, n); !errors.Is(err, fsbackend.ErrInvalidName) {
					t.Errorf("Remove(%q): %v", n, err)
				}
				if n != "" {
					if _, err := f.List(ctx, n); !errors.Is(err, fsbackend.ErrInvalidName) {
						t.Errorf("List(%q): %v", n, err)
					}
				}
			}
		}},
		{"ReadAt", func(t *testing.T, f fsbackend.FS) {
			mustWrite(t, f, "r", []byte("0123456789"))
			r, err := f.Open(ctx, "r")
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Size() != 10 {
				t.Fatalf("Size = %d", r.Size())
			}
			buf := make([]byte, 4)
			if n, err := r.ReadAt(buf, 3); n != 4 || err != nil || string(buf) != "3456" {
				t.Fatalf("ReadAt(3) = %d, %v, %q", n, err, buf)
			}
			if n, err := r.ReadAt(buf, 8); n != 2 || !errors.Is(err, io.EOF) {
				t.Fatalf("ReadAt past the end = %d, %v; want 2, io.EOF", n, err)
			}
		}},
		{"ConcurrentCreates", func(t *testing.T, f fsbackend.FS) {
			var wg sync.WaitGroup
			for g := 0; g < o.Concurrency; g++ {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					for i := 0; i < 5; i++ {
						if err := fsbackend.WriteFile(ctx, f, fmt.Sprintf("c/%d/%d", g, i), []byte{byte(g), byte(i)}); err != nil {
							t.Error(err)
						}
					}
				}(g)
			}
			wg.Wait()
			l, err := f.List(ctx, "c")
			if err != nil || len(l) != o.Concurrency*5 {
				t.Fatalf("List = %d files, %v; want %d", len(l), err, o.Concurrency*5)
			}
		}},
		{"LargeFile", func(t *testing.T, f fsbackend.FS) {
			data := make([]byte, o.LargeFile)
			for i := range data {
				data[i] = byte(i*7 + i>>11)
			}
			mustWrite(t, f, "big/file", data)
			if got := mustRead(t, f, "big/file"); !bytes.Equal(got, data) {
				t.Fatalf("large file differs (%d bytes read of %d)", len(got), len(data))
			}
		}},
		{"WriteFileAtomic", func(t *testing.T, f fsbackend.FS) {
			for i := 0; i < 3; i++ {
				if err := fsbackend.WriteFileAtomic(ctx, f, "meta/META", fmt.Sprint("run", i), []byte(fmt.Sprint("v", i))); err != nil {
					t.Fatal(err)
				}
			}
			if got := mustRead(t, f, "meta/META"); string(got) != "v2" {
				t.Fatalf("META = %q", got)
			}
			if l, _ := f.List(ctx, "meta"); len(l) != 1 {
				t.Fatalf("temporary files left: %v", l)
			}
		}},
		{"SubIsolation", func(t *testing.T, f fsbackend.FS) {
			a, _ := fsbackend.Sub(f, "ns/a")
			b, _ := fsbackend.Sub(f, "ns/ab")
			mustWrite(t, a, "x", []byte("a"))
			mustWrite(t, b, "x", []byte("b"))
			if got := mustRead(t, a, "x"); string(got) != "a" {
				t.Fatalf("a/x = %q", got)
			}
			if l, _ := a.List(ctx, ""); len(l) != 1 || l[0].Name != "x" {
				t.Fatalf("a sees %v", l)
			}
			if _, err := a.Open(ctx, "../ab/x"); !errors.Is(err, fsbackend.ErrInvalidName) {
				t.Fatalf("escaping a Sub: %v", err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFS(t)
			tc.fn(t, f)
		})
	}
}

func mustWrite(t *testing.T, f fsbackend.FS, name string, data []byte) {
	t.Helper()
	if err := fsbackend.WriteFile(context.Background(), f, name, data); err != nil {
		t.Fatalf("write %s: %v", name, err)
	}
}

func mustRead(t *testing.T, f fsbackend.FS, name string) []byte {
	t.Helper()
	b, err := fsbackend.ReadFile(context.Background(), f, name)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return b
}
