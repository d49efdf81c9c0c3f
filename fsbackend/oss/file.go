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
	"io/fs"
	"net/http"
	"strconv"

	alioss "github.com/aliyun/aliyun-oss-go-sdk/oss"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/internal/objstore"
)

// maxPutSize is OSS's limit for one PutObject.
const maxPutSize = 5 << 30

var crcTable = crc64.MakeTable(crc64.ECMA)

// Create implements fsbackend.FS. The name is looked up first so that an
// existing file is refused at once; the PUT on Close carries
// forbid-overwrite, which is what makes creation exclusive.
func (f *FS) Create(ctx context.Context, name string) (fsbackend.Writer, error) {
	key, err := f.key(name)
	if err != nil {
		return nil, err
	}
	_, err = f.head(ctx, key)
	switch {
	case err == nil:
		return nil, &fs.PathError{Op: "create", Path: "oss://" + f.bucketName + "/" + key,
			Err: fmt.Errorf("stowage/fsbackend/oss: %w", fs.ErrExist)}
	case isStatus(err, http.StatusNotFound, "NoSuchBucket") || !isStatus(err, http.StatusNotFound, ""):
		return nil, f.pathErr("create", name, err)
	}
	// mayExist: the failed PUT may have stored the object, so Abort
	// removes it; it is false when the object is someone else's.
	var mayExist bool
	w := objstore.NewWriter(ctx, func(ctx context.Context, data []byte) error {
		err := f.put(ctx, key, data, &mayExist)
		return f.pathErr("close", name, err)
	}, func(ctx context.Context, _ []byte) error {
		if !mayExist {
			return nil
		}
		return f.pathErr("abort", name, f.deleteKey(ctx, key))
	})
	return &writer{Writer: w, name: name}, nil
}

// writer is the shared PUT-on-Close writer with OSS's size limit for one
// PutObject. It is not safe for concurrent use.
type writer struct {
	*objstore.Writer
	name string
}

func (w *writer) Write(p []byte) (int, error) {
	if int64(w.Len())+int64(len(p)) > maxPutSize {
		return 0, fmt.Errorf("stowage/fsbackend/oss: %s: object larger than 5 GiB, the limit of one PutObject", w.name)
	}
	return w.Writer.Write(p)
}

// put stores data under key with forbid-overwrite. It sets *mayExist when
// a failed attempt may nevertheless have stored the object.
func (f *FS) put(ctx context.Context, key string, data []byte, mayExist *bool) error {
	sum := md5.Sum(data)
	md5b64 := base64.StdEncoding.EncodeToString(sum[:])
	crc := crc64.Checksum(data, crcTable)
	return f.retry(ctx, "put", func(ctx context.Context, attempt int) error {
		err := f.bucket.PutObject(key, bytes.NewReader(data),
			alioss.ForbidOverWrite(true), alioss.ContentMD5(md5b64),
			alioss.ContentType("application/octet-stream"), alioss.WithContext(ctx))
		if err == nil {
			return nil
		}
		switch {
		case isStatus(err, http.StatusConflict, "FileAlreadyExists"):
			if attempt > 1 && f.sameObject(ctx, key, int64(len(data)), crc) {
				return nil // an earlier attempt stored it; its answer was lost
			}
			*mayExist = false // someone else's object: Abort must leave it alone
		case !isStatus(err, http.StatusBadRequest, "") && !isStatus(err, http.StatusForbidden, ""):
			*mayExist = true // may have been stored before the error
		}
		return err
	})
}

// sameObject reports whether key holds exactly size bytes with CRC-64 crc.
func (f *FS) sameObject(ctx context.Context, key string, size int64, crc uint64) bool {
	h, err := f.bucket.GetObjectMeta(key, alioss.WithContext(ctx))
	if err != nil {
		return false
	}
	got, err := strconv.ParseUint(h.Get("X-Oss-Hash-Crc64ecma"), 10, 64)
	return err == nil && got == crc && h.Get("Content-Length") == strconv.FormatInt(size, 10)
}

// Open implements fsbackend.FS.
func (f *FS) Open(ctx context.Context, name string) (fsbackend.Reader, error) {
	key, err := f.key(name)
	if err != nil {
		return nil, err
	}
	h, err := f.head(ctx, key)
	if err != nil {
		return nil, f.pathErr("open", name, err)
	}
	fi, err := infoFromHeader(name, h)
	if err != nil {
		return nil, f.pathErr("open", name, err)
	}
	etag := h.Get("ETag")
	return objstore.NewReader(name, fi.Size, func(p []byte, off int64) (int, error) {
		return f.readRange(ctx, name, key, etag, p, off)
	}), nil
}

// readRange fills p from off with one range GET pinned to the ETag seen by
// Open (retried as a whole).
func (f *FS) readRange(ctx context.Context, name, key, etag string, p []byte, off int64) (int, error) {
	var n int
	err := f.retry(ctx, "get", func(ctx context.Context, _ int) error {
		opts := []alioss.Option{alioss.Range(off, off+int64(len(p))-1), alioss.WithContext(ctx)}
		if etag != "" {
			opts = append(opts, alioss.IfMatch(etag))
		}
		body, err := f.bucket.GetObject(key, opts...)
		if err != nil {
			return err
		}
		defer body.Close()
		n, err = io.ReadFull(body, p)
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return err
	})
	if err != nil {
		if isStatus(err, http.StatusPreconditionFailed, "") {
			return 0, f.pathErr("read", name, fmt.Errorf("object was replaced while open: %w", err))
		}
		return 0, f.pathErr("read", name, err)
	}
	return n, nil
}
