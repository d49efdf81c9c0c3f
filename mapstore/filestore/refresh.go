package filestore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/serde/record"
)

// discoverEvery is how many refresh intervals may pass, when nothing asks
// for a refresh, before a store sharing the directory lists it anyway, to
// find the files of runs that started after it and ended since.
const discoverEvery = 6

// refreshState is what the last refresh saw. s.mu guards it.
type refreshState struct {
	at time.Time
	// soon: the last listing held snapshots seen for the first time of
	// partitions that hold files back; they are trusted only when seen
	// again, so look again after a quarter of the interval.
	soon bool
	// idle counts the refreshes in a row that let nothing go; each one
	// doubles the wait before the next, up to discoverEvery intervals.
	idle int
	seen map[string]seenSnap // snapshots of the last listing
}

// seenSnap is one snapshot of a listing.
type seenSnap struct {
	size int64
	// whole: 1 if the file ends with a complete end frame, -1 if it does
	// not, 0 if not checked yet.
	whole int8
}

// refreshDue reports whether collect should list the directory again:
// only when it is shared, at most every RefreshInterval when need is set
// (less often while refreshes let nothing go), and every discoverEvery
// intervals regardless.
func (s *Store) refreshDue(need bool) bool {
	if !s.shared() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	longest := discoverEvery * s.opts.RefreshInterval
	wait := min(s.opts.RefreshInterval<<min(s.refreshed.idle, 8), longest)
	if s.refreshed.soon {
		wait = s.opts.RefreshInterval / 4
	}
	since := time.Since(s.refreshed.at)
	return (need && since >= wait) || since >= longest
}

// refreshHelped records whether the last refresh let files go.
func (s *Store) refreshHelped(helped bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if helped {
		s.refreshed.idle = 0
	} else {
		s.refreshed.idle++
	}
}

// refresh lists the generation once and learns what other runs did since
// the store last looked:
//
//   - the snapshots of partitions this store does not own, which then
//     decide whether records of those partitions are covered. A snapshot
//     another run wrote is trusted once two listings showed it with the
//     same size and it ends with a complete end frame: its writer finished
//     it, and had the time to read it back (it removes one that does not
//     read back clean at once);
//   - the log files of runs that are not live: each is read once after
//     its run ended (unless its size shows it unchanged since it was read
//     and the read reached the end of the file's frames)
//     to learn its per-partition highest versions, so that it can be
//     collected, whether or not the store saw it at Open;
//   - other runs' files that are gone, which it forgets.
//
// It returns snapshots of partitions this store owns that are older than
// those it keeps (written late by a previous owner), to be removed.
// waiting are the partitions that hold files back here.
func (s *Store) refresh(ctx context.Context, live liveness, waiting map[int]bool) ([]string, error) {
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	dir := genDir(s.gen)
	list, err := s.fs.List(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("stowage/mapstore/filestore: list %s: %w", dir, err)
	}
	at := time.Now()
	listedSnaps := map[int][]snapFile{}
	listedLogs := map[string]int64{}
	for _, fi := range list {
		_, kind, ok := parseName(fi.Name)
		switch {
		case !ok:
		case kind == kindSnap:
			if p, v, ok := parseSnapName(fi.Name); ok && p < s.parts {
				listedSnaps[p] = append(listedSnaps[p], snapFile{name: fi.Name, upto: v, bytes: fi.Size})
			}
		case runOf(fi.Name) != s.run:
			listedLogs[fi.Name] = fi.Size
			if run := runOf(fi.Name); !live.dead(run) {
				if _, asked := live[run]; !asked {
					live[run] = s.opts.IsLive(run)
				}
			}
		}
	}

	s.mu.Lock()
	prev := s.refreshed.seen
	owned := append([]bool(nil), s.owned...)
	known := map[string]bool{}
	for p := range s.snaps {
		for _, sf := range s.snaps[p] {
			known[sf.name] = true
		}
	}
	type state struct {
		size  int64
		final bool
	}
	have := map[string]state{}
	for name, lf := range s.files {
		switch {
		case lf.own:
		case lf.unfinished:
			have[name] = state{-1, lf.final} // its size tells nothing
		default:
			have[name] = state{lf.size, lf.final}
		}
	}
	s.mu.Unlock()

	// Snapshots of partitions owned elsewhere.
	seen := make(map[string]seenSnap, len(prev))
	trusted := map[int][]snapFile{}
	soon := false
	for p, sn := range listedSnaps {
		for _, sf := range sn {
			st := seenSnap{size: sf.bytes}
			before, again := prev[sf.name]
			again = again && before.size == sf.bytes
			if again {
				st.whole = before.whole
			}
			if !owned[p] {
				switch {
				case known[sf.name]:
					trusted[p] = append(trusted[p], sf)
				case again:
					if st.whole == 0 {
						st.whole = s.wholeSnapshot(ctx, sf.name)
					}
					if st.whole > 0 {
						trusted[p] = append(trusted[p], sf)
					}
				default:
					soon = soon || waiting[p]
				}
			}
			seen[sf.name] = st
		}
	}

	// Log files of runs that are not live.
	var final []string
	type read struct {
		name string
		logRead
	}
	var toRead []read
	var jobs []readJob
	for name, size := range listedLogs {
		if !live.dead(runOf(name)) {
			continue
		}
		if st, ok := have[name]; ok && st.size == size {
			if !st.final {
				final = append(final, name)
			}
			continue
		}
		toRead = append(toRead, read{name: name})
		jobs = append(jobs, readJob{size: size})
	}
	for i := range jobs {
		r := &toRead[i]
		jobs[i].read = func() error {
			lr, err := s.readLog(ctx, r.name, nil, nil)
			if err != nil {
				s.log.Warn("stowage/mapstore/filestore: reading a log file of an ended run", "file", r.name, "err", err)
				lr.size = -1
			}
			r.logRead = lr
			return nil
		}
	}
	_ = s.readAll(ctx, jobs) // each job reports its own failure
	var reads []read
	for _, r := range toRead {
		if r.size >= 0 { // read, and not removed meanwhile
			reads = append(reads, r)
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	var drop []string
	for p := range s.snaps {
		switch {
		case !owned[p] && !s.owned[p]:
			sn := trusted[p]
			sort.Slice(sn, func(i, j int) bool { return sn[i].upto.Less(sn[j].upto) })
			s.snaps[p] = sn
		case owned[p] && s.owned[p] && !s.acquired[p] && len(s.snaps[p]) > 0:
			oldest := s.snaps[p][0]
			for _, sf := range listedSnaps[p] {
				if sf.upto.Less(oldest.upto) {
					drop = append(drop, sf.name)
				}
			}
		}
	}
	for _, name := range final {
		if lf := s.files[name]; lf != nil {
			lf.final = true
		}
	}
	for _, r := range reads {
		lf := s.files[r.name]
		if lf == nil {
			lf = &logFile{name: r.name, run: runOf(r.name)}
			s.files[r.name] = lf
		}
		if lf.counted {
			s.logTotal -= lf.size
		}
		// Its run ended: what the file holds now is all it will hold.
		lf.size, lf.maxVer, lf.final, lf.counted, lf.unfinished = r.size, r.maxVer, true, true, false
		s.logTotal += lf.size
		for _, g := range r.segs {
			p := g.part
			if !s.owned[p] || g.empty() {
				continue
			}
			var upto mapstore.Version
			if n := len(s.snaps[p]); n > 0 {
				upto = s.snaps[p][n-1].upto
			}
			s.since[p] += found{g}.bytesAbove(upto)
		}
	}
	for name, lf := range s.files {
		if _, ok := listedLogs[name]; !ok && !lf.own {
			if lf.counted {
				s.logTotal -= lf.size
			}
			delete(s.files, name)
		}
	}
	s.refreshed = refreshState{at: at, soon: soon, idle: s.refreshed.idle, seen: seen}
	return drop, nil
}

// wholeSnapshot reports, with one small read at its end, whether a
// snapshot ends with a complete end frame (1), or not (-1); 0 when it
// could not be read and should be checked again.
func (s *Store) wholeSnapshot(ctx context.Context, name string) int8 {
	r, err := s.fs.Open(ctx, name)
	if err != nil {
		if errors.Is(err, fsbackend.ErrNotExist) {
			return -1
		}
		return 0
	}
	defer r.Close()
	n := min(r.Size(), int64(record.HeaderSize+binary.MaxVarintLen64))
	buf := make([]byte, n)
	if m, err := r.ReadAt(buf, r.Size()-n); err != nil && !(errors.Is(err, io.EOF) && int64(m) == n) {
		return 0
	}
	for i := range buf {
		if f, m, err := record.Decode(buf[i:]); err == nil && i+m == len(buf) && f.Type == typeSnapEnd {
			return 1
		}
	}
	return -1
}
