package errorfs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stowage/stowage/fsbackend"
)

// ErrInjected is the error of every injected failure.
var ErrInjected = errors.New("stowage/errorfs: injected fault")

// Op names an operation.
type Op string

// The operations an injector sees.
const (
	OpCreate Op = "create"
	OpWrite  Op = "write"
	OpSync   Op = "sync"
	OpClose  Op = "close"
	OpOpen   Op = "open"
	OpReadAt Op = "readat"
	OpList   Op = "list"
	OpStat   Op = "stat"
	OpRemove Op = "remove"
	OpRename Op = "rename"
)

// Call describes one operation about to run.
type Call struct {
	Op   Op
	Name string
}

// Injector decides, for each call, whether it fails. It is called
// concurrently.
type Injector interface {
	MaybeError(c Call) error
}

// InjectorFunc adapts a function.
type InjectorFunc func(c Call) error

// MaybeError implements Injector.
func (f InjectorFunc) MaybeError(c Call) error { return f(c) }

// OnIndex fails the n-th (0-based) call of op, once.
func OnIndex(op Op, n int64) Injector {
	var count atomic.Int64
	return InjectorFunc(func(c Call) error {
		if c.Op == op && count.Add(1)-1 == n {
			return fmt.Errorf("%w: %s %s (call %d)", ErrInjected, c.Op, c.Name, n)
		}
		return nil
	})
}

// After fails every call of op from the n-th (0-based) on.
func After(op Op, n int64) Injector {
	var count atomic.Int64
	return InjectorFunc(func(c Call) error {
		if c.Op == op && count.Add(1)-1 >= n {
			return fmt.Errorf("%w: %s %s", ErrInjected, c.Op, c.Name)
		}
		return nil
	})
}

// OnPrefix applies inj only to calls on names with prefix.
func OnPrefix(prefix string, inj Injector) Injector {
	return InjectorFunc(func(c Call) error {
		if strings.HasPrefix(c.Name, prefix) {
			return inj.MaybeError(c)
		}
		return nil
	})
}

// Any fails a call if any injector does.
func Any(injs ...Injector) Injector {
	return InjectorFunc(func(c Call) error {
		for _, i := range injs {
			if err := i.MaybeError(c); err != nil {
				return err
			}
		}
		return nil
	})
}

// Switch is an injector that can be armed and disarmed at run time.
type Switch struct {
	on  atomic.Bool
	inj Injector
}

// NewSwitch returns a disarmed switch around inj.
func NewSwitch(inj Injector) *Switch { return &Switch{inj: inj} }

// Arm and Disarm turn the injector on and off.
func (s *Switch) Arm()    { s.on.Store(true) }
func (s *Switch) Disarm() { s.on.Store(false) }

// MaybeError implements Injector.
func (s *Switch) MaybeError(c Call) error {
	if s.on.Load() {
		return s.inj.MaybeError(c)
	}
	return nil
}

// Latency delays every call by d (or until the context ends, for calls
// that have one).
func Latency(d time.Duration) Injector {
	return InjectorFunc(func(Call) error { time.Sleep(d); return nil })
}

// writeFault is returned by injectors that shape writes rather than fail
// calls; Wrap's Writer interprets it.
type writeFault struct {
	short  int   // write only this many bytes, then fail
	tearAt int64 // drop bytes past this file offset, silently
}

func (w *writeFault) Error() string { return "stowage/errorfs: write fault" }

// ShortWrite makes writes to names with prefix write only k bytes and fail.
func ShortWrite(prefix string, k int) Injector {
	return InjectorFunc(func(c Call) error {
		if c.Op == OpWrite && strings.HasPrefix(c.Name, prefix) {
			return &writeFault{short: k, tearAt: -1}
		}
		return nil
	})
}

// TearAt silently drops every byte written past offset n of files whose
// names have prefix: the writer sees success, the file ends at n.
func TearAt(prefix string, n int64) Injector {
	return InjectorFunc(func(c Call) error {
		if c.Op == OpWrite && strings.HasPrefix(c.Name, prefix) {
			return &writeFault{short: -1, tearAt: n}
		}
		return nil
	})
}

// FS is a fault-injecting wrapper. It is safe for concurrent use.
type FS struct {
	fs  fsbackend.FS
	inj Injector
	mu  sync.Mutex
	n   map[Op]int64
}

// Wrap returns f with faults from inj.
func Wrap(f fsbackend.FS, inj Injector) *FS { return &FS{fs: f, inj: inj, n: map[Op]int64{}} }

// Calls returns how many calls of op went through the wrapper.
func (f *FS) Calls(op Op) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n[op]
}

func (f *FS) check(op Op, name string) error {
	f.mu.Lock()
	f.n[op]++
	f.mu.Unlock()
	err := f.inj.MaybeError(Call{Op: op, Name: name})
	var wf *writeFault
	if errors.As(err, &wf) {
		return nil // write shaping applies only to writes
	}
	return err
}

// Create implements fsbackend.FS.
func (f *FS) Create(ctx context.Context, name string) (fsbackend.Writer, error) {
	if err := f.check(OpCreate, name); err != nil {
		return nil, err
	}
	w, err := f.fs.Create(ctx, name)
	if err != nil {
		return nil, err
	}
	return &writer{w: w, fs: f, name: name}, nil
}

// Open implements fsbackend.FS.
func (f *FS) Open(ctx context.Context, name string) (fsbackend.Reader, error) {
	if err := f.check(OpOpen, name); err != nil {
		return nil, err
	}
	r, err := f.fs.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return &reader{Reader: r, fs: f, name: name}, nil
}

// List implements fsbackend.FS.
func (f *FS) List(ctx context.Context, dir string) ([]fsbackend.FileInfo, error) {
	if err := f.check(OpList, dir); err != nil {
		return nil, err
	}
	return f.fs.List(ctx, dir)
}

// Stat implements fsbackend.FS.
func (f *FS) Stat(ctx context.Context, name string) (fsbackend.FileInfo, error) {
	if err := f.check(OpStat, name); err != nil {
		return fsbackend.FileInfo{}, err
	}
	return f.fs.Stat(ctx, name)
}

// Remove implements fsbackend.FS.
func (f *FS) Remove(ctx context.Context, name string) error {
	if err := f.check(OpRemove, name); err != nil {
		return err
	}
	return f.fs.Remove(ctx, name)
}

// Rename implements fsbackend.FS.
func (f *FS) Rename(ctx context.Context, o, n string) error {
	if err := f.check(OpRename, o); err != nil {
		return err
	}
	return f.fs.Rename(ctx, o, n)
}

// Capabilities implements fsbackend.FS.
func (f *FS) Capabilities() fsbackend.Capabilities { return f.fs.Capabilities() }

// Close implements fsbackend.FS.
func (f *FS) Close() error { return f.fs.Close() }

type writer struct {
	w    fsbackend.Writer
	fs   *FS
	name string
	off  int64
}

func (w *writer) Write(p []byte) (int, error) {
	w.fs.mu.Lock()
	w.fs.n[OpWrite]++
	w.fs.mu.Unlock()
	err := w.fs.inj.MaybeError(Call{Op: OpWrite, Name: w.name})
	var wf *writeFault
	switch {
	case errors.As(err, &wf) && wf.short >= 0:
		k := min(wf.short, len(p))
		n, _ := w.w.Write(p[:k])
		w.off += int64(n)
		return n, fmt.Errorf("%w: short write of %s (%d of %d bytes)", ErrInjected, w.name, n, len(p))
	case errors.As(err, &wf):
		keep := int64(len(p))
		if w.off+keep > wf.tearAt {
			keep = max(0, wf.tearAt-w.off)
		}
		if keep > 0 {
			if _, err := w.w.Write(p[:keep]); err != nil {
				return 0, err
			}
		}
		w.off += int64(len(p))
		return len(p), nil
	case err != nil:
		return 0, err
	}
	n, err := w.w.Write(p)
	w.off += int64(n)
	return n, err
}

func (w *writer) Sync() error {
	if err := w.fs.check(OpSync, w.name); err != nil {
		return err
	}
	return w.w.Sync()
}

func (w *writer) Close() error {
	if err := w.fs.check(OpClose, w.name); err != nil {
		_ = w.w.Abort()
		return err
	}
	return w.w.Close()
}

func (w *writer) Abort() error { return w.w.Abort() }

// Truncate passes through when the wrapped writer can truncate.
func (w *writer) Truncate(size int64) error {
	t, ok := w.w.(fsbackend.Truncater)
	if !ok {
		return fsbackend.ErrUnsupported
	}
	w.off = size
	return t.Truncate(size)
}

type reader struct {
	fsbackend.Reader
	fs   *FS
	name string
}

func (r *reader) ReadAt(p []byte, off int64) (int, error) {
	if err := r.fs.check(OpReadAt, r.name); err != nil {
		return 0, err
	}
	return r.Reader.ReadAt(p, off)
}

var _ fsbackend.FS = (*FS)(nil)
