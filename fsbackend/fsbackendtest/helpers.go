package fsbackendtest

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/stowage/stowage/fsbackend"
)

func init() {
	register("WriteFile", testWriteFile)
	register("WriteFileAtomic", testWriteFileAtomic)
	register("Sub", testSub)
	register("FSClosed", testFSClosed)
}

func testWriteFile(t *testing.T, e *env) {
	if err := fsbackend.WriteFile(e.ctx, e.fs, "m/f", []byte("data")); err != nil {
		t.Fatalf("WriteFile: %v", err)
	}
	if got := e.read("m/f"); string(got) != "data" {
		t.Fatalf("ReadFile = %q, want %q", got, "data")
	}
	if _, err := fsbackend.ReadFile(e.ctx, e.fs, "m/none"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadFile of a missing file: %v, want fs.ErrNotExist", err)
	}
}

func testWriteFileAtomic(t *testing.T, e *env) {
	for i, content := range []string{"first", "second, longer", "3"} {
		if err := fsbackend.WriteFileAtomic(e.ctx, e.fs, "meta/META", "t1", []byte(content)); err != nil {
			t.Fatalf("WriteFileAtomic #%d: %v", i, err)
		}
		e.wantContent("meta/META", []byte(content))
		// No temporary file is left behind.
		e.wantList("", "meta/META")
	}
}

func testSub(t *testing.T, e *env) {
	sub := func(dir string) fsbackend.FS {
		t.Helper()
		s, err := fsbackend.Sub(e.fs, dir)
		if err != nil {
			t.Fatalf("Sub(%q): %v", dir, err)
		}
		return s
	}
	m1, m2, m := sub("ns/m1"), sub("ns/m2"), sub("ns/m")
	e1 := &env{t: t, fs: m1, ctx: e.ctx, opts: e.opts}
	e2 := &env{t: t, fs: m2, ctx: e.ctx, opts: e.opts}
	em := &env{t: t, fs: m, ctx: e.ctx, opts: e.opts}
	e1.write("log/1", []byte("one"))
	e2.write("log/1", []byte("two"))
	e2.write("only-in-2", []byte("2"))
	e.write("ns/m1x/leak", []byte("x"))

	e1.wantContent("log/1", []byte("one"))
	e2.wantContent("log/1", []byte("two"))
	e1.wantMissing("only-in-2")
	e1.wantList("", "log/1")
	e1.wantList("log", "log/1")
	e2.wantList("", "log/1", "only-in-2")
	em.wantList("")
	em.wantMissing("x/leak")
	e.wantList("ns", "ns/m1/log/1", "ns/m1x/leak", "ns/m2/log/1", "ns/m2/only-in-2")

	if err := m1.Rename(e.ctx, "log/1", "log/2"); err != nil {
		t.Fatalf("Rename in a sub: %v", err)
	}
	e.wantContent("ns/m1/log/2", []byte("one"))
	if err := m2.Remove(e.ctx, "log/1"); err != nil {
		t.Fatalf("Remove in a sub: %v", err)
	}
	e1.wantContent("log/2", []byte("one"))
	for _, bad := range []string{"../m2/only-in-2", "/ns/m2/only-in-2", ""} {
		if _, err := m1.Open(e.ctx, bad); !errors.Is(err, fsbackend.ErrInvalidName) {
			t.Errorf("sub Open(%q): %v, want ErrInvalidName", bad, err)
		}
	}
	if _, err := m1.List(e.ctx, ".."); !errors.Is(err, fsbackend.ErrInvalidName) {
		t.Errorf("sub List(..): %v, want ErrInvalidName", err)
	}
	if _, err := fsbackend.Sub(e.fs, "../up"); !errors.Is(err, fsbackend.ErrInvalidName) {
		t.Errorf("Sub(../up): %v, want ErrInvalidName", err)
	}
	// Closing a sub leaves the parent open.
	if err := m1.Close(); err != nil {
		t.Fatalf("sub Close: %v", err)
	}
	e.wantContent("ns/m2/only-in-2", []byte("2"))
}

func testFSClosed(t *testing.T, e *env) {
	e.write("f", []byte("x"))
	if err := e.fs.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, fsbackend.ErrClosed) {
			t.Errorf("%s on a closed FS: %v, want ErrClosed", what, err)
		}
	}
	w, err := e.fs.Create(e.ctx, "g")
	if err == nil {
		_ = w.Abort()
	}
	check("Create", err)
	r, err := e.fs.Open(e.ctx, "f")
	if err == nil {
		_ = r.Close()
	}
	check("Open", err)
	_, err = e.fs.Stat(e.ctx, "f")
	check("Stat", err)
	_, err = e.fs.List(e.ctx, "")
	check("List", err)
	check("Remove", e.fs.Remove(e.ctx, "f"))
	check("Rename", e.fs.Rename(e.ctx, "f", "h"))
}
