package fsbackendtest

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/stowage/stowage/fsbackend"
)

func init() {
	register("CreateWriteClose", testCreateWriteClose)
	register("CreateEmptyFile", testCreateEmptyFile)
	register("CreateMakesParents", testCreateMakesParents)
	register("CreateExistingClosed", testCreateExistingClosed)
	register("CreateWhileOpen", testCreateWhileOpen)
	register("CreateAfterRemove", testCreateAfterRemove)
	register("WriterClosed", testWriterClosed)
	register("Abort", testAbort)
	register("AbortAfterCloseKeepsFile", testAbortAfterClose)
	register("AbortAfterFailedCreateDoesNotRemoveWinner", testAbortLoser)
	register("Sync", testSync)
	register("Truncate", testTruncate)
}

func testCreateWriteClose(t *testing.T, e *env) {
	w, err := e.fs.Create(e.ctx, "dir/file")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	parts := [][]byte{[]byte("hello, "), []byte("stowage"), pattern(1000, 7)}
	var want []byte
	for _, p := range parts {
		if n, err := w.Write(p); err != nil || n != len(p) {
			t.Fatalf("Write(%d bytes) = %d, %v", len(p), n, err)
		}
		want = append(want, p...)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	e.wantContent("dir/file", want)
	list, err := e.fs.List(e.ctx, "")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(list) != 1 || list[0].Name != "dir/file" || list[0].Size != int64(len(want)) {
		t.Fatalf("List(\"\") = %+v, want one entry dir/file of %d bytes", list, len(want))
	}
}

func testCreateEmptyFile(t *testing.T, e *env) {
	e.write("empty", nil)
	e.wantContent("empty", nil)
	if b := e.read("empty"); len(b) != 0 {
		t.Fatalf("ReadFile(empty) = %d bytes, want 0", len(b))
	}
	e.wantList("", "empty")
}

func testCreateMakesParents(t *testing.T, e *env) {
	e.write("a/b/c/d/e.txt", []byte("deep"))
	e.wantContent("a/b/c/d/e.txt", []byte("deep"))
	e.wantList("a", "a/b/c/d/e.txt")
	e.wantList("a/b/c/d", "a/b/c/d/e.txt")
	// A sibling in an existing directory and one in a new branch.
	e.write("a/b/x", []byte("x"))
	e.write("a/y/z", []byte("z"))
	e.wantList("a", "a/b/c/d/e.txt", "a/b/x", "a/y/z")
}

func testCreateExistingClosed(t *testing.T, e *env) {
	e.write("f", []byte("first"))
	w, err := e.fs.Create(e.ctx, "f")
	if err == nil {
		// Best effort back ends may only notice at Close.
		_, _ = w.Write([]byte("second"))
		err = w.Close()
		_ = w.Abort()
	}
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second Create+Close of an existing file: error %v, want one matching fs.ErrExist", err)
	}
	e.wantContent("f", []byte("first"))
	if err := fsbackend.WriteFile(e.ctx, e.fs, "f", []byte("third")); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("WriteFile over an existing file: %v, want an error matching fs.ErrExist", err)
	}
	e.wantContent("f", []byte("first"))
}

// testCreateWhileOpen creates a name twice while the first writer is
// still open. With ConditionalCreate exactly one of the two may finish
// (the second Create, or the later Close, fails with fs.ErrExist) and the
// file holds the winner's bytes.
func testCreateWhileOpen(t *testing.T, e *env) {
	if !e.caps().ConditionalCreate {
		t.Skip("back end has no ConditionalCreate")
	}
	w1, err := e.fs.Create(e.ctx, "race")
	if err != nil {
		t.Fatalf("first Create: %v", err)
	}
	if _, err := w1.Write([]byte("one")); err != nil {
		t.Fatalf("first Write: %v", err)
	}
	w2, err2 := e.fs.Create(e.ctx, "race")
	if err2 != nil {
		if !errors.Is(err2, fs.ErrExist) {
			t.Fatalf("second Create: %v, want nil or an error matching fs.ErrExist", err2)
		}
		if err := w1.Close(); err != nil {
			t.Fatalf("first Close: %v", err)
		}
		e.wantContent("race", []byte("one"))
		return
	}
	if _, err := w2.Write([]byte("two")); err != nil {
		t.Fatalf("second Write: %v", err)
	}
	c1, c2 := w1.Close(), w2.Close()
	var winner []byte
	switch {
	case c1 == nil && errors.Is(c2, fs.ErrExist):
		winner = []byte("one")
		_ = w2.Abort()
	case c2 == nil && errors.Is(c1, fs.ErrExist):
		winner = []byte("two")
		_ = w1.Abort()
	default:
		t.Fatalf("two writers of one name: Close errors %v and %v; want exactly one nil and one matching fs.ErrExist", c1, c2)
	}
	e.wantContent("race", winner)
}

func testCreateAfterRemove(t *testing.T, e *env) {
	e.write("d/f", []byte("old"))
	if err := e.fs.Remove(e.ctx, "d/f"); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	e.write("d/f", []byte("new"))
	e.wantContent("d/f", []byte("new"))
}

func testWriterClosed(t *testing.T, e *env) {
	w, err := e.fs.Create(e.ctx, "f")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, fsbackend.ErrClosed) {
		t.Errorf("Write after Close: %v, want ErrClosed", err)
	}
	if err := w.Close(); !errors.Is(err, fsbackend.ErrClosed) {
		t.Errorf("second Close: %v, want ErrClosed", err)
	}
	if err := w.Sync(); !errors.Is(err, fsbackend.ErrClosed) && !errors.Is(err, fsbackend.ErrUnsupported) {
		t.Errorf("Sync after Close: %v, want ErrClosed (or ErrUnsupported)", err)
	}
	e.wantContent("f", nil)

	w, err = e.fs.Create(e.ctx, "g")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("Abort: %v", err)
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, fsbackend.ErrClosed) {
		t.Errorf("Write after Abort: %v, want ErrClosed", err)
	}
	if err := w.Close(); !errors.Is(err, fsbackend.ErrClosed) {
		t.Errorf("Close after Abort: %v, want ErrClosed", err)
	}
	e.wantMissing("g")
}

func testAbort(t *testing.T, e *env) {
	for _, tc := range []struct {
		name string
		data []byte
		sync bool
	}{
		{"dir/untouched", nil, false},
		{"dir/written", pattern(5000, 1), false},
		{"dir/synced", pattern(5000, 2), true},
	} {
		w, err := e.fs.Create(e.ctx, tc.name)
		if err != nil {
			t.Fatalf("Create(%q): %v", tc.name, err)
		}
		if _, err := w.Write(tc.data); err != nil {
			t.Fatalf("Write(%q): %v", tc.name, err)
		}
		if tc.sync && (e.caps().DurableAppend || e.caps().SyncOpen) {
			if err := w.Sync(); err != nil {
				t.Fatalf("Sync(%q): %v", tc.name, err)
			}
		}
		if err := w.Abort(); err != nil {
			t.Fatalf("Abort(%q): %v", tc.name, err)
		}
		e.wantMissing(tc.name)
		// The name is free again.
		e.write(tc.name, []byte("again"))
		e.wantContent(tc.name, []byte("again"))
		if err := e.fs.Remove(e.ctx, tc.name); err != nil {
			t.Fatalf("Remove(%q): %v", tc.name, err)
		}
	}
	e.wantList("")
}

// testAbortAfterClose checks that Abort after a successful Close, as a
// deferred clean-up runs it, keeps the finished file.
func testAbortAfterClose(t *testing.T, e *env) {
	w, err := e.fs.Create(e.ctx, "dir/done")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	data := pattern(3000, 4)
	if _, err := w.Write(data); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("Abort after Close: %v", err)
	}
	e.wantContent("dir/done", data)
	if err := w.Close(); !errors.Is(err, fsbackend.ErrClosed) {
		t.Errorf("Close after Abort: %v, want ErrClosed", err)
	}
}

// testAbortLoser checks that the loser of a create race, aborting as
// WriteFile does, never removes the file the winner finished.
func testAbortLoser(t *testing.T, e *env) {
	e.write("f", []byte("winner"))
	w, err := e.fs.Create(e.ctx, "f")
	if err == nil {
		_, _ = w.Write([]byte("loser"))
		_ = w.Close()
		if err := w.Abort(); err != nil && !errors.Is(err, fsbackend.ErrClosed) {
			t.Logf("Abort of the loser: %v", err)
		}
	}
	e.wantContent("f", []byte("winner"))
}

func testSync(t *testing.T, e *env) {
	w, err := e.fs.Create(e.ctx, "log")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	defer w.Abort()
	if _, err := w.Write([]byte("batch-1;")); err != nil {
		t.Fatalf("Write: %v", err)
	}
	err = w.Sync()
	if !e.caps().DurableAppend && !e.caps().SyncOpen {
		if !errors.Is(err, fsbackend.ErrUnsupported) {
			t.Fatalf("Sync without DurableAppend or SyncOpen: %v, want an error matching ErrUnsupported", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if _, err := w.Write([]byte("batch-2;")); err != nil {
		t.Fatalf("Write after Sync: %v", err)
	}
	if err := w.Sync(); err != nil {
		t.Fatalf("second Sync: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	e.wantContent("log", []byte("batch-1;batch-2;"))
}

func testTruncate(t *testing.T, e *env) {
	w, err := e.fs.Create(e.ctx, "log")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	defer w.Abort()
	tr, ok := w.(fsbackend.Truncater)
	if !ok {
		t.Skip("Writer does not implement Truncater")
	}
	if _, err := w.Write([]byte("good;")); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if e.caps().DurableAppend {
		if err := w.Sync(); err != nil {
			t.Fatalf("Sync: %v", err)
		}
	}
	if _, err := w.Write([]byte("failed-batch;")); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if err := tr.Truncate(5); err != nil {
		t.Fatalf("Truncate(5): %v", err)
	}
	if _, err := w.Write([]byte("next;")); err != nil {
		t.Fatalf("Write after Truncate: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	e.wantContent("log", []byte("good;next;"))
}
