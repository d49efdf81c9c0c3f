package filestore

import (
	"sync"
	"time"
)

// DefaultOpenFiles is Options.OpenFiles's default: one open log file on
// SyncOpen back ends (HDFS). Separate files are synced in parallel by the
// DataNode (measured on the MiniDFSCluster under a load average of 12 on
// two cores: 235 hsyncs/s with one file, 1,046 with four, 2,400 with
// eight), but every hsync costs CPU on both sides (about 0.26 ms in the
// DataNode and 0.13 ms here), and more files split the same callers into
// smaller batches. With the wait for company (waitLaneCompany), one file
// syncs every caller of the last batch at once: 64 writers gave 64
// records per hsync and 35,000–38,000 puts/s on a quiet machine, against
// 28,000–30,000 for one file without the wait and 24,000–27,500 for two
// (bench/README.md, "HDFS: one open file that waits for company").
const DefaultOpenFiles = 1

// MaxOpenFiles bounds Options.OpenFiles.
const MaxOpenFiles = 8

// lane is one open log file of a SyncOpen back end and the goroutine that
// appends the requests queued for it, one batch and one Sync at a time.
type lane struct {
	cond *sync.Cond // on writer.mu
	// under writer.mu
	queue   []*request
	busy    bool      // the lane goroutine is writing a batch or finishing its file
	rollAsk bool      // finish the file before the next batch
	stop    bool      // finish the file and end once the queue is empty
	last    time.Time // when the lane last finished a batch
	// company: after a batch, the requests the lane expects soon (see
	// waitLaneCompany) and how long it may wait for them; expired ends a
	// wait, timer generation gen
	want    int
	waitMax time.Duration
	expired bool
	gen     uint64
	// lane goroutine only
	seg openSeg
}

// laneOf returns the lane of a request, or -1 if it is to be a batch
// file: too large, spanning lanes, without records, or a roll.
func (w *writer) laneOf(r *request) int {
	if !w.syncOpen || r.roll || len(r.buf) == 0 || len(r.buf) > openBatchMax || len(r.vers) == 0 {
		return -1
	}
	n := len(w.lanes)
	l := r.vers[0].p % n
	for _, pv := range r.vers[1:] {
		if pv.p%n != l {
			return -1
		}
	}
	return l
}

// takeSyncOpen hands the requests the flusher took on a SyncOpen back end
// to their lanes or, for the others, to a batch file, keeping lanes and
// batch files from being in flight at once. Flusher goroutine only.
func (w *writer) takeSyncOpen(reqs []*request) {
	var files, rolls []*request
	lanes := make([][]*request, len(w.lanes))
	toLanes := false
	for _, r := range reqs {
		switch l := w.laneOf(r); {
		case r.roll:
			rolls = append(rolls, r)
		case l < 0:
			files = append(files, r)
		default:
			lanes[l] = append(lanes[l], r)
			toLanes = true
		}
	}
	if toLanes {
		w.drainFiles()
		w.mu.Lock()
		for i, rs := range lanes {
			if len(rs) == 0 {
				continue
			}
			l := w.lanes[i]
			if l == nil {
				l = &lane{cond: sync.NewCond(&w.mu)}
				w.lanes[i] = l
				w.lanesRun.Add(1)
				go w.runLane(l)
			}
			l.queue = append(l.queue, rs...)
			l.cond.Signal()
		}
		w.mu.Unlock()
		w.armIdle()
	}
	if len(rolls) > 0 {
		// Every record acknowledged before the roll was asked for is in a
		// lane's file, finished once the lanes are idle again.
		w.drainLanes(true)
		for _, r := range rolls {
			r.done <- nil
		}
	}
	if len(files) > 0 {
		w.drainLanes(false)
		w.launch(files)
	}
}

// runLane is the goroutine of one lane: it appends whatever was queued
// for the lane while its last batch was written as one batch.
func (w *writer) runLane(l *lane) {
	defer w.lanesRun.Done()
	for {
		w.mu.Lock()
		for len(l.queue) == 0 && !l.rollAsk && !l.stop {
			l.cond.Wait()
		}
		if len(l.queue) < l.want && !l.rollAsk && !l.stop {
			w.waitLaneCompany(l)
		}
		reqs, roll, stop := l.queue, l.rollAsk, l.stop && len(l.queue) == 0
		l.queue, l.rollAsk, l.busy, l.want = nil, false, true, 0
		w.mu.Unlock()
		if roll || stop {
			w.roll(&l.seg)
		}
		if len(reqs) > 0 {
			w.flushSegThen(&l.seg, reqs, func(took time.Duration) {
				if w.delay <= 0 {
					return
				}
				// The callers about to be acknowledged are likely to write
				// again at once, spread over the lanes; with those queued
				// while the batch was synced they make the next batch.
				w.mu.Lock()
				l.want = len(l.queue) + len(reqs)/len(w.lanes)
				l.waitMax = min(w.delay, took)
				w.mu.Unlock()
			})
		}
		w.mu.Lock()
		l.busy = false
		l.last = time.Now()
		w.cond.Signal() // the flusher may wait for the lanes to be idle
		w.mu.Unlock()
		if stop {
			return
		}
	}
}

// waitLaneCompany lets the callers a lane expects join its next batch:
// it waits until l.want requests are queued, for at most l.waitMax (the
// commit delay, and never longer than the lane's last batch took to be
// synced). A lane whose last batch was acknowledged to several callers
// syncs once for them all instead of splitting them into a batch being
// synced and one queued behind it, each with its own sync; a lone writer
// (one request at a time) never waits. Called with w.mu held.
func (w *writer) waitLaneCompany(l *lane) {
	if l.want < companyMin || l.waitMax <= 0 {
		return
	}
	w.delays.Add(1)
	l.gen++
	gen := l.gen
	t := time.AfterFunc(l.waitMax, func() {
		w.mu.Lock()
		if l.gen == gen {
			l.expired = true
			l.cond.Broadcast()
		}
		w.mu.Unlock()
	})
	for len(l.queue) < l.want && !l.expired && !l.rollAsk && !l.stop {
		l.cond.Wait()
	}
	t.Stop()
	l.gen++
	l.expired = false
}

// lanesIdle reports whether no lane has anything queued or being written.
// Called with w.mu held.
func (w *writer) lanesIdle() bool {
	for _, l := range w.lanes {
		if l != nil && (len(l.queue) > 0 || l.busy || l.rollAsk) {
			return false
		}
	}
	return true
}

// askRoll asks every lane to finish its file before its next batch,
// without waiting. Called with w.mu held.
func (w *writer) askRoll() {
	for _, l := range w.lanes {
		if l != nil {
			l.rollAsk = true
			l.cond.Signal()
		}
	}
}

// rollIdle asks every lane that finished its last batch quietAfter ago
// or earlier, and has nothing to do, to finish its file; if another lane
// was busy since, the idle timer is armed again for it. Flusher
// goroutine only.
func (w *writer) rollIdle() {
	w.mu.Lock()
	next := time.Duration(-1)
	for _, l := range w.lanes {
		if l == nil {
			continue
		}
		if since := time.Since(l.last); !l.busy && len(l.queue) == 0 && since >= quietAfter {
			l.rollAsk = true
			l.cond.Signal()
		} else if wait := max(quietAfter-since, time.Millisecond); next < 0 || wait < next {
			next = wait
		}
	}
	w.mu.Unlock()
	if next >= 0 {
		w.idle.Reset(next)
	}
}

// drainLanes waits until every lane is idle, each having finished its
// file first if roll. Flusher goroutine only.
func (w *writer) drainLanes(roll bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if roll {
		w.askRoll()
	}
	for !w.lanesIdle() {
		w.cond.Wait()
	}
}

// stopLanes finishes every lane's file and waits for the lane goroutines
// to end. Flusher goroutine only, once nothing is queued.
func (w *writer) stopLanes() {
	w.mu.Lock()
	for _, l := range w.lanes {
		if l != nil {
			l.stop = true
			l.cond.Signal()
		}
	}
	w.mu.Unlock()
	w.lanesRun.Wait()
}

// drainFiles waits until every batch file in flight finished, and
// resolves them in order. Flusher goroutine only.
func (w *writer) drainFiles() {
	p := &w.pipe
	for {
		w.mu.Lock()
		for len(p.inflight) > 0 && !p.inflight[0].finished {
			w.cond.Wait()
		}
		if len(p.inflight) == 0 {
			p.failing = nil // every batch after a failed one is resolved
			w.mu.Unlock()
			return
		}
		b := p.inflight[0]
		p.waiting -= len(b.reqs)
		p.inflight[0] = nil
		p.inflight = p.inflight[1:]
		w.mu.Unlock()
		w.resolve(b)
	}
}
