package boltstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	bolt "go.etcd.io/bbolt"

	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/serde/keyhash"
)

// OpenReadOnly opens the map opts.MapName of an existing bbolt file for
// reading, as `stowage inspect` does. The file is not changed: no file,
// map or bucket is created, nothing is re-hashed (the stored partition
// count is used, whatever opts.Partitions says), and writes fail. It takes
// bbolt's shared lock, so while a member has the file open it fails after
// opts.Timeout with an error matching mapstore.ErrLocked. A missing file
// or map is an error matching fs.ErrNotExist. The file is opened on its
// own, apart from the maps this process has open for writing, and closed
// with the Store.
func OpenReadOnly(path string, opts Options) (*Store, error) {
	if opts.MapName == "" {
		return nil, errors.New("stowage/mapstore/boltstore: Options.MapName is empty")
	}
	abs, err := opts.defaults(path)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("stowage/mapstore/boltstore: %w", err)
	}
	db, err := openDB(abs, &bolt.Options{Timeout: opts.Timeout, ReadOnly: true})
	if err != nil {
		return nil, err
	}
	f := &file{path: abs, db: db, commit: &committer{db: db}, maps: map[string]bool{opts.MapName: true}, private: true}
	s := &Store{f: f, name: opts.MapName, bucket: []byte(opts.MapName), log: opts.Logger, onDamage: opts.OnDamage}
	if s.onDamage == nil {
		s.onDamage = func(Damage) {}
	}
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(s.bucket)
		if b == nil {
			return &fs.PathError{Op: "open", Path: abs + ":" + opts.MapName, Err: fs.ErrNotExist}
		}
		meta := b.Get([]byte(metaKey))
		if meta == nil {
			return errors.New("bucket holds no format record: not a stowage map")
		}
		parts, err := storedPartitions(meta)
		s.parts = parts
		return err
	})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("stowage/mapstore/boltstore: %s: map %q: %w", abs, opts.MapName, err), db.Close())
	}
	return s, nil
}

// Partitions is the map's partition count.
func (s *Store) Partitions() int { return s.parts }

// Stats describes one map of a bbolt file.
type Stats struct {
	Partitions int    `json:"partitions"`
	Entries    int64  `json:"entries"`
	LiveBytes  int64  `json:"live_bytes"`
	Damaged    int    `json:"damaged"`    // entries whose stored value cannot be read
	FileBytes  int64  `json:"file_bytes"` // the whole file, every map in it
	Path       string `json:"path"`
}

// Stats reads every entry of the map and counts them. progress, if not
// nil, is told of the partitions read.
func (s *Store) Stats(ctx context.Context, progress func(done, total int)) (Stats, error) {
	st := Stats{Partitions: s.parts, Path: s.f.path}
	if fi, err := os.Stat(s.f.path); err == nil {
		st.FileBytes = fi.Size()
	}
	onDamage := func(d Damage) { st.Damaged++; s.onDamage(d) }
	for p := 0; p < s.parts; p++ {
		if progress != nil {
			progress(p, s.parts)
		}
		err := s.loadPartition(ctx, p, func(r mapstore.Record) error {
			st.Entries++
			st.LiveBytes += int64(len(r.Key) + len(r.Value))
			return nil
		}, onDamage)
		if err != nil {
			return st, err
		}
	}
	if progress != nil {
		progress(s.parts, s.parts)
	}
	return st, nil
}

// Verify reads the whole file: bbolt's own check of its pages, the map's
// format record and partition buckets, and every entry, whose stored value
// must decode and whose key must hash to its partition. It returns what
// is wrong (Partition -1 for damage that is not one entry's); the error is
// for a file it cannot read at all. progress, if not nil, is told of the
// partitions read.
func (s *Store) Verify(ctx context.Context, progress func(done, total int)) ([]Damage, error) {
	var out []Damage
	add := func(p int, key []byte, err error) { // key is bbolt's, valid only in the transaction
		out = append(out, Damage{Path: s.f.path, Map: s.name, Partition: p, Key: bytes.Clone(key), Err: err})
	}
	err := s.view(ctx, "verify", func(b *bolt.Bucket) error {
		for err := range b.Tx().Check() {
			add(-1, nil, fmt.Errorf("bbolt page check: %w", err))
		}
		if _, _, err := decodeMeta(b.Get([]byte(metaKey))); err != nil {
			add(-1, nil, err)
		}
		for p := 0; p < s.parts; p++ {
			if progress != nil {
				progress(p, s.parts)
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			pb := b.Bucket(partBucket(p))
			if pb == nil {
				add(p, nil, errors.New("partition bucket is missing"))
				continue
			}
			c := pb.Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if v == nil {
					add(p, k, errors.New("a bucket where an entry should be"))
					continue
				}
				if _, _, err := decodeHeader(v); err != nil {
					add(p, k, err)
					continue
				}
				if q := keyhash.Partition(k, s.parts); q != p {
					add(p, k, fmt.Errorf("key hashes to partition %d", q))
				}
			}
		}
		return nil
	})
	if progress != nil && err == nil {
		progress(s.parts, s.parts)
	}
	return out, err
}

// String describes the damage for an operator.
func (d Damage) String() string {
	where := fmt.Sprintf("%s: map %q", d.Path, d.Map)
	if d.Partition >= 0 {
		where += fmt.Sprintf(", partition %d", d.Partition)
	}
	if d.Key != nil {
		where += ", key " + keyString(d.Key)
	}
	return fmt.Sprintf("damage in %s: %v", where, d.Err)
}
