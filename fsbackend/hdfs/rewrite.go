package hdfs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	gohdfs "github.com/colinmarc/hdfs/v2"
)

// Rewrites after a block allocation refused with NotReplicatedYetException.
//
// The NameNode allocates block k+1 of a file (addBlock) only when block
// k-1 is COMPLETE, that is when a DataNode has reported it; under load that
// report can lag behind a fast writer, and the NameNode then answers
// NotReplicatedYetException. The Java client repeats addBlock with backoff.
// The Go client cannot: it has finalized block k and forgotten it before
// it calls addBlock, so a repeated Write would ask for a block with
// previous=nil, which the NameNode refuses as a bogus request. Its
// FileWriter is lost.
//
// The files this back end writes are written once, start to end, so the
// writer keeps the bytes written so far and, on that refusal, waits with
// the Java client's backoff, makes a fresh file that replaces its partial
// one, and writes the kept bytes again. The fresh file is created under a
// side name and renamed over the partial file at once (HDFS rename2 with
// overwrite, atomic at the NameNode; the open file follows its inode), so
// the name never stops existing and a concurrent Create of it still fails
// with fs.ErrExist.

// rewriteKeepLimit bounds the bytes a writer keeps for a rewrite (64 MiB):
// the refusal can only happen from a file's third block on, so keeping is
// worth it only where 2 blocks are well below the limit (test clusters and
// small-block clusters); with the default 128 MiB blocks nothing is kept.
// It covers log batches and typical snapshots and checkpoints while
// bounding the memory of each open writer; the object-store back ends
// hold whole files in memory anyway. A longer file fails on a refusal, as
// it did before rewrites.
const rewriteKeepLimit = 64 << 20

const excNotReplicatedYet = "org.apache.hadoop.hdfs.server.namenode.NotReplicatedYetException"

// blockFile is the part of the Go client's FileWriter a writer uses.
type blockFile interface {
	io.Writer
	Close() error
	SetDeadline(t time.Time) error
	Hsync() error
	Hflush() error
}

// keepLimit is how many bytes a writer of a file with blocks of blockSize
// keeps for rewrites, or 0 when none: rewrites are off (retries 0), or the
// limit does not reach the third block, where the refusal can happen.
func keepLimit(blockSize int64, retries int) int64 {
	if retries <= 0 || blockSize <= 0 || 2*blockSize >= rewriteKeepLimit {
		return 0
	}
	return rewriteKeepLimit
}

// keeper holds the bytes of the file written so far, while there are at
// most limit of them.
type keeper struct {
	limit int64 // 0: keep nothing
	size  int64 // bytes in the file so far
	buf   []byte
	over  bool // the file outgrew limit: nothing is kept any more
}

func (k *keeper) add(p []byte) {
	k.size += int64(len(p))
	if k.limit == 0 || k.over {
		return
	}
	if k.size > k.limit {
		k.over, k.buf = true, nil // too long to rewrite: let the memory go
		return
	}
	k.buf = append(k.buf, p...)
}

// all reports whether every byte of the file is kept: add keeps each one
// until the file outgrows the limit.
func (k *keeper) all() bool { return k.limit > 0 && !k.over }

func (k *keeper) drop() { k.limit, k.buf = 0, nil }

// notReplicatedYet reports a block allocation that the NameNode refused
// because an earlier block is not reported yet.
func notReplicatedYet(err error) bool {
	var remote gohdfs.Error
	return errors.As(err, &remote) && remote.Exception() == excNotReplicatedYet
}

// recover handles err, with which a block allocation at file offset at
// failed: while it is NotReplicatedYetException, every byte is kept and the
// retries last, it waits, replaces the file by a fresh one holding the
// kept bytes and returns nil. Otherwise it returns the error to report.
// Each block allocation (each offset) gets the configured retries, as in
// the Java client; the waits double from CloseRetryDelay.
func (w *writer) recover(err error, at int64) error {
	for {
		if !notReplicatedYet(err) {
			return err
		}
		if !w.keep.all() {
			if w.keep.over {
				return fmt.Errorf("stowage/fsbackend/hdfs: block allocation refused and the file is longer than the %d bytes kept for a rewrite: %w", w.keep.limit, err)
			}
			return err
		}
		if at > w.failedAt {
			w.failedAt, w.tries = at, 0
		}
		if w.tries >= w.f.cfg.CloseRetries {
			return fmt.Errorf("stowage/fsbackend/hdfs: block allocation at byte %d still refused after %d rewrites: %w", at, w.tries, err)
		}
		delay := w.f.cfg.CloseRetryDelay << w.tries
		w.tries++
		w.f.log.Debug("stowage/fsbackend/hdfs: block allocation refused, rewriting the file",
			"path", w.path, "offset", at, "bytes", w.keep.size, "attempt", w.tries, "delay", delay)
		if cerr := sleep(w.ctx, delay); cerr != nil {
			return fmt.Errorf("stowage/fsbackend/hdfs: rewrite after a refused block allocation: %w (after %w)", cerr, err)
		}
		fw, rerr := w.reopen()
		if rerr != nil {
			return fmt.Errorf("stowage/fsbackend/hdfs: rewrite after a refused block allocation: %w", rerr)
		}
		w.fw = fw
		w.deadline()
		// A Write that returns fewer bytes than asked also returns an error
		// (io.Writer), so one call writes all the kept bytes or fails.
		n, werr := fw.Write(w.keep.buf)
		if werr == nil {
			return nil
		}
		err, at = werr, int64(n)
	}
}

// replaceFile creates a new empty file that takes the place of the partial
// file p: under a side name, then renamed over p, so p always exists. The
// returned writer goes on by inode after the rename, with SetSyncBlock as
// the one it replaces, and permissions perm.
func replaceFile(c *gohdfs.Client, p string, syncBlock bool, perm os.FileMode) (blockFile, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	side := p + ".tmp-rewrite-" + hex.EncodeToString(b[:])
	sd, err := c.ServerDefaults()
	if err != nil {
		return nil, err
	}
	fw, err := c.CreateFile(side, sd.Replication, sd.BlockSize, perm)
	if err != nil {
		return nil, err
	}
	fw.SetSyncBlock(syncBlock)
	if err := c.Rename(side, p); err != nil {
		_ = fw.Close() // no blocks yet: completes at once
		_ = c.Remove(side)
		return nil, err
	}
	return fw, nil
}
