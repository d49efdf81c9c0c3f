package checkpoint

import (
	"context"
	"fmt"
	"sync"
)

// Pending is the result of an asynchronous store. It is safe for
// concurrent use; every Pending is completed exactly once, by success or
// by an error, so no store is ever lost without a report.
type Pending struct {
	done chan struct{}
	once sync.Once
	name string
	err  error
}

// NewPending returns a Pending that is not yet complete, for Storage
// implementations outside this package; they call Complete once the store
// has finished.
func NewPending() *Pending { return &Pending{done: make(chan struct{})} }

func failed(err error) *Pending {
	p := NewPending()
	p.Complete("", err)
	return p
}

// Complete records the outcome of the store (the stored name, or err) and
// wakes every waiter. Only the first call has an effect.
func (p *Pending) Complete(name string, err error) {
	p.once.Do(func() {
		p.name, p.err = name, err
		close(p.done)
	})
}

// Done is closed when the store has finished, successfully or not.
func (p *Pending) Done() <-chan struct{} { return p.done }

// Wait waits until the store has finished or ctx is done, and returns the
// stored file name or the store's error. A ctx that ends first gives
// ctx.Err() and leaves the store running.
func (p *Pending) Wait(ctx context.Context) (string, error) {
	select {
	case <-p.done:
		return p.name, p.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Err returns the store's error once Done is closed; before, it returns nil.
func (p *Pending) Err() error {
	select {
	case <-p.done:
		return p.err
	default:
		return nil
	}
}

type task struct {
	ctx context.Context
	st  PipelineState
	p   *Pending
}

// AsyncStoreCheckpoint implements Storage. The state is checked at once
// (a bad job id fails the Pending immediately), then queued. When the
// queue is full the call blocks until there is space, ctx is done (the
// Pending fails with ctx.Err()) or the storage is closed (ErrClosed); it
// never drops a store. The store itself runs under ctx, so cancelling ctx
// also cancels a queued store.
func (s *FileStorage) AsyncStoreCheckpoint(ctx context.Context, st PipelineState) *Pending {
	if err := s.check(st.JobID); err != nil {
		return failed(err)
	}
	if err := validIDs(st.PipelineID, st.CheckpointID); err != nil {
		return failed(err)
	}
	s.mu.RLock()
	if s.closed.Load() {
		s.mu.RUnlock()
		return failed(ErrClosed)
	}
	s.senders.Add(1)
	s.mu.RUnlock()
	defer s.senders.Done()

	t := &task{ctx: ctx, st: st, p: NewPending()}
	select {
	case s.queue <- t:
		return t.p
	case <-ctx.Done():
		return failed(ctx.Err())
	case <-s.closing:
		return failed(ErrClosed)
	}
}

func (s *FileStorage) worker() {
	defer s.workers.Done()
	for t := range s.queue {
		if err := t.ctx.Err(); err != nil {
			t.p.Complete("", err)
			continue
		}
		t.p.Complete(s.store(t.ctx, t.st))
	}
}

// Close implements Storage. Submitters still blocked on a full queue get
// ErrClosed; every store already queued is completed (and reported through
// its Pending) before Close returns, and all worker goroutines have ended.
// Close closes the FS only if the storage opened it (factories do). Calls
// after Close fail with ErrClosed; Close itself may be called again.
func (s *FileStorage) Close() error {
	var err error
	s.once.Do(func() {
		s.mu.Lock()
		s.closed.Store(true)
		close(s.closing)
		s.mu.Unlock()
		s.senders.Wait()
		close(s.queue)
		s.workers.Wait()
		s.stopReaper()
		if s.owned != nil {
			err = s.owned.Close()
		}
	})
	if err != nil {
		return fmt.Errorf("stowage/checkpoint: close storage: %w", err)
	}
	return nil
}
