package filestore

import (
	"sync"
	"time"
)

// OpenLanes is how many log files a store keeps open at once on SyncOpen
// back ends (HDFS), each for the partitions equal to its index modulo
// OpenLanes (see openfile.go). Separate files are synced in parallel by
// the DataNode (measured on the MiniDFSCluster under a load average of
// 12 on two cores: 235 hsyncs/s with one file, 1,046 with four, 2,400
// with eight), but every hsync costs CPU on both sides (about 0.26 ms in
// the DataNode and 0.13 ms here), and more lanes split the same callers
// into smaller batches: 64 writers gave 32 records per hsync with one
// file, 16 with two, 4.4 with eight. On a loaded machine, where the
// DataNode's fsyncs are slow (1.2 ms each, two per hsync), two lanes
// wrote about a third more than one and eight no more; on a quieter one,
// where CPU is the limit, eight wrote less than half of one. Two is the
// measured middle.
const OpenLanes = 2

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
	// lane goroutine only
	seg openSeg
}

// laneOf returns the lane of a request, or -1 if it is to be a batch
// file: too large, spanning lanes, without records, or a roll.
func (w *writer) laneOf(r *request) int {
	if !w.syncOpen || r.roll || len(r.buf) == 0 || len(r.buf) > openBatchMax || len(r.vers) == 0 {
		return -1
	}
	l := r.vers[0].p % OpenLanes
	for _, pv := range r.vers[1:] {
		if pv.p%OpenLanes != l {
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
	var lanes [OpenLanes][]*request
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
		reqs, roll, stop := l.queue, l.rollAsk, l.stop && len(l.queue) == 0
		l.queue, l.rollAsk, l.busy = nil, false, true
		w.mu.Unlock()
		if roll || stop {
			w.roll(&l.seg)
		}
		if len(reqs) > 0 {
			w.flushSeg(&l.seg, reqs)
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
