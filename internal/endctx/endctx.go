// Package endctx holds the ending half of a context.Context made in place
// without a goroutine or timer of its own: its Done channel, made only
// when asked for, its error, and the functions to call once it ends
// (context.AfterFunc, WithCancel and the like find them through
// AfterFunc, so contexts made from it end with it without a goroutine).
// A type that embeds an Ending adds Deadline, Err and Value, and decides
// when to End it.
package endctx

import (
	"sync"
	"sync/atomic"
)

// Ending is the state of a context that ends once, with an error. Its
// zero value has not ended.
type Ending struct {
	ended atomic.Bool // err is set: Ended takes no lock

	mu    sync.Mutex
	done  chan struct{} // made when first asked for
	err   error
	after []*afterFunc
}

// afterFunc is a function to call once the context ends.
type afterFunc struct {
	f    func()
	gone bool // called, or stopped
}

// closed is a closed channel: a wait on it ends at once.
var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Done returns a channel closed once the context ended.
func (e *Ending) Done() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done == nil {
		if e.err != nil {
			return closed
		}
		e.done = make(chan struct{})
	}
	return e.done
}

// Ended reports whether End was called, without a lock.
func (e *Ending) Ended() bool { return e.ended.Load() }

// Cause is the error End was called with, or nil.
func (e *Ending) Cause() error {
	if !e.ended.Load() {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// AfterFunc calls f once the context ends, on the goroutine that ends it
// (f must not block: context.AfterFunc, WithCancel and the like, which
// use it, pass a function that only cancels), or at once on a goroutine
// of its own if it has ended; stop keeps f from being called and reports
// whether it did.
func (e *Ending) AfterFunc(f func()) (stop func() bool) {
	e.mu.Lock()
	if e.err != nil {
		e.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	a := &afterFunc{f: f}
	e.after = append(e.after, a)
	e.mu.Unlock()
	return func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		if a.gone {
			return false
		}
		a.gone = true
		for i, x := range e.after {
			if x == a {
				e.after = append(e.after[:i], e.after[i+1:]...)
				break
			}
		}
		return true
	}
}

// End ends the context with err (not nil), if it has not ended: Done is
// closed and the functions given to AfterFunc are called, in order, on
// this goroutine.
func (e *Ending) End(err error) {
	e.mu.Lock()
	if e.err != nil {
		e.mu.Unlock()
		return
	}
	e.err = err
	e.ended.Store(true)
	if e.done != nil {
		close(e.done)
	}
	after := e.after
	e.after = nil
	for _, a := range after {
		a.gone = true
	}
	e.mu.Unlock()
	for _, a := range after {
		a.f()
	}
}
