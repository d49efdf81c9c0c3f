package s3

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/internal/objstore"
)

// FS is one bucket (and key prefix) as an fsbackend.FS: objstore's
// file-system layer over the S3 driver below. It is safe for concurrent
// use. BytesWritten, ObjectsWritten and Retries count what it did.
type FS struct {
	*objstore.FS
}

// New returns an FS for o. It does no I/O: a wrong bucket or credentials
// show on the first request.
func New(ctx context.Context, o Options) (*FS, error) {
	if o.Scheme == "" {
		o.Scheme = "s3"
	}
	pkg := "stowage/fsbackend/" + o.Scheme
	if o.Bucket == "" {
		return nil, fmt.Errorf("%s: no bucket given", pkg)
	}
	if o.Region == "" {
		o.Region = "us-east-1"
	}
	if o.Retry.Multiplier == 0 && o.Retry.Initial == 0 {
		o.Retry = objstore.DefaultRetryPolicy()
	}
	c, release := acquire(&o)
	d := &driver{api: c.api, bucket: o.Bucket}
	for k, v := range o.PutHeaders {
		d.putOpts = append(d.putOpts, s3.WithAPIOptions(smithyhttp.SetHeaderValue(k, v)))
	}
	f, err := objstore.New(d, objstore.Config{
		Pkg: pkg, Scheme: o.Scheme, Bucket: o.Bucket, Prefix: o.Prefix,
		Retry: o.Retry, Logger: o.Logger, Redact: c.secrets,
		Release: func() error { release(); return nil },
	})
	if err != nil {
		return nil, err
	}
	return &FS{f}, nil
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

// driver is the S3 protocol as objstore needs it. Reads are not pinned
// (Object.Version is empty); the ETag of a single PUT is the MD5 of its
// bytes, which is the Sum that recognizes a PUT whose answer was lost.
type driver struct {
	api     *s3.Client
	bucket  string
	putOpts []func(*s3.Options) // extra headers of every PutObject
}

func (d *driver) Head(ctx context.Context, key string) (objstore.Object, error) {
	out, err := d.api.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &d.bucket, Key: &key})
	if err != nil {
		return objstore.Object{}, err
	}
	return objstore.Object{Key: key, Size: aws.ToInt64(out.ContentLength), ModTime: aws.ToTime(out.LastModified),
		Sum: strings.Trim(aws.ToString(out.ETag), `"`)}, nil
}

func (d *driver) Get(ctx context.Context, key, _ string, off, n int64) (io.ReadCloser, error) {
	rng := fmt.Sprintf("bytes=%d-%d", off, off+n-1)
	out, err := d.api.GetObject(ctx, &s3.GetObjectInput{Bucket: &d.bucket, Key: &key, Range: &rng})
	if err != nil {
		return nil, err
	}
	return out.Body, nil
}

// PutIfAbsent is one PutObject with If-None-Match: * (and COS's
// x-cos-forbid-overwrite, through PutHeaders).
func (d *driver) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	_, err := d.api.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        &d.bucket,
		Key:           &key,
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
		IfNoneMatch:   aws.String("*"),
	}, d.putOpts...)
	return err
}

// Delete succeeds on a missing key, as S3's DELETE does.
func (d *driver) Delete(ctx context.Context, key string) error {
	_, err := d.api.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &d.bucket, Key: &key})
	return err
}

// DeleteBatch implements objstore.BatchDeleter: one DeleteObjects request
// in quiet mode (only failures are answered). A key the answer reports
// failed fails the batch, naming the first.
func (d *driver) DeleteBatch(ctx context.Context, keys []string) error {
	ids := make([]types.ObjectIdentifier, len(keys))
	for i := range keys {
		ids[i] = types.ObjectIdentifier{Key: &keys[i]}
	}
	out, err := d.api.DeleteObjects(ctx, &s3.DeleteObjectsInput{
		Bucket: &d.bucket,
		Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)},
	})
	if err != nil {
		return err
	}
	if len(out.Errors) > 0 {
		e := out.Errors[0]
		return fmt.Errorf("delete %s: %s: %s (and %d more keys failed)", aws.ToString(e.Key), aws.ToString(e.Code), aws.ToString(e.Message), len(out.Errors)-1)
	}
	return nil
}

// MaxBatch implements objstore.BatchDeleter: S3's limit of keys per
// DeleteObjects.
func (d *driver) MaxBatch() int { return 1000 }

func (d *driver) Copy(ctx context.Context, src, dst string) error {
	parts := strings.Split(src, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	source := d.bucket + "/" + strings.Join(parts, "/")
	_, err := d.api.CopyObject(ctx, &s3.CopyObjectInput{Bucket: &d.bucket, Key: &dst, CopySource: &source})
	return err
}

// List is one ListObjectsV2 page, without a delimiter (every depth).
func (d *driver) List(ctx context.Context, prefix, token string) (objstore.Page, error) {
	in := &s3.ListObjectsV2Input{Bucket: &d.bucket, Prefix: aws.String(prefix)}
	if token != "" {
		in.ContinuationToken = aws.String(token)
	}
	out, err := d.api.ListObjectsV2(ctx, in)
	if err != nil {
		return objstore.Page{}, err
	}
	var p objstore.Page
	for _, o := range out.Contents {
		p.Objects = append(p.Objects, objstore.Object{Key: aws.ToString(o.Key), Size: aws.ToInt64(o.Size), ModTime: aws.ToTime(o.LastModified)})
	}
	if aws.ToBool(out.IsTruncated) {
		p.Next = aws.ToString(out.NextContinuationToken)
	}
	return p, nil
}

// Sum is the hex MD5 of data, the ETag S3 gives an object of one PUT.
func (d *driver) Sum(data []byte) string {
	sum := md5.Sum(data)
	return hex.EncodeToString(sum[:])
}
