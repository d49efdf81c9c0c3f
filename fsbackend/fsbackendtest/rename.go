package fsbackendtest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stowage/stowage/fsbackend"
)

func init() {
	register("Rename", testRename)
	register("RenameReplaces", testRenameReplaces)
	register("RenameMissing", testRenameMissing)
	register("RenameAtomic", testRenameAtomic)
}

func testRename(t *testing.T, e *env) {
	data := pattern(3000, 4)
	e.write("src/f", data)
	if err := e.fs.Rename(e.ctx, "src/f", "dst/deeper/g"); err != nil {
		t.Fatalf("Rename into a new directory: %v", err)
	}
	e.wantMissing("src/f")
	e.wantContent("dst/deeper/g", data)
	e.wantList("", "dst/deeper/g")
	if err := e.fs.Rename(e.ctx, "dst/deeper/g", "dst/h"); err != nil {
		t.Fatalf("Rename within the tree: %v", err)
	}
	e.wantList("", "dst/h")
	e.wantContent("dst/h", data)
}

func testRenameReplaces(t *testing.T, e *env) {
	e.write("old", []byte("old content, longer than the new one"))
	e.write("new.tmp", []byte("new"))
	if err := e.fs.Rename(e.ctx, "new.tmp", "old"); err != nil {
		t.Fatalf("Rename over an existing file: %v", err)
	}
	e.wantMissing("new.tmp")
	e.wantContent("old", []byte("new"))
	e.wantList("", "old")
}

func testRenameMissing(t *testing.T, e *env) {
	if err := e.fs.Rename(e.ctx, "missing", "target"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Rename of a missing file: %v, want an error matching fs.ErrNotExist", err)
	}
	e.write("target", []byte("kept"))
	if err := e.fs.Rename(e.ctx, "missing", "target"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Rename of a missing file over an existing one: %v, want fs.ErrNotExist", err)
	}
	e.wantContent("target", []byte("kept"))
}

// testRenameAtomic replaces one file many times while readers read it:
// with AtomicRename a reader always finds a whole version, never none.
func testRenameAtomic(t *testing.T, e *env) {
	if !e.caps().AtomicRename {
		t.Skip("back end has no AtomicRename")
	}
	version := func(i int) []byte { return bytes.Repeat([]byte(fmt.Sprintf("v%04d;", i)), 200) }
	e.write("state", version(0))
	const rounds = 20
	var done atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, e.opts.Concurrency)
	for r := 0; r < e.opts.Concurrency; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !done.Load() {
				b, err := fsbackend.ReadFile(e.ctx, e.fs, "state")
				if err != nil {
					errs <- fmt.Errorf("ReadFile during renames: %w", err)
					return
				}
				var i int
				if _, err := fmt.Sscanf(string(b), "v%04d;", &i); err != nil || !bytes.Equal(b, version(i)) {
					errs <- fmt.Errorf("ReadFile during renames saw a partial file: %s", summary(b))
					return
				}
			}
		}()
	}
	for i := 1; i <= rounds; i++ {
		tmp := fmt.Sprintf("state.tmp-%d", i)
		e.write(tmp, version(i))
		if err := e.fs.Rename(e.ctx, tmp, "state"); err != nil {
			done.Store(true)
			wg.Wait()
			t.Fatalf("Rename round %d: %v", i, err)
		}
	}
	done.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	e.wantContent("state", version(rounds))
	e.wantList("", "state")
}
