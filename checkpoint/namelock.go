package checkpoint

import (
	"context"
	"sync"
)

// nameLocks serialises the stores of one file name within a FileStorage,
// so that the exists check and the rename of one store cannot interleave
// with another's. Locks are made on first use and dropped once nobody
// holds or waits for them. Safe for concurrent use; the zero value is
// ready.
type nameLocks struct {
	mu sync.Mutex
	m  map[string]*nameLock
}

type nameLock struct {
	held chan struct{} // capacity 1: full while held
	refs int           // holders and waiters, guarded by nameLocks.mu
}

// lock takes the lock of name, waiting at most until ctx is done. On a nil
// error the caller must call unlock once.
func (l *nameLocks) lock(ctx context.Context, name string) (unlock func(), err error) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*nameLock{}
	}
	nl := l.m[name]
	if nl == nil {
		nl = &nameLock{held: make(chan struct{}, 1)}
		l.m[name] = nl
	}
	nl.refs++
	l.mu.Unlock()
	select {
	case nl.held <- struct{}{}:
	case <-ctx.Done():
		l.release(name, nl)
		return nil, ctx.Err()
	}
	return func() {
		<-nl.held
		l.release(name, nl)
	}, nil
}

func (l *nameLocks) release(name string, nl *nameLock) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if nl.refs--; nl.refs == 0 {
		delete(l.m, name)
	}
}
