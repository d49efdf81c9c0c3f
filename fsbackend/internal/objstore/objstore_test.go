package objstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/internal/objstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var errBusy = errors.New("busy")

func fastPolicy() objstore.RetryPolicy {
	p := objstore.DefaultRetryPolicy()
	p.Initial, p.Max = time.Millisecond, 2*time.Millisecond
	return p
}

func TestRetry(t *testing.T) {
	errFatal := errors.New("fatal")
	retryable := func(err error) bool { return errors.Is(err, errBusy) }
	cases := []struct {
		name        string
		failures    int   // attempts that fail before success
		failWith    error // error of a failing attempt
		maxAttempts int
		wantErr     error
		wantCalls   int
	}{
		{"first try", 0, errBusy, 10, nil, 1},
		{"after throttling", 3, errBusy, 10, nil, 4},
		{"not retryable", 5, errFatal, 10, errFatal, 1},
		{"attempts exhausted", 100, errBusy, 4, errBusy, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := fastPolicy()
			p.MaxAttempts = c.maxAttempts
			calls, retries := 0, 0
			err := objstore.Retry(context.Background(), p, retryable, func(int, error) { retries++ }, func(ctx context.Context, attempt int) error {
				calls++
				if attempt != calls {
					t.Errorf("attempt %d, want %d", attempt, calls)
				}
				if calls <= c.failures {
					return c.failWith
				}
				return nil
			})
			if !errors.Is(err, c.wantErr) || (c.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, c.wantErr)
			}
			if calls != c.wantCalls || retries != calls-1 {
				t.Fatalf("calls = %d, retries = %d, want %d and %d", calls, retries, c.wantCalls, c.wantCalls-1)
			}
			// Only running out of attempts says so; any other error is
			// op's own.
			gaveUp := fmt.Sprintf("gave up after %d attempts", c.wantCalls)
			if exhausted := c.failures >= c.maxAttempts && c.failWith == errBusy; err != nil && strings.Contains(err.Error(), gaveUp) != exhausted {
				t.Fatalf("err = %q; mentions %q: %v, want %v", err, gaveUp, !exhausted, exhausted)
			}
		})
	}
}

func TestRetryDeadline(t *testing.T) {
	p := fastPolicy()
	p.MaxAttempts = 0
	p.Deadline = 50 * time.Millisecond
	err := objstore.Retry(context.Background(), p, func(error) bool { return true }, nil, func(ctx context.Context, attempt int) error {
		return errBusy
	})
	if !errors.Is(err, errBusy) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want busy and deadline exceeded", err)
	}
}

// TestWriter: the object is buffered and stored by one PUT on Close.
func TestWriter(t *testing.T) {
	d := newMemDriver()
	f := newFS(t, d, "")
	w, err := f.Create(context.Background(), "k")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("hello "))
	w.Write([]byte("world"))
	if err := w.Sync(); !errors.Is(err, fsbackend.ErrUnsupported) {
		t.Fatalf("Sync = %v, want ErrUnsupported", err)
	}
	if d.count("PutIfAbsent") != 0 {
		t.Fatal("PUT before Close")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.object("k"); d.count("PutIfAbsent") != 1 || string(got) != "hello world" {
		t.Fatalf("puts = %d, data %q", d.count("PutIfAbsent"), got)
	}
	if err := w.Close(); !errors.Is(err, fsbackend.ErrClosed) {
		t.Fatalf("second Close = %v", err)
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, fsbackend.ErrClosed) {
		t.Fatalf("Write after Close = %v", err)
	}
	if err := w.Abort(); err != nil || d.count("Delete") != 0 {
		t.Fatalf("Abort after Close = %v after %d Deletes, want nothing done", err, d.count("Delete"))
	}
}

// TestWriterAbort: Abort before Close sends nothing; after a failed PUT it
// looks the object up once, to remove it if the PUT stored it.
func TestWriterAbort(t *testing.T) {
	errPut := errors.New("lost answer")
	d := newMemDriver()
	f := newFS(t, d, "")
	w, _ := f.Create(context.Background(), "k")
	w.Write([]byte("x"))
	w.Abort()
	if d.count("Head")+d.count("Delete")+d.count("PutIfAbsent") != 0 {
		t.Fatalf("Abort before Close sent requests: %v", d.calls)
	}
	w, _ = f.Create(context.Background(), "k")
	w.Write([]byte("x"))
	d.failWith = errPut
	if err := w.Close(); !errors.Is(err, errPut) {
		t.Fatalf("Close = %v", err)
	}
	d.failWith = nil
	w.Abort()
	if d.count("Head") != 1 {
		t.Fatalf("Abort after a failed PUT made %d lookups, want 1", d.count("Head"))
	}
}

func TestStats(t *testing.T) {
	var s objstore.Stats
	s.AddWrite(10)
	s.AddWrite(5)
	s.AddRetry()
	if s.BytesWritten() != 15 || s.ObjectsWritten() != 2 || s.Retries() != 1 {
		t.Fatalf("stats %d %d %d", s.BytesWritten(), s.ObjectsWritten(), s.Retries())
	}
}

func TestReader(t *testing.T) {
	d := newMemDriver()
	f := newFS(t, d, "")
	d.plant("k", []byte("0123456789"))
	r, err := f.Open(context.Background(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if r.Size() != 10 {
		t.Fatalf("Size = %d", r.Size())
	}
	cases := []struct {
		off     int64
		len     int
		want    string
		wantErr error
	}{
		{0, 4, "0123", nil},
		{6, 4, "6789", nil},  // ends exactly at the end
		{8, 4, "89", io.EOF}, // reaches past the end
		{10, 1, "", io.EOF},
		{42, 1, "", io.EOF},
		{3, 0, "", nil},
		{12, 0, "", nil},
	}
	for _, c := range cases {
		p := make([]byte, c.len)
		n, err := r.ReadAt(p, c.off)
		if string(p[:n]) != c.want || !errors.Is(err, c.wantErr) || (c.wantErr == nil && err != nil) {
			t.Errorf("ReadAt(%d bytes at %d) = %q, %v; want %q, %v", c.len, c.off, p[:n], err, c.want, c.wantErr)
		}
	}
	if got := strings.Join(d.gets, " "); got != "0+4 6+4 8+2" {
		t.Errorf("fetches %s, want only the parts within the object: 0+4 6+4 8+2", got)
	}
	var pe *fs.PathError
	if _, err := r.ReadAt(make([]byte, 1), -1); !errors.As(err, &pe) || pe.Path != "mem://b/k" || !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("negative offset: %v, want a PathError for mem://b/k matching fs.ErrInvalid", err)
	}
	d.failWith = errDenied
	if _, err := r.ReadAt(make([]byte, 2), 0); !errors.Is(err, errDenied) {
		t.Errorf("failing fetch: %v, want its error", err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := r.ReadAt(make([]byte, 1), 0); !errors.Is(err, fsbackend.ErrClosed) {
		t.Errorf("ReadAt after Close: %v, want ErrClosed", err)
	}
	if err := r.Close(); !errors.Is(err, fsbackend.ErrClosed) {
		t.Errorf("second Close: %v, want ErrClosed", err)
	}
}

func TestListAndUnusedKeys(t *testing.T) {
	p := fsbackend.Properties{"providers": " a.B , ,c.D,", "fs.x.used": "1", "fs.x.timeout": "2", "fs.x.buffer": "3", "fs.y.z": "4"}
	if got := strings.Join(objstore.List(p, "providers"), "|"); got != "a.B|c.D" {
		t.Errorf("List = %q, want a.B|c.D", got)
	}
	if got := objstore.List(p, "unset"); len(got) != 0 {
		t.Errorf("List of an unset key = %q", got)
	}
	if got := strings.Join(objstore.UnusedKeys(p, "fs.x.", "fs.x.used"), ","); got != "fs.x.buffer,fs.x.timeout" {
		t.Errorf("UnusedKeys = %q, want fs.x.buffer,fs.x.timeout", got)
	}
}
