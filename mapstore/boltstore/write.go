package boltstore

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/serde/keyhash"
)

// Store implements mapstore.MapStore: it returns once the commit holding
// r is on disk. r.Deleted is ignored (Store always writes).
func (s *Store) Store(ctx context.Context, r mapstore.Record) error {
	return s.write(ctx, "store", []mapstore.Record{r}, false)
}

// StoreAll implements mapstore.MapStore: all of rs go in one commit,
// possibly shared with other calls.
func (s *Store) StoreAll(ctx context.Context, rs []mapstore.Record) error {
	return s.write(ctx, "store", rs, false)
}

// Delete implements mapstore.MapStore: it returns once the commit
// removing r.Key is on disk. Deleting an absent key succeeds.
func (s *Store) Delete(ctx context.Context, r mapstore.Record) error {
	return s.write(ctx, "delete", []mapstore.Record{r}, true)
}

// DeleteAll implements mapstore.MapStore, in one commit.
func (s *Store) DeleteAll(ctx context.Context, rs []mapstore.Record) error {
	return s.write(ctx, "delete", rs, true)
}

// write puts (or deletes) rs in one commit of the file's group commit.
// The values are encoded before, so the function committed, which may
// run twice (in a shared transaction that failed, then alone), only puts
// and deletes: running it again gives the same result.
func (s *Store) write(ctx context.Context, op string, rs []mapstore.Record, del bool) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("stowage/mapstore/boltstore: map %q: %s: %w", s.name, op, err)
	}
	var vals [][]byte
	if !del {
		vals = make([][]byte, len(rs))
	}
	var tops highest
	for i, r := range rs {
		if err := s.check(r); err != nil {
			return fmt.Errorf("stowage/mapstore/boltstore: map %q: %s key %s: %w", s.name, op, keyString(r.Key), err)
		}
		if !del {
			vals[i] = encodeValue(r.Version, r.Value, r.Expires)
		}
		tops.add(r.Partition, r.Version)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return fmt.Errorf("stowage/mapstore/boltstore: map %q: %s: %w", s.name, op, mapstore.ErrClosed)
	}
	if len(rs) == 0 {
		return nil
	}
	err := s.f.commit.commit(func(tx *bolt.Tx) error {
		b := tx.Bucket(s.bucket)
		if b == nil {
			return fmt.Errorf("bucket is missing")
		}
		for i, r := range rs {
			pb := b.Bucket(partBucket(r.Partition))
			if pb == nil {
				return fmt.Errorf("partition bucket %d is missing", r.Partition)
			}
			var err error
			if del {
				err = pb.Delete(r.Key)
			} else {
				err = pb.Put(r.Key, vals[i])
			}
			if err != nil {
				return fmt.Errorf("key %s: %w", keyString(r.Key), err)
			}
		}
		return tops.raise(b)
	})
	if err != nil {
		return fmt.Errorf("stowage/mapstore/boltstore: %s: map %q: %s of %d records: %w", s.f.path, s.name, op, len(rs), err)
	}
	return nil
}

// check refuses records bbolt cannot hold or that name the wrong
// partition (Load finds a key by hashing it, so a record stored under
// another partition would be lost to it).
func (s *Store) check(r mapstore.Record) error {
	switch {
	case len(r.Key) == 0:
		return fmt.Errorf("empty key")
	case len(r.Key) > bolt.MaxKeySize:
		return fmt.Errorf("key of %d bytes exceeds bbolt's %d", len(r.Key), bolt.MaxKeySize)
	case len(r.Value) > bolt.MaxValueSize-maxHeader:
		return fmt.Errorf("value of %d bytes exceeds bbolt's %d", len(r.Value), bolt.MaxValueSize-maxHeader)
	case r.Partition < 0 || r.Partition >= s.parts:
		return fmt.Errorf("partition %d out of range [0, %d)", r.Partition, s.parts)
	}
	if p := keyhash.Partition(r.Key, s.parts); p != r.Partition {
		return fmt.Errorf("record says partition %d, the key hashes to %d of %d", r.Partition, p, s.parts)
	}
	return nil
}
