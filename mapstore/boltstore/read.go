package boltstore

import (
	"bytes"
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/serde/keyhash"
)

// view runs fn on the map's bucket in a read transaction.
func (s *Store) view(ctx context.Context, op string, fn func(b *bolt.Bucket) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("stowage/mapstore/boltstore: map %q: %s: %w", s.name, op, err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return fmt.Errorf("stowage/mapstore/boltstore: map %q: %s: %w", s.name, op, mapstore.ErrClosed)
	}
	err := s.f.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(s.bucket)
		if b == nil {
			return fmt.Errorf("bucket is missing")
		}
		return fn(b)
	})
	if err != nil {
		return fmt.Errorf("stowage/mapstore/boltstore: %s: map %q: %s: %w", s.f.path, s.name, op, err)
	}
	return nil
}

// get reads key from its partition bucket into a, or returns ok false.
func (s *Store) get(b *bolt.Bucket, key []byte, a *arena) (mapstore.Record, bool, error) {
	p := keyhash.Partition(key, s.parts)
	pb := b.Bucket(partBucket(p))
	if pb == nil {
		return mapstore.Record{}, false, fmt.Errorf("partition bucket %d is missing", p)
	}
	v := pb.Get(key)
	if v == nil {
		return mapstore.Record{}, false, nil
	}
	ver, exp, n, err := decodeEntry(v)
	if err != nil {
		return mapstore.Record{}, false, fmt.Errorf("key %s: %w", keyString(key), err)
	}
	return mapstore.Record{Partition: p, Version: ver, Key: a.copy(key), Value: a.copy(v[n:]), Expires: exp}, true, nil
}

// Load implements mapstore.MapStore. A damaged stored value is an error
// naming the key.
func (s *Store) Load(ctx context.Context, key []byte) (r mapstore.Record, ok bool, err error) {
	err = s.view(ctx, "load", func(b *bolt.Bucket) error {
		r, ok, err = s.get(b, key, &arena{})
		return err
	})
	return r, ok, err
}

// LoadAll implements mapstore.MapStore: the present keys' entries in the
// order of keys, in one read transaction.
func (s *Store) LoadAll(ctx context.Context, keys [][]byte) ([]mapstore.Record, error) {
	var out []mapstore.Record
	err := s.view(ctx, "load all", func(b *bolt.Bucket) error {
		out = make([]mapstore.Record, 0, len(keys))
		var a arena
		for _, k := range keys {
			r, ok, err := s.get(b, k, &a)
			if err != nil {
				return err
			}
			if ok {
				out = append(out, r)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// LoadAllKeys implements mapstore.MapStore: every key, partition by
// partition, in one read transaction.
func (s *Store) LoadAllKeys(ctx context.Context) ([][]byte, error) {
	var out [][]byte
	err := s.view(ctx, "load all keys", func(b *bolt.Bucket) error {
		var a arena
		for p := 0; p < s.parts; p++ {
			pb := b.Bucket(partBucket(p))
			if pb == nil {
				return fmt.Errorf("partition bucket %d is missing", p)
			}
			c := pb.Cursor()
			for k, _ := c.First(); k != nil; k, _ = c.Next() {
				out = append(out, a.copy(k))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Chunks of LoadPartition: entries are copied out of bbolt this many (or
// this many bytes) at a time, and fn runs between read transactions.
const (
	chunkEntries = 4096
	chunkBytes   = 4 << 20
)

// LoadPartition implements mapstore.MapStore: fn is called for each entry
// of partition p in key order. The entries are read in chunks, each in
// its own read transaction, and fn runs outside of any transaction, so fn
// may write to the store, and a slow fn does not hold back bbolt's
// growth of the file for the writers. Changes made during the scan may or
// may not be seen. Entries whose stored value cannot be read are passed
// to Options.OnDamage and skipped.
func (s *Store) LoadPartition(ctx context.Context, p int, fn func(mapstore.Record) error) error {
	return s.loadPartition(ctx, p, fn, s.onDamage)
}

// loadPartition is LoadPartition telling onDamage of damaged entries.
func (s *Store) loadPartition(ctx context.Context, p int, fn func(mapstore.Record) error, onDamage func(Damage)) error {
	if p < 0 || p >= s.parts {
		return fmt.Errorf("stowage/mapstore/boltstore: map %q: partition %d out of range [0, %d)", s.name, p, s.parts)
	}
	var after []byte // last key of the previous chunk
	for {
		var recs []mapstore.Record
		var damaged []Damage
		more := false
		err := s.view(ctx, "load partition", func(b *bolt.Bucket) error {
			pb := b.Bucket(partBucket(p))
			if pb == nil {
				return fmt.Errorf("partition bucket %d is missing", p)
			}
			c := pb.Cursor()
			k, v := c.First()
			if after != nil {
				k, v = c.Seek(after)
				if k != nil && bytes.Equal(k, after) {
					k, v = c.Next()
				}
			}
			var a arena
			var last []byte // bbolt's memory: valid in this transaction only
			size := 0
			defer func() {
				if last != nil {
					after = bytes.Clone(last) // not a key handed to fn, which fn may change
				}
			}()
			for ; k != nil; k, v = c.Next() {
				if len(recs) >= chunkEntries || size >= chunkBytes {
					more = true
					break
				}
				ver, exp, n, err := decodeEntry(v)
				if err != nil {
					damaged = append(damaged, Damage{Path: s.f.path, Map: s.name, Partition: p, Key: bytes.Clone(k), Err: err})
					last = k
					continue
				}
				r := mapstore.Record{Partition: p, Version: ver, Key: a.copy(k), Value: a.copy(v[n:]), Expires: exp}
				recs = append(recs, r)
				last = k
				size += len(k) + len(v)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, d := range damaged {
			onDamage(d)
		}
		for _, r := range recs {
			if err := fn(r); err != nil {
				return err
			}
		}
		if !more {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("stowage/mapstore/boltstore: map %q: load partition %d: %w", s.name, p, err)
		}
	}
}
