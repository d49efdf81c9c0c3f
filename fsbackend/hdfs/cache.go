package hdfs

import (
	"sync"

	gohdfs "github.com/colinmarc/hdfs/v2"
	lru "github.com/hashicorp/golang-lru/v2"
)

// cacheSize is how many distinct shared clients the cache tracks; an
// evicted client stays usable by those holding it and is closed when the
// last of them lets go.
const cacheSize = 64

// client is one Go HDFS client with its reference count. refs, broken and
// evicted are guarded by clientCache.mu.
type client struct {
	key     string
	c       *gohdfs.Client
	logout  func() // ends the Kerberos login (its TGT renewal goroutine); nil without Kerberos
	refs    int
	broken  bool // a connection error was seen: do not hand out again
	evicted bool // no longer in the LRU (or never was: private)
	closed  bool
}

// clientCache shares clients by key with reference counting. It is safe
// for concurrent use.
type clientCache struct {
	mu  sync.Mutex
	lru *lru.Cache[string, *client]
}

func newClientCache(size int) *clientCache {
	cc := &clientCache{}
	l, err := lru.NewWithEvict(size, func(_ string, e *client) {
		// Called with cc.mu held (from Add or Remove below).
		e.evicted = true
		cc.closeIfUnusedLocked(e)
	})
	if err != nil {
		panic(err) // only for size <= 0
	}
	cc.lru = l
	return cc
}

var sharedClients = newClientCache(cacheSize)

// acquire returns a client for key with one reference taken, sharing an
// existing healthy one unless private is set. build runs without the lock
// held, so a slow NameNode does not stall other keys. build also returns
// what to call after the client is closed (nil: nothing).
func (cc *clientCache) acquire(key string, private bool, build func() (*gohdfs.Client, func(), error)) (*client, error) {
	if !private {
		cc.mu.Lock()
		if e, ok := cc.lru.Get(key); ok && !e.broken {
			e.refs++
			cc.mu.Unlock()
			return e, nil
		}
		cc.mu.Unlock()
	}
	c, logout, err := build()
	if err != nil {
		return nil, err
	}
	e := &client{key: key, c: c, logout: logout, refs: 1}
	if private {
		e.evicted = true
		return e, nil
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if old, ok := cc.lru.Get(key); ok && !old.broken {
		// Another caller built one meanwhile: use theirs.
		old.refs++
		e.refs = 0
		e.evicted = true
		cc.closeIfUnusedLocked(e)
		return old, nil
	}
	cc.lru.Add(key, e) // evicts (and marks) a broken old entry, if any
	return e, nil
}

// ref takes one more reference on e (for an open file).
func (cc *clientCache) ref(e *client) {
	cc.mu.Lock()
	e.refs++
	cc.mu.Unlock()
}

// release drops one reference; the client is closed when none are left.
func (cc *clientCache) release(e *client) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	e.refs--
	if e.refs <= 0 && !e.evicted {
		// Nobody uses it: close it now so no goroutine outlives the last
		// Close, and forget it.
		if cur, ok := cc.lru.Peek(e.key); ok && cur == e {
			cc.lru.Remove(e.key) // runs the eviction callback, which closes
			return
		}
		e.evicted = true
	}
	cc.closeIfUnusedLocked(e)
}

// markBroken keeps e from being handed out again; its holders switch to a
// new client on their next call.
func (cc *clientCache) markBroken(e *client) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if e.broken {
		return
	}
	e.broken = true
	if cur, ok := cc.lru.Peek(e.key); ok && cur == e {
		cc.lru.Remove(e.key)
	}
}

func (cc *clientCache) isBroken(e *client) bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return e.broken
}

func (cc *clientCache) closeIfUnusedLocked(e *client) {
	if e.refs <= 0 && e.evicted && !e.closed {
		e.closed = true
		_ = e.c.Close()
		if e.logout != nil {
			e.logout()
		}
	}
}

// size is the number of clients in the cache (for tests).
func (cc *clientCache) size() int {
	return cc.lru.Len()
}
