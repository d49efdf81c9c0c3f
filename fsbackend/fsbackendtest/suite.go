package fsbackendtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"testing"

	"github.com/stowage/stowage/fsbackend"
)

// Options tunes the suite for slow back ends. The zero value gives the
// defaults.
type Options struct {
	// LargeFile is the size in bytes of the large-file round trip;
	// 0 means 4 MiB.
	LargeFile int
	// Concurrency is the number of goroutines in the concurrency
	// subtests; 0 means 4.
	Concurrency int
	// FilesPerWorker is how many distinct files each worker creates in
	// ConcurrentCreate; 0 means 4.
	FilesPerWorker int
	// Skip names subtests to skip, each with the reason, for a known
	// deviation from the contract that is tracked elsewhere. The skip is
	// logged, so it stays visible in go test -v.
	Skip map[string]string
}

func (o Options) withDefaults() Options {
	if o.LargeFile <= 0 {
		o.LargeFile = 4 << 20
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.FilesPerWorker <= 0 {
		o.FilesPerWorker = 4
	}
	return o
}

// Run runs the conformance suite with default Options. newFS must return
// a fresh, empty FS each time it is called.
func Run(t *testing.T, newFS func(t *testing.T) fsbackend.FS) {
	RunWith(t, newFS, Options{})
}

// RunWith runs the conformance suite with opts.
func RunWith(t *testing.T, newFS func(t *testing.T) fsbackend.FS, opts Options) {
	opts = opts.withDefaults()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if reason, ok := opts.Skip[tc.name]; ok {
				t.Skip("skipped by Options.Skip: " + reason)
			}
			f := newFS(t)
			if f == nil {
				t.Fatal("newFS returned nil")
			}
			t.Cleanup(func() { _ = f.Close() })
			tc.fn(t, &env{t: t, fs: f, ctx: context.Background(), opts: opts})
		})
	}
}

type testCase struct {
	name string
	fn   func(t *testing.T, e *env)
}

// cases is filled by the init functions of the files of this package,
// one file per concern.
var cases []testCase

func register(name string, fn func(t *testing.T, e *env)) {
	cases = append(cases, testCase{name, fn})
}

// env carries one subtest's FS and helpers that fail the test on error.
type env struct {
	t    *testing.T
	fs   fsbackend.FS
	ctx  context.Context
	opts Options
}

func (e *env) caps() fsbackend.Capabilities { return e.fs.Capabilities() }

// write creates name with data and closes it, failing the test on error.
func (e *env) write(name string, data []byte) {
	e.t.Helper()
	w, err := e.fs.Create(e.ctx, name)
	if err != nil {
		e.t.Fatalf("Create(%q): %v", name, err)
	}
	if n, err := w.Write(data); err != nil || n != len(data) {
		e.t.Fatalf("Write(%q, %d bytes) = %d, %v", name, len(data), n, err)
	}
	if err := w.Close(); err != nil {
		e.t.Fatalf("Close(%q): %v", name, err)
	}
}

// read returns the whole content of name, failing the test on error.
func (e *env) read(name string) []byte {
	e.t.Helper()
	b, err := fsbackend.ReadFile(e.ctx, e.fs, name)
	if err != nil {
		e.t.Fatalf("ReadFile(%q): %v", name, err)
	}
	return b
}

// wantContent checks that name holds exactly want, via Open, Size,
// ReadAt and Stat.
func (e *env) wantContent(name string, want []byte) {
	e.t.Helper()
	r, err := e.fs.Open(e.ctx, name)
	if err != nil {
		e.t.Fatalf("Open(%q): %v", name, err)
	}
	defer r.Close()
	if r.Size() != int64(len(want)) {
		e.t.Fatalf("Open(%q).Size() = %d, want %d", name, r.Size(), len(want))
	}
	got := make([]byte, len(want))
	n, err := r.ReadAt(got, 0)
	if n != len(want) || (err != nil && !errors.Is(err, io.EOF)) {
		e.t.Fatalf("ReadAt(%q, %d bytes, 0) = %d, %v", name, len(want), n, err)
	}
	if !bytes.Equal(got, want) {
		e.t.Fatalf("content of %q = %s, want %s", name, summary(got), summary(want))
	}
	fi, err := e.fs.Stat(e.ctx, name)
	if err != nil {
		e.t.Fatalf("Stat(%q): %v", name, err)
	}
	if fi.Name != name || fi.Size != int64(len(want)) {
		e.t.Fatalf("Stat(%q) = {Name %q, Size %d}, want {Name %q, Size %d}", name, fi.Name, fi.Size, name, len(want))
	}
}

// wantMissing checks that name is absent for both Stat and Open.
func (e *env) wantMissing(name string) {
	e.t.Helper()
	if fi, err := e.fs.Stat(e.ctx, name); !errors.Is(err, fs.ErrNotExist) {
		e.t.Fatalf("Stat(%q) = %+v, %v; want an error matching fs.ErrNotExist", name, fi, err)
	}
	r, err := e.fs.Open(e.ctx, name)
	if err == nil {
		r.Close()
	}
	if !errors.Is(err, fs.ErrNotExist) {
		e.t.Fatalf("Open(%q) error = %v; want an error matching fs.ErrNotExist", name, err)
	}
}

// names lists dir and returns the names, failing the test on error.
func (e *env) names(dir string) []string {
	e.t.Helper()
	list, err := e.fs.List(e.ctx, dir)
	if err != nil {
		e.t.Fatalf("List(%q): %v", dir, err)
	}
	out := make([]string, 0, len(list))
	for _, fi := range list {
		out = append(out, fi.Name)
	}
	return out
}

func (e *env) wantList(dir string, want ...string) {
	e.t.Helper()
	got := e.names(dir)
	if want == nil {
		want = []string{}
	}
	if !slices.Equal(got, want) {
		e.t.Fatalf("List(%q) = %q, want %q", dir, got, want)
	}
}

// pattern returns n bytes that differ at every offset modulo a prime, so
// that a misplaced chunk is detected.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i%251) ^ seed
	}
	return b
}

func summary(b []byte) string {
	if len(b) <= 32 {
		return fmt.Sprintf("%q", b)
	}
	return fmt.Sprintf("%d bytes starting %q", len(b), b[:32])
}
