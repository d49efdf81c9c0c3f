package checkpoint

import (
	"context"
	"sync"
)

// nameLocks serialises the work done under one name within a FileStorage:
// a job's stores and deletes, so that one store's reading and then
// changing of the job's latest directory, or its exists check and rename
// (or the removal of a damaged file and the new write), cannot interleave
// with another's. A name is held while it is in the map; its channel is
// closed when the holder unlocks, and waiters then try again. Safe for
// concurrent use; the zero value is ready.
type nameLocks struct {
	mu sync.Mutex
	m  map[string]chan struct{}
}

// lock takes the lock of name, waiting at most until ctx is done. On a nil
// error the caller must call unlock once.
func (l *nameLocks) lock(ctx context.Context, name string) (unlock func(), err error) {
	for {
		l.mu.Lock()
		released, held := l.m[name]
		if !held {
			if l.m == nil {
				l.m = map[string]chan struct{}{}
			}
			released = make(chan struct{})
			l.m[name] = released
			l.mu.Unlock()
			return func() {
				l.mu.Lock()
				delete(l.m, name)
				l.mu.Unlock()
				close(released)
			}, nil
		}
		l.mu.Unlock()
		select {
		case <-released:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
