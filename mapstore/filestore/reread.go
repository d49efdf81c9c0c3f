package filestore

import (
	"context"
	"errors"
	"maps"
	"sort"
	"sync"
	"time"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/mapstore"
)

// Loads that read storage again (a partition released and loaded later,
// a member's partitions promoted at fail-over, LAZY loads after writes)
// come in bursts, one partition per call, from several goroutines. Each
// needs a listing made after it asked (another member may have written
// the partition until then), and every log file, since any may hold the
// partition's records. So the rereads of partitions asked for at the same
// time share one listing and one read of the files (a group, as in a
// group commit: the calls that arrive while one group is read form the
// next), and the log files read stay in memory for a short while, by name
// and size, so that the next groups of a burst read only what is new. A
// load hands out records whose bytes are the file's (the caller owns
// them and may change them), so a file read is used at most once for
// each partition: a partition loaded again gets its own read.

// snapRead is a snapshot read ahead of its use: readSnapshot's result.
type snapRead struct {
	name string
	buf  []byte
	n    int
	err  error
}

// rereadKeep is how long the log files read by Open or a reread stay in
// memory after the last reread that used them.
const rereadKeep = 2 * time.Second

// rereads coalesces rereads and keeps the files they read.
type rereads struct {
	mu      sync.Mutex
	next    *rereadGroup  // collecting: not started yet
	running bool          // a group is being read
	idle    chan struct{} // closed when the running group ends
	files   map[string]*keptLog
	used    time.Time
	timer   *time.Timer
	closed  bool
}

// keptLog is a log file read, kept for the rereads to come.
type keptLog struct {
	read  *logRead
	taken map[int]bool // the partitions whose records were handed out
}

// rereadGroup is the partitions whose rereads share a listing.
type rereadGroup struct {
	want map[int]bool
	done chan struct{} // closed once res and err are set
	res  rereadResult
	err  error
}

// rereadResult is what a reread found of the wanted partitions.
type rereadResult struct {
	byPart map[int]found
	snaps  []snapFile        // by version, oldest first
	pre    map[int]*snapRead // the newest snapshot of each, if asked
}

// rereadPart rereads partition p in a group with the rereads asked for
// at the same time.
func (s *Store) rereadPart(ctx context.Context, p int) (found, []snapFile, *snapRead, error) {
	r := &s.rr
	for {
		r.mu.Lock()
		if r.idle == nil {
			r.idle = make(chan struct{})
		}
		g := r.next
		if g != nil && g.want[p] {
			// p is asked for twice at once: the second load gets a read
			// of its own (see above).
			r.mu.Unlock()
			res, err := s.reread(ctx, func(q int) bool { return q == p }, true)
			if err != nil {
				return nil, nil, nil, err
			}
			return res.byPart[p], res.snaps, res.pre[p], nil
		}
		if g == nil {
			g = &rereadGroup{want: map[int]bool{}, done: make(chan struct{})}
			r.next = g
		}
		g.want[p] = true
		for !closed(g.done) {
			if !r.running {
				r.running, r.next = true, nil
				want := maps.Clone(g.want)
				r.mu.Unlock()
				g.res, g.err = s.reread(ctx, func(q int) bool { return want[q] }, true)
				close(g.done)
				r.mu.Lock()
				r.running = false
				close(r.idle)
				r.idle = make(chan struct{})
				break
			}
			idle := r.idle
			r.mu.Unlock()
			select {
			case <-g.done:
			case <-idle:
			case <-ctx.Done():
				return nil, nil, nil, ctx.Err()
			}
			r.mu.Lock()
		}
		r.mu.Unlock()
		if g.err != nil && isContextErr(g.err) && ctx.Err() == nil {
			continue // the group's reader gave up: not this caller
		}
		if g.err != nil {
			return nil, nil, nil, g.err
		}
		return g.res.byPart[p], s.snapsOf(g.res.snaps, p), g.res.pre[p], nil
	}
}

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// reread lists the current generation once and reads, for the wanted
// partitions, what the log holds of each and the snapshots; with
// prefetch, also each one's newest snapshot, beside the log files. Log
// files read recently, unchanged in size, are not read again (unless
// their frames ended before the file: logRead.unfinished).
func (s *Store) reread(ctx context.Context, want func(int) bool, prefetch bool) (rereadResult, error) {
	// Records in this store's open file (SyncOpen back ends) are visible
	// only once it is finished.
	if s.w != nil && s.w.syncOpen && s.openHolds(want) {
		if err := s.w.rollSegment(ctx); err != nil && !errors.Is(err, mapstore.ErrClosed) {
			return rereadResult{}, err
		}
	}
	list, err := s.fs.List(ctx, genDir(s.gen))
	if err != nil {
		return rereadResult{}, err
	}
	var logs []fsbackend.FileInfo
	var snaps []snapFile
	for _, fi := range list {
		_, kind, ok := parseName(fi.Name)
		if !ok {
			continue
		}
		if kind == kindLog {
			logs = append(logs, fi)
		} else if p, v, ok := parseSnapName(fi.Name); ok && p < s.parts && want(p) {
			snaps = append(snaps, snapFile{name: fi.Name, upto: v, bytes: fi.Size})
		}
	}
	sort.Slice(snaps, func(i, j int) bool { return snaps[i].upto.Less(snaps[j].upto) })
	upto := make([]mapstore.Version, s.parts)
	newest := map[int]snapFile{}
	for _, sf := range snaps {
		p, _, _ := parseSnapName(sf.name)
		upto[p], newest[p] = sf.upto, sf
	}
	reads := make([]logRead, len(logs))
	var jobs []readJob
	var toRead []fsbackend.FileInfo
	var at []int
	known := s.rr.lookup(logs, want)
	for i, fi := range logs {
		if known[i] != nil {
			reads[i] = *known[i].read
			continue
		}
		toRead = append(toRead, fi)
		at = append(at, i)
	}
	fresh := make([]logRead, len(toRead))
	// Every partition of a file is kept, for the rereads to come.
	jobs = s.logJobs(ctx, toRead, fresh, nil, upto)
	res := rereadResult{snaps: snaps, byPart: map[int]found{}}
	var pre []*snapRead
	if prefetch {
		pre = make([]*snapRead, s.parts)
		jobs = append(jobs, s.snapJobs(ctx, newest, pre)...)
	}
	if err := s.readAll(ctx, jobs); err != nil {
		return rereadResult{}, err
	}
	for j, i := range at {
		reads[i] = fresh[j]
	}
	s.rr.keep(logs, reads, known, want)
	for p, f := range gather(reads, s.parts, want) {
		if f != nil {
			res.byPart[p] = f
		}
	}
	if prefetch {
		res.pre = map[int]*snapRead{}
		for p, sr := range pre {
			if sr != nil {
				res.pre[p] = sr
			}
		}
	}
	return res, nil
}

// snapJobs returns the jobs that read the given snapshots (by partition)
// into pre. A snapshot that cannot be read is left out: its partition's
// load reads it again and falls back as usual.
func (s *Store) snapJobs(ctx context.Context, snaps map[int]snapFile, pre []*snapRead) []readJob {
	jobs := make([]readJob, 0, len(snaps))
	for p, sf := range snaps {
		jobs = append(jobs, readJob{size: sf.bytes, read: func() error {
			buf, n, err := s.readSnapshot(ctx, sf.name, p)
			if buf != nil {
				pre[p] = &snapRead{name: sf.name, buf: buf, n: n, err: err}
			}
			return nil
		}})
	}
	return jobs
}

// lookup returns, for each log file, what a recent read of it found if
// its size is unchanged since (and the read reached its end: see
// logRead.unfinished) and none of the wanted partitions' records
// in it were handed out yet (they are taken from now on), or nil.
func (r *rereads) lookup(logs []fsbackend.FileInfo, want func(int) bool) []*keptLog {
	out := make([]*keptLog, len(logs))
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, fi := range logs {
		k := r.files[fi.Name]
		if k == nil || k.read.size != fi.Size || k.read.unfinished {
			continue
		}
		usable := true
		for j := range k.read.segs {
			if p := k.read.segs[j].part; want(p) && k.taken[p] {
				usable = false
				break
			}
		}
		if !usable {
			continue
		}
		for j := range k.read.segs {
			if p := k.read.segs[j].part; want(p) {
				k.taken[p] = true
			}
		}
		out[i] = k
	}
	return out
}

// keep remembers the log files listed (forgetting those not listed any
// more) for rereadKeep after the last use: those lookup found (known)
// with what was taken of them, the others as read now, with the wanted
// partitions' records taken.
func (r *rereads) keep(logs []fsbackend.FileInfo, reads []logRead, known []*keptLog, want func(int) bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	files := make(map[string]*keptLog, len(logs))
	for i := range logs {
		if known != nil && known[i] != nil {
			files[logs[i].Name] = known[i]
			continue
		}
		lr := &reads[i]
		if lr.size < 0 {
			continue
		}
		k := &keptLog{read: lr, taken: map[int]bool{}}
		for j := range lr.segs {
			if p := lr.segs[j].part; want(p) {
				k.taken[p] = true
			}
		}
		files[logs[i].Name] = k
	}
	r.files, r.used = files, time.Now()
	if r.timer == nil {
		r.timer = time.AfterFunc(rereadKeep, r.expire)
	}
}

// expire forgets the files read once rereadKeep passed since their last
// use.
func (r *rereads) expire() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if left := rereadKeep - time.Since(r.used); left > 0 {
		r.timer.Reset(left)
		return
	}
	r.files, r.timer = nil, nil
}

// close forgets the files read and stops the timer.
func (r *rereads) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed, r.files = true, nil
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
}
