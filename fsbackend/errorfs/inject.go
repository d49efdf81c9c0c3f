package errorfs

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
)

// ErrInjected is the error of every injected failure.
var ErrInjected = errors.New("stowage/errorfs: injected fault")

// Op names an operation.
type Op string

// The operations an injector sees.
const (
	OpCreate   Op = "create"
	OpWrite    Op = "write"
	OpSync     Op = "sync"
	OpTruncate Op = "truncate"
	OpClose    Op = "close"
	OpOpen     Op = "open"
	OpReadAt   Op = "readat"
	OpList     Op = "list"
	OpStat     Op = "stat"
	OpRemove   Op = "remove"
	OpRename   Op = "rename"
	// OpRemoveAll is one RemoveAll of a directory on a wrapped FS that
	// has a fsbackend.DirRemover; on one without, RemoveAll is one OpList
	// and an OpRemove a file.
	OpRemoveAll Op = "removeall"
	// OpRenameDir is one RenameDir of a directory on a wrapped FS that
	// has a fsbackend.DirRenamer.
	OpRenameDir Op = "renamedir"
)

// Call describes one operation about to run.
type Call struct {
	Op Op
	// Name is the file's name; the directory for List and RemoveAll; the
	// old name for Rename.
	Name string
	// NewName is the new name of a Rename.
	NewName string
	// Offset is, for Write, how many bytes the writer has accepted before
	// this call; for ReadAt, the offset read; for Truncate, the size.
	Offset int64
	// Len is the length of the buffer of a Write or ReadAt.
	Len int
}

// Injector decides, for each call, whether it fails: a nil error lets it
// run. It is called concurrently.
type Injector interface {
	MaybeError(c Call) error
}

// InjectorFunc adapts a function. A plain error it returns fails the call
// with that error, so it should wrap ErrInjected.
type InjectorFunc func(c Call) error

// MaybeError implements Injector.
func (f InjectorFunc) MaybeError(c Call) error { return f(c) }

func injected(c Call) error {
	return fmt.Errorf("%w: %s %s", ErrInjected, c.Op, c.Name)
}

// Fail fails every call it sees with ErrInjected. Restrict it with OnOps,
// OnPrefix, Nth and the like.
func Fail() Injector { return InjectorFunc(injected) }

// Nth applies inj to the n-th (0-based) call of op only.
func Nth(op Op, n int64, inj Injector) Injector {
	var count atomic.Int64
	return InjectorFunc(func(c Call) error {
		if c.Op == op && count.Add(1)-1 == n {
			return inj.MaybeError(c)
		}
		return nil
	})
}

// FromNth applies inj to every call of op from the n-th (0-based) on.
func FromNth(op Op, n int64, inj Injector) Injector {
	var count atomic.Int64
	return InjectorFunc(func(c Call) error {
		if c.Op == op && count.Add(1)-1 >= n {
			return inj.MaybeError(c)
		}
		return nil
	})
}

// OnIndex fails the n-th (0-based) call of op, once.
func OnIndex(op Op, n int64) Injector { return Nth(op, n, Fail()) }

// After fails every call of op from the n-th (0-based) on: After(op, 0)
// fails them all.
func After(op Op, n int64) Injector { return FromNth(op, n, Fail()) }

// OnOps applies inj only to calls of the given operations.
func OnOps(inj Injector, ops ...Op) Injector {
	return InjectorFunc(func(c Call) error {
		for _, op := range ops {
			if c.Op == op {
				return inj.MaybeError(c)
			}
		}
		return nil
	})
}

// OnPrefix applies inj only to calls on names with prefix (the Name of
// the Call; for Rename, the old name).
func OnPrefix(prefix string, inj Injector) Injector {
	return OnName(func(name string) bool { return strings.HasPrefix(name, prefix) }, inj)
}

// OnName applies inj only to calls whose Name match accepts.
func OnName(match func(name string) bool, inj Injector) Injector {
	return InjectorFunc(func(c Call) error {
		if match(c.Name) {
			return inj.MaybeError(c)
		}
		return nil
	})
}

// fault is what the shaping injectors return: Wrap interprets it instead
// of failing the call with it.
type fault struct {
	delay  time.Duration
	short  int   // Write: write only this many bytes, then fail; -1: no
	tearAt int64 // Write: drop bytes past this file offset silently; -1: no
	err    error // fail the call after the delay
}

func (f *fault) Error() string {
	if f.err != nil {
		return f.err.Error()
	}
	return "stowage/errorfs: shaped call"
}

func (f *fault) Unwrap() error { return f.err }

// merge folds the outcome of one injector into f.
func (f *fault) merge(err error) {
	var g *fault
	if !errors.As(err, &g) {
		if f.err == nil {
			f.err = err
		}
		return
	}
	f.delay += g.delay
	if g.short >= 0 && (f.short < 0 || g.short < f.short) {
		f.short = g.short
	}
	if g.tearAt >= 0 && (f.tearAt < 0 || g.tearAt < f.tearAt) {
		f.tearAt = g.tearAt
	}
	if f.err == nil {
		f.err = g.err
	}
}

// Any applies every injector to each call, in order, and combines what
// they decide: delays add up, the first error wins, and of several write
// shapings the shortest short write and the earliest tear apply.
func Any(injs ...Injector) Injector {
	return InjectorFunc(func(c Call) error {
		f := &fault{short: -1, tearAt: -1}
		shaped := false
		for _, i := range injs {
			if err := i.MaybeError(c); err != nil {
				f.merge(err)
				shaped = true
			}
		}
		if !shaped {
			return nil
		}
		return f
	})
}

// ShortWrite makes every Write to a name with prefix write only its first
// k bytes and fail with ErrInjected. Use Nth(OpWrite, ...) to pick one
// write.
func ShortWrite(prefix string, k int) Injector {
	return InjectorFunc(func(c Call) error {
		if c.Op == OpWrite && strings.HasPrefix(c.Name, prefix) {
			return &fault{short: max(k, 0), tearAt: -1, err: fmt.Errorf("%w: short write of %s", ErrInjected, c.Name)}
		}
		return nil
	})
}

// TearAt silently drops every byte written past offset n of files whose
// names have prefix: the writer sees success, the file ends at n.
func TearAt(prefix string, n int64) Injector {
	return InjectorFunc(func(c Call) error {
		if c.Op == OpWrite && strings.HasPrefix(c.Name, prefix) {
			return &fault{short: -1, tearAt: max(n, 0)}
		}
		return nil
	})
}

// Latency delays every call it sees by d, or until the call's context is
// done, in which case the call fails with the context's error.
func Latency(d time.Duration) Injector {
	return InjectorFunc(func(Call) error { return &fault{delay: d, short: -1, tearAt: -1} })
}

// Switch is an injector that can be armed and disarmed at run time. It is
// safe for concurrent use; a call sees the switch as it was when the call
// consulted it.
type Switch struct {
	on  atomic.Bool
	inj Injector
}

// NewSwitch returns a disarmed switch around inj.
func NewSwitch(inj Injector) *Switch { return &Switch{inj: inj} }

// Arm turns the injector on.
func (s *Switch) Arm() { s.on.Store(true) }

// Disarm turns the injector off.
func (s *Switch) Disarm() { s.on.Store(false) }

// Armed reports whether the injector is on.
func (s *Switch) Armed() bool { return s.on.Load() }

// MaybeError implements Injector: it consults the wrapped injector only
// while armed, so counters inside it do not advance while disarmed.
func (s *Switch) MaybeError(c Call) error {
	if s.on.Load() {
		return s.inj.MaybeError(c)
	}
	return nil
}
