package dmap

import (
	"context"
	"sync"
	"time"

	"github.com/stowage/stowage/internal/endctx"
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
	own      bool // the deadline is this context's own, enforced by the sweep
	endctx.Ending
	// stopParent stops the function that ends this context with its
	// parent; nil when the parent cannot end.
	stopParent func() bool
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

// Err is the parent's error once it ended, DeadlineExceeded from the
// deadline on, Canceled once the operation returned.
func (c *opCtx) Err() error {
	if c.Ended() {
		return c.Cause()
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

// cancel ends the context: the operation returned.
func (c *opCtx) cancel() {
	c.end(context.Canceled)
	if c.stopParent != nil {
		c.stopParent()
	}
}

// end ends the context with err, if it has not ended.
func (c *opCtx) end(err error) { c.End(err) }

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
		case c.Ended():
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
