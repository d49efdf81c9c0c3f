package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/stowage/stowage/fsbackend"
)

// Config is what an FS needs besides its Driver. Each field states a
// behaviour that differs between the back ends.
type Config struct {
	// Pkg prefixes every error, such as "stowage/fsbackend/s3".
	Pkg string
	// Scheme and Bucket name objects in errors and logs, as
	// Scheme://Bucket/key.
	Scheme, Bucket string
	// Prefix, if not empty, is a key prefix (a valid fsbackend name) below
	// which every name lives, as Prefix/name; empty is the bucket's root.
	Prefix string
	// Retry bounds every request: the attempts after Transient errors, the
	// backoff between them and the deadline of each. The zero value means
	// DefaultRetryPolicy. A Driver whose SDK retries on its own passes
	// MaxAttempts 1 and its deadline.
	Retry RetryPolicy
	// CheckOnCreate makes Create look the name up (one Head) and refuse an
	// existing name at once. Otherwise Create sends nothing and Close
	// refuses it. Either way PutIfAbsent at Close is the atomic check.
	CheckOnCreate bool
	// DeadlineFromCreate counts a Writer's Retry.Deadline from Create
	// rather than from Close.
	DeadlineFromCreate bool
	// MaxObjectSize, if > 0, is the most one PutIfAbsent can store; a
	// Write beyond it fails.
	MaxObjectSize int64
	// Redact removes credential values from errors and logs (nil: none
	// known). A Redactor holds fixed values, a *Learned those a provider
	// handed out.
	Redact Scrubber
	// Logger receives debug logs (retries); slog.Default() when nil.
	Logger *slog.Logger
	// Release, if not nil, releases the Driver's client. FS.Close calls
	// it once; New calls it when it fails.
	Release func() error
}

// FS is a bucket, or a key prefix of one, as an fsbackend.FS over a
// Driver. It is safe for concurrent use.
//
// Capabilities: no DurableAppend, no AtomicRename (Rename is Copy then
// Delete, or the Driver's Move), ConditionalCreate (PutIfAbsent). A Writer
// keeps the object in memory and Close makes one PutIfAbsent, retried
// under Config.Retry and the context given to Create; a retry that meets
// Taken finds out with Head and Sum whether the object there is its own
// (an earlier attempt stored it and the answer was lost). Abort after a
// failed Close removes the object only if it holds exactly the writer's
// bytes, and never after Taken. Open makes one Head; each ReadAt is one
// ranged Get pinned to the Head's Object.Version, under the context given
// to Open. Stat is Head; Remove is Head (fs.ErrNotExist for a missing
// object, since a DELETE may succeed on one) then Delete; List reads every
// page below dir and sorts by name, skipping keys that are no valid name
// (directory markers ending in "/"). Every request is retried alone.
type FS struct {
	d      Driver
	c      Config
	root   string // "" or Prefix + "/"
	log    *slog.Logger
	stats  Stats
	closed atomic.Bool
}

// New returns an FS over d. It makes no request.
func New(d Driver, c Config) (*FS, error) {
	c.Prefix = strings.Trim(c.Prefix, "/")
	var err error
	if c.Bucket == "" {
		err = fmt.Errorf("%s: no bucket given", c.Pkg)
	} else if err = fsbackend.ValidDir(c.Prefix); err != nil {
		err = fmt.Errorf("%s: bucket prefix: %w", c.Pkg, err)
	}
	if err != nil {
		if c.Release != nil {
			_ = c.Release()
		}
		return nil, err
	}
	if c.Retry == (RetryPolicy{}) {
		c.Retry = DefaultRetryPolicy()
	}
	l := c.Logger
	if l == nil {
		l = slog.Default()
	}
	f := &FS{d: d, c: c, log: l.With("backend", c.Scheme, "bucket", c.Bucket)}
	if c.Prefix != "" {
		f.root = c.Prefix + "/"
	}
	return f, nil
}

// BytesWritten is the total size of the objects this FS made durable
// (PUTs and the copies of Rename), the numerator of "bytes written per
// byte of new data".
func (f *FS) BytesWritten() int64 { return f.stats.BytesWritten() }

// ObjectsWritten is the number of objects this FS made durable.
func (f *FS) ObjectsWritten() int64 { return f.stats.ObjectsWritten() }

// Retries is the number of requests this FS sent again after a Transient
// error.
func (f *FS) Retries() int64 { return f.stats.Retries() }

// Capabilities implements fsbackend.FS.
func (f *FS) Capabilities() fsbackend.Capabilities {
	return fsbackend.Capabilities{DurableAppend: false, AtomicRename: false, ConditionalCreate: true}
}

// key checks name and the FS state and returns name's object key.
func (f *FS) key(name string) (string, error) {
	if f.closed.Load() {
		return "", fsbackend.ErrClosed
	}
	if err := fsbackend.ValidName(name); err != nil {
		return "", err
	}
	return f.root + name, nil
}

func (f *FS) url(key string) string { return f.c.Scheme + "://" + f.c.Bucket + "/" + key }

// retry runs one request under the retry policy, counting and logging
// each retry.
func (f *FS) retry(ctx context.Context, op, key string, fn func(ctx context.Context, attempt int) error) error {
	return Retry(ctx, f.c.Retry, f.retryable, func(attempt int, err error) {
		f.stats.AddRetry()
		f.log.Debug(f.c.Pkg+": retrying request", "op", op, "key", key, "attempt", attempt, "error", scrubString(f.c.Redact, err.Error()))
	}, fn)
}

func (f *FS) retryable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	return errors.Is(err, errShortRead) || f.d.Classify(err) == Transient
}

func (f *FS) head(ctx context.Context, key string) (Object, error) {
	var o Object
	err := f.retry(ctx, "head", key, func(ctx context.Context, _ int) error {
		var err error
		o, err = f.d.Head(ctx, key)
		return err
	})
	return o, err
}

// Create implements fsbackend.FS. The PUT is made by the Writer's Close,
// under ctx.
func (f *FS) Create(ctx context.Context, name string) (fsbackend.Writer, error) {
	key, err := f.key(name)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if f.c.CheckOnCreate {
		_, err := f.head(ctx, key)
		if err == nil {
			return nil, fmt.Errorf("%s: %w", f.c.Pkg, &fs.PathError{Op: "create", Path: f.url(key), Err: fs.ErrExist})
		}
		if f.d.Classify(err) != Missing {
			return nil, f.fail("create", key, err)
		}
	}
	return &writer{f: f, ctx: ctx, key: key, created: time.Now()}, nil
}

// put stores data under key if no object has that key.
func (f *FS) put(ctx context.Context, key string, data []byte) error {
	err := f.retry(ctx, "put", key, func(ctx context.Context, attempt int) error {
		err := f.d.PutIfAbsent(ctx, key, data)
		if err != nil && attempt > 1 && f.d.Classify(err) == Taken {
			// An earlier attempt may have stored the object and lost the
			// answer: if what is there is exactly our data, it is ours.
			if o, herr := f.d.Head(ctx, key); herr == nil && f.holds(o, data) {
				return nil
			}
		}
		return err
	})
	if err == nil {
		f.stats.AddWrite(int64(len(data)))
	}
	return err
}

// holds reports whether o is exactly data, by size and digest.
func (f *FS) holds(o Object, data []byte) bool {
	return o.Size == int64(len(data)) && o.Sum != "" && strings.EqualFold(o.Sum, f.d.Sum(data))
}

// removeIfOurs deletes key after a failed Close if the object there holds
// exactly data (the PUT went through but its answer was lost); it never
// deletes another writer's object.
func (f *FS) removeIfOurs(ctx context.Context, key string, data []byte) error {
	o, err := f.head(ctx, key)
	switch {
	case err != nil && f.d.Classify(err) == Missing:
		return nil
	case err != nil:
		return f.fail("abort", key, err)
	case !f.holds(o, data):
		return nil
	}
	return f.delete(ctx, "abort", key)
}

// delete removes key; a missing object counts as removed.
func (f *FS) delete(ctx context.Context, op, key string) error {
	err := f.retry(ctx, op, key, func(ctx context.Context, _ int) error {
		return f.d.Delete(ctx, key)
	})
	if err != nil && f.d.Classify(err) != Missing {
		return f.fail(op, key, err)
	}
	return nil
}

// Open implements fsbackend.FS.
func (f *FS) Open(ctx context.Context, name string) (fsbackend.Reader, error) {
	key, err := f.key(name)
	if err != nil {
		return nil, err
	}
	o, err := f.head(ctx, key)
	if err != nil {
		return nil, f.fail("open", key, err)
	}
	return &reader{f: f, ctx: ctx, key: key, version: o.Version, size: o.Size}, nil
}

// read fills p from off with one ranged Get pinned to version (retried
// as a whole).
func (f *FS) read(ctx context.Context, key, version string, p []byte, off int64) error {
	err := f.retry(ctx, "read", key, func(ctx context.Context, _ int) error {
		body, err := f.d.Get(ctx, key, version, off, int64(len(p)))
		if err != nil {
			return err
		}
		defer body.Close()
		if _, err := io.ReadFull(body, p); err != nil {
			return fmt.Errorf("%w of %d bytes at %d: %w", errShortRead, len(p), off, err)
		}
		return nil
	})
	if err == nil {
		return nil
	}
	if c := f.d.Classify(err); version != "" && (c == Missing || c == Taken) {
		err = fmt.Errorf("object was replaced or removed while open: %w", err)
	}
	return f.fail("read", key, err)
}

// Stat implements fsbackend.FS.
func (f *FS) Stat(ctx context.Context, name string) (fsbackend.FileInfo, error) {
	key, err := f.key(name)
	if err != nil {
		return fsbackend.FileInfo{}, err
	}
	o, err := f.head(ctx, key)
	if err != nil {
		return fsbackend.FileInfo{}, f.fail("stat", key, err)
	}
	return fsbackend.FileInfo{Name: name, Size: o.Size, ModTime: o.ModTime}, nil
}

// List implements fsbackend.FS.
func (f *FS) List(ctx context.Context, dir string) ([]fsbackend.FileInfo, error) {
	if f.closed.Load() {
		return nil, fsbackend.ErrClosed
	}
	if err := fsbackend.ValidDir(dir); err != nil {
		return nil, err
	}
	prefix := f.root
	if dir != "" {
		prefix += dir + "/"
	}
	var out []fsbackend.FileInfo
	for token := ""; ; {
		var page Page
		err := f.retry(ctx, "list", prefix, func(ctx context.Context, _ int) error {
			var err error
			page, err = f.d.List(ctx, prefix, token)
			return err
		})
		if err != nil {
			return nil, f.fail("list", prefix, err)
		}
		for _, o := range page.Objects {
			name, ok := strings.CutPrefix(o.Key, f.root)
			if !ok || fsbackend.ValidName(name) != nil {
				continue
			}
			out = append(out, fsbackend.FileInfo{Name: name, Size: o.Size, ModTime: o.ModTime})
		}
		if token = page.Next; token == "" {
			break
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Remove implements fsbackend.FS.
func (f *FS) Remove(ctx context.Context, name string) error {
	key, err := f.key(name)
	if err != nil {
		return err
	}
	if _, err := f.head(ctx, key); err != nil {
		return f.fail("remove", key, err)
	}
	return f.delete(ctx, "remove", key)
}

// Rename implements fsbackend.FS: not atomic (after a failure between the
// copy and the delete both names exist).
func (f *FS) Rename(ctx context.Context, oldName, newName string) error {
	oldKey, err := f.key(oldName)
	if err != nil {
		return err
	}
	newKey, err := f.key(newName)
	if err != nil {
		return err
	}
	o, err := f.head(ctx, oldKey)
	if err != nil {
		return f.fail("rename", oldKey, err)
	}
	if oldKey == newKey {
		return nil
	}
	if m, ok := f.d.(Mover); ok {
		err := f.retry(ctx, "move", oldKey, func(ctx context.Context, _ int) error {
			return m.Move(ctx, oldKey, newKey)
		})
		if err != nil {
			return f.fail("rename", oldKey, err)
		}
		return nil
	}
	err = f.retry(ctx, "copy", newKey, func(ctx context.Context, _ int) error {
		return f.d.Copy(ctx, oldKey, newKey)
	})
	if err != nil {
		return f.fail("rename", newKey, err)
	}
	f.stats.AddWrite(o.Size)
	return f.delete(ctx, "rename", oldKey)
}

// Close implements fsbackend.FS. Calls after Close fail with
// fsbackend.ErrClosed.
func (f *FS) Close() error {
	if f.closed.Swap(true) || f.c.Release == nil {
		return nil
	}
	return f.c.Release()
}

var _ fsbackend.FS = (*FS)(nil)
