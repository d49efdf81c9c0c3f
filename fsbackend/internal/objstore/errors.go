package objstore

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/stowage/stowage/fsbackend"
)

// errShortRead marks a ranged GET whose body ended early (the connection
// broke): FS sends the GET again.
var errShortRead = errors.New("short read")

// fail turns a Driver error of op on key into the error FS returns: the
// Explainer's hint in front, fs.ErrNotExist for a Missing object,
// fs.ErrExist for a create refused as Taken, in an *fs.PathError naming
// Scheme://Bucket/key, behind the package prefix, with every credential
// value removed from the message. The Driver's error stays in the chain.
func (f *FS) fail(op, key string, err error) error {
	if e, ok := f.d.(Explainer); ok {
		if hint := e.Explain(err); hint != "" {
			err = fmt.Errorf("%s: %w", hint, err)
		}
	}
	switch f.d.Classify(err) {
	case Missing:
		err = fmt.Errorf("%w: %w", fs.ErrNotExist, err)
	case Taken:
		if op == "create" {
			err = fmt.Errorf("%w: %w", fs.ErrExist, err)
		}
	}
	return scrubErr(f.c.Redact, fmt.Errorf("%s: %w", f.c.Pkg, &fs.PathError{Op: op, Path: f.url(key), Err: err}))
}

// Scrubber removes credential values from a message.
type Scrubber interface {
	Scrub(s string) string
}

// scrubErr returns err with s's values and the user information of any
// URI (an endpoint such as https://user:password@host) removed from its
// message (err itself when that removes nothing).
func scrubErr(s Scrubber, err error) error {
	if err == nil {
		return err
	}
	msg := err.Error()
	if clean := scrubString(s, msg); clean != msg {
		return &redactedError{err: err, msg: clean}
	}
	return err
}

// scrubString is s.Scrub(msg), or msg when s is nil, with the user
// information of URIs removed.
func scrubString(s Scrubber, msg string) string {
	if s != nil {
		msg = s.Scrub(msg)
	}
	return fsbackend.RedactURIs(msg)
}

// Learned is a Scrubber of credential values learned while a client runs:
// a provider that fetches or refreshes credentials (a role, a web
// identity, the environment) tells it every key id, secret and token it
// hands out. It is safe for concurrent use.
type Learned struct {
	mu   sync.RWMutex
	vals []string
}

// Add records non-empty values; values shorter than 4 bytes are ignored
// (they would scrub ordinary words).
func (l *Learned) Add(values ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, v := range values {
		if len(v) >= 4 && !slices.Contains(l.vals, v) {
			l.vals = append(l.vals, v)
		}
	}
}

// Scrub implements Scrubber.
func (l *Learned) Scrub(s string) string {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return Redactor(l.vals).Scrub(s)
}

// Redactor holds credential values that must appear in no error and no
// log line: the secret and token, and the access key id too, which some
// servers quote back in their answers (OSS in OSSAccessKeyId and the
// string to sign).
type Redactor []string

// NewRedactor returns a Redactor of the non-empty values.
func NewRedactor(values ...string) Redactor {
	var r Redactor
	for _, v := range values {
		if v != "" {
			r = append(r, v)
		}
	}
	return r
}

// Scrub returns s with every value replaced by "******".
func (r Redactor) Scrub(s string) string {
	for _, v := range r {
		s = strings.ReplaceAll(s, v, "******")
	}
	return s
}

// Wrap returns err with the values removed from its message; errors.Is
// and errors.As still reach the errors it wraps (whose own fields, such as
// an SDK error's message, are as the server sent them).
func (r Redactor) Wrap(err error) error {
	if err == nil || len(r) == 0 {
		return err
	}
	return &redactedError{err: err, msg: r.Scrub(err.Error())}
}

type redactedError struct {
	err error
	msg string
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
