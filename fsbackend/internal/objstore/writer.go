package objstore

import (
	"bytes"
	"context"
	"sync"

	"github.com/stowage/stowage/fsbackend"
)

// PutFunc stores data as one whole object and returns only once the store
// answered that it is durable. It is called at most once per Writer.
type PutFunc func(ctx context.Context, data []byte) error

// AbortFunc is called by Abort after a Close whose PUT failed, when the
// object may nevertheless exist (the answer was lost); it should remove
// the object only if it holds data. It may be nil.
type AbortFunc func(ctx context.Context, data []byte) error

// Writer is an fsbackend.Writer that keeps the object in memory and PUTs it
// on Close. It is not safe for concurrent use, as fsbackend.Writer says.
type Writer struct {
	ctx   context.Context
	put   PutFunc
	abort AbortFunc
	buf   bytes.Buffer

	mu     sync.Mutex
	closed bool
	putErr error // result of the PUT made by Close
	tried  bool  // Close attempted the PUT
}

// NewWriter returns a Writer whose Close calls put with everything
// written, under ctx: the context given to Create bounds the PUT (and its
// retries) that Close makes, so a caller's deadline covers the whole
// write. abort may be nil.
func NewWriter(ctx context.Context, put PutFunc, abort AbortFunc) *Writer {
	return &Writer{ctx: ctx, put: put, abort: abort}
}

// Write appends p to the buffered object.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, fsbackend.ErrClosed
	}
	return w.buf.Write(p)
}

// Len is the number of bytes buffered so far.
func (w *Writer) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Len()
}

// Sync returns fsbackend.ErrUnsupported: nothing is durable before Close.
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fsbackend.ErrClosed
	}
	return fsbackend.ErrUnsupported
}

// Close PUTs the buffered object. When it returns nil the object is
// durable and visible. A second Close returns fsbackend.ErrClosed.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fsbackend.ErrClosed
	}
	w.closed = true
	w.tried = true
	w.putErr = w.put(w.ctx, w.buf.Bytes())
	if w.putErr == nil {
		w.buf = bytes.Buffer{}
	}
	return w.putErr
}

// Abort drops the buffer. After a Close that failed it calls the
// AbortFunc, which removes the object if the failed PUT did store it.
// Abort after a successful Close does nothing: the object is finished.
func (w *Writer) Abort() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	var err error
	if w.tried && w.putErr != nil && w.abort != nil {
		// The PUT may have failed because ctx ended; the clean-up must
		// still run (bounded by the back end's retry deadline).
		err = w.abort(context.WithoutCancel(w.ctx), w.buf.Bytes())
	}
	w.buf = bytes.Buffer{}
	return err
}

var _ fsbackend.Writer = (*Writer)(nil)
