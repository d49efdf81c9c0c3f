package cluster

import (
	"context"
	"time"

	"github.com/stowage/stowage/internal/endctx"
)

// servedCtx is the context of a handler served on a pipe. It ends when
// the caller gives up (a cancel frame, the pipe or the transport
// closing), when the handler returns, or, by the pipe's sweep, once the
// caller's deadline passed: it needs no timer of its own. Contexts made
// from it end with it, through its AfterFunc, without a goroutine.
type servedCtx struct {
	deadline time.Time // zero: none
	endctx.Ending
}

var _ context.Context = (*servedCtx)(nil)

// init sets the deadline of a served context made in place.
func (c *servedCtx) init(deadlineUnixNano int64) {
	if deadlineUnixNano != 0 {
		c.deadline = timeFromNanos(deadlineUnixNano)
	}
}

func (c *servedCtx) Deadline() (time.Time, bool) { return c.deadline, !c.deadline.IsZero() }

func (c *servedCtx) Err() error { return c.Cause() }

// Value: the transport's context, which a served call's context stood
// under, carries no values.
func (c *servedCtx) Value(any) any { return nil }

// end ends the context with err, if it has not ended.
func (c *servedCtx) end(err error) { c.End(err) }

// expired reports whether the context's deadline passed at now.
func (c *servedCtx) expired(now time.Time) bool {
	return !c.deadline.IsZero() && !now.Before(c.deadline)
}
