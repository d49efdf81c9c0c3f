package memfs_test

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/fsbackendtest"
	"github.com/stowage/stowage/fsbackend/memfs"
)

func TestConformance(t *testing.T) {
	fsbackendtest.Run(t, func(t *testing.T) fsbackend.FS { return memfs.New() })
}

func TestCrashKeepsOnlyDurableBytes(t *testing.T) {
	ctx := context.Background()
	f := memfs.New()
	w, _ := f.Create(ctx, "log")
	w.Write([]byte("synced"))
	w.Sync()
	w.Write([]byte("-lost"))
	never, _ := f.Create(ctx, "never-synced")
	never.Write([]byte("x"))
	fsbackend.WriteFile(ctx, f, "closed", []byte("whole"))
	f.Crash()
	if b, _ := fsbackend.ReadFile(ctx, f, "log"); string(b) != "synced" {
		t.Fatalf("log = %q after crash, want the synced part", b)
	}
	if _, err := f.Stat(ctx, "never-synced"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a never-synced file survived: %v", err)
	}
	if b, _ := fsbackend.ReadFile(ctx, f, "closed"); string(b) != "whole" {
		t.Fatalf("closed = %q", b)
	}
	if _, err := w.Write([]byte("after")); !errors.Is(err, fsbackend.ErrClosed) {
		t.Fatalf("a writer from before the crash still writes: %v", err)
	}
}
