package boltstore

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/stowage/stowage/mapstore"
)

// file is one open bbolt file, shared by every map of this process that
// lives in it: bbolt's flock is per open file, so a second bolt.Open of
// the same file in one process would wait for the first one's lock.
type file struct {
	path   string
	db     *bolt.DB
	commit *committer
	maps   map[string]bool // maps open in this file
	anon   int             // uses by no map (Maps); the file closes when both are gone
	// private: opened read-only for one map by OpenReadOnly, and not in
	// files, so that it is never shared with maps open for writing.
	private bool
}

// files holds the open files by absolute path.
var files = struct {
	sync.Mutex
	m map[string]*file
}{m: map[string]*file{}}

// acquire opens path (or takes the file already open) for mapName. An
// empty mapName takes a reference that no map owns (for Maps).
func acquire(path, mapName string, timeout time.Duration, log *slog.Logger) (*file, error) {
	files.Lock()
	defer files.Unlock()
	f := files.m[path]
	if f == nil {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("stowage/mapstore/boltstore: create the directory of %s: %w", path, err)
		}
		db, err := openDB(path, &bolt.Options{Timeout: timeout, FreelistType: bolt.FreelistMapType})
		if err != nil {
			return nil, err
		}
		f = &file{path: path, db: db, commit: &committer{db: db}, maps: map[string]bool{}}
		files.m[path] = f
		log.Debug("stowage/mapstore/boltstore: opened file", "path", path)
	}
	if mapName != "" {
		if f.maps[mapName] {
			f.closeIfUnused(log)
			return nil, fmt.Errorf("stowage/mapstore/boltstore: %s: map %q: %w", path, mapName, ErrMapOpen)
		}
		f.maps[mapName] = true
	} else {
		f.anon++
	}
	return f, nil
}

// openDB opens the bbolt file at path; a lock held by another process
// past o.Timeout is an error matching mapstore.ErrLocked that names the
// file.
func openDB(path string, o *bolt.Options) (*bolt.DB, error) {
	db, err := bolt.Open(path, 0o600, o)
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("stowage/mapstore/boltstore: %s: %w (gave up after %s)", path, mapstore.ErrLocked, o.Timeout)
	}
	if err != nil {
		return nil, fmt.Errorf("stowage/mapstore/boltstore: open %s: %w", path, err)
	}
	return db, nil
}

// release drops mapName's use of f and closes f when no map uses it.
func (f *file) release(mapName string, log *slog.Logger) error {
	if f.private {
		if err := f.db.Close(); err != nil {
			return fmt.Errorf("stowage/mapstore/boltstore: close %s: %w", f.path, err)
		}
		return nil
	}
	files.Lock()
	defer files.Unlock()
	if mapName == "" {
		f.anon--
	} else {
		delete(f.maps, mapName)
	}
	return f.closeIfUnused(log)
}

// closeIfUnused closes f if no map uses it; files' lock is held.
func (f *file) closeIfUnused(log *slog.Logger) error {
	if len(f.maps) > 0 || f.anon > 0 {
		return nil
	}
	delete(files.m, f.path)
	log.Debug("stowage/mapstore/boltstore: closing file", "path", f.path)
	if err := f.db.Close(); err != nil {
		return fmt.Errorf("stowage/mapstore/boltstore: close %s: %w", f.path, err)
	}
	return nil
}
