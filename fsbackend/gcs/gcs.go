package gcs

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"cloud.google.com/go/storage"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"

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

// FS is a GCS bucket (or a prefix of one) used as an fsbackend.FS:
// objstore's file-system layer over the GCS driver below. It is safe for
// concurrent use.
type FS struct {
	*objstore.FS
}

// New returns an FS for opts. It does not contact the server.
func New(ctx context.Context, opts Options) (*FS, error) {
	if opts.Bucket == "" {
		return nil, errors.New("stowage/fsbackend/gcs: no bucket (key gcs.bucket)")
	}
	client, release := opts.Client, func() error { return nil }
	if client == nil {
		var err error
		if client, err = storage.NewClient(ctx, opts.ClientOptions...); err != nil {
			return nil, fmt.Errorf("stowage/fsbackend/gcs: client: %w", err)
		}
		release = client.Close
	}
	return newFS(client, release, opts)
}

// newFS builds the FS on client; Close calls release.
func newFS(client *storage.Client, release func() error, opts Options) (*FS, error) {
	rp := opts.Retry.withDefaults()
	ropts := []storage.RetryOption{
		storage.WithBackoff(gax.Backoff{Initial: rp.BaseDelay, Max: rp.MaxDelay, Multiplier: 2}),
		storage.WithPolicy(storage.RetryIdempotent),
	}
	if rp.MaxAttempts > 0 {
		ropts = append(ropts, storage.WithMaxAttempts(rp.MaxAttempts))
	}
	always := append(ropts[:len(ropts):len(ropts)], storage.WithPolicy(storage.RetryAlways))
	bucket := func() *storage.BucketHandle {
		b := client.Bucket(opts.Bucket)
		if opts.UserProject != "" {
			b = b.UserProject(opts.UserProject)
		}
		return b
	}
	var d objstore.Driver = &driver{bucket: bucket().Retryer(ropts...), always: bucket().Retryer(always...)}
	if opts.UseMove {
		d = mover{d.(*driver)}
	}
	f, err := objstore.New(d, objstore.Config{
		Pkg: pkg, Scheme: "gs", Bucket: opts.Bucket, Prefix: opts.Prefix,
		// The client library retries each request; the layer only bounds
		// it, and an upload's deadline starts at Create.
		Retry:         objstore.RetryPolicy{MaxAttempts: 1, Deadline: rp.Deadline},
		CheckOnCreate: true, DeadlineFromCreate: true,
		Logger: opts.Logger, Release: release,
	})
	if err != nil {
		return nil, err
	}
	return &FS{f}, nil
}

// driver is the GCS protocol as objstore needs it: reads are pinned to the
// object's generation, uploads carry the precondition DoesNotExist, and
// the CRC-32C GCS keeps of every object is the Sum.
type driver struct {
	bucket *storage.BucketHandle
	// always retries copies and deletes too, which GCS counts as not
	// idempotent without preconditions; for stowage's immutable files a
	// repeated copy or delete is harmless.
	always *storage.BucketHandle
}

// mover is driver with the object move API (fs.gs.operation.move.enable).
type mover struct{ *driver }

func (m mover) Move(ctx context.Context, src, dst string) error {
	_, err := m.bucket.Object(src).Move(ctx, storage.MoveObjectDestination{Object: dst})
	return err
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (d *driver) Head(ctx context.Context, key string) (objstore.Object, error) {
	a, err := d.bucket.Object(key).Attrs(ctx)
	if err != nil {
		return objstore.Object{}, err
	}
	return objstore.Object{Key: key, Size: a.Size, ModTime: a.Updated,
		Version: strconv.FormatInt(a.Generation, 10), Sum: strconv.FormatUint(uint64(a.CRC32C), 10)}, nil
}

func (d *driver) Get(ctx context.Context, key, version string, off, n int64) (io.ReadCloser, error) {
	obj := d.bucket.Object(key)
	if version != "" {
		gen, err := strconv.ParseInt(version, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("generation %q: %w", version, err)
		}
		obj = obj.Generation(gen)
	}
	return obj.NewRangeReader(ctx, off, n)
}

// PutIfAbsent uploads data in one request (retried by the client library)
// with the precondition DoesNotExist (ifGenerationMatch=0) and its CRC-32C.
func (d *driver) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	sw := d.bucket.Object(key).If(storage.Conditions{DoesNotExist: true}).NewWriter(ctx)
	sw.ContentType = "application/octet-stream"
	sw.CRC32C = crc32.Checksum(data, castagnoli)
	sw.SendCRC32C = true
	sw.ChunkSize = max(len(data)+1, 256<<10) // one request, still retried by the library
	_, werr := sw.Write(data)
	cerr := sw.Close()
	return errors.Join(werr, cerr)
}

func (d *driver) Delete(ctx context.Context, key string) error {
	return d.always.Object(key).Delete(ctx)
}

func (d *driver) Copy(ctx context.Context, src, dst string) error {
	_, err := d.always.Object(dst).CopierFrom(d.bucket.Object(src)).Run(ctx)
	return err
}

// List is one page of up to 1000 objects.
func (d *driver) List(ctx context.Context, prefix, token string) (objstore.Page, error) {
	q := &storage.Query{Prefix: prefix}
	if err := q.SetAttrSelection([]string{"Name", "Size", "Updated"}); err != nil {
		return objstore.Page{}, err
	}
	var attrs []*storage.ObjectAttrs
	next, err := iterator.NewPager(d.bucket.Objects(ctx, q), 1000, token).NextPage(&attrs)
	if err != nil {
		return objstore.Page{}, err
	}
	p := objstore.Page{Next: next}
	for _, a := range attrs {
		p.Objects = append(p.Objects, objstore.Object{Key: a.Name, Size: a.Size, ModTime: a.Updated})
	}
	return p, nil
}

// Sum is the CRC-32C (Castagnoli) of data in decimal, as Head reports it.
func (d *driver) Sum(data []byte) string {
	return strconv.FormatUint(uint64(crc32.Checksum(data, castagnoli)), 10)
}

func httpCode(err error) int {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return ge.Code
	}
	return 0
}

// Classify implements objstore.Driver: a missing object (not bucket) is
// Missing, a failed precondition (412) Taken. Nothing is Transient: the
// client library has retried already.
func (d *driver) Classify(err error) objstore.Class {
	switch code := httpCode(err); {
	case errors.Is(err, storage.ErrBucketNotExist):
		return objstore.Failed
	case errors.Is(err, storage.ErrObjectNotExist) || code == http.StatusNotFound:
		return objstore.Missing
	case code == http.StatusPreconditionFailed:
		return objstore.Taken
	}
	return objstore.Failed
}

// Explain implements objstore.Explainer.
func (d *driver) Explain(err error) string {
	switch code := httpCode(err); {
	case errors.Is(err, storage.ErrBucketNotExist):
		return "bucket does not exist (key gcs.bucket)"
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return "access denied (check fs.gs.auth.service.account.json.keyfile or GOOGLE_APPLICATION_CREDENTIALS)"
	}
	return ""
}
