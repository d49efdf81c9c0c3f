package objstore

import (
	"context"
	"io"
	"time"
)

// Driver is one blob store's protocol, all that FS needs of it: the
// object-store back ends implement it on their SDK, and FS turns it into
// the fsbackend.FS contract (names, errors, retries, conditional create,
// pinned reads). Keys are full object keys; every method is one request
// (or, where the SDK retries on its own, one SDK call) and returns the
// SDK's error unchanged, for Classify. A Driver is safe for concurrent use.
type Driver interface {
	// Head describes the object at key. A missing object is an error that
	// Classify calls Missing.
	Head(ctx context.Context, key string) (Object, error)

	// Get returns the body of n bytes of the object at key from off. When
	// version is not empty (an Object.Version from Head) the read is
	// pinned to it: an object replaced or removed since gives an error
	// Classify calls Missing or Taken, never other bytes. FS closes the
	// body.
	Get(ctx context.Context, key, version string, off, n int64) (io.ReadCloser, error)

	// PutIfAbsent stores data as the object key in one request, only if no
	// object has that key; the object is durable when it returns nil. An
	// existing object is an error Classify calls Taken.
	PutIfAbsent(ctx context.Context, key string, data []byte) error

	// Delete removes the object at key. Deleting a missing object may
	// succeed or fail with an error Classify calls Missing: FS takes both
	// as done (it looks the object up first where that matters).
	Delete(ctx context.Context, key string) error

	// Copy copies the object src to dst on the server, replacing dst.
	Copy(ctx context.Context, src, dst string) error

	// List returns one page of the objects whose keys start with prefix,
	// at any depth, starting at token ("" for the first page). Page.Next
	// is "" on the last page.
	List(ctx context.Context, prefix, token string) (Page, error)

	// Sum is the digest of data in the form Head reports as Object.Sum
	// (S3's MD5 ETag, OSS's CRC-64, GCS's CRC-32C), by which FS knows an
	// object its own PUT stored although the answer was lost.
	Sum(data []byte) string

	// Classify says what an error of this Driver means to FS.
	Classify(err error) Class
}

// Mover is an optional Driver interface: a server-side move that Rename
// uses instead of Copy then Delete.
type Mover interface {
	Move(ctx context.Context, src, dst string) error
}

// BatchDeleter is an optional Driver interface: one request that deletes
// up to MaxBatch keys (S3's DeleteObjects, OSS's DeleteMultipleObjects),
// which RemoveAll uses instead of a Delete a key. Keys already missing
// count as deleted.
type BatchDeleter interface {
	DeleteBatch(ctx context.Context, keys []string) error
	MaxBatch() int
}

// Explainer is an optional Driver interface: Explain returns a hint for
// an operator that FS puts in front of the error ("request signature
// rejected: the access key secret is wrong (check ...)"), or "".
type Explainer interface {
	Explain(err error) string
}

// Object describes one stored object.
type Object struct {
	Key     string
	Size    int64
	ModTime time.Time
	// Version pins reads to this object (an ETag, a generation); "" when
	// the Driver does not pin reads.
	Version string
	// Sum is the content digest Driver.Sum computes; "" when unknown.
	Sum string
}

// Page is one page of a listing.
type Page struct {
	Objects []Object
	Next    string // token of the next page; "" after the last
}

// Class is what an error means to FS.
type Class int

const (
	// Failed is any error not named below: returned as it is, not retried.
	Failed Class = iota
	// Missing: the object does not exist (a missing bucket is Failed).
	// Matches fs.ErrNotExist.
	Missing
	// Taken: a conditional request found another object: PutIfAbsent's
	// name exists (412, FileAlreadyExists, forbid-overwrite), or a pinned
	// Get's object was replaced. A refused create matches fs.ErrExist.
	Taken
	// Transient: worth sending again (throttling, 5xx, connection errors).
	Transient
)
