package boltstore

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/stowage/stowage/mapstore"
)

// highest collects the highest version per partition of a change.
type highest []partVersion

type partVersion struct {
	p int
	v mapstore.Version
}

func (h *highest) add(p int, v mapstore.Version) {
	for i := range *h {
		if (*h)[i].p == p {
			if (*h)[i].v.Less(v) {
				(*h)[i].v = v
			}
			return
		}
	}
	*h = append(*h, partVersion{p, v})
}

// raise lifts each partition's stored highest version to h's where h's is
// higher. Running it twice changes nothing more.
func (h highest) raise(b *bolt.Bucket) error {
	if len(h) == 0 {
		return nil
	}
	vb := b.Bucket([]byte(versionsKey))
	if vb == nil {
		return fmt.Errorf("versions bucket is missing")
	}
	for _, e := range h {
		k := partBucket(e.p)
		if cur := vb.Get(k); cur != nil && !decodeVersion(cur).Less(e.v) {
			continue
		}
		if err := vb.Put(k, encodeVersion(e.v)); err != nil {
			return err
		}
	}
	return nil
}

// LastVersion returns the highest version of partition p made durable,
// deletes and epoch starts included (bbolt keeps no deleted entries, so
// the store keeps this beside them). The map starts the next epoch after
// it, so versions keep growing across restarts. It returns the zero
// version if p has none or the store is closed.
func (s *Store) LastVersion(p int) mapstore.Version {
	var v mapstore.Version
	_ = s.view(context.Background(), "last version", func(b *bolt.Bucket) error {
		if vb := b.Bucket([]byte(versionsKey)); vb != nil {
			if cur := vb.Get(partBucket(p)); cur != nil {
				v = decodeVersion(cur)
			}
		}
		return nil
	})
	return v
}

// StartEpochs makes durable that each partition's owner starts the epoch
// of its version, so that LastVersion, and the next start after a
// restart, count it even if nothing was written in it. bbolt holds only
// committed state, so there is nothing older to drop on recovery.
func (s *Store) StartEpochs(ctx context.Context, starts map[int]mapstore.Version) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("stowage/mapstore/boltstore: map %q: start epochs: %w", s.name, err)
	}
	var tops highest
	for p, v := range starts {
		if p < 0 || p >= s.parts {
			return fmt.Errorf("stowage/mapstore/boltstore: map %q: start epoch of partition %d out of range [0, %d)", s.name, p, s.parts)
		}
		tops.add(p, v)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return fmt.Errorf("stowage/mapstore/boltstore: map %q: start epochs: %w", s.name, mapstore.ErrClosed)
	}
	if len(tops) == 0 {
		return nil
	}
	err := s.f.commit.commit(func(tx *bolt.Tx) error {
		b := tx.Bucket(s.bucket)
		if b == nil {
			return fmt.Errorf("bucket is missing")
		}
		return tops.raise(b)
	})
	if err != nil {
		return fmt.Errorf("stowage/mapstore/boltstore: %s: map %q: start epochs of %d partitions: %w", s.f.path, s.name, len(starts), err)
	}
	return nil
}
