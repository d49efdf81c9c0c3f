package cluster

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// servedCtx is the context of a handler served on a pipe. It ends when
// the caller gives up (a cancel frame, the pipe or the transport
// closing), when the handler returns, or, by the pipe's sweep, once the
// caller's deadline passed: it needs no timer of its own. Contexts made
// from it end with it, through its AfterFunc, without a goroutine.
type servedCtx struct {
	deadline time.Time   // zero: none
	ended    atomic.Bool // err is set: Err takes no lock before

	mu    sync.Mutex
	done  chan struct{} // made when first asked for
	err   error
	after []*servedAfter
}

// servedAfter is a function to call once the context ends.
type servedAfter struct {
	f    func()
	gone bool // called, or stopped
}

var _ context.Context = (*servedCtx)(nil)

// init sets the deadline of a served context made in place.
func (c *servedCtx) init(deadlineUnixNano int64) {
	if deadlineUnixNano != 0 {
		c.deadline = timeFromNanos(deadlineUnixNano)
	}
}

func (c *servedCtx) Deadline() (time.Time, bool) { return c.deadline, !c.deadline.IsZero() }

func (c *servedCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		if c.err != nil {
			return closedChan
		}
		c.done = make(chan struct{})
	}
	return c.done
}

func (c *servedCtx) Err() error {
	if !c.ended.Load() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Value: the transport's context, which a served call's context stood
// under, carries no values.
func (c *servedCtx) Value(any) any { return nil }

// AfterFunc calls f once the context ends, on the goroutine that ends
// it (f must not block: context.AfterFunc, WithCancel and the like, which
// use it, pass a function that only cancels), or at once on a goroutine
// of its own if it has ended; stop keeps f from being called and reports
// whether it did.
func (c *servedCtx) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	a := &servedAfter{f: f}
	c.after = append(c.after, a)
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if a.gone {
			return false
		}
		a.gone = true
		for i, x := range c.after {
			if x == a {
				c.after = append(c.after[:i], c.after[i+1:]...)
				break
			}
		}
		return true
	}
}

// end ends the context with err, if it has not ended.
func (c *servedCtx) end(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	c.ended.Store(true)
	if c.done != nil {
		close(c.done)
	}
	after := c.after
	c.after = nil
	for _, a := range after {
		a.gone = true
	}
	c.mu.Unlock()
	for _, a := range after {
		a.f()
	}
}

// expired reports whether the context's deadline passed at now.
func (c *servedCtx) expired(now time.Time) bool {
	return !c.deadline.IsZero() && !now.Before(c.deadline)
}
