package filestore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/serde/record"
)

// DefaultMaxInFlight is how many batch files a store writes at once on
// back ends without durable append, unless Options.MaxInFlight says.
const DefaultMaxInFlight = 8

// The pipelined group commit, on back ends without durable append (HDFS,
// object stores), where every batch is a new file and making one durable
// is a round trip or more: the flusher takes everything queued as a batch
// whenever fewer than Options.MaxInFlight batches are in flight (and, with
// some in flight, once what is queued is at least their average batch),
// numbers it and writes its file in the background, so several files are
// being written at once. Batches are resolved in number order: a batch is
// acknowledged once its own file is durable and every earlier batch was
// acknowledged, so an acknowledged record never depends on one that may
// still be lost. When a batch fails, every batch after it that is still
// in flight fails too (its file, if written, is removed), and no new
// batch starts until those are resolved: a later batch never outlives a
// failed earlier one in what callers were told.
//
// Files may finish in any order, and a crash can leave a later batch's
// file without an earlier one's. Recovery orders records by version
// anyway; so that it also leaves out records whose earlier batches are
// missing, a batch started while an earlier batch of one of its
// partitions is in flight carries an L frame linking, per such
// partition, to that batch (see found.broken).

// pipeline is the flusher's state in pipelined mode.
type pipeline struct {
	// under writer.mu
	inflight []*batch // in number order
	waiting  int      // requests in the batches in flight
	// owned by the flusher goroutine
	failing error // the first failure while batches after it are resolved
	// pending maps a partition to the newest batch in flight holding it.
	pending map[int]pendingBatch
	uploads sync.WaitGroup
}

type pendingBatch struct {
	n   int
	ver mapstore.Version // the partition's highest version in the batch
}

// batch is one file of the pipelined commit.
type batch struct {
	n     int
	name  string
	reqs  []*request
	parts []partVer // per partition: its highest version in the batch
	size  int64     // bytes of the file
	body  int64     // bytes of records
	recs  int
	start time.Time
	// set by the upload, under writer.mu
	finished bool
	err      error
}

// runPipelined is the flusher loop of pipelined mode.
func (w *writer) runPipelined() {
	p := &w.pipe
	p.pending = map[int]pendingBatch{}
	for {
		w.mu.Lock()
		for !w.pipeReady() {
			if w.closing && len(w.queue) == 0 && len(p.inflight) == 0 {
				w.mu.Unlock()
				w.stopIdle()
				w.stopLanes()
				p.uploads.Wait()
				return
			}
			w.cond.Wait()
		}
		var done []*batch
		for len(p.inflight) > 0 && p.inflight[0].finished {
			done = append(done, p.inflight[0])
			p.waiting -= len(p.inflight[0].reqs)
			p.inflight[0] = nil
			p.inflight = p.inflight[1:]
		}
		var reqs []*request
		if len(done) == 0 {
			reqs, w.queue = w.queue, nil
		}
		rollDue := w.rollDue
		w.rollDue = false
		w.mu.Unlock()
		for _, b := range done {
			w.resolve(b)
		}
		if rollDue {
			w.rollIdle() // nothing was dispatched for a while
		}
		if p.failing != nil {
			w.mu.Lock()
			if len(p.inflight) == 0 {
				p.failing = nil // every batch after the failed one is resolved
			}
			w.mu.Unlock()
		}
		switch {
		case reqs == nil:
		case w.syncOpen:
			w.takeSyncOpen(reqs)
		default:
			w.launch(reqs)
		}
	}
}

// pipeReady reports whether the flusher has work: the oldest batch in
// flight finished, or a batch can start. Called with w.mu held.
func (w *writer) pipeReady() bool {
	p := &w.pipe
	if w.rollDue {
		return true
	}
	if len(p.inflight) > 0 && p.inflight[0].finished {
		return true
	}
	if len(w.queue) == 0 || len(p.inflight) >= w.s.opts.MaxInFlight || p.failing != nil {
		return false
	}
	// With batches in flight, start one only once it would hold as many
	// requests as they do on average, so that many callers do not spread
	// over as many tiny files: a file costs about as much as a big one
	// (HDFS: NameNode calls and a DataNode sync each; object stores: a
	// request).
	return len(p.inflight) == 0 || len(w.queue)*len(p.inflight) >= p.waiting
}

// launch starts writing the requests as one batch file.
func (w *writer) launch(reqs []*request) {
	p := &w.pipe
	b := &batch{reqs: reqs, start: time.Now()}
	for _, r := range reqs {
		b.body += int64(len(r.buf))
		b.recs += r.n
		b.parts = append(b.parts, r.vers...)
	}
	if b.body == 0 {
		for _, r := range reqs {
			r.done <- nil
		}
		return
	}
	// Keep each partition's highest version once.
	slices.SortFunc(b.parts, func(x, y partVer) int {
		switch {
		case x.p != y.p:
			return x.p - y.p
		case x.v.Less(y.v):
			return 1
		case y.v.Less(x.v):
			return -1
		}
		return 0
	})
	b.parts = slices.CompactFunc(b.parts, func(x, y partVer) bool { return x.p == y.p })
	b.n = int(w.segN.Add(1))
	b.name = logName(w.s.gen, w.s.run, b.n)
	var links []link
	for _, pv := range b.parts {
		if pb, ok := p.pending[pv.p]; ok {
			links = append(links, link{part: pv.p, back: uint64(b.n - pb.n), ver: pb.ver})
		}
		p.pending[pv.p] = pendingBatch{n: b.n, ver: pv.v}
	}
	data := w.header()
	if len(links) > 0 {
		data = record.Append(data, typeLink, encodeLinks(nil, links))
	}
	head := len(data)
	data = slices.Grow(data, int(b.body))
	for _, r := range reqs {
		data = append(data, r.buf...)
	}
	b.size = int64(head) + b.body
	w.mu.Lock()
	p.inflight = append(p.inflight, b)
	p.waiting += len(reqs)
	w.mu.Unlock()
	p.uploads.Add(1)
	go func() {
		defer p.uploads.Done()
		ctx := context.Background()
		err := fsbackend.WriteFile(ctx, w.s.fs, b.name, data)
		if err != nil {
			_ = w.s.fs.Remove(ctx, b.name)
			err = fmt.Errorf("stowage/mapstore/filestore: write %s: %w", b.name, err)
		}
		w.mu.Lock()
		b.finished, b.err = true, err
		w.cond.Signal()
		w.mu.Unlock()
	}()
}

// errEarlierBatch fails a batch whose file was written after an earlier
// batch failed.
var errEarlierBatch = errors.New("an earlier batch failed")

// resolve acknowledges or fails the oldest batch in flight, which has
// finished.
func (w *writer) resolve(b *batch) {
	p := &w.pipe
	err := b.err
	if err == nil && p.failing != nil {
		// Written, but an earlier batch was not: it must not come back.
		if rerr := w.s.fs.Remove(context.Background(), b.name); rerr != nil && !errors.Is(rerr, fsbackend.ErrNotExist) {
			w.s.log.Warn("stowage/mapstore/filestore: removing a batch after a failed one", "file", b.name, "err", rerr)
		}
		err = fmt.Errorf("stowage/mapstore/filestore: write %s: %w: %w", b.name, errEarlierBatch, p.failing)
	}
	if err == nil {
		w.s.addBatchFile(b)
	} else if p.failing == nil {
		p.failing = err
	}
	for _, pv := range b.parts {
		if pb, ok := p.pending[pv.p]; ok && pb.n == b.n {
			delete(p.pending, pv.p)
		}
	}
	if w.s.opts.OnBatch != nil {
		w.s.opts.OnBatch(b.recs, int(b.body), time.Since(b.start), err)
	}
	for _, r := range b.reqs {
		r.done <- err
	}
	if err == nil {
		select {
		case w.s.compactC <- struct{}{}:
		default:
		}
	}
}

// addBatchFile makes a durable batch file known with the versions it
// holds in one step: compaction counts a finished file without versions as
// covered, and must never see this one so.
func (s *Store) addBatchFile(b *batch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[b.name] = &logFile{name: b.name, run: s.run, size: b.size, maxVer: map[int]mapstore.Version{}, own: true, final: true, counted: true}
	s.logTotal += b.size
	s.noteWrittenLocked(b.name, b.body, b.reqs)
}
