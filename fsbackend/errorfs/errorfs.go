package errorfs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/stowage/stowage/fsbackend"
)

// FS is a fault-injecting wrapper around another FS. It is safe for
// concurrent use.
type FS struct {
	fs  fsbackend.FS
	inj Injector
	mu  sync.Mutex
	n   map[Op]int64
}

// Wrap returns f with faults from inj; a nil inj injects nothing.
func Wrap(f fsbackend.FS, inj Injector) *FS {
	if inj == nil {
		inj = InjectorFunc(func(Call) error { return nil })
	}
	return &FS{fs: f, inj: inj, n: map[Op]int64{}}
}

// Unwrap returns the wrapped FS.
func (f *FS) Unwrap() fsbackend.FS { return f.fs }

// Calls returns how many calls of op went through the wrapper, failed or
// not.
func (f *FS) Calls(op Op) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n[op]
}

// decide counts c, consults the injector and waits out any latency. It
// returns the write shaping (nil if none) and the error that fails the
// call (nil to let it run).
func (f *FS) decide(ctx context.Context, c Call) (*fault, error) {
	f.mu.Lock()
	f.n[c.Op]++
	f.mu.Unlock()
	err := f.inj.MaybeError(c)
	if err == nil {
		return nil, nil
	}
	var ft *fault
	if !errors.As(err, &ft) {
		return nil, err
	}
	if ft.delay > 0 {
		t := time.NewTimer(ft.delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("stowage/errorfs: %s %s: %w", c.Op, c.Name, ctx.Err())
		}
	}
	if ft.err != nil && ft.short < 0 {
		return nil, ft.err
	}
	return ft, nil
}

// check is decide for calls that are not writes: shaping does not apply.
func (f *FS) check(ctx context.Context, c Call) error {
	ft, err := f.decide(ctx, c)
	if err == nil && ft != nil && ft.err != nil {
		err = ft.err // a short write's error, on a call that is not a write
	}
	return err
}

// Create implements fsbackend.FS.
func (f *FS) Create(ctx context.Context, name string) (fsbackend.Writer, error) {
	if err := f.check(ctx, Call{Op: OpCreate, Name: name}); err != nil {
		return nil, err
	}
	w, err := f.fs.Create(ctx, name)
	if err != nil {
		return nil, err
	}
	ew := &writer{w: w, fs: f, name: name, ctx: ctx}
	if t, ok := w.(fsbackend.Truncater); ok {
		return &truncWriter{writer: ew, t: t}, nil
	}
	return ew, nil
}

// Open implements fsbackend.FS.
func (f *FS) Open(ctx context.Context, name string) (fsbackend.Reader, error) {
	if err := f.check(ctx, Call{Op: OpOpen, Name: name}); err != nil {
		return nil, err
	}
	r, err := f.fs.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return &reader{Reader: r, fs: f, name: name, ctx: ctx}, nil
}

// List implements fsbackend.FS.
func (f *FS) List(ctx context.Context, dir string) ([]fsbackend.FileInfo, error) {
	if err := f.check(ctx, Call{Op: OpList, Name: dir}); err != nil {
		return nil, err
	}
	return f.fs.List(ctx, dir)
}

// Stat implements fsbackend.FS.
func (f *FS) Stat(ctx context.Context, name string) (fsbackend.FileInfo, error) {
	if err := f.check(ctx, Call{Op: OpStat, Name: name}); err != nil {
		return fsbackend.FileInfo{}, err
	}
	return f.fs.Stat(ctx, name)
}

// Remove implements fsbackend.FS.
func (f *FS) Remove(ctx context.Context, name string) error {
	if err := f.check(ctx, Call{Op: OpRemove, Name: name}); err != nil {
		return err
	}
	return f.fs.Remove(ctx, name)
}

// RemoveAll implements fsbackend.DirRemover: one call of the wrapped
// FS's RemoveAll where it has one, else a List and a Remove a file
// through this wrapper (each counted and subject to faults).
func (f *FS) RemoveAll(ctx context.Context, dir string) error {
	d, ok := f.fs.(fsbackend.DirRemover)
	if !ok {
		return fsbackend.RemoveEach(ctx, f, dir)
	}
	if err := f.check(ctx, Call{Op: OpRemoveAll, Name: dir}); err != nil {
		return err
	}
	return d.RemoveAll(ctx, dir)
}

// RenameDir implements fsbackend.DirRenamer: one call of the wrapped FS's
// RenameDir, or ErrUnsupported where it has none.
func (f *FS) RenameDir(ctx context.Context, dir, newDir string) error {
	r, ok := f.fs.(fsbackend.DirRenamer)
	if !ok {
		return fsbackend.ErrUnsupported
	}
	if err := f.check(ctx, Call{Op: OpRenameDir, Name: dir, NewName: newDir}); err != nil {
		return err
	}
	return r.RenameDir(ctx, dir, newDir)
}

// Rename implements fsbackend.FS.
func (f *FS) Rename(ctx context.Context, oldName, newName string) error {
	if err := f.check(ctx, Call{Op: OpRename, Name: oldName, NewName: newName}); err != nil {
		return err
	}
	return f.fs.Rename(ctx, oldName, newName)
}

var _ fsbackend.DirRemover = (*FS)(nil)

// Capabilities implements fsbackend.FS.
func (f *FS) Capabilities() fsbackend.Capabilities { return f.fs.Capabilities() }

// Close implements fsbackend.FS; it closes the wrapped FS.
func (f *FS) Close() error { return f.fs.Close() }

// writer is not safe for concurrent use, like every Writer.
type writer struct {
	w    fsbackend.Writer
	fs   *FS
	name string
	ctx  context.Context
	off  int64 // bytes accepted from the caller, torn or not
}

func (w *writer) Write(p []byte) (int, error) {
	ft, err := w.fs.decide(w.ctx, Call{Op: OpWrite, Name: w.name, Offset: w.off, Len: len(p)})
	if err != nil {
		return 0, err
	}
	if ft == nil {
		n, err := w.w.Write(p)
		w.off += int64(n)
		return n, err
	}
	keep := len(p)
	if ft.short >= 0 {
		keep = min(ft.short, keep)
	}
	if ft.tearAt >= 0 {
		keep = int(min(int64(keep), max(0, ft.tearAt-w.off)))
	}
	if keep > 0 {
		if n, err := w.w.Write(p[:keep]); err != nil {
			w.off += int64(n)
			return n, err
		}
	}
	if ft.short >= 0 {
		n := min(ft.short, len(p))
		w.off += int64(n)
		err := ft.err
		if err == nil {
			err = fmt.Errorf("%w: short write of %s", ErrInjected, w.name)
		}
		return n, fmt.Errorf("%w (%d of %d bytes)", err, n, len(p))
	}
	w.off += int64(len(p))
	return len(p), nil
}

func (w *writer) Sync() error {
	if err := w.fs.check(w.ctx, Call{Op: OpSync, Name: w.name, Offset: w.off}); err != nil {
		return err
	}
	return w.w.Sync()
}

func (w *writer) Close() error {
	if err := w.fs.check(w.ctx, Call{Op: OpClose, Name: w.name, Offset: w.off}); err != nil {
		_ = w.w.Abort()
		return err
	}
	return w.w.Close()
}

func (w *writer) Abort() error { return w.w.Abort() }

// truncWriter is a writer whose wrapped writer can truncate.
type truncWriter struct {
	*writer
	t fsbackend.Truncater
}

// Truncate implements fsbackend.Truncater.
func (w *truncWriter) Truncate(size int64) error {
	if err := w.fs.check(w.ctx, Call{Op: OpTruncate, Name: w.name, Offset: size}); err != nil {
		return err
	}
	if err := w.t.Truncate(size); err != nil {
		return err
	}
	w.off = size
	return nil
}

type reader struct {
	fsbackend.Reader
	fs   *FS
	name string
	ctx  context.Context
}

func (r *reader) ReadAt(p []byte, off int64) (int, error) {
	if err := r.fs.check(r.ctx, Call{Op: OpReadAt, Name: r.name, Offset: off, Len: len(p)}); err != nil {
		return 0, err
	}
	return r.Reader.ReadAt(p, off)
}

var (
	_ fsbackend.FS        = (*FS)(nil)
	_ fsbackend.Truncater = (*truncWriter)(nil)
)
