package dmap

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// An operation whose context has no deadline is bounded by OpTimeout.
// context.WithTimeout would arm a runtime timer for every operation (and
// allocate it, its context and two functions); an opCtx is bounded by
// the engine's deadline sweep instead, one timer for every operation in
// flight. To its caller the bound means what WithTimeout's did: Err is
// context.DeadlineExceeded from the deadline on (checked when asked),
// and Done is closed within opSweepEvery after it.

// opSweepEvery is how often the engine looks for operations past their
// deadline while any is in flight.
const opSweepEvery = 10 * time.Millisecond

// opCtx is the context of one operation: its parent's, ended by the
// parent, by cancel (the operation returned) or by the deadline sweep.
type opCtx struct {
	parent   context.Context
	deadline time.Time
	own      bool        // the deadline is this context's own, enforced by the sweep
	ended    atomic.Bool // err is set: the sweep drops it, Err takes no lock before

	mu    sync.Mutex
	done  chan struct{} // made when first asked for
	err   error
	after []*opAfter
	// stopParent stops the function that ends this context with its
	// parent; nil when the parent cannot end.
	stopParent func() bool
}

// opAfter is a function to call once an opCtx ends.
type opAfter struct {
	f    func()
	gone bool // called, or stopped
}

var _ context.Context = (*opCtx)(nil)

// bound returns ctx bounded by the engine's OpTimeout unless it has a
// deadline of its own; the caller calls its cancel once the operation
// returned.
func (e *Engine) bound(ctx context.Context) *opCtx {
	c := &opCtx{parent: ctx}
	if dl, ok := ctx.Deadline(); ok {
		c.deadline = dl
	} else if e.cfg.OpTimeout > 0 {
		c.deadline, c.own = time.Now().Add(e.cfg.OpTimeout), true
	}
	if ctx.Done() != nil {
		if err := ctx.Err(); err != nil {
			c.end(err)
			return c
		}
		c.stopParent = context.AfterFunc(ctx, func() { c.end(ctx.Err()) })
	}
	if c.own {
		e.deadlines.add(c)
	}
	return c
}

func (c *opCtx) Deadline() (time.Time, bool) { return c.deadline, !c.deadline.IsZero() }

func (c *opCtx) Done() <-chan struct{} {
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

// Err is the parent's error once it ended, DeadlineExceeded from the
// deadline on, Canceled once the operation returned.
func (c *opCtx) Err() error {
	if c.ended.Load() {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.err
	}
	if c.stopParent != nil {
		if err := c.parent.Err(); err != nil {
			c.end(err)
			return c.Err()
		}
	}
	if c.own && !time.Now().Before(c.deadline) {
		c.end(context.DeadlineExceeded)
		return c.Err()
	}
	return nil
}

func (c *opCtx) Value(key any) any { return c.parent.Value(key) }

// AfterFunc calls f once the context ends, on the goroutine that ends it
// (f must not block: context.AfterFunc, WithCancel and the like, which
// use it, pass a function that only cancels), or at once on a goroutine
// of its own if it has ended; stop keeps f from being called and reports
// whether it did.
func (c *opCtx) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	a := &opAfter{f: f}
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

// cancel ends the context: the operation returned.
func (c *opCtx) cancel() {
	c.end(context.Canceled)
	if c.stopParent != nil {
		c.stopParent()
	}
}

// end ends the context with err, if it has not ended.
func (c *opCtx) end(err error) {
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

// closedChan is a closed channel: a wait on it ends at once.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// opDeadlines ends the operations past their deadline: a sweep every
// opSweepEvery while any is in flight.
type opDeadlines struct {
	mu    sync.Mutex
	live  []*opCtx
	timer *time.Timer
	armed bool
}

func newOpDeadlines() *opDeadlines {
	d := &opDeadlines{}
	d.timer = time.AfterFunc(time.Hour, d.sweep)
	d.timer.Stop()
	return d
}

// add has c's deadline enforced.
func (d *opDeadlines) add(c *opCtx) {
	d.mu.Lock()
	d.live = append(d.live, c)
	if !d.armed {
		d.armed = true
		d.timer.Reset(opSweepEvery)
	}
	d.mu.Unlock()
}

// sweep ends the contexts past their deadline, forgets those that ended,
// and arms the next sweep while any is left.
func (d *opDeadlines) sweep() {
	now := time.Now()
	var expired []*opCtx
	d.mu.Lock()
	keep := d.live[:0]
	for _, c := range d.live {
		switch {
		case c.ended.Load():
		case !now.Before(c.deadline):
			expired = append(expired, c)
		default:
			keep = append(keep, c)
		}
	}
	clear(d.live[len(keep):])
	d.live = keep
	d.armed = len(keep) > 0
	if d.armed {
		d.timer.Reset(opSweepEvery)
	}
	d.mu.Unlock()
	for _, c := range expired {
		c.end(context.DeadlineExceeded)
	}
}

// inFlight is how many contexts the sweep watches.
func (d *opDeadlines) inFlight() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.live)
}
