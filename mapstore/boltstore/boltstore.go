package boltstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/partition"
)

// Options configure a Store.
type Options struct {
	MapName    string        // the map's bucket (required)
	Partitions int           // partition count (default partition.DefaultCount)
	Timeout    time.Duration // how long to wait for another process's lock (default 1s)
	Logger     *slog.Logger
}

// Store is one map in a bbolt file. It is safe for concurrent use.
type Store struct {
	db     *shared
	bucket []byte
	parts  int
	mu     sync.RWMutex
	closed bool
}

type shared struct {
	path string
	db   *bolt.DB
	refs int
}

var (
	openMu sync.Mutex
	open   = map[string]*shared{}
)

// Open opens (creating if needed) the map opts.MapName in the file at path.
func Open(path string, opts Options) (*Store, error) {
	if opts.MapName == "" {
		return nil, errors.New("stowage/mapstore/boltstore: Options.MapName is empty")
	}
	if path == "" {
		return nil, errors.New("stowage/mapstore/boltstore: key path: required")
	}
	if opts.Partitions <= 0 {
		opts.Partitions = partition.DefaultCount
	}
	if opts.Timeout <= 0 {
		opts.Timeout = time.Second
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("stowage/mapstore/boltstore: %w", err)
	}
	openMu.Lock()
	defer openMu.Unlock()
	sh := open[abs]
	if sh == nil {
		db, err := bolt.Open(abs, 0o600, &bolt.Options{Timeout: opts.Timeout})
		if err != nil {
			if errors.Is(err, bolterrors.ErrTimeout) {
				return nil, fmt.Errorf("stowage/mapstore/boltstore: %s: %w (waited %s)", abs, mapstore.ErrLocked, opts.Timeout)
			}
			return nil, fmt.Errorf("stowage/mapstore/boltstore: open %s: %w", abs, err)
		}
		sh = &shared{path: abs, db: db}
		open[abs] = sh
	}
	s := &Store{db: sh, bucket: []byte(opts.MapName), parts: opts.Partitions}
	err = sh.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(s.bucket)
		if err != nil {
			return err
		}
		for p := 0; p < s.parts; p++ {
			if _, err := b.CreateBucketIfNotExists(partKey(p)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if sh.refs == 0 {
			sh.db.Close()
			delete(open, abs)
		}
		return nil, fmt.Errorf("stowage/mapstore/boltstore: %s: map %q: %w", abs, opts.MapName, err)
	}
	sh.refs++
	return s, nil
}

func partKey(p int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(p)) }

func encodeValue(r mapstore.Record) []byte {
	b := binary.AppendUvarint(nil, r.Version.Epoch)
	b = binary.AppendUvarint(b, r.Version.Seq)
	return append(b, r.Value...)
}

func decodeValue(p int, key, b []byte) (mapstore.Record, error) {
	r := mapstore.Record{Partition: p, Key: append([]byte(nil), key...)}
	e, n := binary.Uvarint(b)
	if n <= 0 {
		return r, errors.New("stowage/mapstore/boltstore: malformed value header")
	}
	s, m := binary.Uvarint(b[n:])
	if m <= 0 {
		return r, errors.New("stowage/mapstore/boltstore: malformed value header")
	}
	r.Version = mapstore.Version{Epoch: e, Seq: s}
	r.Value = append([]byte{}, b[n+m:]...)
	return r, nil
}

func (s *Store) check() error {
	if s.closed {
		return mapstore.ErrClosed
	}
	return nil
}

func (s *Store) write(rs []mapstore.Record, del bool) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.check(); err != nil {
		return err
	}
	for _, r := range rs {
		if r.Partition < 0 || r.Partition >= s.parts {
			return fmt.Errorf("stowage/mapstore/boltstore: record partition %d out of range [0, %d)", r.Partition, s.parts)
		}
	}
	// Batch may run the function more than once: it only sets and deletes.
	return s.db.db.Batch(func(tx *bolt.Tx) error {
		b := tx.Bucket(s.bucket)
		for _, r := range rs {
			pb := b.Bucket(partKey(r.Partition))
			var err error
			if del {
				err = pb.Delete(r.Key)
			} else {
				err = pb.Put(r.Key, encodeValue(r))
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// Store implements mapstore.MapStore.
func (s *Store) Store(ctx context.Context, r mapstore.Record) error {
	return s.write([]mapstore.Record{r}, false)
}

// StoreAll implements mapstore.MapStore.
func (s *Store) StoreAll(ctx context.Context, rs []mapstore.Record) error { return s.write(rs, false) }

// Delete implements mapstore.MapStore.
func (s *Store) Delete(ctx context.Context, r mapstore.Record) error {
	return s.write([]mapstore.Record{r}, true)
}

// DeleteAll implements mapstore.MapStore.
func (s *Store) DeleteAll(ctx context.Context, rs []mapstore.Record) error { return s.write(rs, true) }

func (s *Store) view(fn func(b *bolt.Bucket) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.check(); err != nil {
		return err
	}
	return s.db.db.View(func(tx *bolt.Tx) error { return fn(tx.Bucket(s.bucket)) })
}

// Load implements mapstore.MapStore.
func (s *Store) Load(ctx context.Context, key []byte) (mapstore.Record, bool, error) {
	rs, err := s.LoadAll(ctx, [][]byte{key})
	if err != nil || len(rs) == 0 {
		return mapstore.Record{}, false, err
	}
	return rs[0], true, nil
}

// LoadAll implements mapstore.MapStore.
func (s *Store) LoadAll(ctx context.Context, keys [][]byte) ([]mapstore.Record, error) {
	var out []mapstore.Record
	err := s.view(func(b *bolt.Bucket) error {
		for _, k := range keys {
			p := partition.Of(k, s.parts)
			if v := b.Bucket(partKey(p)).Get(k); v != nil {
				r, err := decodeValue(p, k, v)
				if err != nil {
					return err
				}
				out = append(out, r)
			}
		}
		return nil
	})
	return out, err
}

// LoadAllKeys implements mapstore.MapStore.
func (s *Store) LoadAllKeys(ctx context.Context) ([][]byte, error) {
	var out [][]byte
	err := s.view(func(b *bolt.Bucket) error {
		for p := 0; p < s.parts; p++ {
			err := b.Bucket(partKey(p)).ForEach(func(k, _ []byte) error {
				out = append(out, append([]byte(nil), k...))
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// LoadPartition implements mapstore.MapStore.
func (s *Store) LoadPartition(ctx context.Context, p int, fn func(mapstore.Record) error) error {
	if p < 0 || p >= s.parts {
		return fmt.Errorf("stowage/mapstore/boltstore: partition %d out of range [0, %d)", p, s.parts)
	}
	return s.view(func(b *bolt.Bucket) error {
		return b.Bucket(partKey(p)).ForEach(func(k, v []byte) error {
			r, err := decodeValue(p, k, v)
			if err != nil {
				return fmt.Errorf("%w (map %q, key %x)", err, s.bucket, k)
			}
			return fn(r)
		})
	})
}

// Close implements mapstore.MapStore; the file closes with its last map.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return mapstore.ErrClosed
	}
	s.closed = true
	openMu.Lock()
	defer openMu.Unlock()
	s.db.refs--
	if s.db.refs == 0 {
		delete(open, s.db.path)
		return s.db.db.Close()
	}
	return nil
}

var _ mapstore.MapStore = (*Store)(nil)
