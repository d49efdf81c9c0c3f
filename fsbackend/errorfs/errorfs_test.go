package errorfs_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/errorfs"
	"github.com/stowage/stowage/fsbackend/fsbackendtest"
	"github.com/stowage/stowage/fsbackend/memfs"
)

func TestConformanceWithoutFaults(t *testing.T) {
	fsbackendtest.Run(t, func(t *testing.T) fsbackend.FS {
		return errorfs.Wrap(memfs.New(), errorfs.InjectorFunc(func(errorfs.Call) error { return nil }))
	})
}

func TestInjectors(t *testing.T) {
	ctx := context.Background()
	t.Run("OnIndex", func(t *testing.T) {
		f := errorfs.Wrap(memfs.New(), errorfs.OnIndex(errorfs.OpCreate, 1))
		if err := fsbackend.WriteFile(ctx, f, "a", nil); err != nil {
			t.Fatal(err)
		}
		if err := fsbackend.WriteFile(ctx, f, "b", nil); !errors.Is(err, errorfs.ErrInjected) {
			t.Fatalf("second create: %v", err)
		}
		if err := fsbackend.WriteFile(ctx, f, "c", nil); err != nil {
			t.Fatalf("third create: %v", err)
		}
	})
	t.Run("SwitchAndPrefix", func(t *testing.T) {
		sw := errorfs.NewSwitch(errorfs.OnPrefix("log/", errorfs.After(errorfs.OpSync, 0)))
		f := errorfs.Wrap(memfs.New(), sw)
		w, _ := f.Create(ctx, "log/1")
		if err := w.Sync(); err != nil {
			t.Fatalf("disarmed: %v", err)
		}
		sw.Arm()
		if err := w.Sync(); !errors.Is(err, errorfs.ErrInjected) {
			t.Fatalf("armed: %v", err)
		}
		w2, _ := f.Create(ctx, "other")
		if err := w2.Sync(); err != nil {
			t.Fatalf("other prefix: %v", err)
		}
	})
	t.Run("ShortWrite", func(t *testing.T) {
		m := memfs.New()
		f := errorfs.Wrap(m, errorfs.ShortWrite("s", 3))
		w, _ := f.Create(ctx, "s")
		n, err := w.Write([]byte("abcdef"))
		if n != 3 || !errors.Is(err, errorfs.ErrInjected) {
			t.Fatalf("short write = %d, %v", n, err)
		}
	})
	t.Run("TearAt", func(t *testing.T) {
		m := memfs.New()
		f := errorfs.Wrap(m, errorfs.TearAt("t", 4))
		if err := fsbackend.WriteFile(ctx, f, "t", []byte("0123456789")); err != nil {
			t.Fatal(err)
		}
		if b, _ := fsbackend.ReadFile(ctx, m, "t"); string(b) != "0123" {
			t.Fatalf("torn file = %q, want 0123", b)
		}
	})
}
