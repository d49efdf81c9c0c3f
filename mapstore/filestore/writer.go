package filestore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/serde/record"
)

// writer is the group committer: callers queue framed records, and one
// flusher writes everything queued while the previous flush ran as one
// batch, with one fdatasync (DurableAppend back ends); on every other back
// end each batch is a new file, several of them written at once (see
// pipeline.go). A lone writer's batch is written at once; when the
// previous batch carried several callers, the flusher waits up to
// Options.CommitDelay for as many to be queued again (see waitForCompany).
type writer struct {
	s      *Store
	append bool

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []*request
	closing bool

	// group commit delay (DurableAppend back ends; flusher goroutine but
	// for target, which submit reads under mu)
	delay   time.Duration
	lastN   int           // callers in the previous batch
	target  int           // while waiting: the queue length that ends the wait early (under mu)
	company chan struct{} // wakes a waiting flusher
	delayT  *time.Timer
	delays  atomic.Int64 // batches that waited for company

	// the segment of DurableAppend back ends (flusher goroutine)
	seg  openSeg
	segN atomic.Int64 // the number of the newest log file

	pipe pipeline // back ends without durable append

	// syncOpen: the back end has SyncOpen, and small requests are
	// appended to open files, one per lane of partitions (see lanes.go).
	syncOpen bool
	lanes    []*lane // Options.OpenFiles of them, each started on first use (under mu)
	lanesRun sync.WaitGroup
	openSegs atomic.Int32 // segments open (syncOpen)
	idle     *time.Timer  // finishes the open files when idle (flusher goroutine)
	rollDue  bool         // the idle timer fired (under mu)
}

// openSeg is a log file being appended to: the segment of a DurableAppend
// back end, or the open file of a lane on a SyncOpen back end. It is used
// by one goroutine at a time.
type openSeg struct {
	f     fsbackend.Writer // nil when none is open
	name  string
	size  int64
	start time.Time
	buf   []byte
}

type request struct {
	buf  []byte
	vers []partVer
	n    int
	done chan error
	// roll asks the flusher to finish the current segment before it
	// writes the batch this request is in (see rollSegment).
	roll bool
}

type partVer struct {
	p int
	v mapstore.Version
}

var reqPool = sync.Pool{New: func() any { return &request{done: make(chan error, 1)} }}

func newWriter(s *Store) *writer {
	caps := s.fs.Capabilities()
	w := &writer{s: s, append: caps.DurableAppend, syncOpen: !caps.DurableAppend && caps.SyncOpen,
		company: make(chan struct{}, 1)}
	w.cond = sync.NewCond(&w.mu)
	if w.syncOpen {
		w.lanes = make([]*lane, s.opts.OpenFiles)
	}
	w.delay = s.opts.CommitDelay
	if w.delay == 0 {
		w.delay = DefaultCommitDelay
	}
	return w
}

// submit queues framed records and waits until they are durable.
func (w *writer) submit(ctx context.Context, r *request) error {
	w.mu.Lock()
	if w.closing {
		w.mu.Unlock()
		return mapstore.ErrClosed
	}
	w.queue = append(w.queue, r)
	w.cond.Signal()
	if w.target > 0 && len(w.queue) >= w.target {
		w.target = 0
		select {
		case w.company <- struct{}{}:
		default:
		}
	}
	w.mu.Unlock()
	// The record may already be on its way to disk; the caller must learn
	// its outcome, so a cancelled context does not abandon the wait.
	return <-r.done
}

func (w *writer) run() {
	if !w.append {
		w.runPipelined()
		return
	}
	var batch []*request
	for {
		w.mu.Lock()
		for len(w.queue) == 0 && !w.closing {
			w.cond.Wait()
		}
		if len(w.queue) == 0 && w.closing {
			w.mu.Unlock()
			w.finish()
			return
		}
		if w.delay > 0 && w.lastN >= companyMin && len(w.queue) < w.lastN && !w.closing {
			w.waitForCompany(w.lastN)
		}
		batch, w.queue = w.queue, batch[:0]
		w.lastN = len(batch)
		w.mu.Unlock()
		w.flush(batch)
		for i := range batch {
			batch[i] = nil
		}
	}
}

// companyMin is how many callers the previous batch must have carried
// for the flusher to wait for company: below it, the writers are taken to
// be alone, and every batch is written at once.
const companyMin = 2

// waitForCompany lets the callers of a busy store join the batch about to
// be written: it waits, with mu released, until the queue holds target
// requests (as many as the previous batch carried) or the commit delay has
// passed. It is called with mu held, and only when the previous batch
// carried several callers, so that a lone writer (one put after another)
// never waits, and writers that are all queued already go at once.
func (w *writer) waitForCompany(target int) {
	w.delays.Add(1)
	w.target = target
	select {
	case <-w.company:
	default:
	}
	w.mu.Unlock()
	if w.delayT == nil {
		w.delayT = time.NewTimer(w.delay)
	} else {
		w.delayT.Reset(w.delay)
	}
	select {
	case <-w.company:
		w.delayT.Stop()
	case <-w.delayT.C:
	}
	w.mu.Lock()
	w.target = 0
}

func (w *writer) close() error {
	w.mu.Lock()
	w.closing = true
	select {
	case w.company <- struct{}{}:
	default:
	}
	w.cond.Signal()
	w.mu.Unlock()
	return nil
}

func (w *writer) header() []byte {
	h := encodeHeader(nil, fileHeader{Format: FormatVersion, Partitions: uint64(w.s.parts), Gen: w.s.gen, Run: w.s.run})
	return record.Append(nil, typeLogHeader, h)
}

func (w *writer) flush(batch []*request) { w.flushSeg(&w.seg, batch) }

// flushSeg appends batch to sg, makes it durable and acknowledges it.
func (w *writer) flushSeg(sg *openSeg, batch []*request) { w.flushSegThen(sg, batch, nil) }

// flushSegThen is flushSeg calling beforeAck, if not nil, once the batch
// was written and synced without error and before its callers learn it,
// with how long that took.
func (w *writer) flushSegThen(sg *openSeg, batch []*request, beforeAck func(took time.Duration)) {
	start := time.Now()
	sg.buf = sg.buf[:0]
	n, roll := 0, false
	for _, r := range batch {
		sg.buf = append(sg.buf, r.buf...)
		n += r.n
		roll = roll || r.roll
	}
	if roll {
		w.roll(sg)
	}
	if len(sg.buf) == 0 {
		for _, r := range batch {
			r.done <- nil
		}
		return
	}
	name, err := w.write(sg, sg.buf)
	took := time.Since(start)
	if err == nil {
		w.s.noteWritten(name, int64(len(sg.buf)), batch)
	}
	if w.s.opts.OnBatch != nil {
		w.s.opts.OnBatch(n, len(sg.buf), took, err)
	}
	if beforeAck != nil && err == nil {
		beforeAck(took)
	}
	for _, r := range batch {
		r.done <- err
	}
	if err == nil {
		select {
		case w.s.compactC <- struct{}{}:
		default:
		}
	}
	if err == nil && w.segmentDone(sg) {
		w.roll(sg)
	}
}

// zeroAhead is how far past its records a local log segment is kept
// written with zeros (fsbackend.ZeroAheader), at most an eighth of the
// segment size so that the zeros stay within the disk a segment is
// allowed: a sync of a batch written into them flushes the data alone,
// where a sync of one that grows the file also commits the file system's
// journal. On ext4 here a sync took half as long; bench/README.md has the
// figures. The zeros are cut when the segment is finished; after a crash
// they end the file.
const zeroAhead = 1 << 20

// write appends b to sg, makes it durable and returns the segment's name.
func (w *writer) write(sg *openSeg, b []byte) (string, error) {
	ctx := context.Background()
	if sg.f == nil {
		name := logName(w.s.gen, w.s.run, int(w.segN.Add(1)))
		f, err := w.s.fs.Create(ctx, name)
		if err != nil {
			return "", fmt.Errorf("stowage/mapstore/filestore: create %s: %w", name, err)
		}
		if za, ok := f.(fsbackend.ZeroAheader); ok {
			za.ZeroAhead(min(zeroAhead, w.s.opts.SegmentSize/8))
		}
		h := w.header()
		if _, err := f.Write(h); err != nil {
			_ = f.Abort()
			return "", fmt.Errorf("stowage/mapstore/filestore: write %s: %w", name, err)
		}
		sg.f, sg.name, sg.size, sg.start = f, name, int64(len(h)), time.Now()
		w.s.addFile(name, int64(len(h)), true)
		w.openSegs.Add(1)
	}
	_, err := sg.f.Write(b)
	if err == nil {
		err = sg.f.Sync()
	}
	if err != nil {
		// Cut the failed batch off so it cannot reappear after a restart;
		// if that fails too, leave the segment and start a new one.
		if t, ok := sg.f.(fsbackend.Truncater); !ok || t.Truncate(sg.size) != nil {
			if cerr := sg.f.Close(); cerr != nil && w.syncOpen {
				w.recoverLater(sg.name)
			}
			w.s.finishFile(sg.name)
			sg.f = nil
			w.openSegs.Add(-1)
		}
		return "", fmt.Errorf("stowage/mapstore/filestore: write %s: %w", sg.name, err)
	}
	sg.size += int64(len(b))
	return sg.name, nil
}

// roll finishes sg's file, if one is open.
func (w *writer) roll(sg *openSeg) {
	if sg.f == nil {
		return
	}
	if err := sg.f.Close(); err != nil && !errors.Is(err, fsbackend.ErrClosed) {
		w.s.log.Warn("stowage/mapstore/filestore: closing segment", "file", sg.name, "err", err)
		if w.syncOpen {
			w.recoverLater(sg.name)
		}
	}
	w.s.finishFile(sg.name)
	sg.f = nil
	w.openSegs.Add(-1)
}

func (w *writer) finish() { w.roll(&w.seg) }

// rollSegment finishes the segment being written, if any, so that
// compaction may collect it: once it returns, every record acknowledged
// before it was called is in a finished file. The next batch starts a new
// segment. On back ends without durable append every batch is a finished
// file already, but for the open files of SyncOpen back ends, and it does
// nothing when none is open.
func (w *writer) rollSegment(ctx context.Context) error {
	if !w.append && w.openSegs.Load() == 0 {
		return nil
	}
	r := reqPool.Get().(*request)
	r.buf, r.vers, r.n, r.roll = r.buf[:0], r.vers[:0], 0, true
	err := w.submit(ctx, r)
	r.roll = false
	releaseRequest(r)
	return err
}

// encodeRequest frames records into a pooled request.
func encodeRequest(rs []mapstore.Record) *request {
	r := reqPool.Get().(*request)
	r.buf, r.vers, r.n = r.buf[:0], r.vers[:0], len(rs)
	for i := range rs {
		r.buf = appendRecord(r.buf, &rs[i])
		r.vers = append(r.vers, partVer{rs[i].Partition, rs[i].Version})
	}
	return r
}

func releaseRequest(r *request) {
	if cap(r.buf) > 1<<20 {
		r.buf = nil
	}
	reqPool.Put(r)
}

// write queues records and waits until durable.
func (s *Store) write(ctx context.Context, rs []mapstore.Record) error {
	if len(rs) == 0 {
		return nil
	}
	for i := range rs {
		if rs[i].Partition < 0 || rs[i].Partition >= s.parts {
			return fmt.Errorf("stowage/mapstore/filestore: record partition %d out of range [0, %d)", rs[i].Partition, s.parts)
		}
		if len(rs[i].Key)+len(rs[i].Value)+64 > record.MaxPayload {
			return fmt.Errorf("stowage/mapstore/filestore: entry of %d bytes exceeds the %d-byte record limit", len(rs[i].Key)+len(rs[i].Value), record.MaxPayload)
		}
	}
	if s.isClosed() {
		return mapstore.ErrClosed
	}
	r := encodeRequest(rs)
	err := s.w.submit(ctx, r)
	releaseRequest(r)
	return err
}

// Store implements mapstore.MapStore.
func (s *Store) Store(ctx context.Context, r mapstore.Record) error {
	r.Deleted = false
	return s.write(ctx, []mapstore.Record{r})
}

// StoreAll implements mapstore.MapStore; the records go in one batch.
func (s *Store) StoreAll(ctx context.Context, rs []mapstore.Record) error {
	for i := range rs {
		rs[i].Deleted = false
	}
	return s.write(ctx, rs)
}

// Delete implements mapstore.MapStore.
func (s *Store) Delete(ctx context.Context, r mapstore.Record) error {
	r.Deleted, r.Value = true, nil
	rs := []mapstore.Record{r}
	err := s.write(ctx, rs)
	s.countDeletes(rs, err)
	return err
}

// DeleteAll implements mapstore.MapStore.
func (s *Store) DeleteAll(ctx context.Context, rs []mapstore.Record) error {
	for i := range rs {
		rs[i].Deleted, rs[i].Value = true, nil
	}
	err := s.write(ctx, rs)
	s.countDeletes(rs, err)
	return err
}

// StartEpoch makes durable that partition p's owner starts epoch v.Epoch,
// having taken over everything up to v.Seq. On recovery, records of an
// older epoch beyond v.Seq are dropped (no resurrection of writes that
// were never acknowledged before a fail-over).
func (s *Store) StartEpoch(ctx context.Context, p int, v mapstore.Version) error {
	return s.StartEpochs(ctx, map[int]mapstore.Version{p: v})
}

// StartEpochs is StartEpoch for several partitions in one batch.
func (s *Store) StartEpochs(ctx context.Context, starts map[int]mapstore.Version) error {
	if s.isClosed() {
		return mapstore.ErrClosed
	}
	r := reqPool.Get().(*request)
	r.buf, r.vers, r.n = r.buf[:0], r.vers[:0], 0
	for p, v := range starts {
		if p < 0 || p >= s.parts {
			releaseRequest(r)
			return fmt.Errorf("stowage/mapstore/filestore: partition %d out of range", p)
		}
		r.buf = record.Append(r.buf, typeEpoch, encodeEpoch(p, v))
		r.vers = append(r.vers, partVer{p, v})
		r.n++
	}
	err := s.w.submit(ctx, r)
	releaseRequest(r)
	return err
}
