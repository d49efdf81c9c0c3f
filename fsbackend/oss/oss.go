package oss

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	alioss "github.com/aliyun/aliyun-oss-go-sdk/oss"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/internal/objstore"
)

// Options configure an FS built with New.
type Options struct {
	// Endpoint is the OSS endpoint, such as oss-cn-hangzhou.aliyuncs.com
	// or http://127.0.0.1:port.
	Endpoint string
	// Bucket is the bucket name, without oss://.
	Bucket string
	// Prefix, if set, is a directory inside the bucket that is the FS's root.
	Prefix string
	// Credentials sign every request.
	Credentials Credentials
	// Retry is the retry policy; the zero value means the defaults.
	Retry RetryPolicy
	// DisableCache gives this FS its own client instead of a shared one.
	DisableCache bool
	// Logger receives debug logs; nil means slog.Default().
	Logger *slog.Logger
}

// FS is an OSS bucket (or a prefix of one) used as an fsbackend.FS. It is
// safe for concurrent use.
type FS struct {
	client      *alioss.Client
	bucket      *alioss.Bucket
	bucketName  string
	prefix      string // "" or "dir/" (with the trailing slash)
	retryPolicy objstore.RetryPolicy
	log         *slog.Logger
	release     func() // closes the client's idle connections if it is not shared
	redact      redactor
	closed      atomic.Bool
}

// New returns an FS for opts. It does not contact the server.
func New(ctx context.Context, opts Options) (*FS, error) {
	if opts.Endpoint == "" {
		return nil, errors.New("stowage/fsbackend/oss: no endpoint (key fs.oss.endpoint)")
	}
	if opts.Bucket == "" {
		return nil, errors.New("stowage/fsbackend/oss: no bucket (key oss.bucket)")
	}
	prefix := strings.Trim(opts.Prefix, "/")
	if err := fsbackend.ValidDir(prefix); err != nil {
		return nil, fmt.Errorf("stowage/fsbackend/oss: bucket prefix: %w", err)
	}
	if prefix != "" {
		prefix += "/"
	}
	if err := opts.Credentials.validate(); err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	client, release, red, err := getClient(opts.Endpoint, opts.Credentials, opts.DisableCache)
	if err != nil {
		return nil, err
	}
	b, err := client.Bucket(opts.Bucket)
	if err != nil {
		release()
		return nil, red.wrap(fmt.Errorf("stowage/fsbackend/oss: key oss.bucket: bucket %q: %w", opts.Bucket, err))
	}
	log.Debug("stowage/fsbackend/oss: opened", slog.String("endpoint", opts.Endpoint),
		slog.String("bucket", opts.Bucket), slog.String("prefix", prefix), slog.String("credentials", opts.Credentials.kind()))
	return &FS{
		client: client, bucket: b, bucketName: opts.Bucket, prefix: prefix,
		retryPolicy: opts.Retry.policy(), log: log, release: release, redact: red,
	}, nil
}

// Capabilities implements fsbackend.FS.
func (f *FS) Capabilities() fsbackend.Capabilities {
	return fsbackend.Capabilities{DurableAppend: false, AtomicRename: false, ConditionalCreate: true}
}

// key turns a name into an object key, checking the name and the FS state.
func (f *FS) key(name string) (string, error) {
	if f.closed.Load() {
		return "", fsbackend.ErrClosed
	}
	if err := fsbackend.ValidName(name); err != nil {
		return "", err
	}
	return f.prefix + name, nil
}

// pathErr wraps an SDK error for name with a stowage prefix, mapping OSS
// answers onto the fs sentinels. Its message holds no credential value,
// not even the access key id a server's answer may quote.
func (f *FS) pathErr(op, name string, err error) error {
	if err == nil {
		return nil
	}
	return &fs.PathError{Op: op, Path: "oss://" + f.bucketName + "/" + f.prefix + name, Err: f.redact.wrap(classify(err))}
}

// classify maps SDK errors to errors that match fs.ErrNotExist,
// fs.ErrExist and friends, with hints for credential problems.
func classify(err error) error {
	var se alioss.ServiceError
	if !errors.As(err, &se) {
		return fmt.Errorf("stowage/fsbackend/oss: %w", err)
	}
	switch {
	case se.StatusCode == http.StatusNotFound && se.Code == "NoSuchBucket":
		return fmt.Errorf("stowage/fsbackend/oss: bucket does not exist (key oss.bucket): %w", err)
	case se.StatusCode == http.StatusNotFound:
		return fmt.Errorf("stowage/fsbackend/oss: %w: %w", fs.ErrNotExist, err)
	case se.StatusCode == http.StatusConflict && se.Code == "FileAlreadyExists":
		return fmt.Errorf("stowage/fsbackend/oss: %w: %w", fs.ErrExist, err)
	case se.Code == "SignatureDoesNotMatch":
		return fmt.Errorf("stowage/fsbackend/oss: request signature rejected: the access key secret is wrong (check fs.oss.accessKeySecret or OSS_ACCESS_KEY_SECRET): %w", err)
	case se.Code == "InvalidAccessKeyId":
		return fmt.Errorf("stowage/fsbackend/oss: access key id unknown to the server (check fs.oss.accessKeyId or OSS_ACCESS_KEY_ID): %w", err)
	case se.Code == "InvalidSecurityToken" || se.Code == "SecurityTokenExpired":
		return fmt.Errorf("stowage/fsbackend/oss: security token rejected (check fs.oss.securityToken or OSS_SESSION_TOKEN): %w", err)
	case se.StatusCode == http.StatusForbidden:
		return fmt.Errorf("stowage/fsbackend/oss: access denied: %w", err)
	}
	return fmt.Errorf("stowage/fsbackend/oss: %w", err)
}

func isStatus(err error, status int, code string) bool {
	var se alioss.ServiceError
	return errors.As(err, &se) && se.StatusCode == status && (code == "" || se.Code == code)
}

// head returns an object's metadata.
func (f *FS) head(ctx context.Context, key string) (http.Header, error) {
	var h http.Header
	err := f.retry(ctx, "head", func(ctx context.Context, _ int) error {
		var err error
		h, err = f.bucket.GetObjectMeta(key, alioss.WithContext(ctx))
		return err
	})
	return h, err
}

func infoFromHeader(name string, h http.Header) (fsbackend.FileInfo, error) {
	size, err := strconv.ParseInt(h.Get("Content-Length"), 10, 64)
	if err != nil {
		return fsbackend.FileInfo{}, fmt.Errorf("stowage/fsbackend/oss: %s: bad Content-Length %q", name, h.Get("Content-Length"))
	}
	mt, _ := http.ParseTime(h.Get("Last-Modified"))
	return fsbackend.FileInfo{Name: name, Size: size, ModTime: mt}, nil
}

// Stat implements fsbackend.FS.
func (f *FS) Stat(ctx context.Context, name string) (fsbackend.FileInfo, error) {
	key, err := f.key(name)
	if err != nil {
		return fsbackend.FileInfo{}, err
	}
	h, err := f.head(ctx, key)
	if err != nil {
		return fsbackend.FileInfo{}, f.pathErr("stat", name, err)
	}
	fi, err := infoFromHeader(name, h)
	if err != nil {
		return fsbackend.FileInfo{}, f.pathErr("stat", name, err)
	}
	return fi, nil
}

// List implements fsbackend.FS.
func (f *FS) List(ctx context.Context, dir string) ([]fsbackend.FileInfo, error) {
	if f.closed.Load() {
		return nil, fsbackend.ErrClosed
	}
	if err := fsbackend.ValidDir(dir); err != nil {
		return nil, err
	}
	prefix := f.prefix
	if dir != "" {
		prefix += dir + "/"
	}
	var out []fsbackend.FileInfo
	token := ""
	for {
		var res alioss.ListObjectsResultV2
		err := f.retry(ctx, "list", func(ctx context.Context, _ int) error {
			opts := []alioss.Option{alioss.Prefix(prefix), alioss.MaxKeys(1000), alioss.WithContext(ctx)}
			if token != "" {
				opts = append(opts, alioss.ContinuationToken(token))
			}
			var err error
			res, err = f.bucket.ListObjectsV2(opts...)
			return err
		})
		if err != nil {
			return nil, f.pathErr("list", dir, err)
		}
		for _, o := range res.Objects {
			if strings.HasSuffix(o.Key, "/") || !strings.HasPrefix(o.Key, f.prefix) {
				continue // a directory marker made by another tool
			}
			out = append(out, fsbackend.FileInfo{Name: o.Key[len(f.prefix):], Size: o.Size, ModTime: o.LastModified})
		}
		if !res.IsTruncated || res.NextContinuationToken == "" {
			break
		}
		token = res.NextContinuationToken
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Remove implements fsbackend.FS. OSS deletes missing keys without
// complaint, so the object is looked up first; a concurrent Remove of the
// same name may therefore both succeed.
func (f *FS) Remove(ctx context.Context, name string) error {
	key, err := f.key(name)
	if err != nil {
		return err
	}
	if _, err := f.head(ctx, key); err != nil {
		return f.pathErr("remove", name, err)
	}
	return f.pathErr("remove", name, f.deleteKey(ctx, key))
}

func (f *FS) deleteKey(ctx context.Context, key string) error {
	return f.retry(ctx, "delete", func(ctx context.Context, _ int) error {
		return f.bucket.DeleteObject(key, alioss.WithContext(ctx))
	})
}

// Rename implements fsbackend.FS as CopyObject then DeleteObject. It is
// not atomic: after a failure between the two, both names exist.
func (f *FS) Rename(ctx context.Context, oldName, newName string) error {
	ok, err := f.key(oldName)
	if err != nil {
		return err
	}
	nk, err := f.key(newName)
	if err != nil {
		return err
	}
	if _, err := f.head(ctx, ok); err != nil {
		return f.pathErr("rename", oldName, err)
	}
	if ok == nk {
		return nil
	}
	err = f.retry(ctx, "copy", func(ctx context.Context, _ int) error {
		_, err := f.bucket.CopyObject(ok, nk, alioss.WithContext(ctx))
		return err
	})
	if err != nil {
		return f.pathErr("rename", newName, err)
	}
	return f.pathErr("rename", oldName, f.deleteKey(ctx, ok))
}

// Close implements fsbackend.FS. A shared (cached) client stays open for
// other FS values; an own client's idle connections are closed.
func (f *FS) Close() error {
	if f.closed.Swap(true) {
		return nil
	}
	f.release()
	return nil
}

var _ fsbackend.FS = (*FS)(nil)
