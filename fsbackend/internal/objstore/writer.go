package objstore

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/stowage/stowage/fsbackend"
)

// writer is the fsbackend.Writer of FS.Create. It keeps the object in
// memory and Close makes the one PutIfAbsent: on an object store one PUT
// is the only durable and atomic write, so the object becomes visible
// whole or not at all. Close runs under the context given to Create, so
// the caller's deadline covers the whole write; Abort's clean-up runs
// without that context's cancellation (bounded by the retry deadline). It
// is not safe for concurrent use, as fsbackend.Writer says; the mutex
// only keeps a misuse from racing.
type writer struct {
	f       *FS
	ctx     context.Context
	key     string
	created time.Time

	mu      sync.Mutex
	buf     bytes.Buffer
	closed  bool
	putErr  error // of the PUT made by Close, when it failed
	refused bool  // that PUT met another writer's object: Abort leaves it
}

// Write appends p to the buffered object, refusing to grow it past
// Config.MaxObjectSize.
func (w *writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, fsbackend.ErrClosed
	}
	if limit := w.f.c.MaxObjectSize; limit > 0 && int64(w.buf.Len())+int64(len(p)) > limit {
		return 0, fmt.Errorf("%s: %w", w.f.c.Pkg, &fs.PathError{Op: "write", Path: w.f.url(w.key),
			Err: fmt.Errorf("object larger than %d bytes, the most one upload stores", limit)})
	}
	return w.buf.Write(p)
}

// Sync returns fsbackend.ErrUnsupported: nothing is durable before Close.
func (w *writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fsbackend.ErrClosed
	}
	return fsbackend.ErrUnsupported
}

// Close PUTs the buffered object. When it returns nil the object is
// durable and visible. A second Close returns fsbackend.ErrClosed.
func (w *writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fsbackend.ErrClosed
	}
	w.closed = true
	ctx := w.ctx
	if w.f.c.DeadlineFromCreate && w.f.c.Retry.Deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, w.created.Add(w.f.c.Retry.Deadline))
		defer cancel()
	}
	if w.putErr = w.f.put(ctx, w.key, w.buf.Bytes()); w.putErr != nil {
		w.refused = w.f.d.Classify(w.putErr) == Taken
		return w.f.fail("create", w.key, w.putErr)
	}
	w.buf = bytes.Buffer{}
	return nil
}

// Abort drops the buffer. After a Close that failed, the PUT may have
// stored the object all the same (its answer was lost): Abort removes it
// if it holds exactly these bytes, never after the PUT was refused. Abort
// after a successful Close does nothing: the object is finished.
func (w *writer) Abort() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	var err error
	if w.putErr != nil && !w.refused {
		err = w.f.removeIfOurs(context.WithoutCancel(w.ctx), w.key, w.buf.Bytes())
	}
	w.buf = bytes.Buffer{}
	return err
}
