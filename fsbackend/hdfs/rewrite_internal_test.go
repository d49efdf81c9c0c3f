package hdfs

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"
)

// These tests drive the writer's rewrite logic against fake files that
// refuse a block allocation at scripted offsets; they need no cluster.

// remoteErr is a NameNode exception as the Go client reports it.
type remoteErr struct{ exc string }

func (e remoteErr) Method() string    { return "addBlock" }
func (e remoteErr) Desc() string      { return "ERROR_APPLICATION" }
func (e remoteErr) Exception() string { return e.exc }
func (e remoteErr) Message() string   { return "Not replicated yet: /t" }
func (e remoteErr) Error() string {
	return "addBlock call failed with ERROR_APPLICATION (" + e.exc + ")"
}

// fakeFile is one attempt at the file. Like the Go client's FileWriter it
// is lost after a refused allocation: any later use is an error.
type fakeFile struct {
	buf    bytes.Buffer
	failAt int64 // offset of the refused allocation; -1: none
	fail   error // the error at failAt
	lost   bool
}

func (f *fakeFile) Write(p []byte) (int, error) {
	if f.lost {
		return 0, errors.New("fake: file used after a refused block allocation")
	}
	if f.failAt >= 0 && int64(f.buf.Len()+len(p)) > f.failAt {
		n := int(f.failAt) - f.buf.Len()
		f.buf.Write(p[:n])
		f.lost = true
		return n, &os.PathError{Op: "create", Path: "/t", Err: f.fail}
	}
	return f.buf.Write(p)
}

func (f *fakeFile) Close() error {
	if f.lost {
		return errors.New("fake: closed after a refused block allocation")
	}
	return nil
}

func (f *fakeFile) SetDeadline(time.Time) error { return nil }

func (f *fakeFile) Hsync() error  { return nil }
func (f *fakeFile) Hflush() error { return nil }

var errNotReplicated = remoteErr{excNotReplicatedYet}

const mib = 1 << 20

// script builds a writer whose first file and each re-created one refuse
// an allocation at the next offset of failAts (-1: never).
type script struct {
	failAts []int64
	fail    error
	files   []*fakeFile
	reopens int
	openErr error
}

func (s *script) next() *fakeFile {
	f := &fakeFile{failAt: -1, fail: s.fail}
	if n := len(s.files); n < len(s.failAts) {
		f.failAt = s.failAts[n]
	}
	if f.fail == nil {
		f.fail = errNotReplicated
	}
	s.files = append(s.files, f)
	return f
}

// writer makes the writer; keep, when not 0, replaces keepLimit's bound.
func (s *script) writer(ctx context.Context, blockSize int64, retries int, keep int64) *writer {
	cfg := &Config{CloseRetries: retries, CloseRetryDelay: time.Millisecond}
	w := &writer{
		f:        &FS{cfg: cfg, cache: newClientCache(1), log: slog.New(slog.NewTextHandler(io.Discard, nil))},
		c:        &client{refs: 1, evicted: true, closed: true}, // release is a no-op
		path:     "/t",
		ctx:      ctx,
		failedAt: -1,
		keep:     keeper{limit: keepLimit(blockSize, retries)},
	}
	if keep != 0 {
		w.keep.limit = keep
	}
	w.fw = s.next()
	w.reopen = func() (blockFile, error) {
		s.reopens++
		if s.openErr != nil {
			return nil, s.openErr
		}
		return s.next(), nil
	}
	return w
}

func (s *script) content() []byte { return s.files[len(s.files)-1].buf.Bytes() }

// data is n bytes in which no block-sized shift repeats (period 4093).
func data(n int) []byte {
	period := make([]byte, 4093)
	for i := range period {
		period[i] = byte(i*7 + i/251)
	}
	return bytes.Repeat(period, n/len(period)+1)[:n]
}

// writeChunks writes p in odd-sized chunks, as the conformance suite does.
func writeChunks(w *writer, p []byte) error {
	for off, step := 0, 1; off < len(p); step = step*3%65521 + 1 {
		end := min(off+step, len(p))
		n, err := w.Write(p[off:end])
		if err != nil {
			return err
		}
		if n != end-off {
			return errors.New("short write without an error")
		}
		off = end
	}
	return nil
}

func TestKeepLimit(t *testing.T) {
	for _, tc := range []struct {
		block   int64
		retries int
		want    int64
	}{
		{1 * mib, 5, rewriteKeepLimit},
		{16 * mib, 5, rewriteKeepLimit},
		{32 * mib, 5, 0},  // the third block starts at the limit
		{128 * mib, 5, 0}, // the default block size: nothing kept
		{1 * mib, 0, 0},   // rewrites switched off
		{0, 5, 0},
	} {
		if got := keepLimit(tc.block, tc.retries); got != tc.want {
			t.Errorf("keepLimit(%d, %d) = %d, want %d", tc.block, tc.retries, got, tc.want)
		}
	}
}

func TestRewriteAfterRefusedAllocation(t *testing.T) {
	tests := []struct {
		name    string
		size    int
		failAts []int64
		retries int
		reopens int
	}{
		{"refused once", 5 * mib, []int64{2 * mib}, 5, 1},
		{"refused again while rewriting", 5 * mib, []int64{3 * mib, 2 * mib}, 5, 2},
		// Each block allocation gets the retries afresh, as in the Java client.
		{"each allocation refused up to the retries", 6 * mib,
			[]int64{2 * mib, 2 * mib, 3 * mib, 3 * mib, 4 * mib, 4 * mib, 5 * mib, 5 * mib}, 2, 8},
		{"refused at the last byte", 3*mib + 1, []int64{3 * mib}, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &script{failAts: tc.failAts}
			w := s.writer(context.Background(), mib, tc.retries, 0)
			want := data(tc.size)
			if err := writeChunks(w, want); err != nil {
				t.Fatalf("Write: %v", err)
			}
			if err := w.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if s.reopens != tc.reopens {
				t.Errorf("%d rewrites, want %d", s.reopens, tc.reopens)
			}
			if !bytes.Equal(s.content(), want) {
				t.Errorf("file holds %d bytes, not the %d written", len(s.content()), len(want))
			}
			if w.keep.buf != nil {
				t.Error("kept bytes not let go after Close")
			}
		})
	}
}

func TestRewriteGivesUp(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name      string
		ctx       context.Context
		block     int64
		keep      int64 // bytes kept, if not keepLimit's
		size      int
		failAts   []int64
		fail      error
		openErr   error
		reopens   int
		wantIs    error  // the error matches this
		wantInMsg string // and says this
	}{
		{name: "retries used up", block: mib, size: 4 * mib,
			failAts: []int64{2 * mib, 2 * mib, 2 * mib, 2 * mib}, reopens: 3, wantInMsg: "still refused after 3 rewrites"},
		{name: "file longer than the keep limit", block: mib, keep: 5 * mib, size: 7 * mib,
			failAts: []int64{6 * mib}, reopens: 0, wantInMsg: "longer than the 5242880 bytes kept"},
		{name: "blocks too large to keep", block: 32 * mib, size: 3 * mib,
			failAts: []int64{2 * mib}, reopens: 0, wantInMsg: "NotReplicatedYetException"},
		{name: "other errors are not rewritten", block: mib, size: 3 * mib,
			failAts: []int64{2 * mib}, fail: errors.New("pipeline broke"), reopens: 0, wantInMsg: "pipeline broke"},
		{name: "context done", ctx: canceled, block: mib, size: 3 * mib,
			failAts: []int64{2 * mib}, reopens: 0, wantIs: context.Canceled},
		{name: "re-create fails", block: mib, size: 3 * mib,
			failAts: []int64{2 * mib}, openErr: &os.PathError{Op: "create", Path: "/t.tmp", Err: os.ErrExist},
			reopens: 1, wantIs: fs.ErrExist},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			s := &script{failAts: tc.failAts, fail: tc.fail, openErr: tc.openErr}
			w := s.writer(ctx, tc.block, 3, tc.keep)
			err := writeChunks(w, data(tc.size))
			if err == nil {
				t.Fatal("Write succeeded, want an error")
			}
			var pe *fs.PathError
			if !errors.As(err, &pe) || pe.Op != "write" || pe.Path != "/t" {
				t.Errorf("error %v is not a write *fs.PathError naming /t", err)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("error %v does not match %v", err, tc.wantIs)
			}
			if !strings.Contains(err.Error(), tc.wantInMsg) {
				t.Errorf("error %q does not say %q", err, tc.wantInMsg)
			}
			if s.reopens != tc.reopens {
				t.Errorf("%d rewrites, want %d", s.reopens, tc.reopens)
			}
			if w.keep.buf != nil {
				t.Error("kept bytes not let go after the failure")
			}
			// The file cannot be completed: Write and Close say so at once.
			if _, werr := w.Write([]byte("x")); !errors.Is(werr, err) {
				t.Errorf("Write after the failure: %v, want the failure again", werr)
			}
			if cerr := w.Close(); cerr == nil || !errors.Is(cerr, err) {
				t.Errorf("Close after the failure: %v, want an error wrapping it", cerr)
			}
		})
	}
}
