package hdfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"
	"time"

	gohdfs "github.com/colinmarc/hdfs/v2"

	"github.com/stowage/stowage/fsbackend"
)

// closeDelays is the fast phase of Close's retries: the DataNode usually
// reports a finished block within milliseconds.
var closeDelays = []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond,
	40 * time.Millisecond, 80 * time.Millisecond, 160 * time.Millisecond, 320 * time.Millisecond}

// closeSchedule is the whole list of delays between Close's attempts: the
// fast phase, then the Java client's (CloseRetries, doubling from
// CloseRetryDelay).
func closeSchedule(cfg *Config) []time.Duration {
	s := append([]time.Duration(nil), closeDelays...)
	d := cfg.CloseRetryDelay
	for range cfg.CloseRetries {
		s = append(s, d)
		d *= 2
	}
	return s
}

// writer is an fsbackend.Writer for one new HDFS file. It is not safe for
// concurrent use.
type writer struct {
	f    *FS
	c    *client // holds one reference until Close or Abort
	fw   blockFile
	path string
	ctx  context.Context // Create's: bounds the waits before a rewrite
	// reopen replaces the partial file by a new empty one (replaceFile).
	reopen func() (blockFile, error)
	// keep, failedAt and tries are the state of rewrites (rewrite.go).
	keep     keeper
	failedAt int64 // file offset of the last refused block allocation
	tries    int   // rewrites for the allocation at failedAt
	err      error // a failed Write: the file cannot be completed
	closed   bool  // Close or Abort was called
	done     bool  // the reference was released
}

func (w *writer) release() {
	if !w.done {
		w.done = true
		w.f.cache.release(w.c)
	}
}

func (w *writer) deadline() {
	if d := w.f.cfg.SocketTimeout; d > 0 {
		_ = w.fw.SetDeadline(time.Now().Add(d))
	}
}

// Write implements io.Writer. Bytes are sent to the DataNode pipeline but
// are not durable until Close returns nil.
func (w *writer) Write(p []byte) (int, error) {
	if w.closed {
		return 0, &fs.PathError{Op: "write", Path: w.path, Err: fsbackend.ErrClosed}
	}
	if len(p) == 0 {
		// The Go client would allocate a block for nothing, and a block
		// without bytes never completes.
		return 0, nil
	}
	if w.err != nil {
		return 0, w.err
	}
	total := 0
	for len(p) > 0 {
		w.deadline()
		n, err := w.fw.Write(p)
		w.keep.add(p[:n])
		total += n
		p = p[n:]
		if err != nil {
			if err = w.recover(err, w.keep.size); err != nil {
				w.keep.drop()
				w.err = classifyData("write", w.path, err)
				return total, w.err
			}
		}
	}
	return total, nil
}

// Sync implements fsbackend.Writer: hsync (the client's FileWriter.Hsync, a
// patch in third_party/colinmarc-hdfs): it returns once every DataNode of
// the pipeline has synced the bytes written so far to disk and
// acknowledged them; with stowage.hdfs.sync-on-close false, hflush (they
// hold them in memory). The file stays open, and the NameNode does not
// learn the new length: readers see the bytes once the file is closed, or
// recovered (FS.Recover) after the writer died. After a failed Sync the
// file cannot be completed; the bytes of the failed Sync may or may not be
// in the file.
func (w *writer) Sync() error {
	if w.closed {
		return &fs.PathError{Op: "sync", Path: w.path, Err: fsbackend.ErrClosed}
	}
	if w.err != nil {
		return w.err
	}
	w.deadline()
	var err error
	if w.f.cfg.SyncOnClose {
		err = w.fw.Hsync()
	} else {
		err = w.fw.Hflush()
	}
	if err != nil {
		w.keep.drop()
		w.err = classifyData("sync", w.path, err)
		if unreachable(w.err) {
			w.f.cache.markBroken(w.c)
		}
		return w.err
	}
	return nil
}

// Close finishes the file: it waits for the DataNode pipeline to
// acknowledge every packet and completes the file at the NameNode,
// retrying with backoff while the last block is still replicating.
func (w *writer) Close() error {
	if w.closed {
		return &fs.PathError{Op: "close", Path: w.path, Err: fsbackend.ErrClosed}
	}
	w.closed = true
	defer w.release()
	w.keep.drop()
	if w.err != nil {
		_ = w.fw.Close() // ends the pipeline's goroutines; the file stays incomplete
		return &fs.PathError{Op: "close", Path: w.path, Err: fmt.Errorf("stowage/fsbackend/hdfs: an earlier write failed: %w", w.err)}
	}
	w.deadline()
	err := w.fw.Close()
	schedule := closeSchedule(w.f.cfg)
	tries := 1
	for _, delay := range schedule {
		if err == nil || !retryClose(err) {
			break
		}
		time.Sleep(delay) // backoff between NameNode calls
		err = w.fw.Close()
		tries++
	}
	if err != nil {
		if gohdfs.IsErrReplicating(err) {
			return &fs.PathError{Op: "close", Path: w.path, Err: fmt.Errorf("stowage/fsbackend/hdfs: last block still not reported by a datanode after %d tries: %w", tries, err)}
		}
		cerr := classifyData("close", w.path, err)
		if unreachable(cerr) {
			w.f.cache.markBroken(w.c)
		}
		return cerr
	}
	return nil
}

// retryClose reports whether Close may be called again: the file is being
// replicated, or the NameNode did not answer the "complete" call (the Go
// client reports that step's errors as *os.PathError with Op "create"; by
// then every block was finalized, so only "complete" is repeated).
func retryClose(err error) bool {
	if gohdfs.IsErrReplicating(err) {
		return true
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Op == "create" {
		kind, _ := kindOf(pe.Err)
		return errors.Is(kind, ErrNameNodeUnreachable) || isRetriableRemote(pe.Err)
	}
	return false
}

// Abort implements fsbackend.Writer: it closes the file (once, without
// waiting for replication) and removes it.
func (w *writer) Abort() error {
	if !w.closed {
		w.closed = true
		_ = w.fw.Close()
	}
	w.keep.drop()
	w.release()
	err := w.f.Remove(contextBackground(), w.path[1:])
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// classifyData is classify for DataNode traffic: a broken connection there
// is a DataNode failure, not an unreachable NameNode.
func classifyData(op, path string, err error) error {
	var remote gohdfs.Error
	var pe *fs.PathError
	if errors.As(err, &remote) || (errors.As(err, &pe) && pe.Op == "create") ||
		strings.Contains(err.Error(), "no available namenodes") {
		return classify(op, path, err)
	}
	return &fs.PathError{Op: op, Path: path, Err: fmt.Errorf("stowage/fsbackend/hdfs: datanode pipeline: %w", err)}
}

// reader is an fsbackend.Reader. The Go client's ReadAt seeks, so calls
// are serialized; it is safe for concurrent use.
type reader struct {
	f    *FS
	c    *client
	path string
	size int64
	// open: the file was under construction when opened (see Unfinished).
	open bool

	mu     sync.Mutex
	fr     *gohdfs.FileReader
	closed bool
}

func (r *reader) Size() int64 { return r.size }

// Unfinished implements fsbackend.UnfinishedReader: the file was under
// construction (being written, or its writer died and its lease is not
// recovered yet) when it was opened, and Size is the length the NameNode
// knew, which leaves out what the writer synced since its last block.
func (r *reader) Unfinished() bool { return r.open }

// ReadAt implements io.ReaderAt.
func (r *reader) ReadAt(p []byte, off int64) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, &fs.PathError{Op: "read", Path: r.path, Err: fsbackend.ErrClosed}
	}
	if off >= r.size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	if d := r.f.cfg.SocketTimeout; d > 0 {
		_ = r.fr.SetDeadline(time.Now().Add(d))
	}
	n, err := r.fr.ReadAt(p, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return n, classifyData("read", r.path, err)
	}
	return n, err
}

// Close implements io.Closer.
func (r *reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	err := r.fr.Close()
	r.f.cache.release(r.c)
	if err != nil {
		return &fs.PathError{Op: "close", Path: r.path, Err: err}
	}
	return nil
}
