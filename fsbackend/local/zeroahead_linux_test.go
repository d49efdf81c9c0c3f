package local_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/local"
)

// A writer that finds no room for its zeros ahead writes on without
// them: the zeros it wrote go again, and a write that fits the disk
// succeeds; one that does not fit fails as it would without the zeros.
// On a tmpfs of 256 KiB, mounted by the test (root only).
func TestZeroAheadGivesWayOnAFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=256k"); err != nil {
		t.Skipf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	f, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w, err := f.Create(ctx, "seg.log")
	if err != nil {
		t.Fatal(err)
	}
	w.(fsbackend.ZeroAheader).ZeroAhead(1 << 20)
	var want []byte
	for i, n := range []int{100 << 10, 40 << 10} {
		b := bytes.Repeat([]byte{byte('a' + i)}, n)
		if _, err := w.Write(b); err != nil {
			t.Fatalf("write %d of %d bytes, with room for it but not for the zeros ahead: %v", i+1, n, err)
		}
		if err := w.Sync(); err != nil {
			t.Fatal(err)
		}
		want = append(want, b...)
	}
	if _, err := w.Write(make([]byte, 512<<10)); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a write larger than the disk: %v, want ENOSPC", err)
	}
	if err := w.(fsbackend.Truncater).Truncate(int64(len(want))); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "seg.log"))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the file holds %d bytes (%v), want the %d written", len(got), err, len(want))
	}
}
