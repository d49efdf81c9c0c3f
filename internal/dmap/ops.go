package dmap

import "context"

// The operations of one map, run at each key's owner (forwarded when that
// is another member, routed again when the partition moves). Keys and
// values are bytes; the caller owns what it passes and what it gets.

// Get returns the value of key.
func (m *Map) Get(ctx context.Context, key []byte) (val []byte, ok bool, err error) {
	v, _, ok, err := m.n.get(ctx, m.reader(), key)
	return v, ok, err
}

// Put sets key to val and returns the previous value, if any.
func (m *Map) Put(ctx context.Context, key, val []byte) (old []byte, had bool, err error) {
	return m.write(ctx, key, &op{kind: opPut, val: val})
}

// PutIfAbsent sets key to val only if key has no value; it returns the
// value there was, if any.
func (m *Map) PutIfAbsent(ctx context.Context, key, val []byte) (old []byte, had bool, err error) {
	return m.write(ctx, key, &op{kind: opPutIfAbsent, val: val})
}

// Replace sets key to val only if key has a value; it returns that
// value and whether it replaced it.
func (m *Map) Replace(ctx context.Context, key, val []byte) (old []byte, had bool, err error) {
	return m.write(ctx, key, &op{kind: opReplace, val: val})
}

// Remove deletes key and returns the value it had.
func (m *Map) Remove(ctx context.Context, key []byte) (old []byte, had bool, err error) {
	return m.write(ctx, key, &op{kind: opDelete})
}

func (m *Map) write(ctx context.Context, key []byte, o *op) ([]byte, bool, error) {
	c, err := m.writer(ctx)
	if err != nil {
		return nil, false, err
	}
	o.owner = LockOwner(ctx)
	res, err := m.n.do(ctx, c, key, o)
	return res.old, res.had, err
}

// Compute runs fn on key's value with no other write of key taking effect
// in between (on the owner, with the key's writes held; elsewhere as
// read, decide, compare-and-set, so fn may run more than once) and makes
// its decision. It returns the value fn saw and whether there was one.
func (m *Map) Compute(ctx context.Context, key []byte, fn func(old []byte, ok bool) Decision) (old []byte, had bool, err error) {
	return m.write(ctx, key, &op{fn: fn})
}

// Size counts the map's entries at every owner.
func (m *Map) Size(ctx context.Context) (int, error) { return m.n.size(ctx, m.reader()) }

// SizeBytes counts the map's entries over every owner and the bytes of
// their keys and values (serialized).
func (m *Map) SizeBytes(ctx context.Context) (int, int64, error) {
	return m.n.sizeBytes(ctx, m.reader())
}

// Range calls fn for each entry until it returns false, partition by
// partition, on copies: fn may call the map.
func (m *Map) Range(ctx context.Context, fn func(key string, val []byte) bool) error {
	return m.n.rangeAll(ctx, m.reader(), fn)
}
