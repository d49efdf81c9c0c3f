package stowage

import (
	"context"
	"fmt"

	"github.com/stowage/stowage/serde"
)

// Map is a typed view of one of the node's maps: keys and values are
// encoded by their codecs, the key's encoding picks its partition. Every
// write returns only once it is durable in the map store (when the map is
// persisted); a failed write-through fails the call and leaves the map
// unchanged. Operations wait until the map is loaded. A Map is safe for
// concurrent use.
type Map[K, V any] struct {
	c  *core
	kc serde.Codec[K]
	vc serde.Codec[V]
}

// GetMap returns the named map of node n with the given codecs, creating
// it on first use (a persisted map that was found on Open is already
// loading).
func GetMap[K, V any](ctx context.Context, n *Node, name string, kc serde.Codec[K], vc serde.Codec[V]) (*Map[K, V], error) {
	c, err := n.core(ctx, name)
	if err != nil {
		return nil, err
	}
	return &Map[K, V]{c: c, kc: kc, vc: vc}, nil
}

// Name returns the map's name.
func (m *Map[K, V]) Name() string { return m.c.name }

func (m *Map[K, V]) key(k K) ([]byte, error) {
	b, err := m.kc.Encode(k)
	if err != nil {
		return nil, fmt.Errorf("stowage: map %q: encode key: %w", m.c.name, err)
	}
	return b, nil
}

func (m *Map[K, V]) decode(b []byte) (V, error) {
	v, err := m.vc.Decode(b)
	if err != nil {
		return v, fmt.Errorf("stowage: map %q: decode value: %w", m.c.name, err)
	}
	return v, nil
}

// Get returns the value of k.
func (m *Map[K, V]) Get(ctx context.Context, k K) (v V, ok bool, err error) {
	kb, err := m.key(k)
	if err != nil {
		return v, false, err
	}
	b, ok, err := m.c.get(ctx, kb)
	if err != nil || !ok {
		return v, false, err
	}
	v, err = m.decode(b)
	return v, err == nil, err
}

// ContainsKey reports whether k has a value.
func (m *Map[K, V]) ContainsKey(ctx context.Context, k K) (bool, error) {
	kb, err := m.key(k)
	if err != nil {
		return false, err
	}
	_, ok, err := m.c.get(ctx, kb)
	return ok, err
}

// compute is the one write path: fn sees the current value and decides.
func (m *Map[K, V]) compute(ctx context.Context, k K, fn func(old V, ok bool) (nv V, write, del bool, err error)) (old V, had bool, err error) {
	kb, err := m.key(k)
	if err != nil {
		return old, false, err
	}
	var ferr error
	err = m.c.update(ctx, kb, func(ob []byte, ok bool) decision {
		var ov V
		if ok {
			if ov, ferr = m.decode(ob); ferr != nil {
				return decision{}
			}
			old, had = ov, true
		}
		nv, write, del, e := fn(ov, ok)
		if e != nil {
			ferr = e
			return decision{}
		}
		if !write {
			return decision{}
		}
		if del {
			return decision{write: true, del: true}
		}
		b, e := m.vc.Encode(nv)
		if e != nil {
			ferr = fmt.Errorf("stowage: map %q: encode value: %w", m.c.name, e)
			return decision{}
		}
		return decision{write: true, val: b}
	})
	if ferr != nil {
		return old, had, ferr
	}
	return old, had, err
}

// Put sets k to v.
func (m *Map[K, V]) Put(ctx context.Context, k K, v V) error {
	_, _, err := m.compute(ctx, k, func(V, bool) (V, bool, bool, error) { return v, true, false, nil })
	return err
}

// Swap sets k to v and returns the previous value, if any.
func (m *Map[K, V]) Swap(ctx context.Context, k K, v V) (old V, had bool, err error) {
	return m.compute(ctx, k, func(V, bool) (V, bool, bool, error) { return v, true, false, nil })
}

// PutIfAbsent sets k to v only if k has no value; it returns the existing
// value and true if there was one.
func (m *Map[K, V]) PutIfAbsent(ctx context.Context, k K, v V) (existing V, loaded bool, err error) {
	return m.compute(ctx, k, func(_ V, ok bool) (V, bool, bool, error) { return v, !ok, false, nil })
}

// Replace sets k to v only if k has a value; it returns the old value and
// whether it replaced it.
func (m *Map[K, V]) Replace(ctx context.Context, k K, v V) (old V, replaced bool, err error) {
	return m.compute(ctx, k, func(_ V, ok bool) (V, bool, bool, error) { return v, ok, false, nil })
}

// Remove deletes k and returns the value it had.
func (m *Map[K, V]) Remove(ctx context.Context, k K) (old V, removed bool, err error) {
	return m.compute(ctx, k, func(_ V, ok bool) (V, bool, bool, error) { var z V; return z, ok, true, nil })
}

// Delete deletes k.
func (m *Map[K, V]) Delete(ctx context.Context, k K) error {
	_, _, err := m.Remove(ctx, k)
	return err
}

// Compute atomically replaces k's value by fn(old, ok): fn returns the new
// value and keep; keep false deletes the entry. No other write of k runs
// between reading old and storing the result. Compute returns the value
// now held and whether there is one.
func (m *Map[K, V]) Compute(ctx context.Context, k K, fn func(old V, ok bool) (nv V, keep bool)) (V, bool, error) {
	var res V
	var has bool
	_, _, err := m.compute(ctx, k, func(old V, ok bool) (V, bool, bool, error) {
		nv, keep := fn(old, ok)
		if keep {
			res, has = nv, true
			return nv, true, false, nil
		}
		return nv, ok, true, nil
	})
	if err != nil {
		var z V
		return z, false, err
	}
	return res, has, nil
}

// Size returns the number of entries.
func (m *Map[K, V]) Size(ctx context.Context) (int, error) { return m.c.size(ctx) }

// Range calls fn for every entry until fn returns false. It sees each
// partition as of one moment; fn may call the map.
func (m *Map[K, V]) Range(ctx context.Context, fn func(k K, v V) bool) error {
	var derr error
	err := m.c.rangeAll(ctx, func(ks string, vb []byte) bool {
		k, err := m.kc.Decode([]byte(ks))
		if err != nil {
			derr = fmt.Errorf("stowage: map %q: decode key: %w", m.c.name, err)
			return false
		}
		v, err := m.decode(vb)
		if err != nil {
			derr = err
			return false
		}
		return fn(k, v)
	})
	if derr != nil {
		return derr
	}
	return err
}

// Keys returns every key.
func (m *Map[K, V]) Keys(ctx context.Context) ([]K, error) {
	var out []K
	err := m.Range(ctx, func(k K, _ V) bool { out = append(out, k); return true })
	return out, err
}

// Entry is one key and value.
type Entry[K, V any] struct {
	Key   K
	Value V
}

// Entries returns every entry.
func (m *Map[K, V]) Entries(ctx context.Context) ([]Entry[K, V], error) {
	var out []Entry[K, V]
	err := m.Range(ctx, func(k K, v V) bool { out = append(out, Entry[K, V]{k, v}); return true })
	return out, err
}

// Clear deletes every entry, each deletion written through.
func (m *Map[K, V]) Clear(ctx context.Context) error {
	var keys []string
	if err := m.c.rangeAll(ctx, func(k string, _ []byte) bool { keys = append(keys, k); return true }); err != nil {
		return err
	}
	for _, k := range keys {
		if err := m.c.update(ctx, []byte(k), func(_ []byte, ok bool) decision { return decision{write: ok, del: true} }); err != nil {
			return err
		}
	}
	return nil
}
