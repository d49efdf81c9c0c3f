package filestore

import (
	"context"
	"time"

	"github.com/stowage/stowage/fsbackend"
)

// The open log files, on back ends with SyncOpen (HDFS): a request of at
// most openBatchMax bytes whose records all belong to one lane of
// partitions (partition modulo Options.OpenFiles, one lane by default) is
// appended to that lane's log file, kept open and made durable by
// Writer.Sync (an hsync of the DataNode pipeline), instead of being a new
// file: a lone writer, one put after another, then pays one pipeline
// round trip and one DataNode sync per put, not a NameNode create,
// addBlock and complete and a new pipeline. Each lane is a group commit of
// its own (lanes.go): whatever queued for it while its last Sync ran,
// joined by the callers that Sync acknowledged (waitLaneCompany), is its
// next batch. The DataNode syncs the packets of one block one after
// another (it reads a block's next packet only once the last one is on
// disk), so one open file with many Syncs queued on it would sync no
// faster; separate files (several lanes) are synced by separate DataNode
// threads, whose fsyncs the local file system commits together.
//
// Larger requests, and requests whose records span lanes, are batch files
// (pipeline.go). A batch file starts only once no lane has anything in
// flight, and a lane takes requests only once no batch file is in flight;
// a partition's records in lanes are always in its own lane's file, in
// the order they were acknowledged. So a file holding a later batch of a
// partition never outlives, in a crash, one holding an earlier batch that
// was not acknowledged yet (each lane's file keeps a prefix of what was
// written to it), and no batch file links to a lane's file.
//
// A lane's file is finished (closed) once it reaches openSegmentSize or
// openMaxAge, once nothing was appended to any lane for quietAfter, when
// compaction asks for it (rollSegment), before this store reads storage
// again (a reread), and at Close. Until then readers elsewhere see only
// what the NameNode knew when the file was created, so a store that reads
// a log file another run left open, when that run is not live, recovers it
// first (fsbackend.Recover: lease recovery closes it with every synced
// byte; see readFrames). If a Sync fails the file is closed and recovered
// in the background, and the lane's next batch starts a new one: the
// failed batch's records were reported as failed but may have reached the
// DataNodes, like the writes in flight at a crash.

// openBatchMax is the largest request appended to an open file; larger
// ones are batch files, written several at once.
const openBatchMax = 256 << 10

// openSegmentSize is the size at which the open file is finished (or
// Options.SegmentSize, if smaller): small beside an HDFS block, so that
// the file stays within a block or two.
const openSegmentSize = 1 << 20

// openMaxAge is the age at which the open file is finished however small:
// the HDFS client renews no lease, and the NameNode recovers the lease of a
// file open past its hard limit (dfs.namenode.lease-hard-limit-sec, 20
// minutes by default), which would fail the next Sync.
const openMaxAge = time.Minute

// openRecoverWait bounds the background recovery of an open file whose
// Sync or Close failed.
const openRecoverWait = 2 * time.Minute

// segmentDone reports whether the segment sg is to be finished: it
// reached its size, or (an open file) its age.
func (w *writer) segmentDone(sg *openSeg) bool {
	if w.syncOpen {
		return sg.size >= min(w.s.opts.SegmentSize, openSegmentSize) || time.Since(sg.start) >= openMaxAge
	}
	return sg.size >= w.s.opts.SegmentSize
}

// armIdle (re)starts the timer that finishes the open file once nothing
// was appended for quietAfter. Flusher goroutine only.
func (w *writer) armIdle() {
	if w.idle == nil {
		w.idle = time.AfterFunc(quietAfter, func() {
			w.mu.Lock()
			w.rollDue = true
			w.cond.Signal()
			w.mu.Unlock()
		})
		return
	}
	w.idle.Reset(quietAfter)
}

func (w *writer) stopIdle() {
	if w.idle != nil {
		w.idle.Stop()
	}
}

// recoverLater recovers an open file whose Sync or Close failed, in the
// background: it holds acknowledged records, which readers see in full
// only once it is closed.
func (w *writer) recoverLater(name string) {
	w.pipe.uploads.Add(1)
	go func() {
		defer w.pipe.uploads.Done()
		ctx, cancel := context.WithTimeout(context.Background(), openRecoverWait)
		defer cancel()
		if err := fsbackend.Recover(ctx, w.s.fs, name); err != nil {
			w.s.log.Warn("stowage/mapstore/filestore: recovering a log file left open by a failed write", "file", name, "err", err)
		}
	}()
}

// recoverIfLeftOpen reports whether name, opened as r, is a log file that
// another run left open and that is to be recovered before it is read:
// its run is not live (or no other run is, IsLive unset). A live run's
// open file is read as far as storage shows it; this run's own files are
// never recovered here (its open file is finished before it rereads, and
// its batch files being written are not acknowledged yet).
func (s *Store) recoverIfLeftOpen(r fsbackend.Reader, name string) bool {
	u, ok := r.(fsbackend.UnfinishedReader)
	if !ok || !u.Unfinished() {
		return false
	}
	if _, kind, ok := parseName(name); !ok || kind != kindLog {
		return false
	}
	run := runOf(name)
	if run == "" || run == s.run {
		return false
	}
	return !s.shared() || !s.opts.IsLive(run)
}

// openHolds reports whether this store's open file (the active segment of
// a SyncOpen back end) holds records of a partition for which want is
// true.
func (s *Store) openHolds(want func(int) bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, lf := range s.files {
		if !lf.active || !lf.own {
			continue
		}
		for p := range lf.maxVer {
			if want(p) {
				return true
			}
		}
	}
	return false
}
