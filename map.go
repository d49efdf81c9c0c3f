package stowage

import (
	"context"
	"fmt"

	"github.com/stowage/stowage/internal/dmap"
	"github.com/stowage/stowage/serde"
)

// Map is a typed view of one of the cluster's maps: keys and values are
// encoded by their codecs, the key's encoding picks its partition, and
// every operation runs at the partition's owner (forwarded when that is
// another member, routed again when the partition moves). A write returns
// only once it is durable in the map store (when the map is persisted)
// and applied on every live synchronous backup; a failed write fails the
// call and leaves the map unchanged. Operations wait until their partition
// is loaded. A Map is safe for concurrent use.
type Map[K, V any] struct {
	m  *dmap.Map
	kc serde.Codec[K]
	vc serde.Codec[V]
}

// GetMap returns the named map of node n with the given codecs, creating
// it on first use (a persisted map that was found on Open is already
// loading).
//
// A persisted map records the names of the codecs it is first opened
// with (serde.NameOf of each) with its data, and GetMap with other codecs
// fails with an error matching ErrCodecMismatch that names both, instead
// of decoding foreign bytes. A handle whose value codec is serde.Bytes()
// is a raw view of the encoded data (the HTTP API's): it is not checked
// and records nothing. To change a map's codecs, copy its entries into a
// new map with the new codecs, then Destroy the old one.
func GetMap[K, V any](ctx context.Context, n *Node, name string, kc serde.Codec[K], vc serde.Codec[V]) (*Map[K, V], error) {
	m, err := n.e.Map(ctx, name)
	if err != nil {
		return nil, err
	}
	if vn := serde.NameOf(vc); vn != serde.NameOf(serde.Bytes()) {
		if err := m.CheckCodec(ctx, serde.NameOf(kc)+" "+vn); err != nil {
			return nil, err
		}
	}
	return &Map[K, V]{m: m, kc: kc, vc: vc}, nil
}

// LookupMap returns the named map of node n with the given codecs without
// creating it: reading a map that no member holds finds nothing and
// creates nothing, on this member or on the partitions' owners (a read
// of a map that does not exist costs no memory and no files); the first
// write through it creates the map as GetMap would.
func LookupMap[K, V any](n *Node, name string, kc serde.Codec[K], vc serde.Codec[V]) (*Map[K, V], error) {
	m, err := n.e.Lookup(name)
	if err != nil {
		return nil, err
	}
	return &Map[K, V]{m: m, kc: kc, vc: vc}, nil
}

// Name returns the map's name.
func (m *Map[K, V]) Name() string { return m.m.Name() }

func (m *Map[K, V]) key(k K) ([]byte, error) {
	b, err := m.kc.Encode(k)
	if err != nil {
		return nil, fmt.Errorf("stowage: map %q: encode key: %w", m.m.Name(), err)
	}
	return b, nil
}

func (m *Map[K, V]) decode(b []byte) (V, error) {
	v, err := m.vc.Decode(b)
	if err != nil {
		return v, fmt.Errorf("stowage: map %q: decode value: %w", m.m.Name(), err)
	}
	return v, nil
}

// Get returns the value of k.
func (m *Map[K, V]) Get(ctx context.Context, k K) (v V, ok bool, err error) {
	kb, err := m.key(k)
	if err != nil {
		return v, false, err
	}
	b, ok, err := m.m.Get(ctx, kb)
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
	_, ok, err := m.m.Get(ctx, kb)
	return ok, err
}

// run executes a write of k at its owner and decodes the value it found.
func (m *Map[K, V]) run(ctx context.Context, k K, write func(ctx context.Context, key []byte) ([]byte, bool, error)) (old V, had bool, err error) {
	kb, err := m.key(k)
	if err != nil {
		return old, false, err
	}
	ob, had, err := write(ctx, kb)
	if err != nil {
		return old, false, err
	}
	if had {
		if old, err = m.decode(ob); err != nil {
			return old, false, err
		}
	}
	return old, had, nil
}

func (m *Map[K, V]) value(v V) ([]byte, error) {
	b, err := m.vc.Encode(v)
	if err != nil {
		return nil, fmt.Errorf("stowage: map %q: encode value: %w", m.m.Name(), err)
	}
	return b, nil
}

// Put sets k to v.
func (m *Map[K, V]) Put(ctx context.Context, k K, v V) error {
	_, _, err := m.Swap(ctx, k, v)
	return err
}

// Swap sets k to v and returns the previous value, if any.
func (m *Map[K, V]) Swap(ctx context.Context, k K, v V) (old V, had bool, err error) {
	b, err := m.value(v)
	if err != nil {
		return old, false, err
	}
	return m.run(ctx, k, func(ctx context.Context, key []byte) ([]byte, bool, error) { return m.m.Put(ctx, key, b) })
}

// PutIfAbsent sets k to v only if k has no value; it returns the existing
// value and true if there was one.
func (m *Map[K, V]) PutIfAbsent(ctx context.Context, k K, v V) (existing V, loaded bool, err error) {
	b, err := m.value(v)
	if err != nil {
		return existing, false, err
	}
	return m.run(ctx, k, func(ctx context.Context, key []byte) ([]byte, bool, error) { return m.m.PutIfAbsent(ctx, key, b) })
}

// Replace sets k to v only if k has a value; it returns the old value and
// whether it replaced it.
func (m *Map[K, V]) Replace(ctx context.Context, k K, v V) (old V, replaced bool, err error) {
	b, err := m.value(v)
	if err != nil {
		return old, false, err
	}
	return m.run(ctx, k, func(ctx context.Context, key []byte) ([]byte, bool, error) { return m.m.Replace(ctx, key, b) })
}

// Remove deletes k and returns the value it had.
func (m *Map[K, V]) Remove(ctx context.Context, k K) (old V, removed bool, err error) {
	return m.run(ctx, k, m.m.Remove)
}

// Delete deletes k.
func (m *Map[K, V]) Delete(ctx context.Context, k K) error {
	_, _, err := m.Remove(ctx, k)
	return err
}

// Compute atomically replaces k's value by fn(old, ok): fn returns the new
// value and keep; keep false deletes the entry. No other write of k takes
// effect between reading old and storing the result: on the owning member
// fn runs with the key's writes held; on another member the result is
// written only if the entry is still as fn saw it, else fn runs again, so
// fn may run more than once and must have no other effect. Compute
// returns the value now held and whether there is one.
func (m *Map[K, V]) Compute(ctx context.Context, k K, fn func(old V, ok bool) (nv V, keep bool)) (V, bool, error) {
	var res V
	var has bool
	var ferr error
	decide := func(ob []byte, ok bool) dmap.Decision {
		ferr = nil
		var ov V
		if ok {
			if ov, ferr = m.decode(ob); ferr != nil {
				return dmap.Decision{}
			}
		}
		nv, keep := fn(ov, ok)
		if !keep {
			res, has = nv, false
			return dmap.Decision{Write: ok, Delete: true}
		}
		b, err := m.value(nv)
		if err != nil {
			ferr = err
			return dmap.Decision{}
		}
		res, has = nv, true
		return dmap.Decision{Write: true, Value: b}
	}
	_, _, err := m.run(ctx, k, func(ctx context.Context, key []byte) ([]byte, bool, error) { return m.m.Compute(ctx, key, decide) })
	if err == nil {
		err = ferr
	}
	if err != nil {
		var z V
		return z, false, err
	}
	if !has {
		var z V
		return z, false, nil
	}
	return res, true, nil
}

// Size returns the number of entries, counted at every owner.
func (m *Map[K, V]) Size(ctx context.Context) (int, error) { return m.m.Size(ctx) }

// Range calls fn for every entry until fn returns false. It sees each
// partition as of one moment; fn may call the map.
func (m *Map[K, V]) Range(ctx context.Context, fn func(k K, v V) bool) error {
	var derr error
	err := m.m.Range(ctx, func(ks string, vb []byte) bool {
		k, err := m.kc.Decode([]byte(ks))
		if err != nil {
			derr = fmt.Errorf("stowage: map %q: decode key: %w", m.m.Name(), err)
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
	if err := m.m.Range(ctx, func(k string, _ []byte) bool { keys = append(keys, k); return true }); err != nil {
		return err
	}
	for _, k := range keys {
		if _, _, err := m.m.Remove(ctx, []byte(k)); err != nil {
			return err
		}
	}
	return nil
}
