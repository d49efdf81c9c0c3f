package gcs

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"cloud.google.com/go/storage"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/internal/objstore"
)

// RetryPolicy says how failed requests are retried by the client library.
// The zero value means the defaults.
type RetryPolicy struct {
	// MaxAttempts per request, the first included; 0 means until the
	// deadline.
	MaxAttempts int
	// BaseDelay is the first backoff (default 100ms), doubling up to
	// MaxDelay (default 5s).
	BaseDelay, MaxDelay time.Duration
	// Deadline bounds one operation with its retries (default 2m); a
	// Writer's deadline starts at Create.
	Deadline time.Duration
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.BaseDelay <= 0 {
		p.BaseDelay = 100 * time.Millisecond
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 5 * time.Second
	}
	if p.Deadline <= 0 {
		p.Deadline = 2 * time.Minute
	}
	return p
}

// Options configure an FS built with New.
type Options struct {
	// Bucket is the bucket name, without gs://.
	Bucket string
	// Prefix, if set, is a directory in the bucket that is the FS's root.
	Prefix string
	// Client is used if set; the caller keeps it and closes it. Otherwise
	// New builds one from ClientOptions.
	Client *storage.Client
	// ClientOptions for storage.NewClient when Client is nil.
	ClientOptions []option.ClientOption
	// Retry is the retry policy; the zero value means the defaults.
	Retry RetryPolicy
	// UseMove makes Rename use the object move API instead of copy then
	// delete (fs.gs.operation.move.enable).
	UseMove bool
	// UserProject, if set, is the project billed for every request, as
	// requester-pays buckets demand (fs.gs.requester.pays.mode: ENABLED).
	UserProject string
	// Logger receives debug logs; nil means slog.Default().
	Logger *slog.Logger
}

// FS is a GCS bucket (or a prefix of one) used as an fsbackend.FS. It is
// safe for concurrent use.
type FS struct {
	bucket *storage.BucketHandle
	// always retries copies and deletes too, which GCS counts as not
	// idempotent without preconditions; for stowage's immutable files a
	// repeated copy or delete is harmless.
	always     *storage.BucketHandle
	bucketName string
	prefix     string // "" or "dir/"
	retry      RetryPolicy
	useMove    bool
	log        *slog.Logger
	release    func() error
	closed     atomic.Bool
}

// New returns an FS for opts. It does not contact the server.
func New(ctx context.Context, opts Options) (*FS, error) {
	if opts.Bucket == "" {
		return nil, errors.New("stowage/fsbackend/gcs: no bucket (key gcs.bucket)")
	}
	prefix := strings.Trim(opts.Prefix, "/")
	if err := fsbackend.ValidDir(prefix); err != nil {
		return nil, fmt.Errorf("stowage/fsbackend/gcs: bucket prefix: %w", err)
	}
	if prefix != "" {
		prefix += "/"
	}
	client, release := opts.Client, func() error { return nil }
	if client == nil {
		var err error
		if client, err = storage.NewClient(ctx, opts.ClientOptions...); err != nil {
			return nil, fmt.Errorf("stowage/fsbackend/gcs: client: %w", err)
		}
		release = client.Close
	}
	return newFS(client, release, opts), nil
}

func newFS(client *storage.Client, release func() error, opts Options) *FS {
	rp := opts.Retry.withDefaults()
	ropts := []storage.RetryOption{
		storage.WithBackoff(gax.Backoff{Initial: rp.BaseDelay, Max: rp.MaxDelay, Multiplier: 2}),
		storage.WithPolicy(storage.RetryIdempotent),
	}
	if rp.MaxAttempts > 0 {
		ropts = append(ropts, storage.WithMaxAttempts(rp.MaxAttempts))
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	prefix := strings.Trim(opts.Prefix, "/")
	if prefix != "" {
		prefix += "/"
	}
	always := append(ropts[:len(ropts):len(ropts)], storage.WithPolicy(storage.RetryAlways))
	bucket := func() *storage.BucketHandle {
		b := client.Bucket(opts.Bucket)
		if opts.UserProject != "" {
			b = b.UserProject(opts.UserProject)
		}
		return b
	}
	return &FS{
		bucket:     bucket().Retryer(ropts...),
		always:     bucket().Retryer(always...),
		bucketName: opts.Bucket, prefix: prefix,
		retry: rp, useMove: opts.UseMove, log: log, release: release,
	}
}

// Capabilities implements fsbackend.FS.
func (f *FS) Capabilities() fsbackend.Capabilities {
	return fsbackend.Capabilities{DurableAppend: false, AtomicRename: false, ConditionalCreate: true}
}

func (f *FS) key(name string) (string, error) {
	if f.closed.Load() {
		return "", fsbackend.ErrClosed
	}
	if err := fsbackend.ValidName(name); err != nil {
		return "", err
	}
	return f.prefix + name, nil
}

func (f *FS) pathErr(op, name string, err error) error {
	if err == nil {
		return nil
	}
	return &fs.PathError{Op: op, Path: "gs://" + f.bucketName + "/" + f.prefix + name, Err: classify(err)}
}

func httpCode(err error) int {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return ge.Code
	}
	return 0
}

// classify maps client errors onto the fs sentinels, with hints.
func classify(err error) error {
	switch code := httpCode(err); {
	case errors.Is(err, storage.ErrBucketNotExist):
		return fmt.Errorf("stowage/fsbackend/gcs: bucket does not exist (key gcs.bucket): %w", err)
	case errors.Is(err, storage.ErrObjectNotExist) || code == http.StatusNotFound:
		return fmt.Errorf("stowage/fsbackend/gcs: %w: %w", fs.ErrNotExist, err)
	case code == http.StatusPreconditionFailed:
		return fmt.Errorf("stowage/fsbackend/gcs: %w: %w", fs.ErrExist, err)
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return fmt.Errorf("stowage/fsbackend/gcs: access denied (check fs.gs.auth.service.account.json.keyfile or GOOGLE_APPLICATION_CREDENTIALS): %w", err)
	}
	return fmt.Errorf("stowage/fsbackend/gcs: %w", err)
}

func (f *FS) opCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, f.retry.Deadline)
}

// Stat implements fsbackend.FS.
func (f *FS) Stat(ctx context.Context, name string) (fsbackend.FileInfo, error) {
	key, err := f.key(name)
	if err != nil {
		return fsbackend.FileInfo{}, err
	}
	ctx, cancel := f.opCtx(ctx)
	defer cancel()
	a, err := f.bucket.Object(key).Attrs(ctx)
	if err != nil {
		return fsbackend.FileInfo{}, f.pathErr("stat", name, err)
	}
	return fsbackend.FileInfo{Name: name, Size: a.Size, ModTime: a.Updated}, nil
}

// List implements fsbackend.FS.
func (f *FS) List(ctx context.Context, dir string) ([]fsbackend.FileInfo, error) {
	if f.closed.Load() {
		return nil, fsbackend.ErrClosed
	}
	if err := fsbackend.ValidDir(dir); err != nil {
		return nil, err
	}
	ctx, cancel := f.opCtx(ctx)
	defer cancel()
	prefix := f.prefix
	if dir != "" {
		prefix += dir + "/"
	}
	q := &storage.Query{Prefix: prefix}
	if err := q.SetAttrSelection([]string{"Name", "Size", "Updated"}); err != nil {
		return nil, fmt.Errorf("stowage/fsbackend/gcs: %w", err)
	}
	var out []fsbackend.FileInfo
	it := f.bucket.Objects(ctx, q)
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return nil, f.pathErr("list", dir, err)
		}
		if strings.HasSuffix(a.Name, "/") || !strings.HasPrefix(a.Name, f.prefix) {
			continue
		}
		out = append(out, fsbackend.FileInfo{Name: a.Name[len(f.prefix):], Size: a.Size, ModTime: a.Updated})
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
	ctx, cancel := f.opCtx(ctx)
	defer cancel()
	return f.pathErr("remove", name, f.always.Object(key).Delete(ctx))
}

// Rename implements fsbackend.FS: copy then delete, or the move API when
// enabled. Neither is atomic for the stowage contract's purposes.
func (f *FS) Rename(ctx context.Context, oldName, newName string) error {
	ok, err := f.key(oldName)
	if err != nil {
		return err
	}
	nk, err := f.key(newName)
	if err != nil {
		return err
	}
	ctx, cancel := f.opCtx(ctx)
	defer cancel()
	src := f.bucket.Object(ok)
	if ok == nk {
		_, err := src.Attrs(ctx)
		return f.pathErr("rename", oldName, err)
	}
	if f.useMove {
		_, err := src.Move(ctx, storage.MoveObjectDestination{Object: nk})
		return f.pathErr("rename", oldName, err)
	}
	if _, err := f.always.Object(nk).CopierFrom(src).Run(ctx); err != nil {
		return f.pathErr("rename", oldName, err)
	}
	err = f.always.Object(ok).Delete(ctx)
	if errors.Is(err, storage.ErrObjectNotExist) {
		err = nil // a retried delete whose first answer was lost
	}
	return f.pathErr("rename", oldName, err)
}

// Close implements fsbackend.FS.
func (f *FS) Close() error {
	if f.closed.Swap(true) {
		return nil
	}
	return f.release()
}

// Create implements fsbackend.FS.
func (f *FS) Create(ctx context.Context, name string) (fsbackend.Writer, error) {
	key, err := f.key(name)
	if err != nil {
		return nil, err
	}
	actx, cancel := f.opCtx(ctx)
	_, err = f.bucket.Object(key).Attrs(actx)
	cancel()
	switch {
	case err == nil:
		return nil, &fs.PathError{Op: "create", Path: "gs://" + f.bucketName + "/" + key,
			Err: fmt.Errorf("stowage/fsbackend/gcs: %w", fs.ErrExist)}
	case !errors.Is(err, storage.ErrObjectNotExist):
		return nil, f.pathErr("create", name, err)
	}
	// The deadline of the upload starts at Create. mayExist: the failed
	// upload may have stored the object, so Abort removes it; it is false
	// when the precondition failed (someone else's object).
	deadline := time.Now().Add(f.retry.Deadline)
	mayExist := false
	return objstore.NewWriter(ctx, func(ctx context.Context, data []byte) error {
		ctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		err := f.upload(ctx, key, data)
		mayExist = err != nil && httpCode(err) != http.StatusPreconditionFailed
		return f.pathErr("close", name, err)
	}, func(ctx context.Context, _ []byte) error {
		if !mayExist {
			return nil
		}
		ctx, cancel := f.opCtx(ctx)
		defer cancel()
		err := f.always.Object(key).Delete(ctx)
		if errors.Is(err, storage.ErrObjectNotExist) {
			return nil
		}
		return f.pathErr("abort", name, err)
	}), nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// upload stores data under key if no object has that key, in one request
// (retried by the client library).
func (f *FS) upload(ctx context.Context, key string, data []byte) error {
	sw := f.bucket.Object(key).If(storage.Conditions{DoesNotExist: true}).NewWriter(ctx)
	sw.ContentType = "application/octet-stream"
	sw.CRC32C = crc32.Checksum(data, castagnoli)
	sw.SendCRC32C = true
	sw.ChunkSize = max(len(data)+1, 256<<10) // one request, still retried by the library
	_, werr := sw.Write(data)
	cerr := sw.Close()
	return errors.Join(werr, cerr)
}

// Open implements fsbackend.FS.
func (f *FS) Open(ctx context.Context, name string) (fsbackend.Reader, error) {
	key, err := f.key(name)
	if err != nil {
		return nil, err
	}
	actx, cancel := f.opCtx(ctx)
	defer cancel()
	a, err := f.bucket.Object(key).Attrs(actx)
	if err != nil {
		return nil, f.pathErr("open", name, err)
	}
	obj := f.bucket.Object(key).Generation(a.Generation)
	return objstore.NewReader(name, a.Size, func(p []byte, off int64) (int, error) {
		return f.readRange(ctx, name, obj, p, off)
	}), nil
}

// readRange fills p from off with a range read of the generation Open saw.
func (f *FS) readRange(ctx context.Context, name string, obj *storage.ObjectHandle, p []byte, off int64) (int, error) {
	ctx, cancel := f.opCtx(ctx)
	defer cancel()
	rr, err := obj.NewRangeReader(ctx, off, int64(len(p)))
	if err != nil {
		if errors.Is(err, storage.ErrObjectNotExist) {
			return 0, f.pathErr("read", name, fmt.Errorf("object was replaced or removed while open: %w", err))
		}
		return 0, f.pathErr("read", name, err)
	}
	defer rr.Close()
	n, err := io.ReadFull(rr, p)
	if err != nil {
		return n, f.pathErr("read", name, err)
	}
	return n, nil
}

var _ fsbackend.FS = (*FS)(nil)
