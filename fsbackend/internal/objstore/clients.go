package objstore

import (
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"
)

// Clients caches SDK clients, so that the FSs that would build equal
// clients (same endpoint, credentials, options) share one and its
// connections. It counts the FSs using each client: a client is closed
// when it has left the cache (evicted or purged) and its last user
// released it. It is safe for concurrent use.
type Clients[K comparable, C any] struct {
	mu    sync.Mutex
	cache *lru.Cache[K, *sharedClient[C]]
	idle  func(C)
	close func(C)
}

type sharedClient[C any] struct {
	client  C
	refs    int
	evicted bool
}

// NewClients returns a cache of at most size clients. close ends a client
// that left the cache once nobody uses it; idle, if not nil, is called
// when the last user of a client still cached releases it (to drop idle
// connections, whose goroutines would otherwise outlive every FS).
func NewClients[K comparable, C any](size int, idle, close func(C)) *Clients[K, C] {
	cs := &Clients[K, C]{idle: idle, close: close}
	// The callback runs with cs.mu held: every cache call is made under it.
	cs.cache, _ = lru.NewWithEvict[K, *sharedClient[C]](size, func(_ K, s *sharedClient[C]) {
		s.evicted = true
		if s.refs == 0 {
			cs.close(s.client)
		}
	})
	return cs
}

// Acquire returns the cached client for k, made by newClient when there
// is none, and the function that releases it, which the FS calls once it
// no longer uses the client (calls after the first do nothing).
func (cs *Clients[K, C]) Acquire(k K, newClient func() (C, error)) (C, func(), error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	s, ok := cs.cache.Get(k)
	if !ok {
		c, err := newClient()
		if err != nil {
			var zero C
			return zero, nil, err
		}
		s = &sharedClient[C]{client: c}
		cs.cache.Add(k, s)
	}
	s.refs++
	var once sync.Once
	return s.client, func() {
		once.Do(func() {
			cs.mu.Lock()
			defer cs.mu.Unlock()
			if s.refs--; s.refs > 0 {
				return
			}
			if s.evicted {
				cs.close(s.client)
			} else if cs.idle != nil {
				cs.idle(s.client)
			}
		})
	}, nil
}

// Purge empties the cache: unused clients are closed now, the others when
// their last user releases them.
func (cs *Clients[K, C]) Purge() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.cache.Purge()
}
