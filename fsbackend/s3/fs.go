package s3

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/internal/objstore"
)

// FS is one bucket (and key prefix) as an fsbackend.FS. It is safe for
// concurrent use.
type FS struct {
	o      Options
	c      *client
	log    *slog.Logger
	stats  objstore.Stats
	closed atomic.Bool
	pkg    string
}

// New returns an FS for o. It does no I/O: a wrong bucket or credentials
// show on the first request.
func New(ctx context.Context, o Options) (*FS, error) {
	if o.Scheme == "" {
		o.Scheme = "s3"
	}
	if o.Bucket == "" {
		return nil, fmt.Errorf("stowage/fsbackend/%s: no bucket given", o.Scheme)
	}
	if o.Prefix != "" {
		if err := fsbackend.ValidName(o.Prefix); err != nil {
			return nil, fmt.Errorf("stowage/fsbackend/%s: key prefix: %w", o.Scheme, err)
		}
	}
	if o.Region == "" {
		o.Region = "us-east-1"
	}
	if o.Retry.Multiplier == 0 && o.Retry.Initial == 0 {
		o.Retry = objstore.DefaultRetryPolicy()
	}
	l := o.Logger
	if l == nil {
		l = slog.Default()
	}
	return &FS{o: o, c: acquire(&o), log: l.With("backend", o.Scheme, "bucket", o.Bucket), pkg: "stowage/fsbackend/" + o.Scheme}, nil
}

// Open builds an FS from SeaTunnel/Hadoop S3A properties (see the package
// documentation for the keys).
func Open(ctx context.Context, p fsbackend.Properties) (*FS, error) {
	o, err := ParseProperties(ctx, p)
	if err != nil {
		return nil, err
	}
	return New(ctx, o)
}

func init() {
	fsbackend.Register("s3", func(ctx context.Context, p fsbackend.Properties) (fsbackend.FS, error) {
		return Open(ctx, p)
	})
}

// BytesWritten is the total size of the objects this FS made durable
// (PUTs and the copies of Rename), the numerator of "bytes written per
// byte of new data".
func (f *FS) BytesWritten() int64 { return f.stats.BytesWritten() }

// ObjectsWritten is the number of objects this FS made durable.
func (f *FS) ObjectsWritten() int64 { return f.stats.ObjectsWritten() }

// Retries is the number of requests this FS retried after throttling or
// a server or connection error.
func (f *FS) Retries() int64 { return f.stats.Retries() }

// Capabilities implements fsbackend.FS: no durable append, rename is copy
// then delete, create-if-absent is one conditional PUT (If-None-Match: *).
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
	return fsbackend.Join(f.o.Prefix, name), nil
}

func (f *FS) url(key string) string { return f.o.Scheme + "://" + f.o.Bucket + "/" + key }

func (f *FS) fail(op, key string, err error) error {
	return fmt.Errorf("%s: %w", f.pkg, mapErr(op, f.url(key), err))
}

// retry runs one request under the FS's retry policy.
func (f *FS) retry(ctx context.Context, op, key string, fn func(ctx context.Context, attempt int) error) error {
	return objstore.Retry(ctx, f.o.Retry, retryable, func(attempt int, err error) {
		f.stats.AddRetry()
		f.log.Debug("retrying request", "op", op, "key", key, "attempt", attempt, "status", statusCode(err), "code", errorCode(err))
	}, fn)
}

type head struct {
	size    int64
	modTime time.Time
	etag    string
}

func (f *FS) head(ctx context.Context, key string) (head, error) {
	var h head
	err := f.retry(ctx, "head", key, func(ctx context.Context, _ int) error {
		out, err := f.c.api.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &f.o.Bucket, Key: &key})
		if err != nil {
			return err
		}
		h = head{size: aws.ToInt64(out.ContentLength), modTime: aws.ToTime(out.LastModified), etag: strings.Trim(aws.ToString(out.ETag), `"`)}
		return nil
	})
	return h, err
}

// Create implements fsbackend.FS. It makes no request: the PUT made by
// Close is conditional (If-None-Match: *), so an existing name, or a
// writer that won a race for the name, makes Close fail with an error
// matching fs.ErrExist, and of two writers racing for one name exactly one
// Close succeeds. (A HEAD here would cost one more round trip per batch
// and still not be the atomic check.)
func (f *FS) Create(ctx context.Context, name string) (fsbackend.Writer, error) {
	key, err := f.key(name)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return objstore.NewWriter(ctx, func(ctx context.Context, data []byte) error {
		return f.put(ctx, key, data)
	}, func(ctx context.Context, data []byte) error {
		return f.removeIfOurs(ctx, key, data)
	}), nil
}

// put stores data under key if no object has that key.
func (f *FS) put(ctx context.Context, key string, data []byte) error {
	sum := md5.Sum(data)
	md5hex := hex.EncodeToString(sum[:])
	var extra []func(*s3.Options)
	for k, v := range f.o.PutHeaders {
		extra = append(extra, s3.WithAPIOptions(smithyhttp.SetHeaderValue(k, v)))
	}
	err := f.retry(ctx, "put", key, func(ctx context.Context, attempt int) error {
		_, err := f.c.api.PutObject(ctx, &s3.PutObjectInput{
			Bucket:        &f.o.Bucket,
			Key:           &key,
			Body:          bytes.NewReader(data),
			ContentLength: aws.Int64(int64(len(data))),
			IfNoneMatch:   aws.String("*"),
		}, extra...)
		if err != nil && attempt > 1 && isPrecondition(err) {
			// An earlier attempt may have stored the object and lost the
			// answer: if what is there is exactly our data, it is ours.
			if h, herr := f.head(ctx, key); herr == nil && h.size == int64(len(data)) && strings.EqualFold(h.etag, md5hex) {
				return nil
			}
		}
		return err
	})
	if err != nil {
		return f.fail("create", key, err)
	}
	f.stats.AddWrite(int64(len(data)))
	return nil
}

// removeIfOurs deletes key after a failed Close if the object there holds
// exactly data (the PUT went through but its answer was lost); it never
// deletes another writer's object.
func (f *FS) removeIfOurs(ctx context.Context, key string, data []byte) error {
	h, err := f.head(ctx, key)
	if err != nil {
		if isNotFound(err) {
			return nil
		}
		return f.fail("abort", key, err)
	}
	sum := md5.Sum(data)
	if h.size != int64(len(data)) || !strings.EqualFold(h.etag, hex.EncodeToString(sum[:])) {
		return nil
	}
	return f.delete(ctx, key, "abort")
}

func (f *FS) delete(ctx context.Context, key, op string) error {
	err := f.retry(ctx, op, key, func(ctx context.Context, _ int) error {
		_, err := f.c.api.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &f.o.Bucket, Key: &key})
		return err
	})
	if err != nil && !isNotFound(err) {
		return f.fail(op, key, err)
	}
	return nil
}

// Open implements fsbackend.FS: a HEAD gives the size, and each ReadAt is
// one ranged GET.
func (f *FS) Open(ctx context.Context, name string) (fsbackend.Reader, error) {
	key, err := f.key(name)
	if err != nil {
		return nil, err
	}
	h, err := f.head(ctx, key)
	if err != nil {
		return nil, f.fail("open", key, err)
	}
	rctx := context.WithoutCancel(ctx)
	return objstore.NewReader(f.url(key), h.size, func(p []byte, off int64) (int, error) {
		return f.readRange(rctx, key, p, off)
	}), nil
}

// readRange fills p from off with one ranged GET (retried as a whole).
func (f *FS) readRange(ctx context.Context, key string, p []byte, off int64) (int, error) {
	rng := fmt.Sprintf("bytes=%d-%d", off, off+int64(len(p))-1)
	var n int
	err := f.retry(ctx, "read", key, func(ctx context.Context, _ int) error {
		out, err := f.c.api.GetObject(ctx, &s3.GetObjectInput{Bucket: &f.o.Bucket, Key: &key, Range: &rng})
		if err != nil {
			return err
		}
		defer out.Body.Close()
		n, err = io.ReadFull(out.Body, p)
		if err != nil {
			// A short body: the object changed or the connection broke.
			return fmt.Errorf("short read of %d bytes at %d: %w", len(p), off, err)
		}
		return nil
	})
	if err != nil {
		return n, f.fail("read", key, err)
	}
	return n, nil
}

// Stat implements fsbackend.FS with one HEAD.
func (f *FS) Stat(ctx context.Context, name string) (fsbackend.FileInfo, error) {
	key, err := f.key(name)
	if err != nil {
		return fsbackend.FileInfo{}, err
	}
	h, err := f.head(ctx, key)
	if err != nil {
		return fsbackend.FileInfo{}, f.fail("stat", key, err)
	}
	return fsbackend.FileInfo{Name: name, Size: h.size, ModTime: h.modTime}, nil
}

// List implements fsbackend.FS: ListObjectsV2 below dir+"/", without a
// delimiter (every depth), page by page. Keys that are not valid names
// (directory markers ending in "/", for example) are skipped.
func (f *FS) List(ctx context.Context, dir string) ([]fsbackend.FileInfo, error) {
	if f.closed.Load() {
		return nil, fsbackend.ErrClosed
	}
	if err := fsbackend.ValidDir(dir); err != nil {
		return nil, err
	}
	base := fsbackend.Join(f.o.Prefix, dir)
	prefix := ""
	if base != "" {
		prefix = base + "/"
	}
	rootPrefix := ""
	if f.o.Prefix != "" {
		rootPrefix = f.o.Prefix + "/"
	}
	var out []fsbackend.FileInfo
	var token *string
	for {
		var page *s3.ListObjectsV2Output
		err := f.retry(ctx, "list", prefix, func(ctx context.Context, _ int) error {
			var err error
			page, err = f.c.api.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &f.o.Bucket, Prefix: aws.String(prefix), ContinuationToken: token})
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.pkg, &fs.PathError{Op: "list", Path: f.url(prefix), Err: err})
		}
		for _, obj := range page.Contents {
			name, ok := strings.CutPrefix(aws.ToString(obj.Key), rootPrefix)
			if !ok || fsbackend.ValidName(name) != nil {
				continue
			}
			out = append(out, fsbackend.FileInfo{Name: name, Size: aws.ToInt64(obj.Size), ModTime: aws.ToTime(obj.LastModified)})
		}
		if !aws.ToBool(page.IsTruncated) || page.NextContinuationToken == nil {
			break
		}
		token = page.NextContinuationToken
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Remove implements fsbackend.FS. S3's DELETE succeeds on a missing key,
// so a HEAD first tells a missing file (fs.ErrNotExist).
func (f *FS) Remove(ctx context.Context, name string) error {
	key, err := f.key(name)
	if err != nil {
		return err
	}
	if _, err := f.head(ctx, key); err != nil {
		return f.fail("remove", key, err)
	}
	return f.delete(ctx, key, "remove")
}

// Rename implements fsbackend.FS as a server-side CopyObject then a
// DeleteObject of the old key: not atomic (both names exist for a moment;
// after a crash in between, both stay).
func (f *FS) Rename(ctx context.Context, oldName, newName string) error {
	oldKey, err := f.key(oldName)
	if err != nil {
		return err
	}
	newKey, err := f.key(newName)
	if err != nil {
		return err
	}
	h, err := f.head(ctx, oldKey)
	if err != nil {
		return f.fail("rename", oldKey, err)
	}
	if oldKey == newKey {
		return nil
	}
	src := copySource(f.o.Bucket, oldKey)
	err = f.retry(ctx, "copy", newKey, func(ctx context.Context, _ int) error {
		_, err := f.c.api.CopyObject(ctx, &s3.CopyObjectInput{Bucket: &f.o.Bucket, Key: &newKey, CopySource: &src})
		return err
	})
	if err != nil {
		return f.fail("rename", newKey, err)
	}
	f.stats.AddWrite(h.size)
	return f.delete(ctx, oldKey, "rename")
}

func copySource(bucket, key string) string {
	parts := strings.Split(key, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return bucket + "/" + strings.Join(parts, "/")
}

// Close implements fsbackend.FS. Calls after Close fail with
// fsbackend.ErrClosed. The shared client stays cached for the next FS.
func (f *FS) Close() error {
	if f.closed.Swap(true) {
		return nil
	}
	release(f.c)
	return nil
}

var _ fsbackend.FS = (*FS)(nil)
