package stowage

import (
	"context"
	"sync"
	"time"
)

// liveBytesTTL is how long a map's live bytes are reused: a status page
// polling every second or two then scans the entries once per TTL.
const liveBytesTTL = 5 * time.Second

// liveCache keeps each map's last live-bytes count, by map name.
type liveCache struct {
	mu sync.Mutex
	m  map[string]liveCount
}

type liveCount struct {
	bytes int64
	at    time.Time
}

// MapLiveBytes returns the bytes of the named map's keys and values
// (serialized) over every owner: what a store would keep with no dead
// record. A count is reused for a few seconds (liveBytesTTL); at says
// when it was taken.
func (n *Node) MapLiveBytes(ctx context.Context, name string) (bytes int64, at time.Time, err error) {
	n.live.mu.Lock()
	c, ok := n.live.m[name]
	n.live.mu.Unlock()
	if ok && time.Since(c.at) < liveBytesTTL {
		return c.bytes, c.at, nil
	}
	m, err := n.e.Lookup(name)
	if err != nil {
		return 0, time.Time{}, err
	}
	_, b, err := m.SizeBytes(ctx)
	if err != nil {
		return 0, time.Time{}, err
	}
	c = liveCount{bytes: b, at: time.Now()}
	n.live.mu.Lock()
	if n.live.m == nil {
		n.live.m = map[string]liveCount{}
	}
	n.live.m[name] = c
	n.live.mu.Unlock()
	return c.bytes, c.at, nil
}
