package boltstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/serde/keyhash"
)

// Defaults of Options.
const (
	// DefaultTimeout is how long Open waits for another process to release
	// the file before it gives up with mapstore.ErrLocked.
	DefaultTimeout = time.Second
)

// ErrMapOpen is returned by Open when the map is already open in this
// process: one map has one Store, as one Hazelcast map has one MapStore.
var ErrMapOpen = errors.New("stowage/mapstore/boltstore: map is already open in this process")

// Options configure a Store. The zero value of each field but MapName
// selects its default.
type Options struct {
	// MapName names the map; its entries live in the top-level bucket of
	// that name (required).
	MapName string
	// Partitions is the partition count (default keyhash.DefaultPartitions).
	// A map stored with another count is re-hashed by Open.
	Partitions int
	// Timeout is how long Open waits for another process's lock on the
	// file (default DefaultTimeout; never forever).
	Timeout time.Duration
	// Logger receives debug and warning logs (default: none).
	Logger *slog.Logger
	// OnDamage is told of each entry LoadPartition skips because its
	// stored value cannot be read (default: a warning on Logger).
	OnDamage func(Damage)
}

// Damage describes an entry whose stored value cannot be read.
type Damage struct {
	Path      string // the bbolt file
	Map       string
	Partition int
	Key       []byte
	Err       error
}

// Store is one map in a bbolt file; it implements mapstore.MapStore. It
// is safe for concurrent use.
type Store struct {
	f        *file
	name     string
	bucket   []byte
	parts    int
	log      *slog.Logger
	onDamage func(Damage)

	mu     sync.RWMutex // held shared by every call, exclusively by Close
	closed bool
}

var (
	_ mapstore.MapStore      = (*Store)(nil)
	_ mapstore.LastVersioner = (*Store)(nil)
	_ mapstore.EpochStarter  = (*Store)(nil)
)

// Open opens the map opts.MapName in the bbolt file at path, creating the
// file, its directory and the map as needed. Several maps may be open in
// one file at once; the file is closed with the last of them. If another
// process holds the file, Open fails after opts.Timeout with an error
// matching mapstore.ErrLocked that names the file.
func Open(path string, opts Options) (*Store, error) {
	if opts.MapName == "" {
		return nil, errors.New("stowage/mapstore/boltstore: Options.MapName is empty")
	}
	if path == "" {
		return nil, fmt.Errorf("stowage/mapstore/boltstore: map %q: map-store property path is empty", opts.MapName)
	}
	if opts.Partitions <= 0 {
		opts.Partitions = keyhash.DefaultPartitions
	}
	if opts.Partitions > 1<<31 {
		return nil, fmt.Errorf("stowage/mapstore/boltstore: map %q: partition count %d is too large", opts.MapName, opts.Partitions)
	}
	abs, err := opts.defaults(path)
	if err != nil {
		return nil, err
	}
	log := opts.Logger
	f, err := acquire(abs, opts.MapName, opts.Timeout, log)
	if err != nil {
		return nil, err
	}
	s := &Store{f: f, name: opts.MapName, bucket: []byte(opts.MapName), parts: opts.Partitions, log: log, onDamage: opts.OnDamage}
	if s.onDamage == nil {
		s.onDamage = func(d Damage) {
			log.Warn("stowage/mapstore/boltstore: skipped a damaged entry", "path", d.Path, "map", d.Map, "partition", d.Partition, "key", fmt.Sprintf("%x", d.Key), "err", d.Err)
		}
	}
	if err := f.db.Update(s.prepare); err != nil {
		return nil, errors.Join(fmt.Errorf("stowage/mapstore/boltstore: %s: map %q: %w", abs, opts.MapName, err), f.release(opts.MapName, log))
	}
	return s, nil
}

// defaults fills in opts' default Timeout and Logger and returns path
// made absolute.
func (opts *Options) defaults(path string) (string, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("stowage/mapstore/boltstore: path %s: %w", path, err)
	}
	return abs, nil
}

// prepare creates the map's bucket with its partition buckets and format
// record, or checks the existing one and re-hashes it if it was stored
// with another partition count.
func (s *Store) prepare(tx *bolt.Tx) error {
	b, err := tx.CreateBucketIfNotExists(s.bucket)
	if err != nil {
		return err
	}
	meta := b.Get([]byte(metaKey))
	if meta == nil {
		if k, _ := b.Cursor().First(); k != nil {
			return fmt.Errorf("bucket exists but holds no format record: not a stowage map")
		}
		return s.createPartitions(b)
	}
	parts, err := storedPartitions(meta)
	if err != nil {
		return err
	}
	if parts == s.parts {
		for p := 0; p < parts; p++ {
			if b.Bucket(partBucket(p)) == nil {
				return fmt.Errorf("partition bucket %d is missing", p)
			}
		}
		_, err := b.CreateBucketIfNotExists([]byte(versionsKey))
		return err
	}
	return s.rehash(b, parts)
}

// storedPartitions reads a map's format record: its partition count,
// and a key hash this build knows.
func storedPartitions(meta []byte) (int, error) {
	parts, hash, err := decodeMeta(meta)
	if err != nil {
		return 0, err
	}
	if hash != keyhash.ID {
		return 0, fmt.Errorf("stored with key hash %q, this build knows only %q", hash, keyhash.ID)
	}
	return parts, nil
}

func (s *Store) createPartitions(b *bolt.Bucket) error {
	for p := 0; p < s.parts; p++ {
		if _, err := b.CreateBucket(partBucket(p)); err != nil {
			return fmt.Errorf("create partition bucket %d: %w", p, err)
		}
	}
	if _, err := b.CreateBucketIfNotExists([]byte(versionsKey)); err != nil {
		return err
	}
	return b.Put([]byte(metaKey), encodeMeta(s.parts, keyhash.ID))
}

// rehash moves every entry of a map stored with old partitions into the
// buckets of s.parts partitions, in the one transaction of Open. Versions
// are kept; they keep ordering the changes of each key. Each new
// partition's highest version becomes the highest of all old ones, so
// versions given after the change order after every stored one.
func (s *Store) rehash(b *bolt.Bucket, old int) error {
	type kv struct{ k, v []byte }
	var all []kv
	var top mapstore.Version
	if vb := b.Bucket([]byte(versionsKey)); vb != nil {
		err := vb.ForEach(func(_, v []byte) error {
			if w := decodeVersion(v); top.Less(w) {
				top = w
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := b.DeleteBucket([]byte(versionsKey)); err != nil {
			return err
		}
	}
	for p := 0; p < old; p++ {
		pb := b.Bucket(partBucket(p))
		if pb == nil {
			return fmt.Errorf("partition bucket %d of %d is missing", p, old)
		}
		err := pb.ForEach(func(k, v []byte) error {
			all = append(all, kv{bytes.Clone(k), bytes.Clone(v)})
			return nil
		})
		if err != nil {
			return err
		}
		if err := b.DeleteBucket(partBucket(p)); err != nil {
			return err
		}
	}
	if err := s.createPartitions(b); err != nil {
		return err
	}
	for _, e := range all {
		if err := b.Bucket(partBucket(keyhash.Partition(e.k, s.parts))).Put(e.k, e.v); err != nil {
			return err
		}
		if w, _, err := decodeHeader(e.v); err == nil && top.Less(w) {
			top = w
		}
	}
	vb := b.Bucket([]byte(versionsKey))
	for p := 0; p < s.parts && top != (mapstore.Version{}); p++ {
		if err := vb.Put(partBucket(p), encodeVersion(top)); err != nil {
			return err
		}
	}
	s.log.Info("stowage/mapstore/boltstore: re-hashed map to a new partition count",
		"path", s.f.path, "map", s.name, "from", old, "to", s.parts, "entries", len(all))
	return nil
}

// Path returns the absolute path of the store's file.
func (s *Store) Path() string { return s.f.path }

// Close closes the map, waiting for calls in progress; the file is closed
// with the last map open in it. Calls after Close, Close included, fail
// with mapstore.ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("stowage/mapstore/boltstore: map %q: %w", s.name, mapstore.ErrClosed)
	}
	s.closed = true
	return s.f.release(s.name, s.log)
}

// Maps returns the names of the maps stored in the bbolt file at path,
// sorted. It shares the file with the maps open in this process, and
// fails with mapstore.ErrLocked if another process holds it.
func Maps(path string, timeout time.Duration) ([]string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("stowage/mapstore/boltstore: path %s: %w", path, err)
	}
	if _, err := os.Stat(abs); errors.Is(err, fs.ErrNotExist) {
		return nil, nil // no file, no maps (and no file created by looking)
	}
	f, err := OpenFile(abs, timeout)
	if err != nil {
		return nil, err
	}
	names, err := f.Maps()
	return names, errors.Join(err, f.Close())
}

// File is a bbolt file held open by this process without a map, so that
// no other process can take it: a member holds the file of its bbolt map
// store from start to stop, whether or not a map is open in it yet. It
// shares the file with the maps open in this process. It is safe for
// concurrent use.
type File struct {
	f      *file
	log    *slog.Logger
	mu     sync.Mutex
	closed bool
}

// OpenFile opens (creating it and its directory if needed) the bbolt file
// at path and holds it until Close. If another process holds the file, it
// fails after timeout (default DefaultTimeout) with an error matching
// mapstore.ErrLocked that names the file.
func OpenFile(path string, timeout time.Duration) (*File, error) {
	if path == "" {
		return nil, errors.New("stowage/mapstore/boltstore: map-store property path is empty")
	}
	opts := Options{Timeout: timeout}
	abs, err := opts.defaults(path)
	if err != nil {
		return nil, err
	}
	f, err := acquire(abs, "", opts.Timeout, opts.Logger)
	if err != nil {
		return nil, err
	}
	return &File{f: f, log: opts.Logger}, nil
}

// Path returns the absolute path of the file.
func (h *File) Path() string { return h.f.path }

// Maps returns the names of the maps stored in the file, sorted.
func (h *File) Maps() ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, fmt.Errorf("stowage/mapstore/boltstore: %s: %w", h.f.path, mapstore.ErrClosed)
	}
	var names []string
	err := h.f.db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			if b.Get([]byte(metaKey)) != nil {
				names = append(names, string(name))
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("stowage/mapstore/boltstore: list maps of %s: %w", h.f.path, err)
	}
	return names, nil
}

// Close lets go of the file; it is closed once no map of this process
// uses it either. A second Close fails with mapstore.ErrClosed.
func (h *File) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return fmt.Errorf("stowage/mapstore/boltstore: %s: %w", h.f.path, mapstore.ErrClosed)
	}
	h.closed = true
	return h.f.release("", h.log)
}

// DropMap deletes the named map's data from the file, in one commit; a
// map the file does not hold is no error. The map's Store must be closed
// first.
func (h *File) DropMap(name string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return fmt.Errorf("stowage/mapstore/boltstore: %s: %w", h.f.path, mapstore.ErrClosed)
	}
	err := h.f.db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket([]byte(name)) == nil {
			return nil
		}
		return tx.DeleteBucket([]byte(name))
	})
	if err != nil {
		return fmt.Errorf("stowage/mapstore/boltstore: drop map %q of %s: %w", name, h.f.path, err)
	}
	return nil
}

// RecordedCodec implements mapstore.CodecRecorder.
func (s *Store) RecordedCodec(context.Context) (string, error) {
	var name string
	err := s.f.db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(s.bucket); b != nil {
			name = string(b.Get([]byte(codecKey)))
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("stowage/mapstore/boltstore: read the codec of %s: %w", s.bucket, err)
	}
	return name, nil
}

// RecordCodec implements mapstore.CodecRecorder.
func (s *Store) RecordCodec(_ context.Context, name string) error {
	err := s.f.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(s.bucket)
		if err != nil {
			return err
		}
		return b.Put([]byte(codecKey), []byte(name))
	})
	if err != nil {
		return fmt.Errorf("stowage/mapstore/boltstore: record the codec of %s: %w", s.bucket, err)
	}
	return nil
}
