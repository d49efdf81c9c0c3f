package dmap

import (
	"context"
	"fmt"
	"time"
)

// PutWithTTL sets key to val with its own time to live: ttl > 0 expires
// the entry ttl after the owner applied the write, 0 never expires it,
// and a negative ttl applies the map's (as Put does). It returns the
// previous value, if any.
func (m *Map) PutWithTTL(ctx context.Context, key, val []byte, ttl time.Duration) (old []byte, had bool, err error) {
	o := &op{kind: opPut, val: val}
	if ttl >= 0 {
		o.ttl, o.ttlSet = ttl, true
	}
	return m.write(ctx, key, o)
}

// SetTTL gives key's live entry a new time to live from now on the owner
// (0: never expires), keeping its value; it is a write, versioned and
// replicated like a put. It reports whether key had a live entry.
func (m *Map) SetTTL(ctx context.Context, key []byte, ttl time.Duration) (bool, error) {
	if ttl < 0 {
		return false, fmt.Errorf("stowage: map %q: negative time to live %v", m.name, ttl)
	}
	_, had, err := m.write(ctx, key, &op{kind: opSetTTL, ttl: ttl, ttlSet: true})
	return had, err
}
