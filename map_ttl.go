package stowage

import (
	"context"
	"time"
)

// PutWithTTL sets k to v with a time to live of its own: ttl > 0 makes
// the entry expire ttl after the partition's owner applied the write, 0
// makes it never expire, and a negative ttl applies the map's
// time-to-live-seconds as Put does. The deadline is stored with the
// entry: it is replicated to the backups and written to the map store,
// so an entry that expired while the cluster was down is not loaded
// back. An expired entry is absent to every read at once and removed
// from memory, the backups and the store by the owner soon after (see
// Options.ExpiryInterval).
func (m *Map[K, V]) PutWithTTL(ctx context.Context, k K, v V, ttl time.Duration) error {
	b, err := m.value(v)
	if err != nil {
		return err
	}
	_, _, err = m.run(ctx, k, func(ctx context.Context, key []byte) ([]byte, bool, error) {
		return m.m.PutWithTTL(ctx, key, b, ttl)
	})
	return err
}

// SetTTL gives k's entry a new time to live counted from now (0: never
// expires), keeping its value. It reports whether k had an entry; an
// expired entry has none. It is a write like Put: versioned, durable and
// replicated before it returns.
func (m *Map[K, V]) SetTTL(ctx context.Context, k K, ttl time.Duration) (bool, error) {
	kb, err := m.key(k)
	if err != nil {
		return false, err
	}
	return m.m.SetTTL(ctx, kb, ttl)
}

// HistoryJobTTL is the time to live the engine gives finished jobs'
// entries (their state, metrics and DAG info) so that the history maps
// stay bounded: seatunnel.engine.history-job-expire-minutes (default 1440,
// one day). stowage does not know which maps hold job history; the
// engine, when a job finishes, writes its entries with
// Map.PutWithTTL(ctx, k, v, node.HistoryJobTTL()).
func (n *Node) HistoryJobTTL() time.Duration {
	return time.Duration(n.cfg.Engine.HistoryJobExpireMinutes) * time.Minute
}
