package fsbackend_test

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/errorfs"
	"github.com/stowage/stowage/fsbackend/fsbackendtest"
	"github.com/stowage/stowage/fsbackend/memfs"
)

var ctx = context.Background()

// objectStore hides memfs's AtomicRename, so the helpers take the path
// they take on object stores.
type objectStore struct{ *memfs.FS }

func (objectStore) Capabilities() fsbackend.Capabilities {
	return fsbackend.Capabilities{ConditionalCreate: true}
}

func TestWriteFileAtomicWithoutRename(t *testing.T) {
	f := objectStore{memfs.New()}
	for _, v := range []string{"one", "two, longer", "3"} {
		if err := fsbackend.WriteFileAtomic(ctx, f, "m/META", "s", []byte(v)); err != nil {
			t.Fatalf("WriteFileAtomic(%q): %v", v, err)
		}
		if b, err := fsbackend.ReadFile(ctx, f, "m/META"); err != nil || string(b) != v {
			t.Fatalf("META = %q, %v; want %q", b, err, v)
		}
	}
	if l, _ := f.List(ctx, ""); len(l) != 1 {
		t.Fatalf("files left: %+v", l)
	}
}

func TestWriteFileAtomicKeepsOldOnFailure(t *testing.T) {
	m := memfs.New()
	if err := fsbackend.WriteFile(ctx, m, "META", []byte("old")); err != nil {
		t.Fatal(err)
	}
	for _, op := range []errorfs.Op{errorfs.OpCreate, errorfs.OpWrite, errorfs.OpClose, errorfs.OpRename} {
		f := errorfs.Wrap(m, errorfs.After(op, 0))
		if err := fsbackend.WriteFileAtomic(ctx, f, "META", "x", []byte("new")); !errors.Is(err, errorfs.ErrInjected) {
			t.Fatalf("WriteFileAtomic with %s failing: %v, want ErrInjected", op, err)
		}
		if b, _ := fsbackend.ReadFile(ctx, m, "META"); string(b) != "old" {
			t.Fatalf("META = %q after a failed %s, want the old content", b, op)
		}
		if l, _ := m.List(ctx, ""); len(l) != 1 {
			t.Fatalf("a failed %s left files behind: %+v", op, l)
		}
	}
}

func TestWriteFileAbortsOnFailure(t *testing.T) {
	m := memfs.New()
	for _, op := range []errorfs.Op{errorfs.OpWrite, errorfs.OpClose} {
		f := errorfs.Wrap(m, errorfs.After(op, 0))
		if err := fsbackend.WriteFile(ctx, f, "x", []byte("data")); !errors.Is(err, errorfs.ErrInjected) {
			t.Fatalf("WriteFile with %s failing: %v", op, err)
		}
		if _, err := m.Stat(ctx, "x"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("WriteFile left the file after a failed %s: %v", op, err)
		}
	}
}

func TestReadFile(t *testing.T) {
	m := memfs.New()
	if _, err := fsbackend.ReadFile(ctx, m, "missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadFile of a missing file: %v", err)
	}
	f := errorfs.Wrap(m, errorfs.After(errorfs.OpReadAt, 0))
	if err := fsbackend.WriteFile(ctx, m, "x", []byte("data")); err != nil {
		t.Fatal(err)
	}
	_, err := fsbackend.ReadFile(ctx, f, "x")
	var pe *fs.PathError
	if !errors.Is(err, errorfs.ErrInjected) || !errors.As(err, &pe) || pe.Path != "x" {
		t.Fatalf("ReadFile with a failing ReadAt: %v, want a *fs.PathError for x wrapping the cause", err)
	}
}

func TestSubConformance(t *testing.T) {
	fsbackendtest.RunWith(t, func(t *testing.T) fsbackend.FS {
		s, err := fsbackend.Sub(memfs.New(), "ns/cluster/map")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, fsbackendtest.Options{Skip: map[string]string{
		"FSClosed": "Sub's Close is a no-op by design (sub.go) and later calls still work",
	}})
}

func TestSubRoot(t *testing.T) {
	m := memfs.New()
	s, err := fsbackend.Sub(m, "")
	if err != nil || s != fsbackend.FS(m) {
		t.Fatalf("Sub(\"\") = %v, %v; want the FS itself", s, err)
	}
	for _, bad := range []string{"/abs", "a/../b", "a/", "."} {
		if _, err := fsbackend.Sub(m, bad); !errors.Is(err, fsbackend.ErrInvalidName) {
			t.Errorf("Sub(%q): %v, want ErrInvalidName", bad, err)
		}
	}
}
