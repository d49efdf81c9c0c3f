package local_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stowage/stowage/fsbackend"
)

// TestRenameDir moves a directory's tree of 600 files (enough for
// RemoveAll to unlink them side by side) into a new parent: every file
// is found under the new name, none under the old, and a file created
// under the old name afterwards gets its directory made again. A missing
// directory or a file fails with ErrNotExist, an existing target with
// ErrExist; RemoveAll then removes the moved tree whole.
func TestRenameDir(t *testing.T) {
	f := newFS(t)
	for i := range 600 {
		if err := fsbackend.WriteFile(ctx, f, fmt.Sprintf("ns/job/f%03d", i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := fsbackend.WriteFile(ctx, f, "ns/job/latest/p", []byte("p")); err != nil {
		t.Fatal(err)
	}
	if err := f.RenameDir(ctx, "ns/job", "ns/..trash/1"); err != nil {
		t.Fatal(err)
	}
	if fis, err := f.List(ctx, "ns/job"); err != nil || len(fis) != 0 {
		t.Fatalf("old name after the move: %d files, %v", len(fis), err)
	}
	if fis, err := f.List(ctx, "ns/..trash/1"); err != nil || len(fis) != 601 {
		t.Fatalf("new name after the move: %d files, %v; want 601", len(fis), err)
	}
	if err := fsbackend.WriteFile(ctx, f, "ns/job/latest/q", []byte("q")); err != nil {
		t.Fatalf("a create under the moved directory's old name: %v", err)
	}
	if err := f.RenameDir(ctx, "ns/none", "ns/..trash/2"); !errors.Is(err, fsbackend.ErrNotExist) {
		t.Fatalf("moving a missing directory: %v, want ErrNotExist", err)
	}
	if err := f.RenameDir(ctx, "ns/job/latest/q", "ns/..trash/2"); !errors.Is(err, fsbackend.ErrNotExist) {
		t.Fatalf("moving a file: %v, want ErrNotExist", err)
	}
	if err := f.RenameDir(ctx, "ns/job", "ns/..trash/1"); !errors.Is(err, fsbackend.ErrExist) {
		t.Fatalf("moving onto an existing directory: %v, want ErrExist", err)
	}
	if err := f.RemoveAll(ctx, "ns/..trash/1"); err != nil {
		t.Fatal(err)
	}
	if fis, err := f.List(ctx, "ns/..trash"); err != nil || len(fis) != 0 {
		t.Fatalf("the trash after RemoveAll: %d files, %v", len(fis), err)
	}
	if _, err := os.Stat(filepath.Join(f.Root(), "ns", "..trash", "1")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the moved directory after RemoveAll: %v", err)
	}
	if got, err := fsbackend.ReadFile(ctx, f, "ns/job/latest/q"); err != nil || string(got) != "q" {
		t.Fatalf("the file beside: %q, %v", got, err)
	}
}
