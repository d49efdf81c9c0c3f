package oss

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"fmt"
	"hash/crc64"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

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

// RetryPolicy says how failed requests are retried. The zero value means
// the defaults.
type RetryPolicy struct {
	// MaxAttempts is the number of tries per operation, the first
	// included (default 10, like Hadoop's fs.oss.attempts.maximum).
	MaxAttempts int
	// BaseDelay is the wait after the first failure (default 100ms); it
	// doubles per attempt, with jitter, up to MaxDelay (default 5s).
	BaseDelay, MaxDelay time.Duration
	// Deadline bounds one operation with all its retries (default 2m). The
	// context's deadline, when earlier, wins.
	Deadline time.Duration
}

// policy is the shared retry policy p describes: objstore's defaults (10
// attempts, 100 ms doubling to 5 s, within 2 minutes) where p is zero.
func (p RetryPolicy) policy() objstore.RetryPolicy {
	r := objstore.DefaultRetryPolicy()
	if p.MaxAttempts > 0 {
		r.MaxAttempts = p.MaxAttempts
	}
	if p.BaseDelay > 0 {
		r.Initial = p.BaseDelay
	}
	if p.MaxDelay > 0 {
		r.Max = p.MaxDelay
	}
	if p.Deadline > 0 {
		r.Deadline = p.Deadline
	}
	r.Initial = min(r.Initial, r.Max) // no wait is longer than MaxDelay
	return r
}

// maxPutSize is OSS's limit for one PutObject.
const maxPutSize = 5 << 30

// FS is an OSS bucket (or a prefix of one) used as an fsbackend.FS:
// objstore's file-system layer over the OSS driver below. It is safe for
// concurrent use.
type FS struct {
	*objstore.FS
}

// New returns an FS for opts. It does not contact the server.
func New(ctx context.Context, opts Options) (*FS, error) {
	if opts.Endpoint == "" {
		return nil, errors.New("stowage/fsbackend/oss: no endpoint (key fs.oss.endpoint)")
	}
	if opts.Bucket == "" {
		return nil, errors.New("stowage/fsbackend/oss: no bucket (key oss.bucket)")
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
		return nil, red.Wrap(fmt.Errorf("stowage/fsbackend/oss: key oss.bucket: bucket %q: %w", opts.Bucket, err))
	}
	f, err := objstore.New(&driver{bucket: b}, objstore.Config{
		Pkg: pkg, Scheme: "oss", Bucket: opts.Bucket, Prefix: opts.Prefix,
		Retry: opts.Retry.policy(), CheckOnCreate: true, MaxObjectSize: maxPutSize,
		Redact: red, Logger: log,
		Release: func() error { release(); return nil },
	})
	if err != nil {
		return nil, err
	}
	log.Debug("stowage/fsbackend/oss: opened", slog.String("endpoint", fsbackend.RedactURIs(opts.Endpoint)),
		slog.String("bucket", opts.Bucket), slog.String("prefix", opts.Prefix), slog.String("credentials", opts.Credentials.kind()))
	return &FS{f}, nil
}

// driver is the OSS protocol as objstore needs it: reads are pinned to the
// ETag with If-Match, and the CRC-64 OSS keeps of every object is the Sum
// that recognizes a PutObject whose answer was lost.
type driver struct {
	bucket *alioss.Bucket
}

var crcTable = crc64.MakeTable(crc64.ECMA)

func (d *driver) Head(ctx context.Context, key string) (objstore.Object, error) {
	h, err := d.bucket.GetObjectMeta(key, alioss.WithContext(ctx))
	if err != nil {
		return objstore.Object{}, err
	}
	size, err := strconv.ParseInt(h.Get("Content-Length"), 10, 64)
	if err != nil {
		return objstore.Object{}, fmt.Errorf("bad Content-Length %q", h.Get("Content-Length"))
	}
	mt, _ := http.ParseTime(h.Get("Last-Modified"))
	return objstore.Object{Key: key, Size: size, ModTime: mt, Version: h.Get("ETag"), Sum: h.Get("X-Oss-Hash-Crc64ecma")}, nil
}

func (d *driver) Get(ctx context.Context, key, version string, off, n int64) (io.ReadCloser, error) {
	opts := []alioss.Option{alioss.Range(off, off+n-1), alioss.WithContext(ctx)}
	if version != "" {
		opts = append(opts, alioss.IfMatch(version))
	}
	return d.bucket.GetObject(key, opts...)
}

// PutIfAbsent is one PutObject with x-oss-forbid-overwrite: true and a
// Content-MD5.
func (d *driver) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	sum := md5.Sum(data)
	return d.bucket.PutObject(key, bytes.NewReader(data),
		alioss.ForbidOverWrite(true), alioss.ContentMD5(base64.StdEncoding.EncodeToString(sum[:])),
		alioss.ContentType("application/octet-stream"), alioss.WithContext(ctx))
}

// Delete succeeds on a missing key, as OSS's DeleteObject does.
func (d *driver) Delete(ctx context.Context, key string) error {
	return d.bucket.DeleteObject(key, alioss.WithContext(ctx))
}

// DeleteBatch implements objstore.BatchDeleter: one DeleteMultipleObjects
// request in quiet mode (the SDK sends the Content-MD5 it needs).
func (d *driver) DeleteBatch(ctx context.Context, keys []string) error {
	_, err := d.bucket.DeleteObjects(keys, alioss.DeleteObjectsQuiet(true), alioss.WithContext(ctx))
	return err
}

// MaxBatch implements objstore.BatchDeleter: OSS's limit of keys per
// DeleteMultipleObjects.
func (d *driver) MaxBatch() int { return 1000 }

func (d *driver) Copy(ctx context.Context, src, dst string) error {
	_, err := d.bucket.CopyObject(src, dst, alioss.WithContext(ctx))
	return err
}

// List is one ListObjectsV2 page of up to 1000 keys.
func (d *driver) List(ctx context.Context, prefix, token string) (objstore.Page, error) {
	opts := []alioss.Option{alioss.Prefix(prefix), alioss.MaxKeys(1000), alioss.WithContext(ctx)}
	if token != "" {
		opts = append(opts, alioss.ContinuationToken(token))
	}
	res, err := d.bucket.ListObjectsV2(opts...)
	if err != nil {
		return objstore.Page{}, err
	}
	var p objstore.Page
	for _, o := range res.Objects {
		p.Objects = append(p.Objects, objstore.Object{Key: o.Key, Size: o.Size, ModTime: o.LastModified})
	}
	if res.IsTruncated {
		p.Next = res.NextContinuationToken
	}
	return p, nil
}

// Sum is the CRC-64 (ECMA) of data in decimal, as OSS reports it in
// x-oss-hash-crc64ecma.
func (d *driver) Sum(data []byte) string {
	return strconv.FormatUint(crc64.Checksum(data, crcTable), 10)
}

// Classify implements objstore.Driver: 404 is Missing (but a missing
// bucket is not), 409 FileAlreadyExists and a failed If-Match (412) are
// Taken; throttling (429, Throttling), server errors (5xx), network errors
// and CRC mismatches are Transient.
func (d *driver) Classify(err error) objstore.Class {
	var se alioss.ServiceError
	if errors.As(err, &se) {
		switch {
		case se.StatusCode == http.StatusNotFound && se.Code == "NoSuchBucket":
			return objstore.Failed
		case se.StatusCode == http.StatusNotFound:
			return objstore.Missing
		case se.StatusCode == http.StatusConflict && se.Code == "FileAlreadyExists",
			se.StatusCode == http.StatusPreconditionFailed:
			return objstore.Taken
		}
		switch se.Code {
		case "Throttling", "RequestTimeout", "ServiceUnavailable", "InternalError", "SlowDown":
			return objstore.Transient
		}
		if se.StatusCode == http.StatusTooManyRequests || se.StatusCode >= 500 {
			return objstore.Transient
		}
		return objstore.Failed
	}
	var ce alioss.CRCCheckError
	var ne net.Error
	if errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return objstore.Transient
	}
	return objstore.Failed
}

// Explain implements objstore.Explainer with hints for a missing bucket
// and credential problems.
func (d *driver) Explain(err error) string {
	var se alioss.ServiceError
	if !errors.As(err, &se) {
		return ""
	}
	switch {
	case se.StatusCode == http.StatusNotFound && se.Code == "NoSuchBucket":
		return "bucket does not exist (key oss.bucket)"
	case se.Code == "SignatureDoesNotMatch":
		return "request signature rejected: the access key secret is wrong (check fs.oss.accessKeySecret or OSS_ACCESS_KEY_SECRET)"
	case se.Code == "InvalidAccessKeyId":
		return "access key id unknown to the server (check fs.oss.accessKeyId or OSS_ACCESS_KEY_ID)"
	case se.Code == "InvalidSecurityToken" || se.Code == "SecurityTokenExpired":
		return "security token rejected (check fs.oss.securityToken or OSS_SESSION_TOKEN)"
	case se.StatusCode == http.StatusForbidden:
		return "access denied"
	}
	return ""
}
