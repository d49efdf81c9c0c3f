package objstore_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/fsbackendtest"
	"github.com/stowage/stowage/fsbackend/internal/objstore"
)

const pkg = "stowage/fsbackend/mem"

// newFS returns an FS over d rooted at prefix of bucket "b", with quick
// retries; change adjusts the Config first.
func newFS(t *testing.T, d objstore.Driver, prefix string, change ...func(*objstore.Config)) *objstore.FS {
	t.Helper()
	c := objstore.Config{Pkg: pkg, Scheme: "mem", Bucket: "b", Prefix: prefix, Retry: fastPolicy(),
		Redact: objstore.NewRedactor(memSecret)}
	for _, ch := range change {
		ch(&c)
	}
	f, err := objstore.New(d, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func checkOnCreate(c *objstore.Config) { c.CheckOnCreate = true }

// TestConformance runs the suite every back end passes over the in-memory
// driver, with Create's lookup and without it.
func TestConformance(t *testing.T) {
	for _, check := range []bool{false, true} {
		t.Run(fmt.Sprintf("CheckOnCreate=%v", check), func(t *testing.T) {
			fsbackendtest.Run(t, func(t *testing.T) fsbackend.FS {
				return newFS(t, newMemDriver(), "root", func(c *objstore.Config) { c.CheckOnCreate = check })
			})
		})
	}
}

func names(t *testing.T, f fsbackend.FS, dir string) string {
	t.Helper()
	list, err := f.List(context.Background(), dir)
	if err != nil {
		t.Fatalf("List(%q): %v", dir, err)
	}
	var out []string
	for _, fi := range list {
		out = append(out, fi.Name)
	}
	return strings.Join(out, ",")
}

// TestNameMapping: a name lives at <prefix>/<name>, or at <name> in the
// bucket's root; keys outside the prefix and keys that are no valid name
// (directory markers) are never listed.
func TestNameMapping(t *testing.T) {
	ctx := context.Background()
	d := newMemDriver()
	f := newFS(t, d, "/p/q/")
	root := newFS(t, d, "")
	if err := fsbackend.WriteFile(ctx, f, "dir/a", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if _, ok := d.object("p/q/dir/a"); !ok {
		t.Fatalf("dir/a not stored as p/q/dir/a: %v", d.objects)
	}
	d.plant("p/q/dir/marker/", nil)
	d.plant("p/q/dir//double", []byte("x"))
	d.plant("p/qx/dir/b", []byte("x"))
	d.plant("p/q/dirx", []byte("x"))
	if got := names(t, f, "dir"); got != "dir/a" {
		t.Fatalf("List(dir) = %s, want dir/a", got)
	}
	if got := names(t, f, ""); got != "dir/a,dirx" {
		t.Fatalf("List() = %s, want dir/a,dirx", got)
	}
	if got := names(t, root, "p"); got != "p/q/dir/a,p/q/dirx,p/qx/dir/b" {
		t.Fatalf("root List(p) = %s", got)
	}
	if fi, err := root.Stat(ctx, "p/q/dir/a"); err != nil || fi.Name != "p/q/dir/a" || fi.Size != 1 {
		t.Fatalf("root Stat = %+v, %v", fi, err)
	}
	for _, bad := range []string{"", "/a", "a/", "a/../b", "a//b"} {
		if _, err := f.Stat(ctx, bad); !errors.Is(err, fsbackend.ErrInvalidName) {
			t.Errorf("Stat(%q) = %v, want ErrInvalidName", bad, err)
		}
	}
	if d.count("Head") != 1 {
		t.Fatalf("%d Heads: invalid names reached the driver", d.count("Head"))
	}
}

func TestListPages(t *testing.T) {
	d := newMemDriver()
	d.pageSize = 2
	f := newFS(t, d, "root")
	for _, k := range []string{"e", "c", "a", "d", "b"} {
		d.plant("root/l/"+k, []byte(k))
	}
	d.plant("root/other", nil)
	d.failNext = 1
	if got := names(t, f, "l"); got != "l/a,l/b,l/c,l/d,l/e" {
		t.Fatalf("List = %s", got)
	}
	if n := d.count("List"); n != 4 {
		t.Fatalf("%d List requests, want 3 pages and 1 retry", n)
	}
	if f.Retries() != 1 {
		t.Fatalf("Retries = %d, want 1", f.Retries())
	}
}

func TestRemoveMissing(t *testing.T) {
	d := newMemDriver()
	f := newFS(t, d, "root")
	err := f.Remove(context.Background(), "gone")
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Op != "remove" || pe.Path != "mem://b/root/gone" {
		t.Fatalf("Remove of a missing object = %v, want a PathError for mem://b/root/gone matching fs.ErrNotExist", err)
	}
	if !strings.HasPrefix(err.Error(), pkg+": ") {
		t.Fatalf("error %q lacks the package prefix", err)
	}
	if d.count("Delete") != 0 {
		t.Fatal("Delete sent for a missing object")
	}
	d.plant("root/here", []byte("x"))
	if err := f.Remove(context.Background(), "here"); err != nil {
		t.Fatal(err)
	}
	if _, ok := d.object("root/here"); ok || d.count("Delete") != 1 {
		t.Fatalf("object left or %d Deletes", d.count("Delete"))
	}
}

func TestCreateExclusive(t *testing.T) {
	ctx := context.Background()
	t.Run("refused at Close", func(t *testing.T) {
		d := newMemDriver()
		f := newFS(t, d, "")
		// Even the same bytes are another writer's when the first PUT
		// is refused.
		d.plant("x", []byte("theirs"))
		w, err := f.Create(ctx, "x")
		if err != nil {
			t.Fatalf("Create made a request or refused early: %v", err)
		}
		w.Write([]byte("theirs"))
		if err := w.Close(); !errors.Is(err, fs.ErrExist) {
			t.Fatalf("Close = %v, want fs.ErrExist", err)
		}
		if err := w.Abort(); err != nil {
			t.Fatal(err)
		}
		if got, _ := d.object("x"); string(got) != "theirs" || d.count("Delete") != 0 {
			t.Fatalf("object %q after %d Deletes: the loser's Abort touched the winner", got, d.count("Delete"))
		}
		if d.count("Head") != 0 || f.BytesWritten() != 0 {
			t.Fatalf("%d Heads, %d bytes counted for a refused create", d.count("Head"), f.BytesWritten())
		}
	})
	t.Run("refused at Create", func(t *testing.T) {
		d := newMemDriver()
		f := newFS(t, d, "", checkOnCreate)
		d.plant("x", []byte("theirs"))
		if _, err := f.Create(ctx, "x"); !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), "mem://b/x") {
			t.Fatalf("Create = %v, want fs.ErrExist naming mem://b/x", err)
		}
		if d.count("PutIfAbsent") != 0 {
			t.Fatal("PUT sent for an existing name")
		}
	})
	t.Run("race", func(t *testing.T) {
		d := newMemDriver()
		f := newFS(t, d, "", checkOnCreate)
		const n = 8
		ws := make([]fsbackend.Writer, n)
		for i := range ws {
			w, err := f.Create(ctx, "race")
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(w, "writer %d", i)
			ws[i] = w
		}
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i, w := range ws {
			wg.Go(func() { errs[i] = w.Close() })
		}
		wg.Wait()
		won := -1
		for i, err := range errs {
			switch {
			case err == nil && won >= 0:
				t.Fatalf("writers %d and %d both won", won, i)
			case err == nil:
				won = i
			case !errors.Is(err, fs.ErrExist):
				t.Fatalf("writer %d: %v", i, err)
			default:
				ws[i].Abort()
			}
		}
		if got, _ := d.object("race"); won < 0 || string(got) != fmt.Sprintf("writer %d", won) {
			t.Fatalf("object %q, winner %d", got, won)
		}
	})
}

func TestErrorMapping(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name        string
		fail        error // every request fails with it
		op          func(f *objstore.FS) error
		notExist    bool
		exist       bool
		wantInError []string
	}{
		{"missing object", nil, func(f *objstore.FS) error { _, err := f.Stat(ctx, "none"); return err },
			true, false, []string{pkg + ": stat mem://b/r/none: ", "NoSuchKey"}},
		{"missing object on open", nil, func(f *objstore.FS) error { _, err := f.Open(ctx, "none"); return err },
			true, false, []string{"open mem://b/r/none"}},
		{"missing source of rename", nil, func(f *objstore.FS) error { return f.Rename(ctx, "none", "x") },
			true, false, []string{"rename mem://b/r/none"}},
		{"missing bucket", errNoBuck, func(f *objstore.FS) error { _, err := f.Stat(ctx, "x"); return err },
			false, false, []string{"NoSuchBucket"}},
		{"denied, with the driver's hint and no secret", errDenied, func(f *objstore.FS) error { _, err := f.List(ctx, "d"); return err },
			false, false, []string{"list mem://b/r/d/: " + memHint, "AccessDenied for key ******"}},
		{"taken is not fs.ErrExist outside create", errTaken, func(f *objstore.FS) error { return f.Remove(ctx, "x") },
			false, false, []string{"remove mem://b/r/x", "PreconditionFailed"}},
		{"taken on create", errTaken, func(f *objstore.FS) error { return fsbackend.WriteFile(ctx, f, "x", []byte("x")) },
			false, true, []string{"create mem://b/r/x"}},
		{"retries run out", errBusy, func(f *objstore.FS) error { _, err := f.Stat(ctx, "x"); return err },
			false, false, []string{"busy (gave up after 3 attempts)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newMemDriver()
			d.failWith = c.fail
			f := newFS(t, d, "r", func(cfg *objstore.Config) { cfg.Retry.MaxAttempts = 3 })
			err := c.op(f)
			var pe *fs.PathError
			if err == nil || !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a PathError", err)
			}
			if errors.Is(err, fs.ErrNotExist) != c.notExist || errors.Is(err, fs.ErrExist) != c.exist {
				t.Fatalf("err = %v: matches fs.ErrNotExist %v, fs.ErrExist %v; want %v, %v",
					err, errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrExist), c.notExist, c.exist)
			}
			if c.fail != nil && !errors.Is(err, c.fail) {
				t.Fatalf("err = %v does not wrap the driver's %v", err, c.fail)
			}
			for _, s := range c.wantInError {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("err %q does not contain %q", err, s)
				}
			}
			if strings.Contains(err.Error(), memSecret) {
				t.Fatalf("err shows the secret: %v", err)
			}
		})
	}
}

// TestLostAnswer: a PUT that stored the object but lost its answer is
// retried; the retry meets Taken, finds the same bytes and succeeds. The
// same with other bytes there is fs.ErrExist, and Abort leaves them.
func TestLostAnswer(t *testing.T) {
	ctx := context.Background()
	d := newMemDriver()
	f := newFS(t, d, "")
	d.loseNext = 1
	if err := fsbackend.WriteFile(ctx, f, "mine", []byte("payload")); err != nil {
		t.Fatalf("write whose first answer was lost: %v", err)
	}
	if f.Retries() != 1 || f.BytesWritten() != 7 || f.ObjectsWritten() != 1 {
		t.Fatalf("retries %d, bytes %d, objects %d", f.Retries(), f.BytesWritten(), f.ObjectsWritten())
	}
	w, _ := f.Create(ctx, "theirs")
	w.Write([]byte("mine"))
	d.plant("theirs", []byte("theirs"))
	d.failNext = 1
	if err := w.Close(); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Close over another writer's object = %v, want fs.ErrExist", err)
	}
	w.Abort()
	if got, _ := d.object("theirs"); string(got) != "theirs" {
		t.Fatalf("object %q after the loser's Abort", got)
	}
}

// TestAbortAfterFailedClose: when the PUT's answer is lost and no retry is
// left, Abort removes the object only if it holds the writer's bytes.
func TestAbortAfterFailedClose(t *testing.T) {
	ctx := context.Background()
	d := newMemDriver()
	f := newFS(t, d, "", func(c *objstore.Config) { c.Retry.MaxAttempts = 1 })
	d.loseNext = 1
	w, _ := f.Create(ctx, "a")
	w.Write([]byte("mine"))
	if err := w.Close(); err == nil || !errors.Is(err, errBusy) {
		t.Fatalf("Close = %v, want the lost answer's error", err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, ok := d.object("a"); ok {
		t.Fatal("Abort left the object its PUT stored")
	}
	// A failure that stored nothing, then another writer's object.
	w, _ = f.Create(ctx, "b")
	w.Write([]byte("mine"))
	d.failNext = 1
	if err := w.Close(); !errors.Is(err, errBusy) {
		t.Fatalf("Close = %v", err)
	}
	d.plant("b", []byte("other"))
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.object("b"); string(got) != "other" {
		t.Fatalf("Abort removed another writer's object: %q", got)
	}
}

func TestPinnedRead(t *testing.T) {
	ctx := context.Background()
	d := newMemDriver()
	f := newFS(t, d, "")
	d.plant("v", []byte("version one"))
	r, err := f.Open(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	d.shortNext = 1
	buf := make([]byte, 7)
	if n, err := r.ReadAt(buf, 0); err != nil || string(buf[:n]) != "version" {
		t.Fatalf("ReadAt after a short body = %q, %v; want it sent again", buf[:n], err)
	}
	d.plant("v", []byte("version two"))
	if _, err := r.ReadAt(buf, 0); err == nil || !strings.Contains(err.Error(), "replaced") || errors.Is(err, fs.ErrExist) {
		t.Fatalf("read of a replaced object = %v, want a 'replaced' error", err)
	}
	d.mu.Lock()
	delete(d.objects, "v")
	d.mu.Unlock()
	if _, err := r.ReadAt(buf, 0); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "removed") {
		t.Fatalf("read of a removed object = %v, want fs.ErrNotExist", err)
	}
}

func TestRename(t *testing.T) {
	ctx := context.Background()
	for _, move := range []bool{false, true} {
		t.Run(fmt.Sprintf("move=%v", move), func(t *testing.T) {
			d := newMemDriver()
			var drv objstore.Driver = d
			if move {
				drv = memMover{d}
			}
			f := newFS(t, drv, "r")
			d.plant("r/a", []byte("abc"))
			d.plant("r/b", []byte("old"))
			if err := f.Rename(ctx, "a", "b"); err != nil {
				t.Fatal(err)
			}
			if got, _ := d.object("r/b"); string(got) != "abc" {
				t.Fatalf("r/b = %q", got)
			}
			if _, ok := d.object("r/a"); ok {
				t.Fatal("old name left")
			}
			if move != (d.count("Move") == 1) || move != (d.count("Copy") == 0) {
				t.Fatalf("%d Moves, %d Copies", d.count("Move"), d.count("Copy"))
			}
			if want := map[bool]int64{false: 3, true: 0}[move]; f.BytesWritten() != want {
				t.Fatalf("BytesWritten = %d, want %d", f.BytesWritten(), want)
			}
			if err := f.Rename(ctx, "b", "b"); err != nil {
				t.Fatalf("rename onto itself: %v", err)
			}
		})
	}
}

func TestMaxObjectSize(t *testing.T) {
	d := newMemDriver()
	f := newFS(t, d, "", func(c *objstore.Config) { c.MaxObjectSize = 8 })
	w, err := f.Create(context.Background(), "big")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("12345")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("6789")); err == nil || !strings.Contains(err.Error(), "mem://b/big") {
		t.Fatalf("Write past the limit = %v, want an error naming the object", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.object("big"); string(got) != "12345" {
		t.Fatalf("stored %q", got)
	}
}

func TestCanceledCreateSendsNothing(t *testing.T) {
	d := newMemDriver()
	f := newFS(t, d, "", checkOnCreate)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.Create(ctx, "a"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Create = %v, want context.Canceled", err)
	}
	if d.count("Head") != 0 {
		t.Fatal("request sent with a canceled context")
	}
}

func TestNewAndClose(t *testing.T) {
	released := 0
	release := func() error { released++; return nil }
	for _, c := range []objstore.Config{
		{Pkg: pkg, Scheme: "mem", Bucket: "", Release: release},
		{Pkg: pkg, Scheme: "mem", Bucket: "b", Prefix: "a/../b", Release: release},
	} {
		if _, err := objstore.New(newMemDriver(), c); err == nil || !strings.HasPrefix(err.Error(), pkg) {
			t.Fatalf("New(%+v) = %v, want an error", c, err)
		}
	}
	if released != 2 {
		t.Fatalf("failed New released %d of 2 clients", released)
	}
	f, err := objstore.New(newMemDriver(), objstore.Config{Pkg: pkg, Scheme: "mem", Bucket: "b", Release: release})
	if err != nil {
		t.Fatal(err)
	}
	if c := f.Capabilities(); c.DurableAppend || c.AtomicRename || !c.ConditionalCreate {
		t.Fatalf("capabilities %+v", c)
	}
	f.Close()
	f.Close()
	if released != 3 {
		t.Fatalf("Close released %d times, want once", released-2)
	}
	ctx := context.Background()
	if _, err := f.Create(ctx, "a"); !errors.Is(err, fsbackend.ErrClosed) {
		t.Fatalf("Create after Close = %v", err)
	}
	if _, err := f.List(ctx, ""); !errors.Is(err, fsbackend.ErrClosed) {
		t.Fatalf("List after Close = %v", err)
	}
}
