package stowage

import (
	"context"
	"fmt"
	"time"

	"github.com/stowage/stowage/internal/dmap"
)

// The bulk operations group their keys by partition owner and send each
// owner one call with all of its keys (split only for very large
// batches, over 10,000 keys or 32 MiB to one owner); the owner runs each
// key through the same path as a single operation, several at a time so
// that they share the map store's group commits. Each entry is
// acknowledged under the same rule as a single Put: durable in the map
// store and applied on every live sync backup. A bulk write is not
// atomic: when keys failed, the error is a *BulkError naming each of
// them; the other keys were written, and a failed key may or may not
// have been (as for a single write that failed with ErrIndeterminate).

// KeyError is the failure of one key of a bulk operation.
type KeyError[K any] struct {
	Key K
	Err error
}

// BulkError is the error of a bulk operation some of whose keys failed:
// Failed names each of them with its error; the other keys succeeded.
// (When the operation stopped early, as at its context's deadline, each
// key not done is named with that error.) errors.Is and errors.As see
// every key's error.
type BulkError[K any] struct {
	Failed []KeyError[K]
}

func (e *BulkError[K]) Error() string {
	msg := fmt.Sprintf("stowage: %d keys of a bulk operation failed", len(e.Failed))
	if len(e.Failed) > 0 {
		msg += fmt.Sprintf(", the first (%v): %v", e.Failed[0].Key, e.Failed[0].Err)
	}
	return msg
}

// Unwrap returns every key's error.
func (e *BulkError[K]) Unwrap() []error {
	out := make([]error, 0, len(e.Failed))
	for _, f := range e.Failed {
		out = append(out, f.Err)
	}
	return out
}

// bulkErr is the error of a bulk operation on keys ks (in the order of
// res) that returned err: a *BulkError when keys failed.
func bulkErr[K any](ks []K, res []dmap.BulkResult, err error) error {
	var be BulkError[K]
	for i, r := range res {
		if r.Err != nil {
			be.Failed = append(be.Failed, KeyError[K]{Key: ks[i], Err: r.Err})
		}
	}
	if len(be.Failed) == 0 {
		return err
	}
	return &be
}

// PutAll sets the key of each entry to its value, with the map's time to
// live; of entries with the same key, the last one counts.
func (m *Map[K, V]) PutAll(ctx context.Context, entries []Entry[K, V]) error {
	return m.putAll(ctx, entries, -1)
}

// PutAllWithTTL is PutAll with the time to live of PutWithTTL for every
// entry.
func (m *Map[K, V]) PutAllWithTTL(ctx context.Context, entries []Entry[K, V], ttl time.Duration) error {
	return m.putAll(ctx, entries, ttl)
}

func (m *Map[K, V]) putAll(ctx context.Context, entries []Entry[K, V], ttl time.Duration) error {
	keys := make([][]byte, 0, len(entries))
	vals := make([][]byte, 0, len(entries))
	ks := make([]K, 0, len(entries))
	at := make(map[string]int, len(entries))
	for _, e := range entries {
		kb, err := m.key(e.Key)
		if err != nil {
			return err
		}
		vb, err := m.value(e.Value)
		if err != nil {
			return err
		}
		if i, ok := at[string(kb)]; ok {
			vals[i] = vb
			continue
		}
		at[string(kb)] = len(keys)
		keys, vals, ks = append(keys, kb), append(vals, vb), append(ks, e.Key)
	}
	if len(keys) == 0 {
		return nil
	}
	res, err := m.m.PutAll(ctx, keys, vals, ttl)
	return bulkErr(ks, res, err)
}

// GetAll returns the entries of the given keys that have a value, in the
// order of keys, each key once.
func (m *Map[K, V]) GetAll(ctx context.Context, keys []K) ([]Entry[K, V], error) {
	kbs, ks, err := m.uniqueKeys(keys)
	if err != nil || len(kbs) == 0 {
		return nil, err
	}
	res, err := m.m.GetAll(ctx, kbs)
	if err != nil {
		return nil, bulkErr(ks, res, err)
	}
	out := make([]Entry[K, V], 0, len(res))
	for i, r := range res {
		if !r.Had {
			continue
		}
		v, err := m.decode(r.Val)
		if err != nil {
			return nil, err
		}
		out = append(out, Entry[K, V]{ks[i], v})
	}
	return out, nil
}

// RemoveAll deletes the given keys and returns how many had a value.
func (m *Map[K, V]) RemoveAll(ctx context.Context, keys []K) (int, error) {
	kbs, ks, err := m.uniqueKeys(keys)
	if err != nil || len(kbs) == 0 {
		return 0, err
	}
	res, err := m.m.RemoveAll(ctx, kbs)
	n := 0
	for _, r := range res {
		if r.Had && r.Err == nil {
			n++
		}
	}
	return n, bulkErr(ks, res, err)
}

// uniqueKeys encodes keys, each distinct encoding once, and returns the
// encodings with the key each stands for.
func (m *Map[K, V]) uniqueKeys(keys []K) ([][]byte, []K, error) {
	seen := make(map[string]bool, len(keys))
	kbs := make([][]byte, 0, len(keys))
	ks := make([]K, 0, len(keys))
	for _, k := range keys {
		kb, err := m.key(k)
		if err != nil {
			return nil, nil, err
		}
		if seen[string(kb)] {
			continue
		}
		seen[string(kb)] = true
		kbs, ks = append(kbs, kb), append(ks, k)
	}
	return kbs, ks, nil
}
